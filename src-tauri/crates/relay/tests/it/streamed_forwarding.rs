//! Legacy forwarding streams a request body past 64 KB (issue 18.1): the provider gets the
//! first bytes while the client is still sending the rest, with the client's
//! `content-length`; the ledger still gets the model and the keys routing would compute,
//! from the copy.

use crate::common;

use std::sync::{Arc, Mutex, PoisonError};

use crate::common::{relay, Key, TestResult};
use switchyard_core::body_skim::BodySkim;
use switchyard_core::turn::ClientIds;
use switchyard_core::Protocol;
use switchyard_mock_provider::KeyScript;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the provider has received so far, head and body, as raw bytes.
type Seen = Arc<Mutex<Vec<u8>>>;

fn seen_text(seen: &Seen) -> String {
    String::from_utf8_lossy(&seen.lock().unwrap_or_else(PoisonError::into_inner)).into_owned()
}

/// A provider that records every byte as it arrives and answers once it has the whole
/// body its request head declared.
async fn recording_provider() -> Result<(String, Seen), Box<dyn std::error::Error>> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let seen: Seen = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let mut all = Vec::new();
                loop {
                    let Ok(n) = tcp.read(&mut buf).await else { return };
                    if n == 0 {
                        return;
                    }
                    all.extend_from_slice(&buf[..n]);
                    log.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&all).to_ascii_lowercase();
                    let Some(head_end) = text.find("\r\n\r\n") else { continue };
                    let declared = text[..head_end]
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    if all.len() >= head_end + 4 + declared {
                        break;
                    }
                }
                let answer = r#"{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":1,"total_tokens":8}}"#;
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                    answer.len()
                );
                let _ = tcp.write_all(head.as_bytes()).await;
                let _ = tcp.write_all(answer.as_bytes()).await;
            });
        }
    });
    Ok((url, seen))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_body_reaches_the_provider_while_the_client_is_still_sending_it() -> TestResult {
    let keys = vec![Key { label: "a", secret: "sk-streamed-body", weight: 1, script: KeyScript::new(["m-stream"]) }];
    let r = relay("openai", &["m-stream"], keys, None).await?;
    let (provider, seen) = recording_provider().await?;
    let edit = switchyard_engine::ConnectionEdit { base_url: Some(format!("{provider}/v1")), ..Default::default() };
    r.engine.connection_edit("c", edit).await?;

    let first = r#"{"model":"m-stream","messages":[{"role":"system","content":"You are a coding agent."},"#;
    // Past 64 KB (a body declared smaller is taken whole: it comes with the head).
    let rest = format!(r#"{{"role":"user","content":"FIRST-HALF-DONE {}"}}]}}"#, "a long paste ".repeat(8_000));
    let body = format!("{first}{rest}");
    assert!(body.len() > 64 * 1024, "the body must be one the relay streams");
    let addr = r.url.trim_start_matches("http://").to_string();
    let mut client = TcpStream::connect(&addr).await?;
    let head = format!(
        "POST /c/c/v1/chat/completions HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {}\r\n\
         content-type: application/json\r\nx-session-id: sess-stream\r\ncontent-length: {}\r\n\r\n",
        r.token,
        body.len()
    );
    client.write_all(head.as_bytes()).await?;
    client.write_all(first.as_bytes()).await?;
    client.flush().await?;
    // Under a buffering relay the provider sees nothing until the client sends the rest.
    let seen_ref = &seen;
    common::eventually("the provider has the first half before the client sends the rest", || async move {
        Ok(seen_text(seen_ref).contains(r#"{"role":"system","content":"You are a coding agent."},"#))
    })
    .await?;
    let so_far = seen_text(&seen);
    assert!(!so_far.contains("FIRST-HALF-DONE"), "the second half was not sent yet: {so_far}");
    let lower = so_far.to_ascii_lowercase();
    assert!(
        lower.contains(&format!("content-length: {}", body.len())),
        "the provider is told the client's length up front (not chunked): {so_far}"
    );
    client.write_all(rest.as_bytes()).await?;
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("chatcmpl-1") {
        let n = client.read(&mut buf).await?;
        assert!(n > 0, "the relay closed before answering: {}", String::from_utf8_lossy(&answer));
        answer.extend_from_slice(&buf[..n]);
    }
    let answer = String::from_utf8_lossy(&answer).into_owned();
    assert!(answer.starts_with("HTTP/1.1 200"), "the provider's answer comes back: {answer}");
    let received = seen_text(&seen);
    assert!(received.ends_with(&body), "the provider got the client's body byte for byte");
    assert_eq!(received.matches("FIRST-HALF-DONE").count(), 1, "once");
    assert!(!received.contains(&r.token), "the relay token never goes upstream");

    let r = r.stop().await?;
    let rows = r.engine.attempts("c", 10).await?;
    assert_eq!(rows.len(), 1, "one attempt");
    let from_headers = ClientIds::read_headers(|n| (n == "x-session-id").then_some("sess-stream"));
    let skim = BodySkim::read(Protocol::Openai, body.as_bytes()).map_err(|e| e.to_string())?;
    let ids = skim.client_ids(from_headers);
    assert_eq!(rows[0].model.as_deref(), Some("m-stream"), "the model is read from the copy after the answer");
    assert_eq!(rows[0].turn, skim.turn_key("c", &ids).0, "the turn routing would compute, not a placeholder");
    assert_eq!(
        rows[0].conversation.as_deref(),
        Some(skim.conversation_key("c", &ids).0.as_str()),
        "and its conversation"
    );
    assert_eq!(rows[0].input_tokens, Some(7), "the answer's usage is recorded");
    Ok(())
}
