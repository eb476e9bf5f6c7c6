//! The OpenAI dialect's answers over real HTTP: listing, chat completions and responses
//! (JSON and streaming), slow answers, dying streams and sequences. Failures:
//! `openai_faults.rs`.

use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{json, Value};
use switchyard_mock_provider::{Behaviour, KeyScript, DEFAULT_REPLY};

fn chat(model: &str, stream: bool) -> Value {
    json!({
        "model": model,
        "messages": [{"role": "user", "content": "hi"}],
        "stream": stream,
        "stream_options": if stream { json!({"include_usage": true}) } else { Value::Null },
    })
}

/// The content deltas of a chat stream, joined.
fn streamed_text(sse: &Sse) -> String {
    sse.events
        .iter()
        .filter_map(|e| e.json().pointer("/choices/0/delta/content")?.as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn lists_the_keys_models_in_openai_shape() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-a", KeyScript::new(["gpt-4o", "gpt-4o-mini"]))]).await?;
    let resp = client().get(format!("{}/v1/models", mock.base_url())).bearer_auth("sk-a").send().await?;
    let (status, _, body) = answer(resp).await?;
    assert_eq!(status, 200, "a known key may list");
    assert_eq!(body["object"], "list", "OpenAI lists are objects of type list");
    let ids: Vec<&str> = body["data"].as_array().into_iter().flatten().filter_map(|m| m["id"].as_str()).collect();
    assert_eq!(ids, ["gpt-4o", "gpt-4o-mini"], "exactly the key's models, in script order");
    let first = &body["data"][0];
    assert_eq!(first["object"], "model", "each entry is a model object");
    assert!(first["created"].is_i64() && first["owned_by"].is_string(), "created and owned_by are present: {first}");
    Ok(())
}

#[tokio::test]
async fn chat_completion_answers_json_with_usage() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-a", KeyScript::new(["gpt-4o"]))]).await?;
    let (status, headers, body) =
        answer(openai_post(&mock, "sk-a", "/v1/chat/completions", &chat("gpt-4o", false)).await?).await?;
    assert_eq!(status, 200, "ok answers 200");
    assert!(header(&headers, "content-type").is_some_and(|c| c.starts_with("application/json")), "JSON answer");
    assert_eq!(body["object"], "chat.completion", "a chat.completion object");
    assert_eq!(body["model"], "gpt-4o", "the requested model is echoed");
    assert_eq!(body["choices"][0]["message"]["content"], DEFAULT_REPLY, "the default reply text");
    assert_eq!(body["choices"][0]["finish_reason"], "stop", "a finished answer");
    let usage = &body["usage"];
    assert!(usage["prompt_tokens"].as_u64() > Some(0), "usage counts the prompt: {usage}");
    assert_eq!(usage["completion_tokens"], 5, "one completion token per word of the reply");
    assert_eq!(
        usage["total_tokens"].as_u64(),
        Some(usage["prompt_tokens"].as_u64().unwrap_or(0) + 5),
        "total is prompt + completion"
    );
    Ok(())
}

#[tokio::test]
async fn chat_stream_sends_role_then_content_then_finish_then_usage_then_done() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-a", KeyScript::new(["gpt-4o"]).reply("one two three"))]).await?;
    let resp = openai_post(&mock, "sk-a", "/v1/chat/completions", &chat("gpt-4o", true)).await?;
    assert_eq!(header(resp.headers(), "content-type"), Some("text/event-stream"), "streams are SSE");
    let sse = read_sse(resp).await;
    assert!(sse.broke.is_none(), "a scripted-ok stream ends cleanly: {:?}", sse.broke);
    assert_eq!(sse.events.len(), 7, "role + 3 content + finish + usage + [DONE]: {:?}", sse.events);
    let first = sse.events[0].json();
    assert_eq!(first["choices"][0]["delta"]["role"], "assistant", "the first delta carries the role");
    assert_eq!(first["choices"][0]["delta"]["content"], "", "and no content");
    assert_eq!(first["object"], "chat.completion.chunk", "chunks are chat.completion.chunk objects");
    assert_eq!(streamed_text(&sse), "one two three", "content deltas join to the reply");
    let finish = sse.events[4].json();
    assert_eq!(finish["choices"][0]["finish_reason"], "stop", "the last choice chunk finishes");
    assert!(finish["usage"].is_null(), "choice chunks carry usage null when usage is requested");
    let usage = sse.events[5].json();
    assert_eq!(usage["choices"], json!([]), "the usage chunk has no choices");
    assert_eq!(usage["usage"]["completion_tokens"], 3, "usage counts the streamed words");
    assert_eq!(sse.events[6].data, "[DONE]", "the stream ends with [DONE]");
    Ok(())
}

#[tokio::test]
async fn chat_stream_without_include_usage_has_no_usage_chunk() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-a", KeyScript::new(["gpt-4o"]))]).await?;
    let body = json!({"model": "gpt-4o", "messages": [], "stream": true});
    let sse = read_sse(openai_post(&mock, "sk-a", "/v1/chat/completions", &body).await?).await;
    assert!(sse.events.iter().all(|e| e.json().get("usage").is_none()), "usage only when asked for");
    assert_eq!(sse.events.last().map(|e| e.data.as_str()), Some("[DONE]"), "still ends with [DONE]");
    Ok(())
}

#[tokio::test]
async fn responses_api_answers_json_and_typed_events() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-a", KeyScript::new(["gpt-4o"]).reply("a b"))]).await?;
    let (status, _, body) =
        answer(openai_post(&mock, "sk-a", "/v1/responses", &json!({"model": "gpt-4o", "input": "hi"})).await?).await?;
    assert_eq!(status, 200, "ok answers 200");
    assert_eq!(body["object"], "response", "a response object");
    assert_eq!(body["output"][0]["content"][0]["text"], "a b", "the reply as output_text");
    assert_eq!(body["usage"]["output_tokens"], 2, "usage in Responses naming");

    let sse = read_sse(
        openai_post(&mock, "sk-a", "/v1/responses", &json!({"model": "gpt-4o", "input": "hi", "stream": true})).await?,
    )
    .await;
    assert_eq!(
        sse.names(),
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ],
        "the Responses event order"
    );
    let last = sse.events[9].json();
    assert_eq!(last["type"], "response.completed", "data.type repeats the event name");
    assert_eq!(last["response"]["usage"]["output_tokens"], 2, "usage arrives with response.completed");
    assert_eq!(last["sequence_number"], 9, "events are numbered");
    Ok(())
}

#[tokio::test]
async fn slow_waits_then_answers() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-a", KeyScript::new(["gpt-4o"]).behaviour(Behaviour::slow(300)))]).await?;
    let started = Instant::now();
    let resp = openai_post(&mock, "sk-a", "/v1/chat/completions", &chat("gpt-4o", false)).await?;
    assert_eq!(resp.status().as_u16(), 200, "slow ends in a normal answer");
    assert!(started.elapsed() >= Duration::from_millis(300), "the answer waited the scripted time");
    Ok(())
}

#[tokio::test]
async fn a_dying_chat_stream_sends_n_chunks_then_breaks() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-a", KeyScript::new(["gpt-4o"]).behaviour(Behaviour::stream_dies_after(2)))]).await?;
    let resp = openai_post(&mock, "sk-a", "/v1/chat/completions", &chat("gpt-4o", true)).await?;
    assert_eq!(resp.status().as_u16(), 200, "the stream starts normally");
    let sse = read_sse(resp).await;
    assert!(sse.broke.is_some(), "the client must see a broken body, not a clean end");
    assert_eq!(streamed_text(&sse), "Hello from ", "exactly two content chunks arrived first");
    assert!(
        sse.events.iter().all(|e| e.data != "[DONE]" && e.json()["choices"][0]["finish_reason"].is_null()),
        "no terminating event: {:?}",
        sse.events
    );
    Ok(())
}

#[tokio::test]
async fn a_dying_responses_stream_and_a_dying_json_body_break_too() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-a", KeyScript::new(["gpt-4o"]).behaviour(Behaviour::stream_dies_after(1)))]).await?;
    let sse =
        read_sse(openai_post(&mock, "sk-a", "/v1/responses", &json!({"model": "gpt-4o", "stream": true})).await?).await;
    assert!(sse.broke.is_some(), "the Responses stream breaks");
    assert_eq!(sse.names().iter().filter(|n| **n == "response.output_text.delta").count(), 1, "after one delta");
    assert!(!sse.names().contains(&"response.completed"), "without response.completed");
    let resp = openai_post(&mock, "sk-a", "/v1/chat/completions", &chat("gpt-4o", false)).await?;
    assert!(resp.bytes().await.is_err(), "a non-streaming answer breaks off mid-body");
    Ok(())
}

#[tokio::test]
async fn a_sequence_plays_one_step_per_hit_and_repeats_its_last() -> anyhow::Result<()> {
    let script = KeyScript::new(["gpt-4o"]).behaviour(Behaviour::sequence([
        Behaviour::rate_limited(1),
        Behaviour::ServerError,
        Behaviour::Ok,
    ]));
    let mock = mock_with(vec![("sk-a", script)]).await?;
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses
            .push(openai_post(&mock, "sk-a", "/v1/chat/completions", &chat("gpt-4o", false)).await?.status().as_u16());
    }
    assert_eq!(statuses, [429, 500, 200, 200], "429 once, 500 once, then ok for good");
    Ok(())
}
