//! The latest limit readings per profile and window (`switchyard quota`, the gauges).

use serde::Serialize;
use specta::Type;

/// The readings of one connection, profile by profile (priority order).
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct QuotaView {
    pub slug: String,
    /// The time zone the `*_local` times are in (an IANA name, or `UTC`).
    pub time_zone: String,
    pub profiles: Vec<ProfileQuota>,
}

/// One profile's readings; `windows` is empty when no answer reported any.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ProfileQuota {
    pub id: String,
    pub label: String,
    pub windows: Vec<QuotaWindowView>,
}

/// One limit window as last seen. `None` wherever the provider said nothing readable.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct QuotaWindowView {
    /// `requests`, `tokens`, `input_tokens`, `output_tokens`, `unified`, `unified_5h`,
    /// `unified_7d`, `unified_7d_opus`, `unified_7d_sonnet`, `codex_5h`, `codex_7d`,
    /// `codex_primary`, `codex_secondary`.
    pub name: String,
    /// `five_hour`, `seven_day`, `seven_day_model`, `codex_primary`, `codex_secondary` (a Codex
    /// window of a length we do not know), `overall`, `requests`, `tokens`.
    pub kind: String,
    /// The model the reading belongs to; `None` for windows of the whole account.
    pub model: Option<String>,
    /// The model family a `seven_day_model` window holds for (`opus`, `sonnet`).
    pub family: Option<String>,
    pub limit: Option<i32>,
    pub remaining: Option<i32>,
    /// Share used, 0.0 ..= 1.0.
    pub utilization: Option<f64>,
    pub resets_at: Option<String>,
    pub seen_at: String,
    /// The provider's status word (e.g. `allowed`, `allowed_warning`, `rejected`).
    pub status: Option<String>,
    pub window_minutes: Option<i32>,
    /// Seconds since the reading was seen.
    pub age_secs: i32,
    /// Seconds until the window resets (negative: it reset that long ago).
    pub resets_in_secs: Option<i32>,
    /// The window has reset since the reading was seen: its numbers no longer hold.
    pub stale: bool,
    /// The provider names this window as the one that binds the account now (Anthropic's
    /// representative claim).
    pub binding: bool,
    /// When the window runs out at the last hour's rate (RFC 3339); `None` when it does not
    /// before its reset, when fewer than a minute of readings exist, or for windows that are
    /// not a subscription's.
    pub exhausts_at: Option<String>,
    /// Seconds until then.
    pub exhausts_in_secs: Option<i32>,
    /// `resets_at` and `exhausts_at` as a weekday and time in [`QuotaView::time_zone`]
    /// (`Tue 14:05`), for text.
    pub resets_local: Option<String>,
    pub exhausts_local: Option<String>,
}

impl QuotaWindowView {
    /// The fraction used: as the provider reported it, or from its limit and what remains
    /// (request and token windows report counts, not a fraction); `None` when neither is known.
    pub fn used_fraction(&self) -> Option<f64> {
        self.utilization.or_else(|| match (self.limit, self.remaining) {
            (Some(limit), Some(remaining)) if limit > 0 => {
                Some((1.0 - f64::from(remaining.clamp(0, limit)) / f64::from(limit)).clamp(0.0, 1.0))
            }
            _ => None,
        })
    }
}
