//! CLI journeys of verify, routing and health against the mock provider (real HTTP, real keychain).

use crate::common::{run, TestResult};
use serde_json::Value;
use switchyard_mock_provider::{KeyScript, MockProvider};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_then_activate_with_gate_report_and_status_shape() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key("sk-canary-a", KeyScript::new(["m1", "m2"]));
    mock.set_key("sk-canary-b", KeyScript::new(["m1"]));
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let base = format!("{}/v1", mock.base_url());
    let add = [
        "connection",
        "add",
        "c",
        "--protocol",
        "openai",
        "--base-url",
        &base,
        "--model",
        "m1",
        "--model",
        "m2",
        "--secret-stdin",
    ];
    assert_eq!(run(d, &add, Some("sk-canary-a"))?.code, 0, "connection add");
    assert_eq!(
        run(d, &["profile", "add", "c", "--label", "b", "--secret-stdin"], Some("sk-canary-b"))?.code,
        0,
        "profile add"
    );

    let refused = run(d, &["--json", "routing", "activate", "c", "balanced"], None)?;
    assert_eq!(refused.code, 5, "activation before verification fails the gates: {}", refused.stderr);
    let body: Value = serde_json::from_str(&refused.stdout)?;
    assert_eq!(body["error"]["code"], "precondition", "gate failures are preconditions");
    assert_eq!(body["gates"]["ok"], false, "the full gate report comes with the error");
    assert_eq!(body["gates"]["models"][0]["excluded"][0]["reason"], "no_evidence", "each exclusion has its reason");

    let verified = run(d, &["verify", "c"], None)?;
    assert_eq!(verified.code, 0, "verify succeeds: {}", verified.stderr);
    assert!(
        verified.stderr.contains("[1/2]") && verified.stderr.contains("[2/2]"),
        "progress is shown: {}",
        verified.stderr
    );
    assert!(
        verified.stdout.contains("model m2: primary; not: b (model_unsupported)"),
        "per model, who can serve it: {}",
        verified.stdout
    );

    let activated = run(d, &["--json", "routing", "activate", "c", "balanced"], None)?;
    assert_eq!(activated.code, 0, "m1 has two keys, m2 one: gates hold: {}", activated.stderr);
    let status: Value = serde_json::from_str(&run(d, &["--json", "routing", "status", "c"], None)?.stdout)?;
    assert_eq!(
        (status["mode"].as_str(), status["state"].as_str()),
        (Some("balanced"), Some("active")),
        "status shows the mode"
    );
    let p = &status["profiles"][0];
    for key in ["id", "label", "weight", "enabled", "credential", "evidence", "health"] {
        assert!(!p[key].is_null(), "routing status --json profiles carry `{key}` (docs/interface.md)");
    }
    assert_eq!(p["health"][0]["model"], Value::Null, "the first health line is the credential-wide circuit");
    assert_eq!(p["health"][0]["state"], "closed", "closed after a successful verification");
    assert_eq!(
        status["affinity"],
        serde_json::json!({"mode": "conversation", "window_min": 10}),
        "balanced routing defaults to conversation affinity with a 10-minute window"
    );

    let set = run(d, &["--json", "routing", "affinity", "c", "turn", "--window-min", "5"], None)?;
    assert_eq!(set.code, 0, "routing affinity works: {}", set.stderr);
    let shown: Value = serde_json::from_str(&set.stdout)?;
    assert_eq!(shown["affinity"], serde_json::json!({"mode": "turn", "window_min": 5}), "it answers with the status");
    let again = run(d, &["--json", "routing", "affinity", "c", "conversation"], None)?;
    let again: Value = serde_json::from_str(&again.stdout)?;
    assert_eq!(
        again["affinity"],
        serde_json::json!({"mode": "conversation", "window_min": 5}),
        "without --window-min the window stays"
    );
    let human = run(d, &["routing", "status", "c"], None)?;
    assert!(human.stdout.contains("affinity: conversation (5 min window"), "people see it too: {}", human.stdout);
    let bad_mode = run(d, &["routing", "affinity", "c", "sideways"], None)?;
    assert_eq!(bad_mode.code, 2, "an unknown affinity is a usage error");
    let bad_window = run(d, &["--json", "routing", "affinity", "c", "turn", "--window-min", "0"], None)?;
    assert_eq!(bad_window.code, 2, "a window outside 1..=1440 minutes is refused: {}", bad_window.stderr);
    assert!(bad_window.stdout.contains("window_min"), "the error names the field: {}", bad_window.stdout);
    let kept: Value = serde_json::from_str(&run(d, &["--json", "routing", "status", "c"], None)?.stdout)?;
    assert_eq!(kept["affinity"]["window_min"], 5, "a refused change changes nothing");

    assert_eq!(
        kept["quota_aware"],
        serde_json::json!({"enabled": false, "reserve_pct": 0}),
        "quota-aware selection is off unless turned on"
    );
    let on = run(d, &["--json", "routing", "quota-aware", "c", "on", "--reserve-pct", "10"], None)?;
    assert_eq!(on.code, 0, "routing quota-aware works: {}", on.stderr);
    let on: Value = serde_json::from_str(&on.stdout)?;
    assert_eq!(
        on["quota_aware"],
        serde_json::json!({"enabled": true, "reserve_pct": 10}),
        "it answers with the status"
    );
    let off = run(d, &["--json", "routing", "quota-aware", "c", "off"], None)?;
    let off: Value = serde_json::from_str(&off.stdout)?;
    assert_eq!(
        off["quota_aware"],
        serde_json::json!({"enabled": false, "reserve_pct": 10}),
        "without --reserve-pct the reserve stays"
    );
    let human = run(d, &["routing", "status", "c"], None)?;
    assert!(human.stdout.contains("quota-aware: off"), "people see it too: {}", human.stdout);
    let bad_pct = run(d, &["--json", "routing", "quota-aware", "c", "on", "--reserve-pct", "51"], None)?;
    assert_eq!(bad_pct.code, 2, "a reserve outside 0..=50 % is refused: {}", bad_pct.stderr);
    assert!(bad_pct.stdout.contains("reserve_pct"), "the error names the field: {}", bad_pct.stdout);

    let reset = run(d, &["health", "reset", "c", "b"], None)?;
    assert_eq!(reset.code, 0, "health reset works: {}", reset.stderr);
    let unknown = run(d, &["health", "reset", "c", "ghost"], None)?;
    assert_eq!(unknown.code, 4, "unknown profile is not found");
    let all = format!("{}{}{}{}", refused.stdout, verified.stdout, verified.stderr, activated.stdout);
    assert!(!all.contains("canary"), "no secret in CLI output");
    mock.shutdown().await?;
    Ok(())
}
