//! The Anthropic dialect's classification table (`{"type": "error", "error": {"type", ...}}`).
//! One row per rule, first match wins; each row has a fixture
//! `tests/fixtures/anthropic/<name>.http`. Typed rows match any status, so an `error` event
//! inside a 200 stream classifies the same way.
//!
//! Subscription (Claude Code) accounts (invariant 23): a `rate_limit_error` whose unified
//! headers say a window is `rejected` is that account's spent window, not a passing rate
//! limit — the account (or, for a model family's weekly window, the account and model) cools
//! until that window's reset. Account windows come before model windows (a spent account window
//! refuses every model), the longer before the shorter (the limiter is AND-composed: the
//! account serves again only when both have reset, and the weekly reset is the later one).
//! Two refusals carry no structured field of their own and every account would give them:
//! "only authorized for use with Claude Code" (400 `invalid_request_error`) and the extra-usage
//! refusals (429 `rate_limit_error`, e.g. "Extra usage is required for long context
//! requests."). Their rows read the message — the only place this table does — and are of
//! request scope: never failed over, the client gets the provider's refusal.

use switchyard_core::routing::FailureKind::*;
use switchyard_core::routing::Scope::*;

use crate::rule::StatusMatch::{Any, Is, Range};
use crate::rule::{row, Rule, Until::Window};

const UNIFIED_STATUS: &str = "anthropic-ratelimit-unified-status";
const CLAIM: &str = "anthropic-ratelimit-unified-representative-claim";

#[rustfmt::skip]
pub const RULES: &[Rule] = &[
    // Message rows (no structured field exists; request scope only, so never failed over).
    row("claude_code_only", Any, Some("invalid_request_error"), None, BadRequest, Request)
        .when_message("only authorized for use with Claude Code"),
    row("extra_usage", Any, Some("rate_limit_error"), None, BadRequest, Request)
        .when_message("extra usage"),
    row("billing_error", Any, Some("billing_error"), None, QuotaExhausted, Credential),
    // Spent subscription windows, told by their status headers.
    row("unified_7d_rejected", Any, Some("rate_limit_error"), None, QuotaExhausted, Credential)
        .when_headers(&[("anthropic-ratelimit-unified-7d-status", "rejected")])
        .until(Window("unified_7d")),
    row("unified_5h_rejected", Any, Some("rate_limit_error"), None, QuotaExhausted, Credential)
        .when_headers(&[("anthropic-ratelimit-unified-5h-status", "rejected")])
        .until(Window("unified_5h")),
    row("unified_7d_opus_rejected", Any, Some("rate_limit_error"), None, QuotaExhausted, CredentialModel)
        .when_headers(&[("anthropic-ratelimit-unified-7d_opus-status", "rejected")])
        .until(Window("unified_7d_opus")),
    row("unified_7d_sonnet_rejected", Any, Some("rate_limit_error"), None, QuotaExhausted, CredentialModel)
        .when_headers(&[("anthropic-ratelimit-unified-7d_sonnet-status", "rejected")])
        .until(Window("unified_7d_sonnet")),
    // Only the overall status: the representative claim names the window.
    row("unified_claim_opus", Any, Some("rate_limit_error"), None, QuotaExhausted, CredentialModel)
        .when_headers(&[(UNIFIED_STATUS, "rejected"), (CLAIM, "seven_day_opus")])
        .until(Window("unified")),
    row("unified_claim_sonnet", Any, Some("rate_limit_error"), None, QuotaExhausted, CredentialModel)
        .when_headers(&[(UNIFIED_STATUS, "rejected"), (CLAIM, "seven_day_sonnet")])
        .until(Window("unified")),
    row("unified_rejected", Any, Some("rate_limit_error"), None, QuotaExhausted, Credential)
        .when_headers(&[(UNIFIED_STATUS, "rejected")])
        .until(Window("unified")),
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
