//! The OpenAI dialect's quota table. API keys get request and token limits per model
//! (`x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, reset as a Go duration such as
//! `6m0s`; platform.openai.com "Rate limits"). ChatGPT-plan (Codex) accounts get two usage
//! windows for the whole account: `x-codex-{primary,secondary}-used-percent` (0–100),
//! `-window-minutes`, and the reset as `-reset-at` (unix seconds, what openai/codex reads
//! today, `codex-rs/codex-api/src/rate_limits.rs`) or `-reset-after-seconds` (a countdown, what
//! it read before); both may be sent and must then agree. Longest spans believed: a day for the
//! API-key limits (per-day limits exist), a week for either Codex window (which one is the
//! weekly one is told by its length: `codex.rs` names a window of a known length by it; peer
//! gateways record answers with the weekly window in the primary slot: primary 10 080 min,
//! secondary 300 min — `tests/fixtures/quota/codex_swapped.http`).

use switchyard_core::routing::MAX_QUOTA_WINDOW_MINUTES;

use crate::quota::row::{QuotaRow, Reset::*, Share::*};
use crate::quota::window::WindowKind::*;

pub(crate) const PREFIXES: &[&str] = &["x-ratelimit-", "x-codex-"];

#[rustfmt::skip]
pub(crate) const ROWS: &[QuotaRow] = &[
    QuotaRow {
        name: "requests", kind: Requests, per_model: true,
        limit: Some("x-ratelimit-limit-requests"),
        remaining: Some("x-ratelimit-remaining-requests"),
        resets: &[("x-ratelimit-reset-requests", GoDuration)],
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "tokens", kind: Tokens, per_model: true,
        limit: Some("x-ratelimit-limit-tokens"),
        remaining: Some("x-ratelimit-remaining-tokens"),
        resets: &[("x-ratelimit-reset-tokens", GoDuration)],
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "codex_primary", kind: CodexPrimary,
        utilization: Some(("x-codex-primary-used-percent", Percent)),
        window_minutes: Some("x-codex-primary-window-minutes"),
        resets: &[("x-codex-primary-reset-at", UnixSeconds), ("x-codex-primary-reset-after-seconds", DeltaSeconds)],
        longest_minutes: MAX_QUOTA_WINDOW_MINUTES,
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "codex_secondary", kind: CodexSecondary,
        utilization: Some(("x-codex-secondary-used-percent", Percent)),
        window_minutes: Some("x-codex-secondary-window-minutes"),
        resets: &[("x-codex-secondary-reset-at", UnixSeconds), ("x-codex-secondary-reset-after-seconds", DeltaSeconds)],
        longest_minutes: MAX_QUOTA_WINDOW_MINUTES,
        ..QuotaRow::EMPTY
    },
];
