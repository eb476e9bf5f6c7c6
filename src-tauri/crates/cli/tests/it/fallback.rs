//! CLI journey of fallback chains (issue 16): `routing fallback SLUG OTHER[=MODEL]...`,
//! `--clear`, `fallback-activate` gated like `routing activate` (exit 5 with the report),
//! `fallback-deactivate`, and `routing status --json`'s `fallback` object. Real keychain,
//! real HTTP to the mock provider.

use crate::common::{run, TestResult};
use serde_json::{json, Value};
use switchyard_mock_provider::{KeyScript, MockProvider};

fn add(dir: &std::path::Path, slug: &str, base: &str, models: &[&str], secret: &str) -> TestResult {
    let mut args = vec!["connection", "add", slug, "--protocol", "openai", "--base-url", base, "--secret-stdin"];
    for m in models {
        args.extend(["--model", m]);
    }
    let out = run(dir, &args, Some(secret))?;
    assert_eq!(out.code, 0, "connection add {slug}: {}", out.stderr);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_is_stored_inactive_activated_behind_its_gates_and_shown_in_status() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key("sk-canary-fa", KeyScript::new(["m1"]));
    mock.set_key("sk-canary-fb", KeyScript::new(["m1"]));
    mock.set_key("sk-canary-fx", KeyScript::new(["m1"]));
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let base = format!("{}/v1", mock.base_url());
    add(d, "a", &base, &["m1"], "sk-canary-fa")?;
    add(d, "b", &base, &["m1"], "sk-canary-fb")?;
    let anthropic = [
        "connection",
        "add",
        "x",
        "--protocol",
        "anthropic",
        "--base-url",
        &mock.base_url(),
        "--model",
        "m1",
        "--secret-stdin",
    ];
    assert_eq!(run(d, &anthropic, Some("sk-canary-fx"))?.code, 0, "connection add x");

    let mixed = run(d, &["routing", "fallback", "a", "x"], None)?;
    assert_eq!(mixed.code, 2, "a chain stays within one protocol: {}", mixed.stderr);
    assert!(mixed.stderr.contains("protocol"), "the error says why: {}", mixed.stderr);
    let own = run(d, &["routing", "fallback", "a", "a"], None)?;
    assert_eq!(own.code, 2, "a connection cannot fall back to itself: {}", own.stderr);

    let set = run(d, &["--json", "routing", "fallback", "a", "b"], None)?;
    assert_eq!(set.code, 0, "set the chain: {}", set.stderr);
    let shown: Value = serde_json::from_str(&set.stdout)?;
    assert_eq!(shown["chain"], json!([{"slug": "b", "model": null}]), "the chain, model-first");
    assert_eq!(shown["active"], false, "stored inactive");

    let cycle = run(d, &["routing", "fallback", "b", "a"], None)?;
    assert_eq!(cycle.code, 2, "b -> a while a -> b is a cycle: {}", cycle.stderr);
    assert!(cycle.stderr.contains("b -> a -> b"), "the cycle is named: {}", cycle.stderr);

    let refused = run(d, &["--json", "routing", "fallback-activate", "a"], None)?;
    assert_eq!(refused.code, 5, "b is not verified: the gate fails: {}", refused.stderr);
    let body: Value = serde_json::from_str(&refused.stdout)?;
    assert_eq!(body["error"]["code"], "precondition", "a gate failure is a precondition");
    assert_eq!(body["gates"]["ok"], false, "with the report");
    assert!(body["gates"]["failures"][0].as_str().unwrap_or_default().contains("hop b"), "naming the hop: {body}");

    assert_eq!(run(d, &["verify", "b"], None)?.code, 0, "verify b");
    let on = run(d, &["--json", "routing", "fallback-activate", "a"], None)?;
    assert_eq!(on.code, 0, "b has current evidence for m1: {}", on.stderr);
    let status: Value = serde_json::from_str(&run(d, &["--json", "routing", "status", "a"], None)?.stdout)?;
    let fb = &status["fallback"];
    assert_eq!(fb["chain"], json!([{"slug": "b", "model": null}]), "routing status shows the chain");
    assert_eq!(fb["active"], true, "and that it is active");
    assert_eq!(fb["gates"]["ok"], true, "with its gates");
    let text = run(d, &["routing", "status", "a"], None)?;
    assert!(text.stdout.contains("fallback: b (active)"), "the human status names it: {}", text.stdout);

    let off = run(d, &["--json", "routing", "fallback-deactivate", "a"], None)?;
    assert_eq!(off.code, 0, "deactivate: {}", off.stderr);
    assert_eq!(serde_json::from_str::<Value>(&off.stdout)?["active"], false, "inactive, still stored");

    let explicit = run(d, &["--json", "routing", "fallback", "a", "b=m1"], None)?;
    assert_eq!(serde_json::from_str::<Value>(&explicit.stdout)?["chain"][0]["model"], "m1", "OTHER=MODEL is kept");

    let cleared = run(d, &["--json", "routing", "fallback", "a", "--clear"], None)?;
    assert_eq!(cleared.code, 0, "clear: {}", cleared.stderr);
    assert_eq!(serde_json::from_str::<Value>(&cleared.stdout)?["chain"], json!([]), "no chain");
    let none = run(d, &["routing", "fallback-activate", "a"], None)?;
    assert_eq!(none.code, 4, "nothing to activate: {}", none.stderr);

    for out in [&set, &refused, &on, &off, &cleared] {
        for canary in ["sk-canary-fa", "sk-canary-fb", "sk-canary-fx"] {
            assert!(!out.stdout.contains(canary) && !out.stderr.contains(canary), "no secret is printed");
        }
    }
    Ok(())
}
