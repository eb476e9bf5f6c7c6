//! Quota readings from a provider's limit headers: one data table per dialect (`anthropic.rs`,
//! `openai.rs` — the latter with the Codex subscription windows), read by `row.rs`; each window
//! has a kind (`kind.rs`; Codex windows by their length, `codex.rs`), and a window's history
//! forecasts when it runs out (`forecast.rs`). Pure: the clock is passed in, nothing is stored
//! here (the engine's router keeps the latest reading and its history). Never polled: readings
//! come only from answers that pass anyway. Malformed, missing and contradictory values are
//! unknown (`None`), never guessed, and reading never fails or panics.

pub(crate) mod anthropic;
pub(crate) mod codex;
pub mod forecast;
pub mod kind;
pub(crate) mod openai;
pub(crate) mod row;
pub mod window;

use std::time::SystemTime;

use switchyard_core::connection::Protocol;
use switchyard_core::routing::unix_ms;

use crate::dialect;
use crate::headers::HeaderSource;

pub use forecast::{exhausts_at, History, Sample};
pub use kind::{claimed_window, family_of, kind_of, same_window};
pub use row::{QuotaRow, Reset, Share};
pub use window::{QuotaWindow, WindowKind};

/// The quota table of a dialect (Gemini sends no rate-limit headers: its states are learned
/// from refusals, `Dialect::learned_quota`).
pub fn quota_table(protocol: Protocol) -> &'static [QuotaRow] {
    dialect::of(protocol).quota_rows()
}

/// Every window of the dialect's table that the answer's headers mention, in table order. A
/// window appears as soon as one of its headers is present, even when none of its values can
/// be read (then every value is `None`: the provider's latest word was unreadable).
pub fn read_quota<H: HeaderSource + ?Sized>(protocol: Protocol, headers: &H, now: SystemTime) -> Vec<QuotaWindow> {
    let dialect = dialect::of(protocol);
    if !headers.has_prefix(dialect.quota_prefixes()) {
        return Vec::new();
    }
    let now_ms = unix_ms(now);
    let mut windows: Vec<QuotaWindow> = dialect.quota_rows().iter().filter_map(|r| r.read(headers, now_ms)).collect();
    dialect.settle_windows(&mut windows);
    windows
}

/// The reset of the table window `name` as `headers` give it (bounded like every reading),
/// for a rejected window's cooldown (`classify.rs`); `None` when unknown or no such row.
pub(crate) fn window_reset<H: HeaderSource + ?Sized>(
    protocol: Protocol,
    name: &str,
    headers: &H,
    now: SystemTime,
) -> Option<i64> {
    quota_table(protocol).iter().find(|r| r.name == name)?.reset_of(headers, unix_ms(now))
}
