//! The Anthropic dialect's classification table (`{"type": "error", "error": {"type", ...}}`).
//! One row per rule, first match wins; each row has a fixture
//! `tests/fixtures/anthropic/<name>.http`. Typed rows match any status, so an `error` event
//! inside a 200 stream classifies the same way.

use switchyard_core::routing::FailureKind::*;
use switchyard_core::routing::Scope::*;

use crate::rule::StatusMatch::{Any, Is, Range};
use crate::rule::{row, Rule};

#[rustfmt::skip]
pub const RULES: &[Rule] = &[
    row("billing_error", Any, Some("billing_error"), None, QuotaExhausted, Credential),
    row("rate_limit_error", Any, Some("rate_limit_error"), None, RateLimited, Credential),
    row("authentication_error", Any, Some("authentication_error"), None, AuthInvalid, Credential),
    // No model scope in Anthropic's permission errors: recorded, never failed over on.
    row("permission_error", Any, Some("permission_error"), None, PermissionAmbiguous, Ambiguous),
    row("overloaded_error", Any, Some("overloaded_error"), None, Overloaded, Provider),
    row("api_error", Any, Some("api_error"), None, ServerError, Provider),
    row("timeout_error", Any, Some("timeout_error"), None, ServerError, Provider),
    // Also "credit balance too low", which only the message tells apart: no failover.
    row("invalid_request_error", Any, Some("invalid_request_error"), None, BadRequest, Request),
    row("not_found_error", Any, Some("not_found_error"), None, BadRequest, Request),
    row("request_too_large", Any, Some("request_too_large"), None, BadRequest, Request),
    // Untyped answers (from a proxy or load balancer in front of the API).
    row("status_401", Is(401), None, None, AuthInvalid, Credential),
    row("status_429", Is(429), None, None, RateLimited, Ambiguous),
    row("status_5xx", Range(500, 599), None, None, ServerError, Provider),
    row("unknown", Any, None, None, Unknown, Ambiguous),
];
