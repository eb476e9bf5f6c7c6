//! The OpenAI dialect's failures over real HTTP: every scripted behaviour's status, headers
//! and error body, unknown and missing keys, forbidden and unlisted models, no listing.

use crate::common::*;
use serde_json::{json, Value};
use switchyard_mock_provider::{Behaviour, KeyScript};

fn chat(model: &str, stream: bool) -> Value {
    json!({
        "model": model,
        "messages": [{"role": "user", "content": "hi"}],
        "stream": stream,
        "stream_options": if stream { json!({"include_usage": true}) } else { Value::Null },
    })
}

/// One scripted error: its status, error type and code.
struct Case {
    behaviour: Behaviour,
    status: u16,
    kind: &'static str,
    code: Value,
    why: &'static str,
}

#[tokio::test]
async fn each_scripted_error_has_openais_status_and_body() -> anyhow::Result<()> {
    let cases = [
        Case {
            behaviour: Behaviour::rate_limited(7),
            status: 429,
            kind: "requests",
            code: json!("rate_limit_exceeded"),
            why: "rate limit",
        },
        Case {
            behaviour: Behaviour::QuotaExhausted,
            status: 429,
            kind: "insufficient_quota",
            code: json!("insufficient_quota"),
            why: "quota",
        },
        Case {
            behaviour: Behaviour::Unauthorized,
            status: 401,
            kind: "invalid_request_error",
            code: json!("invalid_api_key"),
            why: "revoked key",
        },
        Case {
            behaviour: Behaviour::ModelForbidden,
            status: 404,
            kind: "invalid_request_error",
            code: json!("model_not_found"),
            why: "forbidden model",
        },
        Case {
            behaviour: Behaviour::ServerError,
            status: 500,
            kind: "server_error",
            code: Value::Null,
            why: "server error",
        },
        Case {
            behaviour: Behaviour::Overloaded,
            status: 503,
            kind: "server_error",
            code: Value::Null,
            why: "overloaded",
        },
    ];
    for case in cases {
        let mock =
            mock_with(vec![("sk-canary-0123456789", KeyScript::new(["gpt-4o"]).behaviour(case.behaviour.clone()))])
                .await?;
        for stream in [false, true] {
            let resp =
                openai_post(&mock, "sk-canary-0123456789", "/v1/chat/completions", &chat("gpt-4o", stream)).await?;
            let (status, headers, body) = answer(resp).await?;
            let why = case.why;
            assert_eq!(status, case.status, "{why} (stream={stream}) has OpenAI's status");
            assert_eq!(body["error"]["type"], case.kind, "{why}: error.type");
            assert_eq!(body["error"]["code"], case.code, "{why}: error.code");
            assert!(
                body["error"]["param"].is_null() && body["error"]["message"].is_string(),
                "{why}: full error shape: {body}"
            );
            assert!(header(&headers, "x-request-id").is_some(), "{why}: OpenAI answers carry x-request-id");
            assert!(!body.to_string().contains("sk-canary-0123456789"), "{why}: the key is never echoed in full");
        }
    }
    Ok(())
}

#[tokio::test]
async fn rate_limit_carries_retry_after_and_exhausted_reset_headers() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-a", KeyScript::new(["gpt-4o"]).behaviour(Behaviour::rate_limited(20)))]).await?;
    let resp = openai_post(&mock, "sk-a", "/v1/chat/completions", &chat("gpt-4o", false)).await?;
    let headers = resp.headers();
    assert_eq!(header(headers, "retry-after"), Some("20"), "Retry-After in seconds as scripted");
    assert_eq!(header(headers, "x-ratelimit-remaining-requests"), Some("0"), "the limit reads as exhausted");
    assert_eq!(header(headers, "x-ratelimit-reset-requests"), Some("20s"), "reset as a Go duration");
    Ok(())
}

#[tokio::test]
async fn unknown_missing_and_wrong_keys_get_401() -> anyhow::Result<()> {
    let mock = mock_with(vec![("sk-a", KeyScript::new(["gpt-4o"]))]).await?;
    let (status, _, body) =
        answer(openai_post(&mock, "sk-nobody", "/v1/chat/completions", &chat("gpt-4o", false)).await?).await?;
    assert_eq!((status, body["error"]["code"].as_str()), (401, Some("invalid_api_key")), "unknown key");
    let resp =
        client().post(format!("{}/v1/chat/completions", mock.base_url())).json(&chat("gpt-4o", false)).send().await?;
    let (status, _, body) = answer(resp).await?;
    assert_eq!(status, 401, "no key at all is 401");
    assert!(body["error"]["code"].is_null(), "OpenAI's missing-key answer has no code: {body}");
    let resp = client().get(format!("{}/v1/models", mock.base_url())).bearer_auth("sk-nobody").send().await?;
    assert_eq!(resp.status().as_u16(), 401, "listing checks the key too");
    Ok(())
}

#[tokio::test]
async fn forbidden_model_fails_only_for_that_model_and_is_still_listed() -> anyhow::Result<()> {
    let script = KeyScript::new(["gpt-4o", "o3"]).model("o3", Behaviour::ModelForbidden);
    let mock = mock_with(vec![("sk-a", script)]).await?;
    let (status, _, body) =
        answer(openai_post(&mock, "sk-a", "/v1/chat/completions", &chat("o3", false)).await?).await?;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("model_not_found")), "o3 is forbidden");
    let resp = openai_post(&mock, "sk-a", "/v1/chat/completions", &chat("gpt-4o", false)).await?;
    assert_eq!(resp.status().as_u16(), 200, "the key keeps serving other models");
    let resp = client().get(format!("{}/v1/models", mock.base_url())).bearer_auth("sk-a").send().await?;
    let (_, _, list) = answer(resp).await?;
    assert_eq!(
        list["data"].as_array().map(Vec::len),
        Some(2),
        "the forbidden model is still listed (as real keys list it)"
    );
    let (status, _, body) =
        answer(openai_post(&mock, "sk-a", "/v1/chat/completions", &chat("gpt-9", false)).await?).await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("model_not_found")),
        "a model outside the list is not found"
    );
    Ok(())
}

#[tokio::test]
async fn listing_unsupported_is_404_while_calls_work() -> anyhow::Result<()> {
    let script = KeyScript::new(["gpt-4o"]).listing(Behaviour::ListingUnsupported);
    let mock = mock_with(vec![("sk-a", script)]).await?;
    let resp = client().get(format!("{}/v1/models", mock.base_url())).bearer_auth("sk-a").send().await?;
    let (status, _, body) = answer(resp).await?;
    assert_eq!(status, 404, "no listing endpoint");
    assert_eq!(body["error"]["type"], "invalid_request_error", "in OpenAI's invalid-URL shape: {body}");
    let resp = openai_post(&mock, "sk-a", "/v1/chat/completions", &chat("gpt-4o", false)).await?;
    assert_eq!(resp.status().as_u16(), 200, "model calls still work");
    Ok(())
}
