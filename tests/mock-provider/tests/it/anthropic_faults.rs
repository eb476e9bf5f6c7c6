//! The Anthropic dialect's failures over real HTTP: every scripted behaviour's status,
//! headers and error body, the version header, unknown and missing keys, unlisted models,
//! no listing.

use crate::common::*;
use serde_json::{json, Value};
use switchyard_mock_provider::{Behaviour, KeyScript, MockProvider};

fn message(model: &str, stream: bool) -> Value {
    json!({
        "model": model,
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "hi"}],
        "stream": stream,
    })
}

async fn list(mock: &MockProvider, key: &str) -> anyhow::Result<(u16, Value)> {
    let resp = client()
        .get(format!("{}/v1/models", mock.base_url()))
        .header("x-api-key", key)
        .header("anthropic-version", ANTHROPIC_VERSION)
        .send()
        .await?;
    let (status, _, body) = answer(resp).await?;
    Ok((status, body))
}

#[tokio::test]
async fn the_version_header_is_required() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-ant", KeyScript::new(["claude-sonnet-4-5"]))]).await?;
    let resp = client()
        .post(format!("{}/v1/messages", mock.base_url()))
        .header("x-api-key", "sk-ant")
        .json(&message("claude-sonnet-4-5", false))
        .send()
        .await?;
    let (status, _, body) = answer(resp).await?;
    assert_eq!(status, 400, "no anthropic-version is a bad request");
    assert_eq!(body["type"], "error", "Anthropic error envelope");
    assert_eq!(body["error"]["type"], "invalid_request_error", "typed invalid_request_error: {body}");
    Ok(())
}

#[tokio::test]
async fn each_scripted_error_has_anthropics_status_and_body() -> anyhow::Result<()> {
    let cases = [
        (Behaviour::rate_limited(7), 429, "rate_limit_error", "true"),
        (Behaviour::QuotaExhausted, 402, "billing_error", "false"),
        (Behaviour::Unauthorized, 401, "authentication_error", "false"),
        (Behaviour::ModelForbidden, 403, "permission_error", "false"),
        (Behaviour::ServerError, 500, "api_error", "true"),
        (Behaviour::Overloaded, 529, "overloaded_error", "true"),
    ];
    for (behaviour, want_status, want_type, retry) in cases {
        let mock =
            mock_with(vec![("sk-ant", KeyScript::new(["claude-sonnet-4-5"]).behaviour(behaviour.clone()))]).await?;
        for stream in [false, true] {
            let resp = anthropic_post(&mock, "sk-ant", "/v1/messages", &message("claude-sonnet-4-5", stream)).await?;
            let (status, headers, body) = answer(resp).await?;
            assert_eq!(status, want_status, "{behaviour:?} (stream={stream}) has Anthropic's status");
            assert_eq!(body["type"], "error", "{behaviour:?}: error envelope");
            assert_eq!(body["error"]["type"], want_type, "{behaviour:?}: error.type");
            assert!(
                body["error"]["message"].is_string() && body["request_id"].is_string(),
                "{behaviour:?}: message and request_id: {body}"
            );
            assert_eq!(
                header(&headers, "x-should-retry"),
                Some(retry),
                "{behaviour:?}: x-should-retry as Anthropic sends it"
            );
            assert!(header(&headers, "request-id").is_some(), "{behaviour:?}: request-id header");
        }
    }
    Ok(())
}

#[tokio::test]
async fn rate_limit_carries_retry_after_and_an_exhausted_reset() -> anyhow::Result<()> {
    let mock =
        mock_with(vec![("sk-ant", KeyScript::new(["claude-sonnet-4-5"]).behaviour(Behaviour::rate_limited(30)))])
            .await?;
    let before = jiff::Timestamp::now();
    let resp = anthropic_post(&mock, "sk-ant", "/v1/messages", &message("claude-sonnet-4-5", false)).await?;
    let headers = resp.headers();
    assert_eq!(header(headers, "retry-after"), Some("30"), "Retry-After in seconds as scripted");
    assert_eq!(
        header(headers, "anthropic-ratelimit-requests-remaining"),
        Some("0"),
        "the request limit reads as exhausted"
    );
    let reset = header(headers, "anthropic-ratelimit-requests-reset").unwrap_or_default();
    let reset: jiff::Timestamp = reset.parse()?;
    let ahead = reset.duration_since(before).as_secs();
    assert!((29..=31).contains(&ahead), "the reset is an RFC 3339 time retry_after_secs ahead (was {ahead} s)");
    Ok(())
}

#[tokio::test]
async fn unknown_and_missing_keys_and_unlisted_models() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-ant", KeyScript::new(["claude-sonnet-4-5"]))]).await?;
    let (status, _, body) =
        answer(anthropic_post(&mock, "sk-nobody", "/v1/messages", &message("claude-sonnet-4-5", false)).await?).await?;
    assert_eq!((status, body["error"]["type"].as_str()), (401, Some("authentication_error")), "unknown key");
    let resp = client()
        .post(format!("{}/v1/messages", mock.base_url()))
        .header("anthropic-version", ANTHROPIC_VERSION)
        .json(&message("claude-sonnet-4-5", false))
        .send()
        .await?;
    let (status, _, body) = answer(resp).await?;
    assert_eq!((status, body["error"]["type"].as_str()), (401, Some("authentication_error")), "missing x-api-key");
    let (status, _, body) =
        answer(anthropic_post(&mock, "sk-ant", "/v1/messages", &message("claude-opus-9", false)).await?).await?;
    assert_eq!(
        (status, body["error"]["type"].as_str()),
        (404, Some("not_found_error")),
        "a model outside the key's list"
    );
    assert_eq!(body["error"]["message"], "model: claude-opus-9", "named as Anthropic names it");
    Ok(())
}

#[tokio::test]
async fn listing_unsupported_is_a_typed_404() -> anyhow::Result<()> {
    let mock =
        mock_with(vec![("sk-ant", KeyScript::new(["claude-sonnet-4-5"]).listing(Behaviour::ListingUnsupported))])
            .await?;
    let (status, body) = list(&mock, "sk-ant").await?;
    assert_eq!((status, body["error"]["type"].as_str()), (404, Some("not_found_error")), "no listing endpoint");
    let resp = anthropic_post(&mock, "sk-ant", "/v1/messages", &message("claude-sonnet-4-5", false)).await?;
    assert_eq!(resp.status().as_u16(), 200, "messages still work");
    Ok(())
}
