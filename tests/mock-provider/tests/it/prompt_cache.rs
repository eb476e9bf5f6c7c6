//! Prompt caching as the mock models it (`KeyScript::prompt_cache`): Anthropic usage split
//! into uncached, written and read input tokens, in JSON answers and in `message_start`;
//! per account, within the TTL, ignoring moved `cache_control` marks; off by default.

use crate::common::*;
use serde_json::{json, Value};
use switchyard_mock_provider::{KeyScript, MockProvider, PromptCache};

/// A conversation of `turns` user messages (with assistant answers between them) under one
/// system prompt; the newest user message carries Claude Code's moving cache mark.
fn conversation(turns: usize, stream: bool) -> Value {
    let mut messages = Vec::new();
    for turn in 0..turns {
        if turn > 0 {
            messages.push(json!({"role": "assistant", "content": format!("answer {turn} {}", "a".repeat(200))}));
        }
        let mut text = json!({"type": "text", "text": format!("question {turn} {}", "q".repeat(100))});
        if turn + 1 == turns {
            text["cache_control"] = json!({"type": "ephemeral"});
        }
        messages.push(json!({"role": "user", "content": [text]}));
    }
    json!({
        "model": "m",
        "max_tokens": 16,
        "system": [{"type": "text", "text": "s".repeat(4000), "cache_control": {"type": "ephemeral"}}],
        "messages": messages,
        "stream": stream,
    })
}

/// The usage a JSON call reports, and the request's token estimate (a quarter of its bytes).
async fn usage(mock: &MockProvider, key: &str, body: &Value) -> anyhow::Result<(Value, u64)> {
    let resp = anthropic_post(mock, key, "/v1/messages", body).await?;
    let (status, _, answer) = answer(resp).await?;
    assert_eq!(status, 200, "the call succeeds: {answer}");
    Ok((answer["usage"].clone(), (body.to_string().len() as u64).div_ceil(4)))
}

fn split(usage: &Value) -> (u64, u64, u64) {
    let n = |k: &str| usage[k].as_u64().unwrap_or(u64::MAX);
    (n("input_tokens"), n("cache_creation_input_tokens"), n("cache_read_input_tokens"))
}

#[tokio::test]
async fn a_growing_conversation_reads_its_earlier_prefix() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-c", KeyScript::new(["m"]).prompt_cache(300))]).await?;
    let (first, total) = usage(&mock, "sk-c", &conversation(1, false)).await?;
    let (input, write, read) = split(&first);
    assert_eq!(read, 0, "a cold cache reads nothing: {first}");
    assert!(write > 1000 && input > 0, "the system prompt is written, the message is input: {first}");
    assert_eq!(input + write + read, total, "the split adds up to the request's tokens");

    let (second, total) = usage(&mock, "sk-c", &conversation(2, false)).await?;
    let (input2, write2, read2) = split(&second);
    assert_eq!(read2, write, "the second call reads the head the first one wrote: {second}");
    assert!(write2 > 0, "and writes the first exchange: {second}");
    assert_eq!(input2 + write2 + read2, total, "the split adds up");

    let (third, _) = usage(&mock, "sk-c", &conversation(3, false)).await?;
    assert_eq!(
        split(&third).2,
        read2 + write2,
        "the third reads everything the second cached, though the cache mark moved: {third}"
    );
    let (again, _) = usage(&mock, "sk-c", &conversation(3, false)).await?;
    assert_eq!(split(&again).1, 0, "the same request again writes nothing: {again}");
    Ok(())
}

#[tokio::test]
async fn message_start_carries_the_same_split() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-c", KeyScript::new(["m"]).prompt_cache(300))]).await?;
    let (json_usage, _) = usage(&mock, "sk-c", &conversation(2, false)).await?;
    let resp = anthropic_post(&mock, "sk-c", "/v1/messages", &conversation(2, true)).await?;
    let sse = read_sse(resp).await;
    let start = sse.events.iter().find(|e| e.name.as_deref() == Some("message_start")).map(Event::json);
    let usage = start.map(|s| s["message"]["usage"].clone()).unwrap_or_default();
    let (input, write, read) = split(&usage);
    let (json_input, json_write, json_read) = split(&json_usage);
    assert_eq!(read, json_read + json_write, "the stream reads what the JSON call cached: {usage}");
    assert_eq!(write, 0, "and writes nothing new: {usage}");
    let total = (conversation(2, true).to_string().len() as u64).div_ceil(4);
    assert_eq!(input + write + read, total, "the split adds up to the streamed request's tokens: {usage}");
    assert!(json_input > 0, "the last message is uncached input: {json_usage}");
    Ok(())
}

#[tokio::test]
async fn caches_belong_to_accounts_and_expire() -> anyhow::Result<()> {
    let shared = |account: &str| {
        let cache = PromptCache { ttl_secs: 300, account: Some(account.to_owned()), scale: 1 };
        KeyScript { prompt_cache: Some(cache), ..KeyScript::new(["m"]) }
    };
    let mock = mock_with(vec![
        ("sk-1", shared("org-1")),
        ("sk-2", shared("org-1")),
        ("sk-3", shared("org-3")),
        ("sk-short", KeyScript::new(["m"]).prompt_cache(1)),
    ])
    .await?;
    let (first, _) = usage(&mock, "sk-1", &conversation(2, false)).await?;
    let (_, write, _) = split(&first);
    let (same_org, _) = usage(&mock, "sk-2", &conversation(2, false)).await?;
    assert_eq!(split(&same_org).2, write, "a key of the same account reads the cache: {same_org}");
    let (other_org, _) = usage(&mock, "sk-3", &conversation(2, false)).await?;
    assert_eq!(split(&other_org).2, 0, "another account's cache is cold: {other_org}");

    let (_, _) = usage(&mock, "sk-short", &conversation(2, false)).await?;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let (expired, _) = usage(&mock, "sk-short", &conversation(2, false)).await?;
    assert_eq!(split(&expired).2, 0, "after the TTL nothing is read: {expired}");

    let scaled = PromptCache { ttl_secs: 300, account: None, scale: 10 };
    mock.set_key("sk-scaled", KeyScript { prompt_cache: Some(scaled), ..KeyScript::new(["m"]) });
    let body = conversation(2, false);
    let (big, _) = usage(&mock, "sk-scaled", &body).await?;
    let (input, write, read) = split(&big);
    let scaled_total = (body.to_string().len() as u64 * 10).div_ceil(4);
    assert_eq!(input + write + read, scaled_total, "a byte counts 10/4 tokens: {big}");
    assert!(write > 10_000, "scale 10 counts ten times the tokens: {big}");
    Ok(())
}

#[tokio::test]
async fn without_a_prompt_cache_usage_is_unchanged() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-a", KeyScript::new(["m"]))]).await?;
    let body = conversation(2, false);
    let (usage, total) = usage(&mock, "sk-a", &body).await?;
    assert_eq!(usage, json!({"input_tokens": total, "output_tokens": 5}), "input and output only");
    let resp = anthropic_post(&mock, "sk-a", "/v1/messages", &conversation(2, true)).await?;
    let sse = read_sse(resp).await;
    let start = sse.events.iter().find(|e| e.name.as_deref() == Some("message_start")).map(Event::json);
    let keys: Vec<String> =
        start.and_then(|s| s["message"]["usage"].as_object().map(|u| u.keys().cloned().collect())).unwrap_or_default();
    assert_eq!(keys, ["input_tokens", "output_tokens"], "no cache fields in message_start");
    Ok(())
}
