//! The Anthropic dialect's quota table. API keys get request and token limits per model
//! (`anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`,
//! reset in RFC 3339; docs.anthropic.com "Rate limits", response headers). Subscription
//! (Claude Code) accounts get the unified windows for the whole account:
//! `anthropic-ratelimit-unified-{5h,7d}-{utilization,reset,status}` (a fraction, unix seconds,
//! a status word) and the overall `anthropic-ratelimit-unified-{status,reset}` — not
//! documented by Anthropic; names as Claude Code and proxies in front of it read them.
//! Longest spans believed: a day for the API-key limits (per-day token limits exist on low
//! tiers), 5 h and 7 d for the unified windows, 7 d for the overall one.

use switchyard_core::routing::MAX_QUOTA_WINDOW_MINUTES;

use crate::quota::row::{QuotaRow, Reset::*, Share::*};

/// The 5-hour window.
const FIVE_HOURS: u32 = 5 * 60;

pub(super) const PREFIXES: &[&str] = &["anthropic-ratelimit-"];

#[rustfmt::skip]
pub(super) const ROWS: &[QuotaRow] = &[
    QuotaRow {
        name: "requests", per_model: true,
        limit: Some("anthropic-ratelimit-requests-limit"),
        remaining: Some("anthropic-ratelimit-requests-remaining"),
        resets: &[("anthropic-ratelimit-requests-reset", Rfc3339)],
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "tokens", per_model: true,
        limit: Some("anthropic-ratelimit-tokens-limit"),
        remaining: Some("anthropic-ratelimit-tokens-remaining"),
        resets: &[("anthropic-ratelimit-tokens-reset", Rfc3339)],
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "input_tokens", per_model: true,
        limit: Some("anthropic-ratelimit-input-tokens-limit"),
        remaining: Some("anthropic-ratelimit-input-tokens-remaining"),
        resets: &[("anthropic-ratelimit-input-tokens-reset", Rfc3339)],
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "output_tokens", per_model: true,
        limit: Some("anthropic-ratelimit-output-tokens-limit"),
        remaining: Some("anthropic-ratelimit-output-tokens-remaining"),
        resets: &[("anthropic-ratelimit-output-tokens-reset", Rfc3339)],
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "unified",
        status: Some("anthropic-ratelimit-unified-status"),
        resets: &[("anthropic-ratelimit-unified-reset", UnixSeconds)],
        longest_minutes: MAX_QUOTA_WINDOW_MINUTES,
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "unified_5h",
        utilization: Some(("anthropic-ratelimit-unified-5h-utilization", Fraction)),
        resets: &[("anthropic-ratelimit-unified-5h-reset", UnixSeconds)],
        status: Some("anthropic-ratelimit-unified-5h-status"),
        longest_minutes: FIVE_HOURS,
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "unified_7d",
        utilization: Some(("anthropic-ratelimit-unified-7d-utilization", Fraction)),
        resets: &[("anthropic-ratelimit-unified-7d-reset", UnixSeconds)],
        status: Some("anthropic-ratelimit-unified-7d-status"),
        longest_minutes: MAX_QUOTA_WINDOW_MINUTES,
        ..QuotaRow::EMPTY
    },
];
