//! `switchyard pool …` and `switchyard exec POOL -- CMD` through the built binary: a pool of
//! two anthropic connections on two mock providers is added, refused activation without
//! evidence (exit 5, the report names the member), activated once verified; six launches of a
//! stub tool over a 2:1 pool land 4/2 in the rotation order `ga kb ga ga kb ga`, each on its
//! member-pinned relay path; `pool list` shows the member launched last; with `--failover`
//! and both members' mocks refusing, each member is tried once, the table shows each with its
//! exit code and what the relay recorded, and the exit code is 1.

use std::path::Path;

use crate::common::{run, run_env, TestResult};
use switchyard_mock_provider::{Behaviour, KeyScript, MockProvider};

/// Posts one Messages request to the relay the environment points at; appends the base URL
/// to the file in argv[1]; exits 0 on a 200, else 3.
const STUB: &str = r#"
import json, os, sys, urllib.request, urllib.error
base = os.environ["ANTHROPIC_BASE_URL"]
open(sys.argv[1], "a").write(base + "\n")
body = json.dumps({"model": "m1", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}).encode()
req = urllib.request.Request(base + "/v1/messages", data=body, method="POST",
    headers={"Authorization": "Bearer " + os.environ["ANTHROPIC_AUTH_TOKEN"], "content-type": "application/json",
             "anthropic-version": "2023-06-01"})
try:
    with urllib.request.urlopen(req, timeout=20) as r:
        sys.exit(0 if r.status == 200 else 3)
except urllib.error.HTTPError:
    sys.exit(3)
"#;

fn add(d: &Path, slug: &str, base: &str, key: &str) -> TestResult {
    let args =
        ["connection", "add", slug, "--protocol", "anthropic", "--base-url", base, "--model", "m1", "--secret-stdin"];
    let added = run(d, &args, Some(key))?;
    assert_eq!(added.code, 0, "connection add {slug}: {}", added.stderr);
    Ok(())
}

fn free_port() -> Result<u16, std::io::Error> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_pool_rotates_launches_by_weight_and_failover_reports_every_member() -> TestResult {
    let (mock_a, mock_b) = (MockProvider::start().await?, MockProvider::start().await?);
    mock_a.set_key("sk-ant-pool-ga", KeyScript::new(["m1"]));
    mock_b.set_key("sk-ant-pool-kb", KeyScript::new(["m1"]));
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    add(d, "ga", &mock_a.base_url(), "sk-ant-pool-ga")?;
    add(d, "kb", &mock_b.base_url(), "sk-ant-pool-kb")?;
    let added =
        run(d, &["pool", "add", "lb", "--protocol", "anthropic", "--member", "ga:2", "--member", "kb:1"], None)?;
    assert_eq!(added.code, 0, "pool add: {}", added.stderr);
    let refused = run(d, &["pool", "activate", "lb", "balanced"], None)?;
    assert_eq!(refused.code, 5, "no evidence yet: the gates fail closed (exit 5): {}", refused.stderr);
    assert!(refused.stderr.contains("member 'ga'"), "the report names the member: {}", refused.stderr);
    for slug in ["ga", "kb"] {
        assert_eq!(run(d, &["verify", slug], None)?.code, 0, "verify {slug}");
    }
    let on = run(d, &["--json", "pool", "activate", "lb", "balanced"], None)?;
    assert_eq!(on.code, 0, "activated once verified: {}", on.stderr);
    let status: serde_json::Value = serde_json::from_str(&on.stdout)?;
    assert_eq!(status["pool"]["state"], "active", "the pool routes: {status}");
    mock_a.reset_counts();
    mock_b.reset_counts();

    let script = d.join("stub.py");
    std::fs::write(&script, STUB)?;
    let seen = d.join("seen.txt");
    let port = free_port()?.to_string();
    let env = [("SWITCHYARD_RELAY_PORT", port.as_str())];
    let exec = |failover: bool| {
        let mut args = vec!["exec", "lb"];
        if failover {
            args.push("--failover");
        }
        args.extend(["--", "python3", script.to_str().unwrap_or_default(), seen.to_str().unwrap_or_default()]);
        run_env(d, &args, None, &env)
    };
    for launch in 0..6 {
        let out = exec(false)?;
        assert_eq!(out.code, 0, "launch {launch} succeeded through its member: {}", out.stderr);
    }
    let members: Vec<String> = std::fs::read_to_string(&seen)?
        .lines()
        .map(|l| l.rsplit_once("/c/lb@").map(|(_, m)| m.to_string()).unwrap_or_default())
        .collect();
    assert_eq!(members, ["ga", "kb", "ga", "ga", "kb", "ga"], "SWRR per launch, kept between processes: 4/2");
    assert_eq!((mock_a.hits("sk-ant-pool-ga"), mock_b.hits("sk-ant-pool-kb")), (4, 2), "each launch on its member");
    let list = run(d, &["pool", "list"], None)?;
    assert!(
        list.stdout.contains("lb") && list.stdout.contains(" ga "),
        "pool list shows the last launched: {}",
        list.stdout
    );

    let rows: serde_json::Value = serde_json::from_str(&run(d, &["--json", "attempts", "lb"], None)?.stdout)?;
    let rows = rows.as_array().ok_or("attempts POOL is a list")?;
    assert_eq!(rows.len(), 6, "attempts POOL lists the pool's rows");
    assert!(
        rows.iter().all(|r| r["pool"] == "lb" && (r["member"] == "ga" || r["member"] == "kb")),
        "each row carries pool and member: {rows:?}"
    );
    let usage: serde_json::Value =
        serde_json::from_str(&run(d, &["--json", "usage", "lb", "--by", "member"], None)?.stdout)?;
    let by: Vec<(String, i64)> = usage["rows"]
        .as_array()
        .ok_or("usage rows")?
        .iter()
        .map(|r| (r["key"].as_str().unwrap_or_default().to_string(), r["requests"].as_i64().unwrap_or(0)))
        .collect();
    assert_eq!(by, vec![("ga".to_string(), 4), ("kb".to_string(), 2)], "usage POOL --by member");
    let routing: serde_json::Value =
        serde_json::from_str(&run(d, &["--json", "routing", "status", "lb"], None)?.stdout)?;
    assert_eq!(routing["pool"]["state"], "active", "routing status POOL is the pool's status: {routing}");
    assert_eq!(routing["shares"][0]["member"], "ga", "with the members' shares against weights");

    // Both members' mocks refuse: each member is tried once, the table says so, exit 1.
    mock_a.set_key("sk-ant-pool-ga", KeyScript::new(["m1"]).behaviour(Behaviour::Unauthorized));
    mock_b.set_key("sk-ant-pool-kb", KeyScript::new(["m1"]).behaviour(Behaviour::Unauthorized));
    std::fs::write(&seen, "")?;
    let failed = exec(true)?;
    assert_eq!(failed.code, 1, "every member failed: exit 1: {}", failed.stderr);
    let tried = std::fs::read_to_string(&seen)?;
    assert_eq!(tried.lines().count(), 2, "each member once: {tried}");
    for member in ["ga", "kb"] {
        let row = failed.stderr.lines().find(|l| l.starts_with(&format!("{member} "))).unwrap_or_default();
        assert!(
            row.contains(" 3 ") && row.contains("auth_invalid (401)"),
            "{member}: exit code and the relay's reason: {}",
            failed.stderr
        );
    }
    Ok(())
}
