//! The relay's request parsing against arbitrary input (issue 12): random methods, paths,
//! headers (framing, hosts, tokens, client ids, odd bytes) and bodies over raw TCP, bounded
//! to 160 cases. Every case gets an answer or a closed socket — never a hang or a crash —
//! nothing without the token reaches the provider, and the relay still serves afterwards.

use std::time::Duration;

use crate::common::{relay, user, Key, TestResult};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use serde_json::json;
use switchyard_mock_provider::KeyScript;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[derive(Debug, Clone)]
struct Case {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    token: bool,
    body: Vec<u8>,
}

fn case() -> impl Strategy<Value = Case> {
    let method = prop_oneof![
        Just("GET"),
        Just("POST"),
        Just("PUT"),
        Just("DELETE"),
        Just("TRACE"),
        Just("OPTIONS"),
        Just("PATCH"),
        Just("HEAD")
    ]
    .prop_map(str::to_string);
    let path = prop_oneof![
        Just("/c/c/v1/chat/completions".to_string()),
        Just("/c/c/v1/responses".to_string()),
        Just("/c/nope/v1/messages?beta=true".to_string()),
        Just("/healthz".to_string()),
        "/c/c/[a-zA-Z0-9%./?=&_-]{0,40}".prop_map(|s| s),
        "/[a-z%.]{0,20}".prop_map(|s| s),
    ];
    let name = prop_oneof![
        Just("host"),
        Just("content-type"),
        Just("connection"),
        Just("x-codex-turn-metadata"),
        Just("session-id"),
        Just("x-claude-code-session-id"),
        Just("x-switchyard-turn"),
        Just("accept-encoding"),
        Just("cookie"),
        Just("expect"),
        Just("x-api-key"),
        Just("upgrade"),
        Just("x-odd")
    ]
    .prop_map(str::to_string);
    let value = "[ -~]{0,60}";
    let body = prop_oneof![
        Just(b"{}".to_vec()),
        Just(
            serde_json::to_vec(&json!({"model": "m1", "stream": true, "messages": [{"role": "user", "content": "x"}]}))
                .unwrap_or_default()
        ),
        Just(br#"{"model":"m1","metadata":{"user_id":"{\"session_id\":7}"},"input":[1,{"type":null}]}"#.to_vec()),
        proptest::collection::vec(any::<u8>(), 0..300),
    ];
    (method, path, proptest::collection::vec((name, value), 0..6), any::<bool>(), body)
        .prop_map(|(method, path, headers, token, body)| Case { method, path, headers, token, body })
}

async fn exchange(addr: &str, token: &str, c: &Case) -> std::io::Result<()> {
    let mut s = TcpStream::connect(addr).await?;
    let mut head = format!("{} {} HTTP/1.1\r\n", c.method, c.path);
    if !c.headers.iter().any(|(n, _)| n == "host") {
        head.push_str("host: 127.0.0.1\r\n");
    }
    for (n, v) in &c.headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    if c.token {
        head.push_str(&format!("authorization: Bearer {token}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\nconnection: close\r\n\r\n", c.body.len()));
    s.write_all(head.as_bytes()).await?;
    let _ = s.write_all(&c.body).await;
    let mut buf = vec![0u8; 8192];
    // An answer (or a closed socket) within the time a stream of the mock takes.
    tokio::time::timeout(Duration::from_secs(10), async {
        while let Ok(n) = s.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    })
    .await
    .map_err(|_| std::io::Error::other(format!("no answer and no close for {c:?}")))?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arbitrary_requests_get_an_answer_and_leave_the_relay_serving() -> TestResult {
    let keys = vec![Key { label: "a", secret: "sk-canary-fuzz", weight: 1, script: KeyScript::new(["m1"]) }];
    let r = relay("openai", &["m1"], keys, None).await?;
    let addr = r.url.trim_start_matches("http://").to_string();
    let mut runner = TestRunner::new(Config { cases: 160, failure_persistence: None, ..Config::default() });
    let mut cases = Vec::new();
    for _ in 0..160 {
        cases.push(case().new_tree(&mut runner).map_err(|e| e.to_string())?.current());
    }
    let mut untokened = 0;
    for c in &cases {
        exchange(&addr, &r.token, c).await?;
        untokened += usize::from(!c.token);
    }
    assert!(untokened > 20, "the cases include token-less requests: {untokened}");
    let tokened_hits = r.mock.requests().iter().filter(|q| q.key.as_deref() != Some("sk-canary-fuzz")).count();
    assert_eq!(tokened_hits, 0, "whatever reached the provider carried the profile's key, never a client's");
    assert!(
        r.mock.requests().len() <= cases.iter().filter(|c| c.token).count(),
        "only token-bearing requests went upstream"
    );
    let resp = r.chat("m1", vec![user("still there?")], false).await?;
    assert_eq!(resp.status(), 200, "the relay still serves after the fuzz");
    let _ = r.stop().await?;
    Ok(())
}
