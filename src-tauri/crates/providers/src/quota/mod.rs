//! Quota readings from a provider's limit headers: one data table per dialect (`anthropic.rs`,
//! `openai.rs` — the latter with the Codex subscription windows), read by `row.rs`; each window
//! has a kind (`kind.rs`; Codex windows by their length, `codex.rs`), and a window's history
//! forecasts when it runs out (`forecast.rs`). Pure: the clock is passed in, nothing is stored
//! here (the engine's router keeps the latest reading and its history). Never polled: readings
//! come only from answers that pass anyway. Malformed, missing and contradictory values are
//! unknown (`None`), never guessed, and reading never fails or panics.

mod anthropic;
mod codex;
pub mod forecast;
pub mod kind;
mod openai;
mod row;

use std::time::SystemTime;

use switchyard_core::connection::Protocol;
use switchyard_core::routing::unix_ms;

use crate::headers::HeaderSource;

pub use forecast::{exhausts_at, History, Sample};
pub use kind::{claimed_window, family_of, kind_of, same_window, WindowKind};
pub use row::{QuotaRow, Reset, Share};

/// One limit window as one answer reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaWindow {
    /// The window's name (`requests`, `unified_5h`, `unified_7d_opus`, `codex_5h`,
    /// `codex_primary`, …): the table row's, or for a Codex window of a known length that
    /// length's (`codex.rs`).
    pub name: &'static str,
    pub kind: WindowKind,
    /// The provider scopes this window per model (the reading belongs to the model called);
    /// otherwise it is the whole account's.
    pub per_model: bool,
    /// The window is one model family's (`opus`, `sonnet`): it holds for the models whose name
    /// contains the family, whatever model was called.
    pub family: Option<&'static str>,
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
    /// Which window binds the account now, as the provider names it (Anthropic's
    /// representative claim: `five_hour`, `seven_day`, `seven_day_opus`, …), on the overall
    /// window only.
    pub claim: Option<String>,
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
    let mut windows: Vec<QuotaWindow> = quota_table(protocol).iter().filter_map(|r| r.read(headers, now_ms)).collect();
    if protocol == Protocol::Openai {
        codex::classify_by_length(&mut windows);
    }
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
