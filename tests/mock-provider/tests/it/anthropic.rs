//! The Anthropic dialect's answers over real HTTP: paginated listing, messages (JSON and the
//! named SSE events), token counting, dying streams, and which dialect `/v1/models` speaks.
//! Failures: `anthropic_faults.rs`.

use crate::common::*;
use serde_json::{json, Value};
use switchyard_mock_provider::{Behaviour, KeyScript, DEFAULT_REPLY};

fn message(model: &str, stream: bool) -> Value {
    json!({
        "model": model,
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "hi"}],
        "stream": stream,
    })
}

async fn list(mock: &switchyard_mock_provider::MockProvider, key: &str, query: &str) -> anyhow::Result<(u16, Value)> {
    let resp = client()
        .get(format!("{}/v1/models{query}", mock.base_url()))
        .header("x-api-key", key)
        .header("anthropic-version", ANTHROPIC_VERSION)
        .send()
        .await?;
    let (status, _, body) = answer(resp).await?;
    Ok((status, body))
}

fn ids(page: &Value) -> Vec<String> {
    page["data"].as_array().into_iter().flatten().filter_map(|m| m["id"].as_str().map(str::to_owned)).collect()
}

#[tokio::test]
async fn listing_pages_with_limit_after_id_and_before_id() -> anyhow::Result<()> {
    let models = ["m1", "m2", "m3", "m4", "m5"];
    let mock = mock_with(vec![("sk-ant", KeyScript::new(models))]).await?;

    let (status, page) = list(&mock, "sk-ant", "").await?;
    assert_eq!(status, 200, "a known key may list");
    assert_eq!(ids(&page), models, "the default limit (20) returns everything");
    assert_eq!(page["has_more"], false, "nothing more");
    let first = &page["data"][0];
    assert_eq!(first["type"], "model", "entries are of type model");
    assert!(
        first["display_name"].is_string() && first["created_at"].is_string(),
        "display_name and created_at: {first}"
    );

    let mut seen = Vec::new();
    let mut query = "?limit=2".to_owned();
    let mut pages = 0;
    loop {
        let (_, page) = list(&mock, "sk-ant", &query).await?;
        pages += 1;
        let got = ids(&page);
        assert!(got.len() <= 2, "a page holds at most `limit` models");
        assert_eq!(page["first_id"].as_str(), got.first().map(String::as_str), "first_id names the first entry");
        assert_eq!(page["last_id"].as_str(), got.last().map(String::as_str), "last_id names the last entry");
        seen.extend(got);
        if page["has_more"] != true {
            break;
        }
        query = format!("?limit=2&after_id={}", page["last_id"].as_str().unwrap_or_default());
    }
    assert_eq!(
        (pages, seen.as_slice()),
        (3, &models.map(String::from)[..]),
        "following after_id visits every model once"
    );

    let (_, page) = list(&mock, "sk-ant", "?limit=2&before_id=m4").await?;
    assert_eq!(ids(&page), ["m2", "m3"], "before_id gives the page just before it");
    assert_eq!(page["has_more"], true, "and says m1 lies further back");

    let (status, body) = list(&mock, "sk-ant", "?limit=0").await?;
    assert_eq!(
        (status, body["error"]["type"].as_str()),
        (400, Some("invalid_request_error")),
        "limit must be 1..=1000"
    );
    Ok(())
}

#[tokio::test]
async fn an_empty_model_list_has_null_ids() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-ant", KeyScript::new(Vec::<String>::new()))]).await?;
    let (_, page) = list(&mock, "sk-ant", "").await?;
    assert_eq!(
        (page["first_id"].clone(), page["last_id"].clone()),
        (Value::Null, Value::Null),
        "no ids on an empty page"
    );
    Ok(())
}

#[tokio::test]
async fn messages_answer_json_with_usage() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-ant", KeyScript::new(["claude-sonnet-4-5"]))]).await?;
    let (status, _, body) =
        answer(anthropic_post(&mock, "sk-ant", "/v1/messages", &message("claude-sonnet-4-5", false)).await?).await?;
    assert_eq!(status, 200, "ok answers 200");
    assert_eq!((body["type"].as_str(), body["role"].as_str()), (Some("message"), Some("assistant")), "a message");
    assert_eq!(body["content"][0], json!({"type": "text", "text": DEFAULT_REPLY}), "one text block with the reply");
    assert_eq!(body["stop_reason"], "end_turn", "a finished answer");
    assert!(body["usage"]["input_tokens"].as_u64() > Some(0), "usage counts input: {body}");
    assert_eq!(body["usage"]["output_tokens"], 5, "one output token per word");
    Ok(())
}

#[tokio::test]
async fn message_stream_sends_events_in_anthropics_order() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-ant", KeyScript::new(["claude-sonnet-4-5"]).reply("x y"))]).await?;
    let resp = anthropic_post(&mock, "sk-ant", "/v1/messages", &message("claude-sonnet-4-5", true)).await?;
    assert_eq!(header(resp.headers(), "content-type"), Some("text/event-stream"), "streams are SSE");
    let sse = read_sse(resp).await;
    assert!(sse.broke.is_none(), "an ok stream ends cleanly");
    assert_eq!(
        sse.names(),
        [
            "message_start",
            "content_block_start",
            "ping",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ],
        "Anthropic's event order"
    );
    for event in &sse.events {
        assert_eq!(event.json()["type"].as_str(), event.name.as_deref(), "data.type repeats the event name");
    }
    assert_eq!(sse.events[0].json()["message"]["content"], json!([]), "message_start has no content yet");
    let text: String =
        sse.events[3..5].iter().filter_map(|e| e.json()["delta"]["text"].as_str().map(str::to_owned)).collect();
    assert_eq!(text, "x y", "text deltas join to the reply");
    assert_eq!(sse.events[3].json()["delta"]["type"], "text_delta", "deltas are text_delta");
    let delta = sse.events[6].json();
    assert_eq!(delta["usage"]["output_tokens"], 2, "message_delta carries the output token count");
    assert_eq!(delta["delta"]["stop_reason"], "end_turn", "and the stop reason");
    Ok(())
}

#[tokio::test]
async fn count_tokens_answers_input_tokens() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-ant", KeyScript::new(["claude-sonnet-4-5"]))]).await?;
    let body = json!({"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}]});
    let (status, _, answer) =
        answer(anthropic_post(&mock, "sk-ant", "/v1/messages/count_tokens", &body).await?).await?;
    assert_eq!(status, 200, "count_tokens works for a known key and model");
    assert!(answer["input_tokens"].as_u64() > Some(0), "it answers input_tokens: {answer}");
    Ok(())
}

#[tokio::test]
async fn a_dying_message_stream_sends_n_deltas_then_breaks() -> anyhow::Result<()> {
    let mock = mock_with(vec![(
        "sk-ant",
        KeyScript::new(["claude-sonnet-4-5"]).model("claude-sonnet-4-5", Behaviour::stream_dies_after(3)),
    )])
    .await?;
    let sse =
        read_sse(anthropic_post(&mock, "sk-ant", "/v1/messages", &message("claude-sonnet-4-5", true)).await?).await;
    assert!(sse.broke.is_some(), "the client must see a broken body, not a clean end");
    assert_eq!(
        sse.names(),
        [
            "message_start",
            "content_block_start",
            "ping",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta"
        ],
        "preamble and three deltas, then nothing: no content_block_stop, message_delta or message_stop"
    );
    Ok(())
}

#[tokio::test]
async fn models_dialect_follows_the_credential_header() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-both", KeyScript::new(["m"]))]).await?;
    let (_, anthropic) = list(&mock, "sk-both", "").await?;
    assert!(anthropic.get("has_more").is_some(), "x-api-key gets Anthropic's page shape: {anthropic}");
    let resp = client().get(format!("{}/v1/models", mock.base_url())).bearer_auth("sk-both").send().await?;
    let (_, _, openai) = answer(resp).await?;
    assert_eq!(openai["object"], "list", "a Bearer key gets OpenAI's list shape: {openai}");
    Ok(())
}
