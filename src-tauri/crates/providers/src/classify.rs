//! Classification: pick the dialect's table, pull the structured `type` and `code` out of the
//! error body, take the first matching row, and attach the cooldown hint from the headers.

use std::time::SystemTime;

use serde_json::Value;
use switchyard_core::connection::Protocol;
use switchyard_core::routing::{Failure, FailureKind, Scope};

use crate::headers::HeaderSource;
use crate::hint::retry_at_ms;
use crate::rule::Rule;
use crate::{anthropic, openai};

/// A classified answer and the table row that decided it (for records and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classified {
    pub failure: Failure,
    /// The matching row's name; `"network"` for transport errors.
    pub rule: &'static str,
}

/// The classification table of a dialect.
pub fn table(protocol: Protocol) -> &'static [Rule] {
    match protocol {
        Protocol::Openai => openai::RULES,
        Protocol::Anthropic => anthropic::RULES,
    }
}

/// Classifies a provider's error answer. `status` is the HTTP status (200 for an error event
/// inside a stream), `body` the raw body (or the event's data). Only the structured `type`
/// and `code` fields are read, never the message. Unmatched answers are unknown/ambiguous.
pub fn classify<H: HeaderSource + ?Sized>(
    protocol: Protocol,
    status: u16,
    headers: &H,
    body: &[u8],
    now: SystemTime,
) -> Classified {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let error = parsed.as_ref().map(error_object);
    let field = |name: &str| error.and_then(|e| e.get(name)).and_then(Value::as_str);
    let (error_type, error_code) = (field("type"), field("code"));
    let rule = table(protocol).iter().find(|r| r.matches(status, error_type, error_code));
    let (kind, scope, name) = match rule {
        Some(r) => (r.kind, r.scope, r.name),
        None => (FailureKind::Unknown, Scope::Ambiguous, "unknown"),
    };
    Classified { failure: Failure::new(kind, scope).with_retry_at(retry_at_ms(headers, now)), rule: name }
}

/// The object holding `type`/`code`: `body.error` when it is an object, else the body itself
/// (stream error events of the OpenAI Responses API put `code` at the top level).
fn error_object(body: &Value) -> &Value {
    match body.get("error") {
        Some(e @ Value::Object(_)) => e,
        _ => body,
    }
}
