//! Classification: pick the dialect's table, pull the structured `type` and `code` (and the
//! `message`, for the few rows that need it) out of the error body, take the first matching
//! row, and attach the cooldown end the row names (a window's reset, the body's reset, or the
//! hint from the headers).

use std::time::SystemTime;

use serde_json::Value;
use switchyard_core::connection::Protocol;
use switchyard_core::routing::{believable_reset, unix_ms, Failure, FailureKind, Scope};

use crate::headers::HeaderSource;
use crate::hint::retry_at_ms;
use crate::quota::window_reset;
use crate::rule::{Answer, Rule, Until};
use crate::{dialect, gemini};

/// A classified answer and the table row that decided it (for records and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classified {
    pub failure: Failure,
    /// The matching row's name; `"network"` for transport errors.
    pub rule: &'static str,
}

/// The classification table of a dialect.
pub fn table(protocol: Protocol) -> &'static [Rule] {
    dialect::of(protocol).rules()
}

/// Classifies a provider's error answer. `status` is the HTTP status (200 for an error event
/// inside a stream), `body` the raw body (or the event's data). The structured `type` and
/// `code` fields and the rows' header values decide; the message is read only by rows that
/// keep an answer from failing over (`Rule::message`). Unmatched answers are
/// unknown/ambiguous.
pub fn classify<H: HeaderSource + ?Sized>(
    protocol: Protocol,
    status: u16,
    headers: &H,
    body: &[u8],
    now: SystemTime,
) -> Classified {
    let dialect = dialect::of(protocol);
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let error = parsed.as_ref().map(error_object);
    let field = |name: &str| error.and_then(|e| e.get(name)).and_then(Value::as_str);
    let (error_type, error_code) = error.map_or((None, None), |e| dialect.error_fields(e));
    let answer = Answer { status, headers, error_type, error_code, message: field("message") };
    let Some(rule) = dialect.rules().iter().find(|r| r.matches(&answer)) else {
        let failure = Failure::new(FailureKind::Unknown, Scope::Ambiguous).with_retry_at(retry_at_ms(headers, now));
        return Classified { failure, rule: "unknown" };
    };
    let until = match rule.until {
        Until::Hint => None,
        Until::Window(name) => window_reset(protocol, name, headers, now),
        Until::BodyReset => error.and_then(|e| body_reset(e, unix_ms(now))),
        Until::PacificMidnight => gemini::pacific::next_pacific_midnight_ms(unix_ms(now)),
        Until::RetryDelay => error.and_then(gemini::rules::retry_delay_ms).and_then(|d| unix_ms(now).checked_add(d)),
    };
    let retry_at = until.or_else(|| retry_at_ms(headers, now));
    Classified { failure: Failure::new(rule.kind, rule.scope).with_retry_at(retry_at), rule: rule.name }
}

/// The object holding `type`/`code`: `body.error` when it is an object, else the body itself
/// (stream error events of the OpenAI Responses API put `code` at the top level). A body that
/// is an array is read by its first element (Gemini's `streamGenerateContent` without
/// `alt=sse` answers an error as `[{"error": {…}}]`).
fn error_object(body: &Value) -> &Value {
    let body = match body {
        Value::Array(items) => items.first().unwrap_or(body),
        _ => body,
    };
    match body.get("error") {
        Some(e @ Value::Object(_)) => e,
        _ => body,
    }
}

/// A Codex usage limit's reset from its error object: `resets_at` (unix seconds), else
/// `resets_in_seconds` from now; whole non-negative numbers within a week of now only (one
/// answer cannot cool a key for years).
fn body_reset(error: &Value, now_ms: i64) -> Option<i64> {
    let whole = |name: &str| error.get(name).and_then(Value::as_u64).and_then(|v| i64::try_from(v).ok());
    let at = whole("resets_at").and_then(|s| s.checked_mul(1000));
    let after = whole("resets_in_seconds").and_then(|s| s.checked_mul(1000)).and_then(|ms| now_ms.checked_add(ms));
    [at, after].into_iter().flatten().find(|at| believable_reset(*at, now_ms))
}
