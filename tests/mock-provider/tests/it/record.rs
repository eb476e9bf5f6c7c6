//! What the mock saw, over real HTTP: hit counters per key and per key + model, the request
//! log (byte-identical bodies, headers, query), resets, and shutting down.

use crate::common::*;
use serde_json::json;
use switchyard_mock_provider::{Behaviour, KeyScript, MockProvider};

#[tokio::test]
async fn hits_count_per_key_and_per_model_including_failures() -> anyhow::Result<()> {
    let script = KeyScript::new(["gpt-4o", "o3"]).model("o3", Behaviour::ServerError);
    let mock = mock_with(vec![("sk-a", script), ("sk-b", KeyScript::new(["gpt-4o"]))]).await?;
    for model in ["gpt-4o", "gpt-4o", "o3"] {
        openai_post(&mock, "sk-a", "/v1/chat/completions", &json!({"model": model})).await?;
    }
    openai_post(&mock, "sk-nobody", "/v1/chat/completions", &json!({"model": "gpt-4o"})).await?;
    client().get(format!("{}/v1/models", mock.base_url())).bearer_auth("sk-a").send().await?;

    assert_eq!(mock.hits("sk-a"), 4, "three calls and one listing, failed answers included");
    assert_eq!(mock.hits_for("sk-a", "gpt-4o"), 2, "per model");
    assert_eq!(mock.hits_for("sk-a", "o3"), 1, "a 500 is still a hit");
    assert_eq!(mock.hits("sk-b"), 0, "an unused key has no hits");
    assert_eq!(mock.hits("sk-nobody"), 1, "unknown keys are counted too, so a test can see a wrong key was sent");

    mock.reset_counts();
    assert_eq!((mock.hits("sk-a"), mock.requests().len()), (0, 0), "reset zeroes counters and the log");
    let resp = openai_post(&mock, "sk-a", "/v1/chat/completions", &json!({"model": "gpt-4o"})).await?;
    assert_eq!(resp.status().as_u16(), 200, "scripts survive a reset");
    Ok(())
}

#[tokio::test]
async fn requests_are_recorded_byte_for_byte() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-ant", KeyScript::new(["claude-sonnet-4-5"]))]).await?;
    // Odd spacing and key order: a forwarder that re-serialises would change these bytes.
    let raw = b"{ \"stream\":false,  \"model\" : \"claude-sonnet-4-5\",\"max_tokens\":1 }".to_vec();
    client()
        .post(format!("{}/v1/messages?beta=true", mock.base_url()))
        .header("x-api-key", "sk-ant")
        .header("anthropic-version", ANTHROPIC_VERSION)
        .header("x-custom", "kept")
        .header("content-type", "application/json")
        .body(raw.clone())
        .send()
        .await?;
    let log = mock.requests();
    assert_eq!(log.len(), 1, "one request, one record");
    let seen = &log[0];
    assert_eq!(seen.method, "POST", "method");
    assert_eq!(seen.path, "/v1/messages", "path without the query");
    assert_eq!(seen.query.as_deref(), Some("beta=true"), "raw query");
    assert_eq!(seen.body.as_ref(), raw.as_slice(), "the exact body bytes");
    assert_eq!(seen.header("x-custom"), Some("kept"), "every header is kept");
    assert_eq!(seen.key.as_deref(), Some("sk-ant"), "the presented key");
    assert_eq!(seen.model.as_deref(), Some("claude-sonnet-4-5"), "the model of the body");
    assert_eq!(seen.json().map(|j| j["max_tokens"].clone()), Some(json!(1)), "the body parses as JSON");
    Ok(())
}

#[tokio::test]
async fn nothing_received_means_an_empty_log() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-a", KeyScript::new(["gpt-4o"]))]).await?;
    assert!(mock.requests().is_empty(), "a fresh mock has seen nothing, so 'nothing forwarded' is checkable");
    assert_eq!(mock.hits("sk-a"), 0, "and counted nothing");
    Ok(())
}

#[tokio::test]
async fn recording_can_be_switched_off_while_hits_still_count() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-a", KeyScript::new(["gpt-4o"]))]).await?;
    mock.set_recording(false);
    openai_post(&mock, "sk-a", "/v1/chat/completions", &json!({"model": "gpt-4o"})).await?;
    assert!(mock.requests().is_empty(), "benchmarks can turn the log off");
    assert_eq!(mock.hits("sk-a"), 1, "hits are counted regardless");
    Ok(())
}

#[tokio::test]
async fn replacing_a_script_restarts_its_sequence_and_removing_a_key_locks_it_out() -> anyhow::Result<()> {
    let once =
        || KeyScript::new(["gpt-4o"]).behaviour(Behaviour::sequence([Behaviour::rate_limited(1), Behaviour::Ok]));
    let mock = mock_with(vec![("sk-a", once())]).await?;
    let status = |mock: &MockProvider| {
        let url = format!("{}/v1/chat/completions", mock.base_url());
        async move {
            let resp = client().post(url).bearer_auth("sk-a").json(&json!({"model": "gpt-4o"})).send().await?;
            anyhow::Ok(resp.status().as_u16())
        }
    };
    assert_eq!((status(&mock).await?, status(&mock).await?), (429, 200), "429 once, then ok");
    mock.set_key("sk-a", once());
    assert_eq!(status(&mock).await?, 429, "a replaced script starts its sequence over");
    mock.remove_key("sk-a");
    assert_eq!(status(&mock).await?, 401, "a removed key is unknown");
    Ok(())
}

#[tokio::test]
async fn shutdown_stops_serving() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-a", KeyScript::new(["gpt-4o"]))]).await?;
    let url = format!("{}/v1/models", mock.base_url());
    assert!(mock.base_url().starts_with("http://127.0.0.1:"), "binds loopback: {}", mock.base_url());
    mock.shutdown().await?;
    let after = client().get(&url).bearer_auth("sk-a").send().await;
    assert!(after.is_err(), "nothing listens after shutdown");
    Ok(())
}
