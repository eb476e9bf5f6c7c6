//! `relay serve` under a low descriptor limit (issue 12): with `ulimit -n 200`, 300 idle
//! sockets are opened against it and a real request still gets its answer at once — the
//! relay sizes its connection cap from the limit and closes the oldest idle, token-less
//! connections to make room.

use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{post, run, serve_with, TestResult};
use switchyard_mock_provider::{KeyScript, MockProvider};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_request_is_served_through_an_idle_flood_under_a_low_fd_limit() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key("sk-canary-fd", KeyScript::new(["m1"]));
    let dir = tempfile::tempdir()?;
    let base = format!("{}/v1", mock.base_url());
    let add =
        ["connection", "add", "c", "--protocol", "openai", "--base-url", &base, "--model", "m1", "--secret-stdin"];
    assert_eq!(run(dir.path(), &add, Some("sk-canary-fd"))?.code, 0, "connection added");
    let token = run(dir.path(), &["relay", "token"], None)?.stdout.trim().to_string();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(r#"ulimit -n 200 && exec "$0" --data-dir "$1" relay serve --listen 127.0.0.1:0"#)
        .arg(assert_cmd::cargo::cargo_bin("switchyard"))
        .arg(dir.path());
    let relay = serve_with(cmd)?;
    let addr = relay.addr.clone();
    let result = async {
        let mut idle = Vec::new();
        for _ in 0..300 {
            match TcpStream::connect(&addr) {
                Ok(s) => idle.push(s),
                Err(e) => return Err(format!("connect failed while flooding: {e}").into()),
            }
        }
        std::thread::sleep(Duration::from_millis(200));
        let started = Instant::now();
        let body = r#"{"model":"m1","messages":[{"role":"user","content":"hi"}]}"#;
        let answer = post(&addr, "/c/c/v1/chat/completions", &format!("authorization: Bearer {token}\r\n"), body)?;
        assert!(answer.starts_with("HTTP/1.1 200"), "served through 300 idle sockets at ulimit -n 200: {answer:.80}");
        assert!(started.elapsed() < Duration::from_secs(5), "at once, not after idle timeouts");
        drop(idle);
        Ok::<(), Box<dyn std::error::Error>>(())
    }
    .await;
    let _ = relay.stop();
    result
}
