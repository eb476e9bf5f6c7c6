//! Scripted in-stream errors over real HTTP, for all three APIs: a 200 event stream that
//! sends N content chunks (0: none, right after the preamble), then the dialect's error
//! event, and ends cleanly; without streaming, the overloaded answer.

use crate::common::*;
use serde_json::{json, Value};
use switchyard_mock_provider::{Behaviour, Chunking, KeyScript, Wire};

fn script(after_chunks: usize) -> KeyScript {
    KeyScript::new([Api::MODEL]).reply("a b c d").behaviour(Behaviour::stream_error(after_chunks))
}

/// The event names a stream erring after `n` content chunks sends.
fn names(api: Api, n: usize) -> Vec<&'static str> {
    let (preamble, content): (&[&'static str], &'static str) = match api {
        Api::Anthropic => (&["message_start", "content_block_start", "ping"], "content_block_delta"),
        Api::Chat => (&[""], ""),
        Api::Responses => (
            &["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"],
            "response.output_text.delta",
        ),
    };
    let mut names = preamble.to_vec();
    names.extend(std::iter::repeat_n(content, n));
    names.push(if api == Api::Chat { "" } else { "error" });
    names
}

/// Checks a stream that errs after `n` chunks.
fn check(api: Api, n: usize, sse: &Sse, why: &str) {
    assert!(sse.broke.is_none(), "{why}: the stream ends cleanly after the error: {:?}", sse.broke);
    assert_eq!(sse.names(), names(api, n), "{why}: preamble, {n} content events, the error, nothing after");
    let Some(last) = sse.events.last() else { return };
    let error = last.json();
    match api {
        Api::Anthropic => assert_eq!(
            error,
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            "{why}: Anthropic's overloaded error event"
        ),
        Api::Chat => {
            assert_eq!(
                (error["error"]["type"].as_str(), &error["error"]["code"]),
                (Some("server_error"), &Value::Null),
                "{why}: an OpenAI error object: {error}"
            );
            assert!(error["error"]["message"].is_string(), "{why}: with a message");
            let content = sse.events.iter().filter(|e| e.json().pointer("/choices/0/delta/content").is_some()).count();
            assert_eq!(content, n + 1, "{why}: the role chunk and {n} content chunks came first");
            assert!(sse.events.iter().all(|e| e.data != "[DONE]"), "{why}: no [DONE] after the error");
        }
        Api::Responses => {
            assert_eq!(
                (error["type"].as_str(), error["code"].as_str()),
                (Some("error"), Some("server_error")),
                "{why}: a Responses error event: {error}"
            );
            assert!(error["message"].is_string(), "{why}: with a message");
            assert_eq!(error["sequence_number"].as_u64(), Some(sse.events.len() as u64 - 1), "{why}: numbered in turn");
        }
    }
}

#[tokio::test]
async fn the_error_event_comes_before_or_after_content() -> anyhow::Result<()> {
    let mock = mock_with(vec![
        ("sk-0", script(0)),
        ("sk-2", script(2)),
        ("sk-9", script(9)),
        ("sk-wired", script(2).wire(Wire::chunked(Chunking::Seeded(5)).crlf().pings())),
    ])
    .await?;
    for api in Api::ALL {
        for (key, n) in [("sk-0", 0), ("sk-2", 2), ("sk-9", 4), ("sk-wired", 2)] {
            let resp = api.post(&mock, key, &api.request(true), &[]).await?;
            assert_eq!(resp.status().as_u16(), 200, "{api:?} {key}: the stream starts with 200");
            let mut sse = read_sse(resp).await;
            if key == "sk-wired" {
                // The wire's pings (Anthropic: `event: ping` frames) are not the stream's own.
                let mut first_ping = true;
                sse.events.retain(|e| {
                    let ping = e.name.as_deref() == Some("ping");
                    let keep = !ping || first_ping;
                    first_ping &= !ping;
                    keep
                });
            }
            check(api, n, &sse, &format!("{api:?} {key}"));
        }
    }
    Ok(())
}

#[tokio::test]
async fn without_streaming_it_is_the_overloaded_answer() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-a", script(1))]).await?;
    for (api, status) in [(Api::Anthropic, 529), (Api::Chat, 503), (Api::Responses, 503)] {
        let (got, _, body) = answer(api.post(&mock, "sk-a", &api.request(false), &[]).await?).await?;
        assert_eq!(got, status, "{api:?}: the dialect's overloaded status: {body}");
    }
    Ok(())
}
