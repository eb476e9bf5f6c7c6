//! Quota readings from a provider's limit headers: one data table per dialect (`anthropic.rs`,
//! `openai.rs` — the latter with the Codex subscription windows), read by `row.rs`. Pure: the
//! clock is passed in, nothing is stored here (the engine's router keeps the latest reading).
//! Malformed, missing and contradictory values are unknown (`None`), never guessed, and
//! reading never fails or panics.

mod anthropic;
mod openai;
mod row;

use std::time::SystemTime;

use switchyard_core::connection::Protocol;
use switchyard_core::routing::unix_ms;

use crate::headers::HeaderSource;

pub use row::{QuotaRow, Reset, Share};

/// One limit window as one answer reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaWindow {
    /// The table row's window name (`requests`, `unified_5h`, `codex_primary`, …).
    pub name: &'static str,
    /// The provider scopes this window per model (the reading belongs to the model called);
    /// otherwise it is the whole account's.
    pub per_model: bool,
    pub limit: Option<u64>,
    pub remaining: Option<u64>,
    /// Share used, 0.0 ..= 1.0.
    pub utilization: Option<f64>,
    /// When the window resets (unix ms).
    pub resets_at_ms: Option<i64>,
    /// The provider's status word for the window (e.g. `allowed`, `rejected`), lower case.
    pub status: Option<String>,
    /// The window's length as the provider states it.
    pub window_minutes: Option<u32>,
}

/// The quota table of a dialect.
pub fn quota_table(protocol: Protocol) -> &'static [QuotaRow] {
    match protocol {
        Protocol::Openai => openai::ROWS,
        Protocol::Anthropic => anthropic::ROWS,
    }
}

/// Header name prefixes of a dialect's table (answers with none of them are skipped at once).
fn prefixes(protocol: Protocol) -> &'static [&'static str] {
    match protocol {
        Protocol::Openai => openai::PREFIXES,
        Protocol::Anthropic => anthropic::PREFIXES,
    }
}

/// Every window of the dialect's table that the answer's headers mention, in table order. A
/// window appears as soon as one of its headers is present, even when none of its values can
/// be read (then every value is `None`: the provider's latest word was unreadable).
pub fn read_quota<H: HeaderSource + ?Sized>(protocol: Protocol, headers: &H, now: SystemTime) -> Vec<QuotaWindow> {
    if !headers.has_prefix(prefixes(protocol)) {
        return Vec::new();
    }
    let now_ms = unix_ms(now);
    quota_table(protocol).iter().filter_map(|r| r.read(headers, now_ms)).collect()
}
