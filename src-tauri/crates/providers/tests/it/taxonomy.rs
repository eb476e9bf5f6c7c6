//! Runs every classification table row against its fixture: a recorded provider answer in
//! `tests/fixtures/<dialect>/<row>.http` (optional `#` comment lines, status line, headers,
//! blank line, body exactly as sent). Also checks that wording is never read and that
//! cooldown hints come out of the recorded headers.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use switchyard_core::connection::Protocol;
use switchyard_core::routing::{unix_ms, FailureKind, Scope};
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
    assert!(rows >= 28, "both dialects have full tables ({rows} rows)");
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
fn message_wording_is_never_read() {
    for p in DIALECTS {
        for rule in table(p) {
            let mut f = fixture(p, rule.name);
            let before = f.classify(p);
            let Ok(mut json) = serde_json::from_slice::<Value>(&f.body) else {
                continue; // HTML bodies have no message field
            };
            reword(&mut json);
            f.body = serde_json::to_vec(&json).unwrap_or_default();
            assert_eq!(
                f.classify(p),
                before,
                "{p}/{}: changing only the message text must not change the classification",
                rule.name
            );
        }
    }
}

#[test]
fn cooldown_hints_come_from_the_recorded_headers() {
    // (dialect, row, expected retry-at offset from the fixture's date in ms)
    let expected: [(Protocol, &str, Option<i64>); 5] = [
        (Protocol::Openai, "rate_limit_exceeded", Some(1_576)), // x-ratelimit-reset-tokens of the exhausted limit
        (Protocol::Openai, "status_429", Some(30_000)),         // Retry-After: 30
        (Protocol::Openai, "insufficient_quota", None),         // no hint: policy decides (60 min)
        (Protocol::Anthropic, "rate_limit_error", Some(17_000)), // Retry-After wins over reset headers
        (Protocol::Anthropic, "overloaded_error", None),
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
    let garbage = classify(Protocol::Openai, 200, &(), b"not json", UNIX_EPOCH);
    assert_eq!(
        (garbage.failure.kind, garbage.failure.scope),
        (FailureKind::Unknown, Scope::Ambiguous),
        "unparseable answers are unknown/ambiguous"
    );
}
