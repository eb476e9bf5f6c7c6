//! `switchyard quota` across processes (issue 15): `relay serve` reads the mock provider's
//! limit headers, writes them as it stops, and a later `quota` shows them — `--json` in the
//! exact contract shape, human text with remaining/limit, the reset countdown and the age —
//! without the key anywhere.

use crate::common;

use crate::common::{post_messages, run, TestResult};
use serde_json::Value;
use switchyard_mock_provider::{KeyScript, MockProvider};

const CANARY: &str = "sk-canary-cli-quota-5e1b";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quota_shows_what_the_relay_read_with_its_age_in_the_contract_shape() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key(CANARY, KeyScript::new(["m1"]).quota(30, 29));
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let base = mock.base_url();
    let add =
        ["connection", "add", "c", "--protocol", "anthropic", "--base-url", &base, "--model", "m1", "--secret-stdin"];
    assert_eq!(run(d, &add, Some(CANARY))?.code, 0, "connection added (legacy)");
    let before = run(d, &["--json", "quota", "c"], None)?;
    let empty: Value = serde_json::from_str(&before.stdout)?;
    assert_eq!(empty["profiles"][0]["windows"], serde_json::json!([]), "no readings before any answer");

    let token = run(d, &["relay", "token"], None)?.stdout.trim().to_string();
    let relay = common::serve(d)?;
    let addr = relay.addr.clone();
    let answers: Vec<String> = (0..3).map(|_| post_messages(&addr, &token, "")).collect::<Result<_, _>>()?;
    assert!(relay.stop()?, "SIGTERM stops the relay cleanly, writing what it read");
    for a in &answers {
        assert!(a.starts_with("HTTP/1.1 200"), "each call is served: {a:.80}");
    }

    let shown = run(d, &["--json", "quota", "c"], None)?;
    assert_eq!(shown.code, 0, "quota succeeds: {}", shown.stderr);
    let body: Value = serde_json::from_str(&shown.stdout)?;
    let keys: Vec<&str> = body.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    assert_eq!(keys, ["profiles"], "top level: profiles only");
    let p = &body["profiles"][0];
    let mut pkeys: Vec<&str> = p.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    pkeys.sort_unstable();
    assert_eq!(pkeys, ["id", "windows"], "a profile: id and windows");
    let w = &p["windows"][0];
    let mut wkeys: Vec<&str> = w.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    wkeys.sort_unstable();
    assert_eq!(
        wkeys,
        ["limit", "model", "name", "remaining", "resets_at", "seen_at", "utilization"],
        "a window has exactly the contract's fields"
    );
    assert_eq!((w["name"].as_str(), w["model"].as_str()), (Some("requests"), Some("m1")), "per model");
    assert_eq!((w["limit"].as_i64(), w["remaining"].as_i64()), (Some(30), Some(27)), "the third answer's report");
    assert_eq!(w["utilization"], Value::Null, "the provider said nothing about utilization: null");
    let seen = w["seen_at"].as_str().unwrap_or_default();
    assert!(seen.ends_with('Z') && chrono_like(seen), "seen_at is RFC 3339 UTC: {seen}");
    assert!(w["resets_at"].as_str().is_some_and(|t| t.ends_with('Z')), "resets_at is RFC 3339 UTC");

    let human = run(d, &["quota", "c"], None)?;
    assert!(human.stdout.contains("27/30 left"), "remaining/limit: {}", human.stdout);
    assert!(
        human.stdout.contains("resets in") && human.stdout.contains("as of"),
        "countdown and age: {}",
        human.stdout
    );
    let missing = run(d, &["quota", "nope"], None)?;
    assert_eq!(missing.code, 4, "an unknown connection is not found");
    let all = format!("{}{}{}{}", shown.stdout, shown.stderr, human.stdout, human.stderr);
    assert!(!all.contains("canary"), "no secret in quota output");
    mock.shutdown().await?;
    Ok(())
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ`.
fn chrono_like(t: &str) -> bool {
    t.len() == 24 && t.as_bytes()[10] == b'T' && t.as_bytes()[4] == b'-'
}
