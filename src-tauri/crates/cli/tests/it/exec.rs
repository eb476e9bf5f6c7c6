//! `switchyard exec SLUG -- CMD`: a child script sees the relay variables and reaches the mock
//! provider through the relay with the token from its environment; its exit code (and 128 +
//! signal) comes back; with no relay running an embedded one serves and is gone afterwards;
//! a relay already listening is used; the token is in no argv and no output, and never reaches
//! a stranger listening on the relay port.

use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{run, TestResult};
use switchyard_mock_provider::{KeyScript, MockProvider};

const CHILD: &str = r#"
import json, os, sys, urllib.request
out = sys.argv[1]
seen = {k: os.environ.get(k) for k in ("ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY", "SWITCHYARD_RELAY_TOKEN")}
with open(f"/proc/{os.getpid()}/cmdline", "rb") as f:
    cmdline = f.read().decode(errors="replace")
body = json.dumps({"model": "claude-a", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}).encode()
req = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", data=body, method="POST",
    headers={"Authorization": "Bearer " + os.environ["ANTHROPIC_AUTH_TOKEN"], "content-type": "application/json",
             "anthropic-version": "2023-06-01"})
with urllib.request.urlopen(req, timeout=20) as r:
    status, answer = r.status, r.read().decode()
json.dump({"env": seen, "cmdline": cmdline, "status": status, "answer": answer}, open(out, "w"))
print("child done")
sys.exit(int(sys.argv[2]))
"#;

fn free_port() -> Result<u16, std::io::Error> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn switchyard() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("switchyard")
}

fn add_anthropic(d: &Path, base: &str) -> TestResult {
    let add = [
        "connection",
        "add",
        "cc",
        "--protocol",
        "anthropic",
        "--base-url",
        base,
        "--model",
        "claude-a",
        "--secret-stdin",
    ];
    let added = run(d, &add, Some("sk-ant-exec-canary-01"))?;
    assert_eq!(added.code, 0, "connection add: {}", added.stderr);
    Ok(())
}

/// The mock provider and a data dir whose anthropic connection `cc` points at it.
async fn cc_on_mock() -> Result<(MockProvider, tempfile::TempDir), Box<dyn std::error::Error>> {
    let mock = MockProvider::start().await?;
    let dir = tempfile::tempdir()?;
    add_anthropic(dir.path(), &mock.base_url())?;
    Ok((mock, dir))
}

fn port_of(url: &str) -> u16 {
    url.rsplit_once(':').and_then(|(_, rest)| rest.split('/').next()).and_then(|p| p.parse().ok()).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_child_reaches_the_relay_with_its_env_token_and_its_exit_code_comes_back() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key("sk-ant-exec-canary-01", KeyScript::new(["claude-a"]).reply("exec says hi"));
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    add_anthropic(d, &mock.base_url())?;
    let token = run(d, &["relay", "token"], None)?.stdout.trim().to_string();
    assert!(token.starts_with("sy_"), "the relay token exists");
    let script = d.join("child.py");
    std::fs::write(&script, CHILD)?;
    let report = d.join("report.json");
    let unused = free_port()?;

    // No relay on the configured port: an embedded one serves the child.
    let out = tokio::task::spawn_blocking({
        let (d, script, report) = (d.to_path_buf(), script.clone(), report.clone());
        move || {
            Command::new(switchyard())
                .arg("--data-dir")
                .arg(&d)
                .args(["exec", "cc", "--", "python3"])
                .arg(&script)
                .arg(&report)
                .arg("7")
                .env("SWITCHYARD_RELAY_PORT", unused.to_string())
                .env("ANTHROPIC_API_KEY", "sk-ant-should-not-reach-the-child")
                .output()
        }
    })
    .await??;
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(7), "the child's exit code comes back: {stderr}");
    assert!(stdout.contains("child done"), "the child's stdout passes through: {stdout}");
    assert!(!stdout.contains(&token) && !stderr.contains(&token), "the token is in no output");
    let seen: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report)?)?;
    let base = seen["env"]["ANTHROPIC_BASE_URL"].as_str().unwrap_or_default().to_string();
    assert!(
        base.starts_with("http://127.0.0.1:") && base.ends_with("/c/cc"),
        "the base URL is the relay's for cc: {base}"
    );
    let port = port_of(&base);
    assert_ne!(port, unused, "nothing listened on the configured port, so an embedded relay on another port served");
    assert_eq!(seen["env"]["ANTHROPIC_AUTH_TOKEN"], token.as_str(), "the token arrives in the environment");
    assert_eq!(seen["env"]["SWITCHYARD_RELAY_TOKEN"], token.as_str(), "and as SWITCHYARD_RELAY_TOKEN");
    assert!(seen["env"]["ANTHROPIC_API_KEY"].is_null(), "a provider key from the parent is not passed on");
    assert_eq!(seen["status"], 200, "the call through the relay succeeded: {seen}");
    assert!(seen["answer"].as_str().unwrap_or_default().contains("exec says hi"), "the mock answered: {seen}");
    assert!(mock.hits("sk-ant-exec-canary-01") >= 1, "the relay used the connection's key");
    let cmdline = seen["cmdline"].as_str().unwrap_or_default();
    assert!(cmdline.contains("child.py") && !cmdline.contains(&token), "the child's argv holds no token: {cmdline:?}");
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err(), "the embedded relay is gone once the child exited");

    // A relay already listening on the configured port is used as it is.
    let listen = free_port()?;
    let mut relay = Command::new(switchyard())
        .arg("--data-dir")
        .arg(d)
        .args(["relay", "serve", "--listen", &format!("127.0.0.1:{listen}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", listen)).is_err() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = Command::new(switchyard())
        .arg("--data-dir")
        .arg(d)
        .args(["exec", "cc", "--", "python3"])
        .arg(&script)
        .arg(&report)
        .arg("0")
        .env("SWITCHYARD_RELAY_PORT", listen.to_string())
        .output()?;
    let _ = relay.kill();
    let _ = relay.wait();
    assert_eq!(out.status.code(), Some(0), "exit 0 passes through: {}", String::from_utf8_lossy(&out.stderr));
    let seen: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report)?)?;
    let base = seen["env"]["ANTHROPIC_BASE_URL"].as_str().unwrap_or_default();
    assert_eq!(port_of(base), listen, "the running relay was used: {base}");
    assert_eq!(seen["status"], 200, "and it served the call: {seen}");
    mock.shutdown().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_reaches_the_child_and_its_signal_becomes_128_plus_signo() -> TestResult {
    let (mock, dir) = cc_on_mock().await?;
    let d = dir.path();
    let ready = d.join("ready");
    let code = format!("import time; open({:?}, 'w').write('1'); time.sleep(60)", ready.display().to_string());
    let mut exec = Command::new(switchyard())
        .arg("--data-dir")
        .arg(d)
        .args(["exec", "cc", "--", "python3", "-c", &code])
        .env("SWITCHYARD_RELAY_PORT", free_port()?.to_string())
        .spawn()?;
    let started = Instant::now();
    while !ready.exists() && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(ready.exists(), "the child started");
    let killed = Command::new("kill").args(["-TERM", &exec.id().to_string()]).status()?;
    assert!(killed.success(), "SIGTERM sent to switchyard exec");
    let started = Instant::now();
    let status = loop {
        if let Some(s) = exec.try_wait()? {
            break s;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "exec ends once its child died of the forwarded SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(128 + 15), "a child killed by SIGTERM gives exit code 143");
    mock.shutdown().await?;
    Ok(())
}

/// A stranger on the configured port: answers every request like a relay of this data dir
/// would have (200, `cc` listed, a made-up proof) and keeps every byte it was sent.
fn impostor(listener: std::net::TcpListener) -> std::sync::Arc<std::sync::Mutex<Vec<u8>>> {
    use std::io::{Read, Write};
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
            let mut buf = [0u8; 4096];
            if let Ok(n) = s.read(&mut buf) {
                kept.lock().map(|mut k| k.extend_from_slice(&buf[..n])).unwrap_or_default();
            }
            let body = r#"{"ok":true,"connections":[{"slug":"cc","protocol":"anthropic"}],"proof":"00ff"}"#;
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(head.as_bytes());
            let _ = s.write_all(body.as_bytes());
        }
    });
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stranger_on_the_relay_port_never_sees_the_token_and_an_embedded_relay_serves() -> TestResult {
    let (mock, dir) = cc_on_mock().await?;
    let d = dir.path();
    let token = run(d, &["relay", "token"], None)?.stdout.trim().to_string();
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    let seen = impostor(listener);
    let report = d.join("base.txt");
    let code =
        format!("import os; open({:?}, 'w').write(os.environ['ANTHROPIC_BASE_URL'])", report.display().to_string());
    let out = tokio::task::spawn_blocking({
        let d = d.to_path_buf();
        move || {
            Command::new(switchyard())
                .arg("--data-dir")
                .arg(&d)
                .args(["exec", "cc", "--", "python3", "-c", &code])
                .env("SWITCHYARD_RELAY_PORT", port.to_string())
                .output()
        }
    })
    .await??;
    assert_eq!(out.status.code(), Some(0), "exec ran the child: {}", String::from_utf8_lossy(&out.stderr));
    let received = String::from_utf8_lossy(&seen.lock().map(|s| s.clone()).unwrap_or_default()).into_owned();
    assert!(!received.contains(&token), "the process on the relay port was never sent the token: {received:?}");
    let base = std::fs::read_to_string(&report)?;
    assert_ne!(port_of(&base), port, "its made-up answer did not pass for this data dir's relay: {base}");
    assert!(base.ends_with("/c/cc"), "an embedded relay served the child instead: {base}");
    mock.shutdown().await?;
    Ok(())
}

const GEMINI_CHILD: &str = r#"
import json, os, sys, urllib.request
out = sys.argv[1]
names = ("GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "SWITCHYARD_RELAY_TOKEN")
seen = {k: os.environ.get(k) for k in names}
body = json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).encode()
url = os.environ["GOOGLE_GEMINI_BASE_URL"] + "/v1beta/models/gemini-2.5-flash:generateContent"
req = urllib.request.Request(url, data=body, method="POST",
    headers={"x-goog-api-key": os.environ["GEMINI_API_KEY"], "content-type": "application/json"})
with urllib.request.urlopen(req, timeout=20) as r:
    status, answer = r.status, r.read().decode()
json.dump({"env": seen, "status": status, "answer": answer}, open(out, "w"))
"#;

/// `exec` on a gemini connection: the child gets Gemini CLI's variables (base URL, the relay
/// token as its API key), no Google key from the parent, and reaches the provider through the
/// relay with the profile's key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_child_gets_gemini_cli_s_variables_and_reaches_the_relay() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key("g-exec-canary-01", KeyScript::new(["gemini-2.5-flash"]).reply("gemini via exec"));
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let add = [
        "connection",
        "add",
        "gem",
        "--protocol",
        "gemini",
        "--base-url",
        &mock.base_url(),
        "--model",
        "gemini-2.5-flash",
        "--secret-stdin",
    ];
    let added = run(d, &add, Some("g-exec-canary-01"))?;
    assert_eq!(added.code, 0, "connection add: {}", added.stderr);
    let token = run(d, &["relay", "token"], None)?.stdout.trim().to_string();
    let script = d.join("child.py");
    std::fs::write(&script, GEMINI_CHILD)?;
    let report = d.join("report.json");
    let unused = free_port()?;
    let out = tokio::task::spawn_blocking({
        let (d, script, report) = (d.to_path_buf(), script.clone(), report.clone());
        move || {
            Command::new(switchyard())
                .arg("--data-dir")
                .arg(&d)
                .args(["exec", "gem", "--", "python3"])
                .arg(&script)
                .arg(&report)
                .env("SWITCHYARD_RELAY_PORT", unused.to_string())
                .env("GOOGLE_API_KEY", "AIza-should-not-reach-the-child")
                .output()
        }
    })
    .await??;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "the child succeeded: {stderr}");
    let seen: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report)?)?;
    let base = seen["env"]["GOOGLE_GEMINI_BASE_URL"].as_str().unwrap_or_default();
    assert!(base.starts_with("http://127.0.0.1:") && base.ends_with("/c/gem"), "the relay's base for gem: {base}");
    assert_eq!(seen["env"]["GEMINI_API_KEY"], token.as_str(), "the relay token is Gemini CLI's API key");
    assert!(seen["env"]["GOOGLE_API_KEY"].is_null(), "a Google key from the parent is not passed on");
    assert_eq!(seen["status"], 200, "the call through the relay succeeded: {seen}");
    assert!(seen["answer"].as_str().unwrap_or_default().contains("gemini via exec"), "the mock answered: {seen}");
    assert_eq!(mock.hits("g-exec-canary-01"), 1, "with the connection's key");
    assert!(mock.keys_seen_in_urls().is_empty(), "never in a URL");
    Ok(())
}
