//! What real clients and real networks do, over real HTTP (issue 11): streams written in any
//! chunking, CRLF, with pings, gzip-coded; what Claude Code and Codex send passes through
//! untouched; their session ids key the ledger's `session` (hashed); and the errors the relay
//! makes itself carry the right status, shape and reason.

use crate::common;

use std::sync::Arc;

use crate::common::{relay, Key, TestResult};
use serde_json::{json, Value};
use switchyard_engine::{Engine, Router, Secret, SystemClock};
use switchyard_mock_provider::{Chunking, KeyScript, Wire};
use switchyard_vault::MemoryVault;

fn key<'a>(label: &'a str, secret: &'a str, script: KeyScript) -> Key<'a> {
    Key { label, secret, weight: 1, script }
}

/// The wires a provider may use; every one must give the same outcome.
fn wires() -> Vec<(&'static str, Wire)> {
    vec![
        ("events", Wire::chunked(Chunking::Events)),
        ("whole", Wire::chunked(Chunking::Whole)),
        ("bytes-1", Wire::chunked(Chunking::Bytes(1))),
        ("bytes-7-crlf", Wire::chunked(Chunking::Bytes(7)).crlf()),
        ("seeded-pings", Wire::chunked(Chunking::Seeded(42)).pings()),
        ("whole-gzip", Wire::chunked(Chunking::Whole).gzip()),
        ("seeded-gzip-crlf", Wire::chunked(Chunking::Seeded(7)).gzip().crlf()),
    ]
}

/// The request body and path of a streaming call in each API.
fn call(api: &str, text: &str) -> (&'static str, Value) {
    match api {
        "anthropic" => (
            "/v1/messages?beta=true",
            json!({"model": "m1", "max_tokens": 16, "stream": true,
            "messages": [{"role": "user", "content": text}]}),
        ),
        "chat" => (
            "/chat/completions",
            json!({"model": "m1", "stream": true,
            "stream_options": {"include_usage": true}, "messages": [{"role": "user", "content": text}]}),
        ),
        _ => ("/responses", json!({"model": "m1", "stream": true, "input": text})),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_wire_gives_a_complete_stream_and_a_clean_ledger_row_in_every_mode() -> TestResult {
    for api in ["anthropic", "chat", "responses"] {
        let protocol = if api == "anthropic" { "anthropic" } else { "openai" };
        for mode in [None, Some("balanced")] {
            let keys = wires()
                .into_iter()
                .enumerate()
                .map(|(i, (_, w))| (format!("sk-canary-wire-{i}"), KeyScript::new(["m1"]).wire(w)))
                .collect::<Vec<_>>();
            let (first, rest) = keys.split_first().ok_or("keys")?;
            let mut all = vec![key("k0", &first.0, first.1.clone())];
            let labels: Vec<String> = (1..keys.len()).map(|i| format!("k{i}")).collect();
            for (i, (secret, script)) in rest.iter().enumerate() {
                all.push(key(&labels[i], secret, script.clone()));
            }
            let r = relay(protocol, &["m1"], all, mode).await?;
            // Legacy sends every call to the primary: give it each wire in turn.
            let rounds = if mode.is_none() { wires().len() } else { wires().len() * 2 };
            for i in 0..rounds {
                if mode.is_none() {
                    r.mock.set_key(&keys[0].0, KeyScript::new(["m1"]).wire(wires()[i].1));
                }
                let (path, body) = call(api, &format!("question {i}"));
                let req = r.http.post(format!("{}{}", r.base(), path)).json(&body).header("accept-encoding", "gzip");
                let req = match protocol {
                    "openai" => req.bearer_auth(&r.token),
                    _ => req.header("x-api-key", &r.token).header("anthropic-version", "2023-06-01"),
                };
                let resp = req.send().await?;
                assert_eq!(resp.status(), 200, "{api} {mode:?} round {i}: served");
                let bytes = resp.bytes().await?;
                let text = decoded(&bytes);
                assert!(!text.contains("switchyard)"), "{api} {mode:?} round {i}: no relay error event: {text}");
            }
            let r = r.stop().await?;
            let rows = r.engine.attempts("c", 1000).await?;
            assert_eq!(rows.len(), rounds, "{api} {mode:?}: one attempt per call");
            for row in &rows {
                assert_eq!(row.failure_kind, None, "{api} {mode:?}: a complete stream is no failure: {row:?}");
                assert!(row.output_tokens.is_some(), "{api} {mode:?}: usage read from the stream: {row:?}");
            }
            assert!(!r.data_dir_text().contains("canary"), "no secret in the data dir");
        }
    }
    Ok(())
}

/// The body as text, gunzipped when it is gzip (the mock compresses when scripted to).
fn decoded(bytes: &[u8]) -> String {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut d = flate2::read::MultiGzDecoder::new(bytes);
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut d, &mut s);
        s
    } else {
        String::from_utf8_lossy(bytes).into_owned()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_claude_code_and_codex_send_passes_through_and_keys_the_session() -> TestResult {
    for mode in [None, Some("balanced")] {
        let r = relay(
            "anthropic",
            &["m1"],
            vec![key("a", "sk-a", KeyScript::new(["m1"])), key("b", "sk-b", KeyScript::new(["m1"]))],
            mode,
        )
        .await?;
        let user_id = r#"{"device_id":"dev","account_uuid":"","session_id":"cc-session-1"}"#;
        let body = json!({"model": "m1", "max_tokens": 8, "stream": true, "metadata": {"user_id": user_id},
            "system": [{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}]});
        let raw = serde_json::to_vec(&body)?;
        let resp = r
            .http
            .post(format!("{}/v1/messages?beta=true", r.base()))
            .header("authorization", format!("Bearer {}", r.token))
            .header("anthropic-version", "2023-06-01")
            .header("anthropic-beta", "claude-code-20250219,interleaved-thinking-2025-05-14")
            .header("x-stainless-lang", "js")
            .header("x-app", "cli")
            .header("x-claude-code-session-id", "cc-session-1")
            .header("accept-encoding", "gzip, deflate, br, zstd")
            .header("content-type", "application/json")
            .body(raw.clone())
            .send()
            .await?;
        assert_eq!(resp.status(), 200, "{mode:?}: served");
        let _ = resp.bytes().await?;
        let seen = r.mock.requests();
        let got = seen.last().ok_or("the mock saw the call")?;
        assert_eq!(got.query.as_deref(), Some("beta=true"), "{mode:?}: the query string reaches the provider");
        for (name, want) in [
            ("anthropic-version", "2023-06-01"),
            ("anthropic-beta", "claude-code-20250219,interleaved-thinking-2025-05-14"),
            ("x-stainless-lang", "js"),
            ("x-app", "cli"),
            ("x-claude-code-session-id", "cc-session-1"),
            ("accept-encoding", "gzip, deflate, br, zstd"),
        ] {
            let value = got.headers.get(name).and_then(|v| v.to_str().ok());
            assert_eq!(value, Some(want), "{mode:?}: {name} passes through untouched");
        }
        assert_eq!(got.body.as_ref(), raw.as_slice(), "{mode:?}: the body is sent as the client wrote it");
        let r = r.stop().await?;
        let rows = r.engine.attempts("c", 10).await?;
        let session = rows.first().and_then(|a| a.session.clone()).ok_or("a session is recorded")?;
        assert!(!session.contains("cc-session"), "{mode:?}: the ledger keeps a hash, never the raw id: {session}");
        assert!(!r.data_dir_text().contains("cc-session-1"), "{mode:?}: the raw session id is nowhere in the data dir");
    }

    // Codex: its Responses body fields and headers pass through; its turn id keys the turn.
    let r = relay(
        "openai",
        &["m1"],
        vec![key("a", "sk-a", KeyScript::new(["m1"])), key("b", "sk-b", KeyScript::new(["m1"]))],
        Some("balanced"),
    )
    .await?;
    let mut turns = Vec::new();
    for (i, input) in [
        json!("list files"),
        json!([{"type": "message", "role": "user", "content": "list files"},
        {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "a.txt"}]),
    ]
    .into_iter()
    .enumerate()
    {
        let body = json!({"model": "m1", "stream": true, "store": false, "prompt_cache_key": "0199-codex",
            "include": ["reasoning.encrypted_content"], "input": input});
        let resp = r
            .http
            .post(format!("{}/responses", r.base()))
            .bearer_auth(&r.token)
            .header("session-id", "0199-codex")
            .header("x-codex-turn-metadata", r#"{"turn_id":"turn-1"}"#)
            .header("originator", "codex_exec")
            .header("accept-encoding", "zstd,gzip")
            .json(&body)
            .send()
            .await?;
        assert_eq!(resp.status(), 200, "codex call {i} served");
        turns.push(resp.headers().get("x-switchyard-profile").and_then(|v| v.to_str().ok()).map(str::to_string));
        let _ = resp.bytes().await?;
        let seen = r.mock.requests();
        let got = seen.last().ok_or("the mock saw the call")?;
        for name in ["session-id", "x-codex-turn-metadata", "originator", "accept-encoding"] {
            assert!(got.headers.contains_key(name), "codex {name} passes through");
        }
        let sent: Value = serde_json::from_slice(&got.body)?;
        assert_eq!(sent["store"], json!(false), "store: false passes through");
        assert_eq!(sent["include"], json!(["reasoning.encrypted_content"]), "include passes through");
        assert_eq!(sent["prompt_cache_key"], json!("0199-codex"), "prompt_cache_key passes through");
    }
    assert_eq!(turns[0], turns[1], "both calls of one Codex turn (same turn_id) use one key");
    let r = r.stop().await?;
    let rows = r.engine.attempts("c", 10).await?;
    assert!(rows.len() == 2 && rows[0].turn == rows[1].turn, "one turn in the ledger: {rows:?}");
    assert!(rows.iter().all(|a| a.session.is_some()), "the Codex session is recorded");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_the_relay_makes_itself_have_their_status_shape_and_reason() -> TestResult {
    let r = relay("anthropic", &["m1"], vec![key("a", "sk-canary-err", KeyScript::new(["m1"]))], None).await?;
    let post = |path: String| {
        r.http
            .post(path)
            .header("x-api-key", &r.token)
            .header("anthropic-version", "2023-06-01")
            .json(&json!({"model": "m1", "max_tokens": 4, "messages": [{"role": "user", "content": "x"}]}))
    };
    let resp = post(format!("{}/c/nope/v1/messages", r.url)).send().await?;
    assert_eq!(resp.status(), 404, "an unknown connection is a 404");
    assert_eq!(common::header(&resp, "x-switchyard-reason"), "not_found", "with its reason");
    let body: Value = resp.json().await?;
    assert_eq!(body["type"], "error", "in the Anthropic error shape: {body}");
    assert_eq!(body["error"]["type"], "not_found_error", "typed as not found: {body}");
    for path in ["/v1/messages", "/c/", "/c/work/", "/c//v1/messages", "/healthz/"] {
        let resp = post(format!("{}{path}", r.url)).send().await?;
        assert_eq!(resp.status(), 404, "{path} is no route of the relay");
        assert!(resp.headers().get("x-switchyard-reason").is_none(), "{path}: a bare 404, not a connection's");
    }
    let resp = post(format!("{}/healthz", r.url)).send().await?;
    assert_eq!(resp.status(), 405, "healthz is read-only");
    assert_eq!(common::header(&resp, "allow"), "GET,HEAD", "and says which methods it takes");
    let resp = r.http.head(format!("{}/healthz", r.url)).send().await?;
    assert_eq!(resp.status(), 200, "HEAD /healthz answers like GET");

    // The keychain locked: a relay whose engine cannot read any secret.
    let locked =
        Arc::new(Engine::open_with(r.dir.path(), Arc::new(MemoryVault::unavailable()), Arc::new(SystemClock)).await?);
    let router = Arc::new(Router::start(locked));
    let (url, stop, task) = common::serve_on_loopback(router, Secret::new(r.token.clone())).await?;
    let resp = post(format!("{url}/c/c/v1/messages")).send().await?;
    assert_eq!(resp.status(), 503, "a locked keychain is a 503, not a 500");
    assert_eq!(common::header(&resp, "x-switchyard-reason"), "keychain_unavailable", "reason says why");
    assert!(!common::header(&resp, "retry-after").is_empty(), "with Retry-After: it is temporary");
    let body: Value = resp.json().await?;
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("nlock the keychain"), "the message says what to do: {message}");
    assert!(!message.contains("canary"), "and no secret");
    let _ = stop.send(());
    task.await??;
    let _ = r.stop().await?;

    // Nothing eligible: every key of a balanced connection cooling down.
    let r = relay(
        "openai",
        &["m1"],
        vec![
            key("a", "sk-a", KeyScript::new(["m1"]).model("m1", switchyard_mock_provider::Behaviour::rate_limited(30))),
            key("b", "sk-b", KeyScript::new(["m1"]).model("m1", switchyard_mock_provider::Behaviour::rate_limited(30))),
        ],
        Some("balanced"),
    )
    .await?;
    let first = r.chat("m1", vec![common::user("one")], false).await?;
    assert_eq!(first.status(), 429, "both keys answer 429: the provider's answer is delivered");
    let resp = r.chat("m1", vec![common::user("two")], false).await?;
    assert_eq!(resp.status(), 429, "all cooling for rate limits: 429 from the relay");
    assert_eq!(common::header(&resp, "x-switchyard-reason"), "no_eligible_profile", "reason says why");
    let retry: u64 = common::header(&resp, "retry-after").parse().unwrap_or(0);
    assert!((1..=30).contains(&retry), "Retry-After is the soonest cooldown end: {retry}");
    let body: Value = resp.json().await?;
    assert_eq!(body["error"]["code"], "rate_limit_exceeded", "in the OpenAI error shape: {body}");
    let _ = r.stop().await?;
    Ok(())
}
