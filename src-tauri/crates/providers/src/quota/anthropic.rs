//! The Anthropic dialect's quota table. API keys get request and token limits per model
//! (`anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`,
//! reset in RFC 3339; docs.anthropic.com "Rate limits", response headers). Subscription
//! (Claude Code) accounts get the unified windows: `anthropic-ratelimit-unified-{W}-{utilization,
//! reset,status}` (a fraction, unix seconds, `allowed`/`allowed_warning`/`rejected`) for the
//! account's 5-hour (`5h`) and weekly (`7d`) windows and the weekly window of one model family
//! (`7d_opus`, `7d_sonnet`), plus the overall `anthropic-ratelimit-unified-{status,reset}` and
//! `-representative-claim` (which window binds: `five_hour`, `seven_day`, `seven_day_opus`,
//! `seven_day_sonnet`, …). Not documented by Anthropic: names as recorded from real answers by
//! peer projects (anthropics/claude-code#12829, manaflow-ai/subrouter#24 and #26,
//! router-for-me/CLIProxyAPI#5915, opencode#49499) and as Claude Code itself reads them; the
//! fixtures under `tests/fixtures/quota/` and `tests/fixtures/anthropic/unified_*` carry them.
//! Not read yet: the overage (extra usage) meter `-overage-*` and `-7d_oi-*`.
//! Longest spans believed: a day for the API-key limits (per-day token limits exist on low
//! tiers), 5 h and 7 d for the unified windows, 7 d for the overall one.

use switchyard_core::routing::MAX_QUOTA_WINDOW_MINUTES;

use crate::quota::row::{QuotaRow, Reset::*, Share::*};
use crate::quota::window::WindowKind::*;

/// The 5-hour window.
const FIVE_HOURS: u32 = 5 * 60;

pub(crate) const PREFIXES: &[&str] = &["anthropic-ratelimit-"];

/// The representative claim's words and the window each names (`kind::claimed_window`).
pub(crate) const CLAIMS: &[(&str, &str)] = &[
    ("five_hour", "unified_5h"),
    ("seven_day", "unified_7d"),
    ("seven_day_opus", "unified_7d_opus"),
    ("seven_day_sonnet", "unified_7d_sonnet"),
];

#[rustfmt::skip]
pub(crate) const ROWS: &[QuotaRow] = &[
    QuotaRow {
        name: "requests", kind: Requests, per_model: true,
        limit: Some("anthropic-ratelimit-requests-limit"),
        remaining: Some("anthropic-ratelimit-requests-remaining"),
        resets: &[("anthropic-ratelimit-requests-reset", Rfc3339)],
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "tokens", kind: Tokens, per_model: true,
        limit: Some("anthropic-ratelimit-tokens-limit"),
        remaining: Some("anthropic-ratelimit-tokens-remaining"),
        resets: &[("anthropic-ratelimit-tokens-reset", Rfc3339)],
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "input_tokens", kind: Tokens, per_model: true,
        limit: Some("anthropic-ratelimit-input-tokens-limit"),
        remaining: Some("anthropic-ratelimit-input-tokens-remaining"),
        resets: &[("anthropic-ratelimit-input-tokens-reset", Rfc3339)],
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "output_tokens", kind: Tokens, per_model: true,
        limit: Some("anthropic-ratelimit-output-tokens-limit"),
        remaining: Some("anthropic-ratelimit-output-tokens-remaining"),
        resets: &[("anthropic-ratelimit-output-tokens-reset", Rfc3339)],
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "unified", kind: Overall,
        status: Some("anthropic-ratelimit-unified-status"),
        resets: &[("anthropic-ratelimit-unified-reset", UnixSeconds)],
        claim: Some("anthropic-ratelimit-unified-representative-claim"),
        longest_minutes: MAX_QUOTA_WINDOW_MINUTES,
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "unified_5h", kind: FiveHour,
        utilization: Some(("anthropic-ratelimit-unified-5h-utilization", Fraction)),
        resets: &[("anthropic-ratelimit-unified-5h-reset", UnixSeconds)],
        status: Some("anthropic-ratelimit-unified-5h-status"),
        longest_minutes: FIVE_HOURS,
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "unified_7d", kind: SevenDay,
        utilization: Some(("anthropic-ratelimit-unified-7d-utilization", Fraction)),
        resets: &[("anthropic-ratelimit-unified-7d-reset", UnixSeconds)],
        status: Some("anthropic-ratelimit-unified-7d-status"),
        longest_minutes: MAX_QUOTA_WINDOW_MINUTES,
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "unified_7d_opus", kind: SevenDayModel, family: Some("opus"),
        utilization: Some(("anthropic-ratelimit-unified-7d_opus-utilization", Fraction)),
        resets: &[("anthropic-ratelimit-unified-7d_opus-reset", UnixSeconds)],
        status: Some("anthropic-ratelimit-unified-7d_opus-status"),
        longest_minutes: MAX_QUOTA_WINDOW_MINUTES,
        ..QuotaRow::EMPTY
    },
    QuotaRow {
        name: "unified_7d_sonnet", kind: SevenDayModel, family: Some("sonnet"),
        utilization: Some(("anthropic-ratelimit-unified-7d_sonnet-utilization", Fraction)),
        resets: &[("anthropic-ratelimit-unified-7d_sonnet-reset", UnixSeconds)],
        status: Some("anthropic-ratelimit-unified-7d_sonnet-status"),
        longest_minutes: MAX_QUOTA_WINDOW_MINUTES,
        ..QuotaRow::EMPTY
    },
];
