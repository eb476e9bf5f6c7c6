//! Fallback chains through the real commands over Tauri's mock runtime (issue 16): status,
//! set (stored inactive), the gated activation refused with the hop report, clear, the
//! background re-verification schedule per key, and no secret in any answer.

use crate::common::Shell;

use serde_json::{json, Value};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const CANARY: &str = "sk-canary-fallback";

fn seeded() -> Result<Shell, Box<dyn std::error::Error>> {
    let shell = Shell::start()?;
    for slug in ["main", "other"] {
        shell.ok(
            "connection_add",
            json!({ "input": { "slug": slug, "protocol": "openai", "base_url": "https://api.example.com/v1",
                    "models": ["m1"], "mappings": [], "headers": [] },
                    "secret": format!("{CANARY}-{slug}") }),
        )?;
    }
    Ok(shell)
}

#[test]
fn a_chain_is_set_inactive_refused_without_evidence_and_cleared() -> TestResult {
    let shell = seeded()?;
    let mut answers = Vec::new();
    let none = shell.ok("fallback_status", json!({ "slug": "main" }))?;
    assert_eq!(none["chain"], json!([]), "no chain yet: {none}");

    let set = shell.ok("fallback_set", json!({ "slug": "main", "hops": ["other=m1"] }))?;
    assert_eq!(set["chain"], json!([{ "slug": "other", "model": "m1" }]), "the chain as set: {set}");
    assert_eq!((set["active"].as_bool(), set["activated"].as_bool()), (Some(false), Some(false)), "stored inactive");
    answers.push(set);

    let refused = shell.err("fallback_activate", json!({ "slug": "main" }))?;
    assert_eq!(refused["code"], "precondition", "the gates fail: {refused}");
    let why = refused["gates"]["failures"].to_string();
    assert!(why.contains("hop other") && why.contains("m1"), "the report names hop and model: {why}");
    answers.push(refused);

    let cycle = shell.err("fallback_set", json!({ "slug": "other", "hops": ["main"] }))?;
    assert_eq!(cycle["code"], "invalid", "other -> main -> other is a cycle: {cycle}");

    let checks = shell.ok("key_checks", json!({ "slug": "main" }))?;
    assert_eq!(checks[0]["label"], "primary", "one row per key: {checks}");
    assert_eq!(checks[0]["last_checked"], Value::Null, "never verified");
    assert_eq!(checks[0]["next_due"], Value::Null, "nothing to keep fresh yet");
    answers.push(checks);

    let cleared = shell.ok("fallback_set", json!({ "slug": "main", "hops": [] }))?;
    assert_eq!(cleared["chain"], json!([]), "an empty list clears the chain: {cleared}");
    for a in &answers {
        assert!(!a.to_string().contains(CANARY), "no secret crosses IPC: {a}");
    }
    Ok(())
}
