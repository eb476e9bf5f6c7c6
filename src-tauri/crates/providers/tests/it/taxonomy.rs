//! Runs every classification table row against its fixture: a recorded provider answer in
//! `tests/fixtures/<dialect>/<row>.http` (optional `#` comment lines, status line, headers,
//! blank line, body exactly as sent). Also checks that wording never makes an answer fail over
//! (only the rows of refusals without a structured field read it, all of request scope), and
//! that cooldown ends come out of the recorded headers and bodies: a spent subscription
//! window's reset, a Codex body's reset, else the hint.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use switchyard_core::connection::Protocol;
use switchyard_core::routing::{unix_ms, CooldownPolicy, FailureKind, Scope};
use switchyard_providers::{classify, table, Classified};

const DIALECTS: [Protocol; 2] = [Protocol::Openai, Protocol::Anthropic];

struct Fixture {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Fixture {
    /// The fixture's `date` header, or a fixed time when it has none.
    fn now(&self) -> SystemTime {
        self.headers
            .iter()
            .find(|(k, _)| k == "date")
            .and_then(|(_, v)| switchyard_providers::hint::parse_http_date(v))
            .unwrap_or(UNIX_EPOCH + Duration::from_secs(1_748_945_742))
    }

    fn classify(&self, p: Protocol) -> Classified {
        classify(p, self.status, self.headers.as_slice(), &self.body, self.now())
    }
}

fn dir(p: Protocol) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(p.as_str())
}

fn load(path: &Path) -> Result<Fixture, String> {
    let raw = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = String::from_utf8(raw).map_err(|e| format!("{}: {e}", path.display()))?;
    let (head, body) =
        text.split_once("\n\n").ok_or_else(|| format!("{}: no blank line before the body", path.display()))?;
    let mut lines = head.lines().filter(|l| !l.starts_with('#'));
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("{}: bad status line", path.display()))?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Ok(Fixture { status, headers, body: body.as_bytes().to_vec() })
}

fn fixture(p: Protocol, row: &str) -> Fixture {
    let path = dir(p).join(format!("{row}.http"));
    load(&path).expect("every table row needs a readable fixture")
}

#[test]
fn every_row_classifies_its_own_fixture() {
    let mut rows = 0;
    for p in DIALECTS {
        for rule in table(p) {
            let got = fixture(p, rule.name).classify(p);
            assert_eq!(
                (got.rule, got.failure.kind, got.failure.scope),
                (rule.name, rule.kind, rule.scope),
                "{p}/{}.http must be decided by its own row (an earlier row must not shadow it)",
                rule.name
            );
            rows += 1;
        }
    }
    assert!(rows >= 38, "both dialects have full tables ({rows} rows)");
}

#[test]
fn every_fixture_belongs_to_a_row_and_names_are_unique() {
    for p in DIALECTS {
        let names: Vec<&str> = table(p).iter().map(|r| r.name).collect();
        let unique: BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len(), "{p}: row names are fixture names, so unique");
        let entries = std::fs::read_dir(dir(p)).map(|d| d.flatten().count()).unwrap_or(0);
        let files: BTreeSet<String> = std::fs::read_dir(dir(p))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .collect();
        assert_eq!(files.len(), entries, "{p}: fixture names are UTF-8");
        let wanted: BTreeSet<String> = names.iter().map(|n| format!("{n}.http")).collect();
        assert_eq!(files, wanted, "{p}: exactly one fixture per row, no orphans");
        assert_eq!(
            table(p).last().map(|r| (r.kind, r.scope)),
            Some((FailureKind::Unknown, Scope::Ambiguous)),
            "{p}: anything unmatched falls through to unknown/ambiguous"
        );
    }
}

/// Replaces every `message` string in the JSON with other words.
fn reword(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                if k == "message" {
                    *val = Value::String("quota exceeded: invalid api key, rate limit".into());
                } else {
                    reword(val);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(reword),
        _ => {}
    }
}

#[test]
fn message_wording_never_makes_an_answer_fail_over() {
    for p in DIALECTS {
        for rule in table(p) {
            let mut f = fixture(p, rule.name);
            let before = f.classify(p);
            let Ok(mut json) = serde_json::from_slice::<Value>(&f.body) else {
                continue; // HTML bodies have no message field
            };
            reword(&mut json);
            f.body = serde_json::to_vec(&json).unwrap_or_default();
            let after = f.classify(p);
            if rule.message.is_none() {
                assert_eq!(
                    after, before,
                    "{p}/{}: changing only the message text must not change the classification",
                    rule.name
                );
                continue;
            }
            let fell_to = table(p).iter().find(|r| r.name == after.rule).expect("a row decides");
            assert!(
                fell_to.message.is_none(),
                "{p}/{}: reworded, a structured row decides ({})",
                rule.name,
                after.rule
            );
        }
    }
}

#[test]
fn rows_that_read_the_message_never_fail_over_nor_cool_a_key() {
    let mut readers = Vec::new();
    for p in DIALECTS {
        for rule in table(p).iter().filter(|r| r.message.is_some()) {
            assert_eq!(
                rule.scope,
                Scope::Request,
                "{p}/{}: wording may only keep an answer from failing over",
                rule.name
            );
            assert_eq!(
                CooldownPolicy::default().open_until(rule.kind, 0, None, 0),
                None,
                "{p}/{}: nor open a circuit",
                rule.name
            );
            readers.push(rule.name);
        }
    }
    assert_eq!(readers, ["claude_code_only", "extra_usage"], "only the refusals with no structured field of their own");
}

#[test]
fn spent_subscription_windows_cool_the_account_or_the_model_refusals_never_fail_over() {
    let scope_of = |p: Protocol, row: &str| {
        let c = fixture(p, row).classify(p);
        (c.rule, c.failure.kind, c.failure.scope)
    };
    use FailureKind::*;
    use Scope::*;
    let a = Protocol::Anthropic;
    for (row, scope) in [
        ("unified_5h_rejected", Credential),
        ("unified_7d_rejected", Credential),
        ("unified_rejected", Credential),
        ("unified_7d_opus_rejected", CredentialModel),
        ("unified_7d_sonnet_rejected", CredentialModel),
        ("unified_claim_opus", CredentialModel),
        ("unified_claim_sonnet", CredentialModel),
    ] {
        assert_eq!(scope_of(a, row), (row, QuotaExhausted, scope), "anthropic/{row}: a spent window is a spent quota");
    }
    assert_eq!(
        scope_of(Protocol::Openai, "usage_limit_reached"),
        ("usage_limit_reached", QuotaExhausted, Credential),
        "a spent Codex window cools the account"
    );
    for row in ["claude_code_only", "extra_usage"] {
        let (_, _, scope) = scope_of(a, row);
        assert!(!scope.allows_failover(), "anthropic/{row}: every account would refuse it the same: no failover");
    }
    // The extra-usage refusal stays a refusal even when a window also says rejected.
    let mut f = fixture(a, "extra_usage");
    f.headers.push(("anthropic-ratelimit-unified-5h-status".into(), "rejected".into()));
    assert_eq!(f.classify(a).rule, "extra_usage", "the message row comes first");
    // A rejected window whose reset is unreadable cools for the hint (here Retry-After).
    let mut f = fixture(a, "unified_5h_rejected");
    f.headers.retain(|(k, _)| k != "anthropic-ratelimit-unified-5h-reset");
    assert_eq!(f.classify(a).failure.retry_at_ms, Some(unix_ms(f.now()) + 7_999_000), "no reset: Retry-After");
    // A Codex reset ten years away is not believed: the policy's own end applies.
    let mut f = fixture(Protocol::Openai, "usage_limit_reached");
    f.body =
        br#"{"error":{"type":"usage_limit_reached","resets_at":2064564542,"resets_in_seconds":315360000}}"#.to_vec();
    assert_eq!(f.classify(Protocol::Openai).failure.retry_at_ms, None, "one answer cannot cool a key for years");
}

#[test]
fn cooldown_hints_come_from_the_recorded_headers() {
    // (dialect, row, expected retry-at offset from the fixture's date in ms)
    let expected: [(Protocol, &str, Option<i64>); 14] = [
        (Protocol::Openai, "rate_limit_exceeded", Some(1_576)), // x-ratelimit-reset-tokens of the exhausted limit
        (Protocol::Openai, "status_429", Some(30_000)),         // Retry-After: 30
        (Protocol::Openai, "insufficient_quota", None),         // no hint: policy decides (60 min)
        (Protocol::Openai, "usage_limit_reached", Some(8_058_000)), // the body's resets_at
        (Protocol::Anthropic, "rate_limit_error", Some(17_000)), // Retry-After wins over reset headers
        (Protocol::Anthropic, "overloaded_error", None),
        (Protocol::Anthropic, "unified_5h_rejected", Some(8_058_000)), // the 5 h reset, not Retry-After's 7999 s
        (Protocol::Anthropic, "unified_7d_rejected", Some(434_658_000)), // the weekly reset
        (Protocol::Anthropic, "unified_7d_opus_rejected", Some(261_858_000)), // the Opus window's reset
        (Protocol::Anthropic, "unified_7d_sonnet_rejected", Some(348_258_000)), // the Sonnet window's reset
        (Protocol::Anthropic, "unified_claim_opus", Some(261_858_000)), // the overall reset
        (Protocol::Anthropic, "unified_rejected", Some(8_058_000)),    // the overall reset
        (Protocol::Anthropic, "claude_code_only", None),               // a refusal: nothing cools
        (Protocol::Anthropic, "extra_usage", None),
    ];
    for (p, row, offset) in expected {
        let f = fixture(p, row);
        let got = f.classify(p).failure.retry_at_ms;
        assert_eq!(got, offset.map(|o| unix_ms(f.now()) + o), "{p}/{row}: the cooldown end parsed from its headers");
    }
}

#[test]
fn stream_error_events_classify_like_responses() {
    let event = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let got = classify(Protocol::Anthropic, 200, &(), event, UNIX_EPOCH);
    assert_eq!(
        (got.failure.kind, got.failure.scope),
        (FailureKind::Overloaded, Scope::Provider),
        "an error event inside a 200 stream is classified by its type"
    );
    let codex = br#"{"type":"error","status":429,"error":{"type":"usage_limit_reached","resets_in_seconds":60}}"#;
    let got = classify(Protocol::Openai, 200, &(), codex, UNIX_EPOCH);
    assert_eq!(
        (got.failure.kind, got.failure.scope, got.failure.retry_at_ms),
        (FailureKind::QuotaExhausted, Scope::Credential, Some(60_000)),
        "a Codex usage limit inside a stream cools the account until the reset its body names"
    );
    let garbage = classify(Protocol::Openai, 200, &(), b"not json", UNIX_EPOCH);
    assert_eq!(
        (garbage.failure.kind, garbage.failure.scope),
        (FailureKind::Unknown, Scope::Ambiguous),
        "unparseable answers are unknown/ambiguous"
    );
}
