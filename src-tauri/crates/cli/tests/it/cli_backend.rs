//! The CLI backend through the `switchyard` binary (docs/interface.md, `routing cli-backend`):
//! off by default, turned on with a cap, a range error for a bad cap; `relay serve` runs the
//! CLI named by `SWITCHYARD_CLAUDE_BIN` (a stub here) for a plain Messages request and
//! `attempts --json` shows the CLI's usage and reference cost. One more journey runs the real
//! Claude Code when `SWITCHYARD_TEST_CLAUDE` names its binary (2.1.332 checked; skipped
//! otherwise): the flags are accepted, the login's canary reaches only the connection's base
//! URL (a local fake of the Messages API here), and `max_tokens` and "no thinking" are what
//! that API receives. Run under `scripts/with-keychain` (the relay token).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::common::{post, run, serve_with, TestResult};

const MODEL: &str = "claude-haiku-4-5";
const CANARY: &str = "sk-ant-oat01-CANARY-cli-binary-8c21";

const STUB: &str = r#"#!/usr/bin/env python3
import json, os, sys
d = os.environ["CLAUDE_CONFIG_DIR"]
stdin = sys.stdin.read()
json.dump({"argv": sys.argv[1:], "stdin": stdin}, open(os.path.join(d, "call.json"), "w"))
print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "stop_reason": "end_turn",
                  "result": "stub: " + stdin, "total_cost_usd": 0.25,
                  "usage": {"input_tokens": 321, "output_tokens": 12, "cache_creation_input_tokens": 0,
                            "cache_read_input_tokens": 5}, "uuid": "u-1"}))
"#;

fn json_of(r: &crate::common::Run) -> Value {
    serde_json::from_str(&r.stdout).unwrap_or(Value::Null)
}

/// A connection `cb` at `base_url` with one signed-in external Claude Code profile, verified;
/// its config directory.
fn external_connection(d: &Path, base_url: &str) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let add = ["connection", "add", "cb", "--protocol", "anthropic", "--base-url", base_url, "--model", MODEL];
    assert_eq!(run(d, &add, None)?.code, 0, "connection add");
    let profile =
        ["--json", "profile", "add", "cb", "--label", "max-1", "--kind", "external", "--client", "claude-code"];
    let added = run(d, &profile, None)?;
    assert_eq!(added.code, 0, "profile add --kind external: {}", added.stderr);
    let listed = json_of(&run(d, &["--json", "profile", "list", "cb"], None)?);
    let config_dir = PathBuf::from(listed[0]["config_dir"].as_str().ok_or(format!("a config dir: {listed}"))?);
    let login =
        json!({"claudeAiOauth": {"accessToken": CANARY, "scopes": ["user:inference"], "subscriptionType": "max"}});
    std::fs::write(config_dir.join(".credentials.json"), login.to_string())?;
    assert_eq!(run(d, &["verify", "cb"], None)?.code, 0, "verify");
    Ok(config_dir)
}

fn serve_with_claude(d: &Path, claude: &Path) -> Result<crate::common::Served, Box<dyn std::error::Error>> {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("switchyard"));
    cmd.arg("--data-dir").arg(d).args(["relay", "serve", "--listen", "127.0.0.1:0"]);
    cmd.env("SWITCHYARD_CLAUDE_BIN", claude);
    serve_with(cmd)
}

/// The body of a raw HTTP answer.
fn body_of(answer: &str) -> &str {
    answer.split_once("\r\n\r\n").map_or("", |(_, b)| b)
}

#[test]
fn the_setting_through_the_binary_and_the_cli_s_usage_in_attempts_json() -> TestResult {
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let config_dir = external_connection(d, "http://127.0.0.1:9")?;
    let shown = json_of(&run(d, &["--json", "routing", "cli-backend", "cb"], None)?);
    assert_eq!(
        shown,
        json!({"slug": "cb", "enabled": false, "max_concurrent": 2, "profiles": ["max-1"]}),
        "off by default"
    );
    let bad = run(d, &["routing", "cli-backend", "cb", "on", "--max-concurrent", "0"], None)?;
    assert_ne!(bad.code, 0, "a cap of 0 is refused");
    assert!(bad.stderr.contains("max_concurrent"), "naming the field: {}", bad.stderr);
    let on = json_of(&run(d, &["--json", "routing", "cli-backend", "cb", "on", "--max-concurrent", "3"], None)?);
    assert_eq!((on["enabled"].as_bool(), on["max_concurrent"].as_i64()), (Some(true), Some(3)), "on, cap 3: {on}");
    let text = run(d, &["routing", "cli-backend", "cb"], None)?;
    assert!(text.stdout.contains("on") && text.stdout.contains("max-1"), "the text says so: {}", text.stdout);

    let stub = d.join("claude-stub");
    std::fs::write(&stub, STUB)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755))?;
    }
    let token = run(d, &["relay", "token"], None)?.stdout.trim().to_string();
    let relay = serve_with_claude(d, &stub)?;
    let headers = format!("x-api-key: {token}\r\nanthropic-version: 2023-06-01\r\n");
    let body =
        json!({"model": MODEL, "max_tokens": 32, "messages": [{"role": "user", "content": "hello"}]}).to_string();
    let answer = post(&relay.addr, "/c/cb/v1/messages", &headers, &body)?;
    assert!(answer.starts_with("HTTP/1.1 200"), "served: {answer}");
    let message: Value = serde_json::from_str(body_of(&answer))?;
    assert_eq!(message["content"][0]["text"], "stub: hello", "the stub's answer: {message}");
    let call: Value = serde_json::from_slice(&std::fs::read(config_dir.join("call.json"))?)?;
    assert_eq!(call["stdin"], "hello", "the prompt reached the CLI");
    assert!(relay.stop()?, "the relay stops cleanly (ledger flushed)");

    let rows = json_of(&run(d, &["--json", "attempts", "cb"], None)?);
    let row = &rows[0];
    assert_eq!(row["status"], 200, "{row}");
    assert_eq!((row["input_tokens"].as_i64(), row["output_tokens"].as_i64()), (Some(321), Some(12)), "usage: {row}");
    assert_eq!(row["cache_read_tokens"].as_i64(), Some(5), "{row}");
    assert_eq!(row["reference_cost_usd"].as_f64(), Some(0.25), "the CLI's figure, for reference: {row}");
    Ok(())
}

/// A fake Messages API on 127.0.0.1: answers every POST with a short event stream, 404
/// otherwise; keeps each request's head and body.
/// Each request the fake API saw: its head, a blank line, its body.
type Seen = Arc<Mutex<Vec<String>>>;

fn fake_messages_api() -> Result<(String, Seen), Box<dyn std::error::Error>> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}", listener.local_addr()?);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(match stream.try_clone() {
                Ok(s) => s,
                Err(_) => continue,
            });
            let mut head = String::new();
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                head.push_str(&line);
                line.clear();
            }
            let length = head
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string()))
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let post = head.starts_with("POST");
            kept.lock().map(|mut s| s.push(format!("{head}\n{}", String::from_utf8_lossy(&body)))).ok();
            let events = concat!(
                "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_fake\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-haiku-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n",
                "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"FAKE-API-SAYS-HI\"}}\n\n",
                "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
                "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":3}}\n\n",
                "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
            );
            let answer = if post {
                format!("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{events}", events.len())
            } else {
                "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_string()
            };
            let mut out = reader.into_inner();
            let _ = out.write_all(answer.as_bytes());
        }
    });
    Ok((url, seen))
}

#[test]
fn the_real_claude_code_accepts_the_flags_and_its_login_goes_only_to_the_connection() -> TestResult {
    let Some(claude) = std::env::var_os("SWITCHYARD_TEST_CLAUDE").map(PathBuf::from) else {
        // Opt-in: the real CLI is not installed in every environment.
        return Ok(());
    };
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let (api, seen) = fake_messages_api()?;
    external_connection(d, &api)?;
    assert_eq!(run(d, &["routing", "cli-backend", "cb", "on"], None)?.code, 0, "on");
    let token = run(d, &["relay", "token"], None)?.stdout.trim().to_string();
    let relay = serve_with_claude(d, &claude)?;
    let headers = format!("x-api-key: {token}\r\nanthropic-version: 2023-06-01\r\n");
    let body = json!({"model": MODEL, "max_tokens": 1234, "system": "Answer in French.",
                      "messages": [{"role": "user", "content": "say hi"}]})
    .to_string();
    let answer = post(&relay.addr, "/c/cb/v1/messages", &headers, &body)?;
    assert!(answer.starts_with("HTTP/1.1 200"), "the real CLI served: {answer}");
    let message: Value = serde_json::from_str(body_of(&answer))?;
    assert_eq!(message["content"][0]["text"], "FAKE-API-SAYS-HI", "its answer is the API's: {message}");
    assert!(relay.stop()?, "clean stop");
    let requests = seen.lock().map(|s| s.clone()).unwrap_or_default();
    let call =
        requests.iter().find(|r| r.starts_with("POST")).ok_or(format!("the CLI called the API: {requests:?}"))?;
    assert!(call.contains(&format!("Bearer {CANARY}")), "with the profile's own login: {call}");
    assert!(call.contains("\"max_tokens\":1234"), "max_tokens as asked: {call}");
    assert!(call.contains("\"thinking\":{\"type\":\"disabled\"}"), "no thinking: {call}");
    assert!(call.contains("Answer in French."), "the system prompt: {call}");
    assert!(call.contains("say hi"), "the prompt: {call}");
    let rows = json_of(&run(d, &["--json", "attempts", "cb"], None)?);
    assert_eq!(rows[0]["status"], 200, "recorded: {rows}");
    assert!(!rows.to_string().contains(CANARY), "the login is not in the ledger");
    Ok(())
}
