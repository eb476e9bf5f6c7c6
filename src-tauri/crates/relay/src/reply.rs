//! Answers the relay makes itself, in the dialect's own shape: refused token, unknown
//! connection, nothing eligible (503/429 with Retry-After), upstream unreachable, and the
//! models listing of a routed connection.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use switchyard_core::Protocol;

/// An error body both SDKs parse: `{"type":"error","error":{"type","message"}}` (OpenAI
/// clients read `error.message`).
pub fn neutral_error(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    (status, axum::Json(body)).into_response()
}

pub fn unauthorized() -> Response {
    neutral_error(StatusCode::UNAUTHORIZED, "authentication_error", "missing or wrong Switchyard relay token")
}

pub fn unknown_connection(slug: &str) -> Response {
    neutral_error(StatusCode::NOT_FOUND, "not_found_error", &format!("no Switchyard connection '{slug}'"))
}

/// An error in `protocol`'s shape, with `Retry-After` when given.
pub fn error(protocol: Protocol, status: u16, message: &str, retry_after_secs: Option<u64>) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
    let body = match protocol {
        Protocol::Anthropic => {
            let kind = match status {
                429 => "rate_limit_error",
                503 | 529 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        Protocol::Openai => {
            let (kind, code_field) = match status {
                429 => ("requests", "rate_limit_exceeded"),
                _ => ("server_error", "switchyard_unavailable"),
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": code_field}})
        }
    };
    let mut resp = (code, axum::Json(body)).into_response();
    if let Some(secs) = retry_after_secs {
        if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
            resp.headers_mut().insert("retry-after", v);
        }
    }
    resp
}

/// The models a routed connection can serve now (current evidence), in the dialect's shape.
pub fn models(protocol: Protocol, models: &[String]) -> Response {
    let body = match protocol {
        Protocol::Openai => json!({
            "object": "list",
            "data": models.iter().map(|m| json!({"id": m, "object": "model", "created": 0, "owned_by": "switchyard"})).collect::<Vec<_>>()
        }),
        Protocol::Anthropic => json!({
            "data": models.iter().map(|m| json!({"type": "model", "id": m, "display_name": m, "created_at": "1970-01-01T00:00:00Z"})).collect::<Vec<_>>(),
            "has_more": false,
            "first_id": models.first(),
            "last_id": models.last(),
        }),
    };
    let mut resp = Response::new(Body::from(body.to_string()));
    resp.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
    resp
}
