//! The Anthropic dialect: `x-api-key` keys (or a bearer: a subscription login) and a required
//! `anthropic-version` header,
//! paginated `GET /v1/models`, `POST /v1/messages` (JSON and named SSE events),
//! `POST /v1/messages/count_tokens`, and errors as `{"type": "error", "error": {...}}` (in a
//! stream: `event: error`). Text answers, or `tool_use` blocks when the script calls a tool.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::cache::CacheUsage;
use crate::fault::Fault;
use crate::playbook::Call;
use crate::reply::{next_serial, Reply};
use crate::server::{Intake, ModelRequest, Shared};
use crate::sse::{frame, Ending, Frame};
use crate::wire::{Dialect, Outlet};

/// The organization the mock's keys belong to (echoed in headers and messages).
const ORG_ID: &str = "0a0c0000-0000-4000-8000-00000000c0de";

/// `created_at` of every listed model.
const MODEL_CREATED_AT: &str = "2025-01-01T00:00:00Z";

/// Whether a request speaks Anthropic (it carries `x-api-key` or `anthropic-version`).
pub(crate) fn is_anthropic(headers: &HeaderMap) -> bool {
    headers.contains_key("x-api-key") || headers.contains_key("anthropic-version")
}

/// The key a request presents: `x-api-key`, else `Authorization: Bearer` (a subscription
/// token or an official CLI's own login, which Anthropic accepts as a bearer).
fn api_key(headers: &HeaderMap) -> Option<String> {
    let key = headers.get("x-api-key").and_then(|v| v.to_str().ok()).map(str::trim).filter(|k| !k.is_empty());
    key.map(str::to_owned).or_else(|| crate::openai::bearer_key(headers))
}

/// A fault as Anthropic answers it.
pub(crate) fn error_response(fault: &Fault) -> Response {
    let mut headers: Vec<(&'static str, String)> = Vec::new();
    let mut window_headers: Vec<(String, String)> = Vec::new();
    let (status, kind, message) = match fault {
        Fault::MissingKey => (401, "authentication_error", "x-api-key header is required".to_owned()),
        Fault::InvalidKey { .. } => (401, "authentication_error", "invalid x-api-key".to_owned()),
        Fault::RateLimited { retry_after_secs } => {
            headers.extend([
                ("retry-after", retry_after_secs.to_string()),
                ("anthropic-ratelimit-requests-limit", "50".to_owned()),
                ("anthropic-ratelimit-requests-remaining", "0".to_owned()),
                ("anthropic-ratelimit-requests-reset", reset_time(*retry_after_secs)),
            ]);
            (
                429,
                "rate_limit_error",
                format!(
                    "This request would exceed the rate limit for your organization ({ORG_ID}) \
                     of 50 requests per minute. For details, refer to: \
                     https://docs.anthropic.com/en/api/rate-limits. You can see the response \
                     headers for current usage. Please reduce the prompt length or the maximum \
                     tokens requested, or try again later. You may also contact sales at \
                     https://www.anthropic.com/contact-sales to discuss your options for a rate \
                     limit increase."
                ),
            )
        }
        Fault::QuotaExhausted => (
            402,
            "billing_error",
            "Your credit balance is too low to access the Anthropic API. Please go to Plans & \
             Billing to upgrade or purchase credits."
                .to_owned(),
        ),
        Fault::ModelForbidden { .. } => {
            (403, "permission_error", "Your API key does not have permission to use the specified resource.".to_owned())
        }
        Fault::ModelNotFound { model } => (404, "not_found_error", format!("model: {model}")),
        Fault::ServerError => (500, "api_error", "Internal server error".to_owned()),
        Fault::Overloaded => (529, "overloaded_error", "Overloaded".to_owned()),
        Fault::ListingUnsupported => (404, "not_found_error", "Not found".to_owned()),
        Fault::BadRequest { message } | Fault::ForeignState { message, .. } => {
            (400, "invalid_request_error", message.clone())
        }
        Fault::UsageLimit { window, reset } => {
            window_headers = crate::subscription::anthropic_limit_headers(*window, *reset);
            (
                429,
                "rate_limit_error",
                "This request would exceed your account's rate limit. Please try again later.".to_owned(),
            )
        }
        Fault::ClientNotAllowed => (
            400,
            "invalid_request_error",
            "This credential is only authorized for use with Claude Code and cannot be used for other API requests."
                .to_owned(),
        ),
        Fault::Gemini(refusal) => return error_response(&Fault::elsewhere(*refusal)),
        Fault::ExtraUsageRequired => {
            (429, "rate_limit_error", "Extra usage is required for long context requests.".to_owned())
        }
    };
    let request_id = format!("req_mock_{}", next_serial());
    let body = json!({
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": request_id,
    });
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, Json(body)).into_response();
    let should_retry = matches!(status.as_u16(), 408 | 409 | 429 | 500..);
    headers.extend([
        ("request-id", request_id),
        ("anthropic-organization-id", ORG_ID.to_owned()),
        ("x-should-retry", should_retry.to_string()),
    ]);
    for (name, value) in headers {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(HeaderName::from_static(name), value);
        }
    }
    crate::subscription::insert(&mut response, window_headers);
    response
}

/// RFC 3339 time `secs` from now (Anthropic's `*-reset` headers).
pub(crate) fn reset_time(secs: u64) -> String {
    let now = jiff::Timestamp::now();
    let at = i64::try_from(secs).ok().and_then(|s| now.checked_add(jiff::SignedDuration::from_secs(s)).ok());
    format!("{:.0}", at.unwrap_or(now))
}

/// Authentication, then the `anthropic-version` header.
fn admit(shared: &Shared, hit: &Intake, headers_had_version: bool) -> Result<(), Fault> {
    shared.playbook.authenticate(hit.key.as_deref())?;
    if !headers_had_version {
        return Err(Fault::BadRequest { message: "anthropic-version: header is required".to_owned() });
    }
    Ok(())
}

/// Counts, records and admits a request; returns it with its intake.
fn intake(shared: &Shared, method: Method, uri: &Uri, headers: HeaderMap, body: Bytes) -> Result<Intake, Fault> {
    let key = api_key(&headers);
    let has_version = headers.contains_key("anthropic-version");
    let hit = shared.intake(method, uri, headers, body, key);
    admit(shared, &hit, has_version)?;
    Ok(hit)
}

#[derive(Debug, Deserialize)]
struct PageQuery {
    limit: Option<String>,
    after_id: Option<String>,
    before_id: Option<String>,
}

/// `GET /v1/models?limit=&after_id=&before_id=`: one page of the key's models.
pub(crate) async fn list_models(
    shared: &Shared,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    list_page(shared, method, uri, headers, body).await.unwrap_or_else(|fault| error_response(&fault))
}

async fn list_page(
    shared: &Shared,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, Fault> {
    let hit = intake(shared, method, &uri, headers, body)?;
    let bad = |message: &str| Fault::BadRequest { message: message.to_owned() };
    let Query(query) = Query::<PageQuery>::try_from_uri(&uri).map_err(|_| bad("invalid query parameters"))?;
    let limit = match query.limit {
        None => 20,
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=1000).contains(n))
            .ok_or_else(|| bad("limit: Input should be between 1 and 1000"))?,
    };
    let plan = shared.playbook.play(hit.key.as_deref(), Call::Listing)?;
    plan.wait().await;
    let models = &plan.models;
    let position = |id: &str| models.iter().position(|m| m == id);
    let (page, has_more) = match (&query.after_id, &query.before_id) {
        (Some(after), _) => {
            let start = position(after).map_or(models.len(), |i| i + 1);
            let end = (start + limit).min(models.len());
            (&models[start..end], end < models.len())
        }
        (None, Some(before)) => {
            let end = position(before).unwrap_or(0);
            let start = end.saturating_sub(limit);
            (&models[start..end], start > 0)
        }
        (None, None) => {
            let end = limit.min(models.len());
            (&models[..end], end < models.len())
        }
    };
    let data: Vec<Value> = page
        .iter()
        .map(|id| json!({"type": "model", "id": id, "display_name": id, "created_at": MODEL_CREATED_AT}))
        .collect();
    Ok(Json(json!({
        "data": data,
        "has_more": has_more,
        "first_id": page.first(),
        "last_id": page.last(),
    }))
    .into_response())
}

/// `POST /v1/messages`.
pub(crate) async fn messages(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    answer_messages(&shared, method, &uri, headers, body).await.unwrap_or_else(|fault| error_response(&fault))
}

async fn answer_messages(
    shared: &Shared,
    method: Method,
    uri: &Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, Fault> {
    let hit = intake(shared, method, uri, headers, body)?;
    let ModelRequest { model, stream, .. } = hit.model_request()?;
    let plan = shared.playbook.play(hit.key.as_deref(), Call::Model(&model))?;
    plan.wait().await;
    if let Some(account) = &plan.account {
        shared.accounts.check_messages(hit.json.as_ref(), account)?;
    }
    let out = Outlet::new(plan.wire, Dialect::Anthropic, hit.accept_encoding.as_deref())
        .quota(plan.quota)
        .subscription(plan.subscription.clone());
    let reply = Reply::answer(&model, &plan, hit.json.as_ref(), Dialect::Anthropic, hit.body.len());
    let dies = plan.dies_after.is_some();
    if !stream && plan.stream_error.is_some() {
        return Err(Fault::Overloaded);
    }
    let cache = plan.prompt_cache.as_ref().map(|scope| shared.caches.charge(scope, hit.json.as_ref(), hit.body.len()));
    if !stream {
        let mut answer = message(&reply, true, cache);
        if let (Some(account), true, Some(content)) =
            (&plan.account, plan.reasoning, answer.get_mut("content").and_then(Value::as_array_mut))
        {
            let signature = format!("sig_mock_{}", reply.serial);
            shared.accounts.issue(signature.clone(), account);
            content.insert(0, json!({"type": "thinking", "thinking": "Mock thought.", "signature": signature}));
        }
        return Ok(out.json(&answer, dies));
    }
    let mut start = message(&reply, false, cache);
    start["usage"]["output_tokens"] = json!(1);
    let mut events = vec![("message_start", json!({"message": start}), false)];
    match &reply.call {
        None => events.extend([
            ("content_block_start", json!({"index": 0, "content_block": {"type": "text", "text": ""}}), false),
            ("ping", json!({}), false),
        ]),
        Some(call) => events.push((
            "content_block_start",
            json!({"index": 0, "content_block": {
                "type": "tool_use", "id": tool_use_id(&reply), "name": call.name, "input": {},
            }}),
            false,
        )),
    }
    for piece in reply.streamed_chunks(plan.dies_after.or(plan.stream_error)) {
        let delta = match reply.call {
            None => json!({"type": "text_delta", "text": piece}),
            Some(_) => json!({"type": "input_json_delta", "partial_json": piece}),
        };
        events.push(("content_block_delta", json!({"index": 0, "delta": delta}), true));
    }
    if plan.stream_error.is_some() {
        events.push(("error", json!({"error": {"type": "overloaded_error", "message": "Overloaded"}}), false));
    } else if !dies {
        events.extend([
            ("content_block_stop", json!({"index": 0}), false),
            (
                "message_delta",
                json!({
                    "delta": {"stop_reason": stop_reason(&reply), "stop_sequence": null},
                    "usage": {"output_tokens": reply.output_tokens},
                }),
                false,
            ),
            ("message_stop", json!({}), false),
        ]);
    }
    let frames = events
        .into_iter()
        .map(|(name, mut data, content)| {
            data["type"] = json!(name);
            Frame { content, ..frame(Some(name), &data.to_string()) }
        })
        .collect();
    Ok(out.stream(frames, if dies { Ending::Dies } else { Ending::Complete }))
}

fn tool_use_id(reply: &Reply) -> String {
    format!("toolu_mock_{}", reply.serial)
}

fn stop_reason(reply: &Reply) -> &'static str {
    if reply.call.is_some() {
        "tool_use"
    } else {
        "end_turn"
    }
}

/// A `message` object: when `done`, with its content (the text, or the tool_use block) and
/// stop reason; else (in `message_start`) with empty content and no stop reason yet. With a
/// prompt cache, its usage splits the input into uncached, written and read tokens.
fn message(reply: &Reply, done: bool, cache: Option<CacheUsage>) -> Value {
    let content = match (&reply.call, done) {
        (_, false) => json!([]),
        (None, true) => json!([{"type": "text", "text": reply.text()}]),
        (Some(call), true) => {
            json!([{"type": "tool_use", "id": tool_use_id(reply), "name": call.name, "input": call.input}])
        }
    };
    json!({
        "id": format!("msg_mock_{}", reply.serial),
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": content,
        "stop_reason": if done { json!(stop_reason(reply)) } else { Value::Null },
        "stop_sequence": null,
        "usage": usage(reply, cache),
    })
}

fn usage(reply: &Reply, cache: Option<CacheUsage>) -> Value {
    match cache {
        None => json!({"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens}),
        Some(c) => json!({
            "input_tokens": c.input,
            "cache_creation_input_tokens": c.write,
            "cache_read_input_tokens": c.read,
            "output_tokens": reply.output_tokens,
        }),
    }
}

/// `POST /v1/messages/count_tokens`: `{"input_tokens": N}`; follows the model's script.
pub(crate) async fn count_tokens(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let answer = async {
        let hit = intake(&shared, method, &uri, headers, body)?;
        let request = hit.model_request()?;
        let plan = shared.playbook.play(hit.key.as_deref(), Call::Model(&request.model))?;
        plan.wait().await;
        let reply = Reply::new(&request.model, "", hit.body.len());
        Ok::<_, Fault>(Json(json!({"input_tokens": reply.input_tokens})).into_response())
    };
    answer.await.unwrap_or_else(|fault| error_response(&fault))
}
