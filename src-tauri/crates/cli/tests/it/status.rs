//! `switchyard status [--line]` on a data dir a relay left with a cooling key (429, 10 minutes)
//! and a spent window (the serving key's requests window at 100 %), today's spend against a
//! daily cap: both the table and the line say so, and neither carries a key.

use std::process::Command;

use serde_json::Value;
use switchyard_mock_provider::{Behaviour, KeyScript, MockProvider};

use crate::common::{post, run, serve_with, TestResult};

const KEY_A: &str = "sk-canary-status-a-5e02f1";
const KEY_B: &str = "sk-canary-status-b-c39d7a";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_line_names_a_cooling_key_and_a_spent_window() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key(KEY_A, KeyScript::new(["m1"]));
    mock.set_key(KEY_B, KeyScript::new(["m1"]));
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let base = mock.base_url();
    let add =
        ["connection", "add", "c", "--protocol", "anthropic", "--base-url", &base, "--model", "m1", "--secret-stdin"];
    assert_eq!(run(d, &add, Some(KEY_A))?.code, 0);
    assert_eq!(run(d, &["profile", "add", "c", "--label", "b", "--secret-stdin"], Some(KEY_B))?.code, 0);
    assert_eq!(run(d, &["verify", "c"], None)?.code, 0, "both keys verified");
    assert_eq!(run(d, &["routing", "activate", "c", "priority"], None)?.code, 0);
    for args in [
        &["prices", "set", "m1", "--input", "3", "--output", "15"][..],
        &["limits", "set", "connection:c", "--usd", "5", "--per", "day"],
    ] {
        let done = run(d, args, None)?;
        assert_eq!(done.code, 0, "{args:?}: {}", done.stderr);
    }
    let empty = run(d, &["status", "--line"], None)?;
    assert!(empty.stdout.starts_with("c 2ok"), "both keys ok before any traffic: {}", empty.stdout);
    mock.set_key(KEY_A, KeyScript::new(["m1"]).behaviour(Behaviour::rate_limited(600)));
    mock.set_key(KEY_B, KeyScript::new(["m1"]).quota(10, 1));

    let token = run(d, &["relay", "token"], None)?.stdout.trim().to_string();
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("switchyard"));
    cmd.arg("--data-dir").arg(d).args(["relay", "serve", "--listen", "127.0.0.1:0"]);
    let served = serve_with(cmd)?;
    let body = r#"{"model":"m1","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}"#;
    let headers = format!("x-api-key: {token}\r\nanthropic-version: 2023-06-01\r\n");
    let answer = post(&served.addr, "/c/c/v1/messages", &headers, body)?;
    assert!(answer.starts_with("HTTP/1.1 200"), "the second key serves: {answer:.80}");
    assert!(served.stop()?, "the relay stops (its quota readings flushed)");

    let line = run(d, &["status", "--line"], None)?;
    assert_eq!(line.code, 0, "{}", line.stderr);
    let text = line.stdout.trim();
    assert!(text.starts_with("c 1ok 1cool:"), "one key ok, one cooling with its countdown: {text}");
    assert!(text.contains("=100%"), "the spent window at 100 %: {text}");
    assert!(text.contains("/$5.00"), "today's spend against the daily cap: {text}");
    assert!(!text.contains('\n'), "one line");

    let table = run(d, &["status"], None)?;
    assert!(table.stdout.contains("1 cooling") && table.stdout.contains("100%"), "{}", table.stdout);
    let json = run(d, &["--json", "status"], None)?;
    let v: Value = serde_json::from_str(&json.stdout)?;
    let c = &v["connections"][0];
    assert_eq!((c["keys"]["ok"].as_i64(), c["keys"]["cooling"].as_i64()), (Some(1), Some(1)), "{v}");
    assert!(c["cooling_in_secs"].as_i64().is_some_and(|s| s > 500 && s <= 600), "the 429's ten minutes: {v}");
    assert_eq!(c["window"]["utilization"].as_f64(), Some(1.0), "{v}");
    assert!(c["spend_today_usd"].as_f64().is_some_and(|s| s > 0.0), "priced: today's spend is known: {v}");
    assert_eq!(c["cap_today_usd"].as_f64(), Some(5.0));
    for out in [&line.stdout, &table.stdout, &json.stdout, &line.stderr] {
        assert!(!out.contains(KEY_A) && !out.contains(KEY_B) && !out.contains(&token), "no key or token in status");
    }
    Ok(())
}
