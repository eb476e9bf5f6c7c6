//! The OpenAI dialect: `Authorization: Bearer` keys, `GET /v1/models`,
//! `POST /v1/chat/completions` (JSON and SSE chunks ending in `[DONE]`; text or, when the
//! script calls a tool, `tool_calls`), and the error answers in OpenAI's
//! `{"error": {"message", "type", "param", "code"}}` shape.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use bytes::Bytes;
use serde_json::{json, Value};

use crate::fault::{mask_key, Fault};
use crate::playbook::Call;
use crate::reply::{next_serial, Reply};
use crate::server::{Intake, Shared};
use crate::sse::{frame, Ending};
use crate::wire::{Dialect, Outlet};

/// `created` of every listed model.
const MODEL_CREATED: i64 = 1_700_000_000;

/// The key of `Authorization: Bearer KEY`.
pub(crate) fn bearer_key(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| key.trim().to_owned()).filter(|k| !k.is_empty())
}

/// A fault as OpenAI answers it.
pub(crate) fn error_response(fault: &Fault) -> Response {
    if let Fault::UsageLimit { window, reset } = fault {
        return usage_limit_response(*window, *reset);
    }
    let mut headers: Vec<(HeaderName, String)> = Vec::new();
    let (status, kind, code, message) = match fault {
        Fault::MissingKey => (
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            None,
            "You didn't provide an API key. You need to provide your API key in an \
             Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or \
             as the password field (with blank username) if you're accessing the API from \
             your browser and are prompted for a username. You can obtain an API key from \
             https://platform.openai.com/account/api-keys."
                .to_owned(),
        ),
        Fault::InvalidKey { key } => (
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            Some("invalid_api_key"),
            format!(
                "Incorrect API key provided: {}. You can find your API key at \
                 https://platform.openai.com/account/api-keys.",
                mask_key(key)
            ),
        ),
        Fault::RateLimited { retry_after_secs } => {
            headers.extend([
                (header::RETRY_AFTER, retry_after_secs.to_string()),
                (HeaderName::from_static("x-ratelimit-limit-requests"), "60".to_owned()),
                (HeaderName::from_static("x-ratelimit-remaining-requests"), "0".to_owned()),
                (HeaderName::from_static("x-ratelimit-reset-requests"), format!("{retry_after_secs}s")),
            ]);
            (
                StatusCode::TOO_MANY_REQUESTS,
                "requests",
                Some("rate_limit_exceeded"),
                format!(
                    "Rate limit reached in organization org-mock on requests per min (RPM): \
                     Limit 60, Used 60, Requested 1. Please try again in {retry_after_secs}s. \
                     Visit https://platform.openai.com/account/rate-limits to learn more."
                ),
            )
        }
        Fault::QuotaExhausted => (
            StatusCode::TOO_MANY_REQUESTS,
            "insufficient_quota",
            Some("insufficient_quota"),
            "You exceeded your current quota, please check your plan and billing details. \
             For more information on this error, read the docs: \
             https://platform.openai.com/docs/guides/error-codes/api-errors."
                .to_owned(),
        ),
        Fault::ModelForbidden { model } | Fault::ModelNotFound { model } => (
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            Some("model_not_found"),
            format!("The model `{model}` does not exist or you do not have access to it."),
        ),
        Fault::ServerError => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            None,
            "The server had an error while processing your request. Sorry about that!".to_owned(),
        ),
        Fault::Overloaded => (
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            None,
            "The engine is currently overloaded, please try again later".to_owned(),
        ),
        Fault::ListingUnsupported => {
            (StatusCode::NOT_FOUND, "invalid_request_error", None, "Invalid URL (GET /v1/models)".to_owned())
        }
        Fault::BadRequest { message } => (StatusCode::BAD_REQUEST, "invalid_request_error", None, message.clone()),
        Fault::ForeignState { code, message, .. } => {
            (StatusCode::BAD_REQUEST, "invalid_request_error", Some(*code), message.clone())
        }
        Fault::ClientNotAllowed => (
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            None,
            "This credential is only authorized for use with Claude Code and cannot be used for other API requests."
                .to_owned(),
        ),
        Fault::Gemini(refusal) => return error_response(&Fault::elsewhere(*refusal)),
        Fault::ExtraUsageRequired => (
            StatusCode::TOO_MANY_REQUESTS,
            "requests",
            None,
            "Extra usage is required for long context requests.".to_owned(),
        ),
        // Answered above, in Codex's own shape.
        Fault::UsageLimit { .. } => (StatusCode::TOO_MANY_REQUESTS, "usage_limit_reached", None, String::new()),
    };
    let param = match fault {
        Fault::ForeignState { param, .. } => json!(param),
        _ => Value::Null,
    };
    let body = json!({"error": {"message": message, "type": kind, "param": param, "code": code}});
    headers.extend([
        (header::CONTENT_TYPE, "application/json; charset=utf-8".to_owned()),
        (HeaderName::from_static("openai-version"), "2020-10-01".to_owned()),
        (HeaderName::from_static("x-request-id"), format!("req_mock_{}", next_serial())),
    ]);
    let mut response = (status, body.to_string()).into_response();
    for (name, value) in headers {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// A Codex account's spent window: 429 `{"error": {"type": "usage_limit_reached", "message",
/// "plan_type", "resets_at", "resets_in_seconds"}}` with the x-codex headers of the window.
fn usage_limit_response(window: crate::subscription::LimitWindow, reset: crate::subscription::ResetAt) -> Response {
    let (window_headers, body) = crate::subscription::codex_limit(window, reset);
    let mut response = (StatusCode::TOO_MANY_REQUESTS, body.to_string()).into_response();
    let mut headers = vec![
        ("content-type".to_owned(), "application/json; charset=utf-8".to_owned()),
        ("x-request-id".to_owned(), format!("req_mock_{}", next_serial())),
    ];
    headers.extend(window_headers);
    crate::subscription::insert(&mut response, headers);
    response
}

/// `GET /v1/models`: `{"object": "list", "data": [{"id", "object": "model", ...}]}`.
pub(crate) async fn list_models(
    shared: &Shared,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let key = bearer_key(&headers);
    let hit = shared.intake(method, &uri, headers, body, key);
    let plan = match shared.playbook.play(hit.key.as_deref(), Call::Listing) {
        Ok(plan) => plan,
        Err(fault) => return error_response(&fault),
    };
    plan.wait().await;
    let data: Vec<Value> = plan
        .models
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": MODEL_CREATED, "owned_by": "mock"}))
        .collect();
    Json(json!({"object": "list", "data": data})).into_response()
}

/// `POST /v1/chat/completions`.
pub(crate) async fn chat_completions(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let key = bearer_key(&headers);
    let hit = shared.intake(method, &uri, headers, body, key);
    answer_chat(&shared, hit).await.unwrap_or_else(|fault| error_response(&fault))
}

async fn answer_chat(shared: &Shared, hit: Intake) -> Result<Response, Fault> {
    shared.playbook.authenticate(hit.key.as_deref())?;
    let request = hit.model_request()?;
    let plan = shared.playbook.play(hit.key.as_deref(), Call::Model(&request.model))?;
    plan.wait().await;
    let out = Outlet::new(plan.wire, Dialect::Chat, hit.accept_encoding.as_deref())
        .quota(plan.quota)
        .subscription(plan.subscription.clone());
    let reply = Reply::answer(&request.model, &plan, hit.json.as_ref(), Dialect::Chat, hit.body.len());
    let dies = plan.dies_after.is_some();
    if !request.stream {
        if plan.stream_error.is_some() {
            return Err(Fault::Overloaded);
        }
        return Ok(out.json(&completion(&reply), dies));
    }
    let with_usage = request.include_usage;
    let opening = match reply.call {
        None => json!({"role": "assistant", "content": "", "refusal": null}),
        Some(_) => {
            json!({"role": "assistant", "content": null, "tool_calls": [tool_call(&reply, "")], "refusal": null})
        }
    };
    let mut frames = vec![frame(None, &chunk(&reply, opening, None, with_usage))];
    for piece in reply.streamed_chunks(plan.dies_after.or(plan.stream_error)) {
        let delta = match reply.call {
            None => json!({"content": piece}),
            Some(_) => json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
        };
        frames.push(frame(None, &chunk(&reply, delta, None, with_usage)).content());
    }
    if dies {
        return Ok(out.stream(frames, Ending::Dies));
    }
    if plan.stream_error.is_some() {
        let error = json!({"error": {
            "message": "The server had an error while processing your request. Sorry about that!",
            "type": "server_error",
            "code": null,
        }});
        frames.push(frame(None, &error.to_string()));
        return Ok(out.stream(frames, Ending::Complete));
    }
    frames.push(frame(None, &chunk(&reply, json!({}), Some(finish_reason(&reply)), with_usage)));
    if with_usage {
        let mut last = envelope(&reply);
        last["choices"] = json!([]);
        last["usage"] = usage(&reply);
        frames.push(frame(None, &last.to_string()));
    }
    frames.push(frame(None, "[DONE]"));
    Ok(out.stream(frames, Ending::Complete))
}

fn finish_reason(reply: &Reply) -> &'static str {
    if reply.call.is_some() {
        "tool_calls"
    } else {
        "stop"
    }
}

/// The reply's tool call as a `tool_calls` entry, with these `arguments`.
fn tool_call(reply: &Reply, arguments: &str) -> Value {
    let name = reply.call.as_ref().map(|call| call.name.as_str()).unwrap_or_default();
    json!({
        "index": 0,
        "id": format!("call_mock_{}", reply.serial),
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    })
}

fn usage(reply: &Reply) -> Value {
    json!({
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
    })
}

/// A non-streaming `chat.completion`.
fn completion(reply: &Reply) -> Value {
    let message = match reply.call {
        None => json!({"role": "assistant", "content": reply.text(), "refusal": null}),
        Some(_) => {
            let mut call = tool_call(reply, &reply.text());
            if let Value::Object(fields) = &mut call {
                fields.remove("index");
            }
            json!({"role": "assistant", "content": null, "tool_calls": [call], "refusal": null})
        }
    };
    json!({
        "id": format!("chatcmpl-mock-{}", reply.serial),
        "object": "chat.completion",
        "created": reply.created,
        "model": reply.model,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason(reply),
        }],
        "usage": usage(reply),
        "system_fingerprint": null,
    })
}

/// The fields every `chat.completion.chunk` shares.
fn envelope(reply: &Reply) -> Value {
    json!({
        "id": format!("chatcmpl-mock-{}", reply.serial),
        "object": "chat.completion.chunk",
        "created": reply.created,
        "model": reply.model,
        "system_fingerprint": null,
    })
}

/// One `chat.completion.chunk` with a single choice.
fn chunk(reply: &Reply, delta: Value, finish_reason: Option<&str>, with_usage: bool) -> String {
    let mut chunk = envelope(reply);
    chunk["choices"] = json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}]);
    if with_usage {
        chunk["usage"] = Value::Null;
    }
    chunk.to_string()
}
