//! The OpenAI dialect's classification table (`{"error": {"type", "code", ...}}`). One row
//! per rule, first match wins; each row has a fixture `tests/fixtures/openai/<name>.http`.
//! ChatGPT-plan (Codex) accounts: a spent usage window answers 429 with the error type
//! `usage_limit_reached` and its reset in the body (`resets_at`, `resets_in_seconds`): the
//! account cools until then (invariant 23).

use switchyard_core::routing::FailureKind::*;
use switchyard_core::routing::Scope::*;

use crate::rule::StatusMatch::{Any, Is, Range};
use crate::rule::{row, Rule, Until::BodyReset};

#[rustfmt::skip]
pub const RULES: &[Rule] = &[
    // A Codex account's spent 5-hour or weekly window: until the reset the body names.
    row("usage_limit_reached", Any, Some("usage_limit_reached"), None, QuotaExhausted, Credential)
        .until(BodyReset),
    // Quota and billing: the key's account cannot pay; another key may.
    row("insufficient_quota", Any, None, Some("insufficient_quota"), QuotaExhausted, Credential),
    row("billing_not_active", Any, None, Some("billing_not_active"), QuotaExhausted, Credential),
    // Rate limits carry a structured code. OpenAI limits vary by model, but the body has no
    // structured model field, so the whole credential cools down (conservative).
    row("rate_limit_exceeded", Any, None, Some("rate_limit_exceeded"), RateLimited, Credential),
    // A 429 typed as a server error is the provider being overloaded, not this key.
    row("overloaded_429", Is(429), Some("server_error"), None, Overloaded, Provider),
    // Any other 429 says nothing structured about whose limit it is.
    row("status_429", Is(429), None, None, RateLimited, Ambiguous),
    row("invalid_api_key", Any, None, Some("invalid_api_key"), AuthInvalid, Credential),
    row("status_401", Is(401), None, None, AuthInvalid, Credential),
    // The key (project) may not use this model; it keeps serving the others.
    row("model_not_found", Range(403, 404), None, Some("model_not_found"), ModelForbidden, CredentialModel),
    // A 403 without a model-scoped code (e.g. unsupported region) is not safe to fail over on.
    row("status_403", Is(403), None, None, PermissionAmbiguous, Ambiguous),
    row("context_length_exceeded", Any, None, Some("context_length_exceeded"), BadRequest, Request),
    row("status_400", Is(400), None, None, BadRequest, Request),
    row("status_404", Is(404), None, None, BadRequest, Request),
    row("status_413", Is(413), None, None, BadRequest, Request),
    row("status_503", Is(503), None, None, Overloaded, Provider),
    row("status_5xx", Range(500, 599), None, None, ServerError, Provider),
    row("unknown", Any, None, None, Unknown, Ambiguous),
];
