//! Answers the relay makes itself, in the dialect's own shape: refused token, unknown
//! connection, nothing eligible (503/429 with Retry-After), a continued response whose
//! profile cannot serve (continuity), upstream unreachable, and the
//! models listing of a routed connection.

use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::json;
use switchyard_core::{ErrorCode, Protocol};
use switchyard_engine::EngineError;
use switchyard_providers::dialect;

use crate::body::client_body::{json, ClientBody, Response};

/// An error body both SDKs parse: `{"type":"error","error":{"type","message"}}` (OpenAI
/// clients read `error.message`).
pub fn neutral_error(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    json(status, &body)
}

/// An engine error of a route of the relay's own (not a provider call), in the neutral shape:
/// the status follows the error's code (`ErrorCode::http_status`), the message is the engine's.
pub fn neutral_engine_error(e: &EngineError) -> Response {
    let status = StatusCode::from_u16(e.code().http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    neutral_error(status, e.code().as_str(), &e.to_string())
}

/// 405 with the methods the route takes (`allow`, e.g. `GET,HEAD`).
pub fn method_not_allowed(allow: &'static str) -> Response {
    let mut resp = crate::body::client_body::bare(StatusCode::METHOD_NOT_ALLOWED);
    resp.headers_mut().insert(http::header::ALLOW, http::HeaderValue::from_static(allow));
    resp
}

pub fn unauthorized() -> Response {
    with_reason(
        neutral_error(StatusCode::UNAUTHORIZED, "authentication_error", "missing or wrong Switchyard relay token"),
        "unauthorized",
    )
}

/// An engine error while serving a request, in `protocol`'s shape: the status and reason
/// follow the error's code (one table: `ErrorCode::http_status`), the message is the
/// engine's (which never carries secret material).
pub fn engine_error(protocol: Protocol, e: &EngineError) -> Response {
    let code = e.code();
    let message = match e {
        EngineError::KeychainUnavailable(_) => format!(
            "Switchyard cannot read the key from the OS keychain: {e}. Unlock the keychain (or start the \
             Secret Service) and retry."
        ),
        _ => e.to_string(),
    };
    let retry_after = (code == ErrorCode::KeychainUnavailable).then_some(5);
    with_reason(error(protocol, code.http_status(), &message, retry_after), code.as_str())
}

/// A request whose `x-switchyard-tag-*` headers break a limit (count, name, value): 400
/// `invalid_tag`, nothing sent upstream. The message names the header, never its value.
pub fn invalid_tag(protocol: Protocol, invalid: &switchyard_core::InvalidInput) -> Response {
    with_reason(error(protocol, 400, &invalid.to_string(), None), "invalid_tag")
}

/// A request naming its profile (`x-switchyard-profile`) with the relay token in
/// `Authorization` or `x-api-key`: 400 `profile_not_pinnable`, nothing sent (its credential
/// headers would be forwarded as the client's own, and they hold the relay token).
pub fn pin_refused(protocol: Protocol) -> Response {
    let message = "x-switchyard-profile names a profile whose requests carry the client's own credential: send the \
                   relay token in x-switchyard-token, not in Authorization or x-api-key";
    with_reason(error(protocol, 400, message, None), "profile_not_pinnable")
}

/// No answer from the provider: 504 when it did not answer within the connection's
/// first-byte timeout, else 502. Both are recorded as `network` failures.
pub fn no_answer(protocol: Protocol, timed_out: bool) -> Response {
    if timed_out {
        with_reason(
            error(protocol, 504, "the provider did not answer within the connection's first-byte timeout", None),
            "upstream_timeout",
        )
    } else {
        with_reason(error(protocol, 502, "the provider could not be reached", None), "upstream_unreachable")
    }
}

/// The dialect a request speaks when its connection is unknown: Anthropic paths or headers,
/// else OpenAI.
pub fn guess_protocol(rest: &str, headers: &HeaderMap) -> Protocol {
    if rest.starts_with("v1/messages") || headers.contains_key("anthropic-version") {
        Protocol::Anthropic
    } else if rest.starts_with("v1beta/") {
        Protocol::Gemini
    } else {
        Protocol::Openai
    }
}

/// Adds `x-switchyard-reason` to an answer the relay made itself.
pub fn with_reason(mut resp: Response, reason: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(reason) {
        resp.headers_mut().insert(crate::header_names::X_SWITCHYARD_REASON, v);
    }
    resp
}

/// An error in `protocol`'s shape (its dialect's), with `Retry-After` when given.
pub fn error(protocol: Protocol, status: u16, message: &str, retry_after_secs: Option<u64>) -> Response {
    shaped(dialect::of(protocol).error_body(status, message), status, retry_after_secs)
}

/// How long a client may wait on its own before a limit's refusal says `x-should-retry: false`:
/// past a minute a retry loop only spends the client's attempts (Claude Code and the official
/// SDKs stop at once on it; docs/clients.md says what Codex and Gemini CLI do).
pub const SHOULD_RETRY_MAX_SECS: u64 = 60;

/// A limit's refusal (invariant 29): 429 in the dialect's shape, `x-switchyard-reason:
/// limit:<id>`, `retry-after`, and `x-should-retry: false` when that is more than a minute away.
pub fn limit_refused(protocol: Protocol, message: &str, limit: &str, retry_after_secs: Option<u64>) -> Response {
    let mut resp = with_reason(error(protocol, 429, message, retry_after_secs), &format!("limit:{limit}"));
    if retry_after_secs.is_some_and(|s| s > SHOULD_RETRY_MAX_SECS) {
        resp.headers_mut().insert(crate::header_names::X_SHOULD_RETRY, HeaderValue::from_static("false"));
    }
    resp
}

/// A user token outside its scope (invariant 31): 403 `not_in_scope`, nothing sent upstream.
pub fn not_in_scope(protocol: Protocol, what: &str) -> Response {
    let message = format!("your relay token may not use {what}; ask an admin to widen your scope");
    with_reason(error(protocol, 403, &message, None), "not_in_scope")
}

/// The profile that produced the response a request continues (`previous_response_id`)
/// cannot serve now, and no other account could read it: `status` (503) in the dialect's
/// continuity shape (OpenAI: code `switchyard_continuity`, `param: "previous_response_id"`),
/// `Retry-After` when that profile's cooldown end is known.
pub fn continuity(protocol: Protocol, status: u16, message: &str, retry_after_secs: Option<u64>) -> Response {
    shaped(dialect::of(protocol).continuity_body(status, message), status, retry_after_secs)
}

fn shaped(body: serde_json::Value, status: u16, retry_after_secs: Option<u64>) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
    let mut resp = json(code, &body);
    if let Some(secs) = retry_after_secs {
        if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
            resp.headers_mut().insert("retry-after", v);
        }
    }
    resp
}

/// The models a routed connection can serve now (current evidence), in the dialect's shape.
pub fn models(protocol: Protocol, models: &[String]) -> Response {
    let body = dialect::of(protocol).models_body(models);
    let mut resp = Response::new(ClientBody::full(body.to_string()));
    resp.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
    resp
}
