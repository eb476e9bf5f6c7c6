//! The `mock-provider` binary: prints its URL as the first stdout line and serves the keys
//! of its `--script` file.

use std::process::Stdio;
use std::time::Duration;

use crate::common::client;
use anyhow::Context;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

#[tokio::test]
async fn prints_its_url_first_and_serves_the_script_file() -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("mock-provider-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let script = dir.join("script.json");
    std::fs::write(
        &script,
        r#"{"keys": {"sk-file": {"models": ["gpt-4o"], "per_model": {"gpt-4o": {"rate_limited": {"retry_after_secs": 9}}}}}}"#,
    )?;
    let dump = dir.join("requests.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mock-provider"))
        .arg("--script")
        .arg(&script)
        .arg("--dump-requests")
        .arg(&dump)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let stdout = child.stdout.take().context("stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let first = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .context("the URL line must come promptly")??
        .context("stdout closed before the URL line")?;
    let url = first
        .strip_prefix("mock provider listening on ")
        .context(format!("the first line announces the URL, got {first:?}"))?;
    assert!(url.starts_with("http://127.0.0.1:"), "a loopback URL with the bound port: {url}");

    let resp = client()
        .post(format!("{url}/v1/chat/completions"))
        .bearer_auth("sk-file")
        .json(&serde_json::json!({"model": "gpt-4o"}))
        .send()
        .await?;
    assert_eq!(resp.status().as_u16(), 429, "the script file's behaviour is served");
    assert_eq!(resp.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("9"), "with its parameters");
    let dumped = std::fs::read_to_string(&dump)?;
    let line: serde_json::Value = serde_json::from_str(dumped.lines().next().context("one request dumped")?)?;
    assert_eq!(line["path"], "/v1/chat/completions", "the dump has the request's path");
    assert_eq!(line["headers"]["authorization"], "[redacted]", "credentials are redacted in the dump");
    assert!(!dumped.contains("sk-file"), "the key never reaches the dump");
    assert!(line["body"].as_str().is_some_and(|b| b.contains("gpt-4o")), "the body text is kept");
    child.kill().await?;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
