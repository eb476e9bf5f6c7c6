//! Limit headers on successful answers, when a key's script asks for them: the request limit
//! and what is left of it, falling by one per model call, in each dialect's own headers
//! (Anthropic `anthropic-ratelimit-requests-*` with an RFC 3339 reset, OpenAI
//! `x-ratelimit-*-requests` with a Go-duration reset). Error answers keep their own headers.

use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;
use serde::{Deserialize, Serialize};

use crate::wire::Dialect;

/// The request limit a key reports. JSON: `{"requests_limit": 50, "requests_remaining_start": 49}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quota {
    /// The window's request limit.
    pub requests_limit: u64,
    /// What the first successful model call reports as remaining; each later one reports one
    /// less, down to 0. Token counting takes a step too but sends no headers.
    pub requests_remaining_start: u64,
}

/// The limit and remaining one answer reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct QuotaStep {
    pub limit: u64,
    pub remaining: u64,
}

impl Quota {
    /// The step of the `n`-th (0-based) successful model call.
    pub(crate) fn step(self, n: u64) -> QuotaStep {
        QuotaStep { limit: self.requests_limit, remaining: self.requests_remaining_start.saturating_sub(n) }
    }
}

/// Seconds until the mock's request window resets.
const WINDOW_SECS: u64 = 60;

/// Adds the step's limit headers to a successful answer.
pub(crate) fn mark(response: &mut Response, dialect: Dialect, step: QuotaStep) {
    let headers: [(&'static str, String); 3] = match dialect {
        Dialect::Anthropic => [
            ("anthropic-ratelimit-requests-limit", step.limit.to_string()),
            ("anthropic-ratelimit-requests-remaining", step.remaining.to_string()),
            ("anthropic-ratelimit-requests-reset", crate::anthropic::reset_time(WINDOW_SECS)),
        ],
        Dialect::Chat | Dialect::Responses => [
            ("x-ratelimit-limit-requests", step.limit.to_string()),
            ("x-ratelimit-remaining-requests", step.remaining.to_string()),
            ("x-ratelimit-reset-requests", format!("{}m0s", WINDOW_SECS / 60)),
        ],
    };
    for (name, value) in headers {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(HeaderName::from_static(name), value);
        }
    }
}
