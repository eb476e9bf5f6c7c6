//! The Gemini dialect's classification table and the structured signal it reads. A Gemini
//! error is `{"error": {"code", "message", "status", "details": [{"@type": …}, …]}}`; the rows
//! match `error.status` (as the row's `type`) and one signal taken from `details[]` (as the
//! row's `code`), never the message:
//!
//! - a `google.rpc.QuotaFailure` violation whose `quotaId` counts per day
//!   (`GenerateRequestsPerDayPerProjectPerModel-FreeTier`) → `quota_per_day`: the (key, model)
//!   cools until the quota's daily reset, midnight US Pacific (`pacific.rs`);
//! - else a per-minute violation (`…PerMinute…`) together with `google.rpc.RetryInfo.retryDelay`
//!   → `quota_per_minute`: the (key, model) cools for the delay;
//! - else a `google.rpc.ErrorInfo.reason` (`API_KEY_INVALID`, `SERVICE_DISABLED`,
//!   `BILLING_DISABLED`, …) as written.
//!
//! A `RESOURCE_EXHAUSTED` with neither (no details, or only `Help`) is ambiguous: never failed
//! over, its retry delay (if any) passed on. Each row has a recorded sample
//! `tests/fixtures/gemini/<name>.http`.

use serde_json::Value;
use switchyard_core::routing::FailureKind::*;
use switchyard_core::routing::Scope::*;

use crate::rule::StatusMatch::{Any, Is, Range};
use crate::rule::{row, Rule, Until};

/// The signal of a per-day quota violation.
pub const QUOTA_PER_DAY: &str = "quota_per_day";
/// The signal of a per-minute quota violation with a retry delay.
pub const QUOTA_PER_MINUTE: &str = "quota_per_minute";

#[rustfmt::skip]
pub const RULES: &[Rule] = &[
    // Quota violations are per (project, model): the key keeps serving other models.
    row("quota_per_day", Is(429), Some("RESOURCE_EXHAUSTED"), Some(QUOTA_PER_DAY), QuotaExhausted, CredentialModel)
        .until(Until::PacificMidnight),
    row("quota_per_minute", Is(429), Some("RESOURCE_EXHAUSTED"), Some(QUOTA_PER_MINUTE), RateLimited, CredentialModel)
        .until(Until::RetryDelay),
    // No structured word on whose limit it is (the shared free pool, a capacity limit): no failover.
    row("resource_exhausted", Is(429), Some("RESOURCE_EXHAUSTED"), None, Unknown, Ambiguous)
        .until(Until::RetryDelay),
    row("api_key_invalid", Any, None, Some("API_KEY_INVALID"), AuthInvalid, Credential),
    row("unauthenticated", Any, Some("UNAUTHENTICATED"), None, AuthInvalid, Credential),
    row("status_401", Is(401), None, None, AuthInvalid, Credential),
    // The key's project cannot use the API (API not enabled, billing off): another key may.
    row("service_disabled", Is(403), Some("PERMISSION_DENIED"), Some("SERVICE_DISABLED"), QuotaExhausted, Credential),
    row("billing_disabled", Is(403), Some("PERMISSION_DENIED"), Some("BILLING_DISABLED"), QuotaExhausted, Credential),
    // Any other permission refusal (key restrictions, region, a model's access): recorded only.
    row("permission_denied", Is(403), Some("PERMISSION_DENIED"), None, PermissionAmbiguous, Ambiguous),
    row("status_403", Is(403), None, None, PermissionAmbiguous, Ambiguous),
    // The model (or method) does not exist: the request is wrong, not the key.
    row("not_found", Is(404), Some("NOT_FOUND"), None, BadRequest, Request),
    row("invalid_argument", Is(400), Some("INVALID_ARGUMENT"), None, BadRequest, Request),
    // E.g. the free tier is not offered in the caller's country: every key would say so.
    row("failed_precondition", Is(400), Some("FAILED_PRECONDITION"), None, BadRequest, Request),
    row("status_400", Is(400), None, None, BadRequest, Request),
    row("status_404", Is(404), None, None, BadRequest, Request),
    row("status_413", Is(413), None, None, BadRequest, Request),
    row("unavailable", Any, Some("UNAVAILABLE"), None, Overloaded, Provider),
    row("internal", Any, Some("INTERNAL"), None, ServerError, Provider),
    row("deadline_exceeded", Any, Some("DEADLINE_EXCEEDED"), None, ServerError, Provider),
    // Untyped answers (a proxy or load balancer in front of the API).
    row("status_429", Is(429), None, None, Unknown, Ambiguous).until(Until::RetryDelay),
    row("status_503", Is(503), None, None, Overloaded, Provider),
    row("status_5xx", Range(500, 599), None, None, ServerError, Provider),
    row("unknown", Any, None, None, Unknown, Ambiguous),
];

const QUOTA_FAILURE: &str = "type.googleapis.com/google.rpc.QuotaFailure";
const RETRY_INFO: &str = "type.googleapis.com/google.rpc.RetryInfo";
const ERROR_INFO: &str = "type.googleapis.com/google.rpc.ErrorInfo";

/// The structured signal of an error object's `details[]` (see the module comment).
pub fn signal(error: &Value) -> Option<&str> {
    let details = error.get("details").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let of_type = |t: &'static str| details.iter().filter(move |d| d.get("@type").and_then(Value::as_str) == Some(t));
    let quota_ids = || {
        of_type(QUOTA_FAILURE)
            .filter_map(|d| d.get("violations").and_then(Value::as_array))
            .flatten()
            .filter_map(|v| v.get("quotaId").and_then(Value::as_str))
    };
    if quota_ids().any(|id| id_has_period(id, "PerDay")) {
        return Some(QUOTA_PER_DAY);
    }
    if quota_ids().any(|id| id_has_period(id, "PerMinute")) && retry_delay_ms(error).is_some() {
        return Some(QUOTA_PER_MINUTE);
    }
    of_type(ERROR_INFO).find_map(|d| d.get("reason").and_then(Value::as_str))
}

/// Whether a quota id names `period` as one of its CamelCase words (`PerDay` in
/// `GenerateRequestsPerDayPerProjectPerModel-FreeTier`, not in `PerDayz…`).
fn id_has_period(id: &str, period: &str) -> bool {
    id.match_indices(period).any(|(i, _)| {
        let next = id.as_bytes().get(i + period.len());
        next.is_none_or(|b| b.is_ascii_uppercase() || *b == b'-')
    })
}

/// `google.rpc.RetryInfo.retryDelay` in milliseconds: a protobuf duration in JSON
/// (`"39s"`, `"0.5s"`, `"12.814613947s"`), at most a day (one answer cannot cool a key longer).
pub fn retry_delay_ms(error: &Value) -> Option<i64> {
    let details = error.get("details").and_then(Value::as_array)?;
    let text = details
        .iter()
        .filter(|d| d.get("@type").and_then(Value::as_str) == Some(RETRY_INFO))
        .find_map(|d| d.get("retryDelay").and_then(Value::as_str))?;
    let seconds: f64 = text.strip_suffix('s')?.parse().ok()?;
    (seconds.is_finite() && (0.0..=86_400.0).contains(&seconds)).then(|| (seconds * 1000.0).ceil() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_signal_comes_from_the_details_never_the_message() {
        let quota = |ids: &[&str], delay: Option<&str>| {
            let violations: Vec<Value> = ids.iter().map(|id| json!({"quotaId": id})).collect();
            let mut details = vec![json!({"@type": QUOTA_FAILURE, "violations": violations})];
            if let Some(d) = delay {
                details.push(json!({"@type": RETRY_INFO, "retryDelay": d}));
            }
            json!({"status": "RESOURCE_EXHAUSTED", "message": "per day per minute", "details": details})
        };
        let day = quota(
            &[
                "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
            ],
            Some("39s"),
        );
        assert_eq!(signal(&day), Some(QUOTA_PER_DAY), "a per-day violation wins over a per-minute one");
        let minute = quota(&["GenerateContentInputTokensPerModelPerMinute-FreeTier"], Some("12.5s"));
        assert_eq!(signal(&minute), Some(QUOTA_PER_MINUTE), "per minute with a delay");
        assert_eq!(retry_delay_ms(&minute), Some(12_500), "fractional seconds");
        assert_eq!(
            signal(&quota(&["GenerateRequestsPerMinutePerProjectPerModel"], None)),
            None,
            "per minute, no delay"
        );
        assert_eq!(signal(&json!({"status": "RESOURCE_EXHAUSTED", "message": "quota per day"})), None, "bare");
        let info = json!({"details": [{"@type": ERROR_INFO, "reason": "API_KEY_INVALID"}]});
        assert_eq!(signal(&info), Some("API_KEY_INVALID"), "ErrorInfo.reason as written");
        assert!(!id_has_period("FooPerDayz", "PerDay"), "whole CamelCase words only");
        assert_eq!(retry_delay_ms(&quota(&[], Some("1000000s"))), None, "more than a day is not believed");
        assert_eq!(retry_delay_ms(&quota(&[], Some("-1s"))), None, "negative");
        assert_eq!(retry_delay_ms(&quota(&[], Some("5m"))), None, "not a protobuf duration");
    }
}
