//! `switchyard status`: every connection and pool on one screen, and its one-line form.

use serde::Serialize;
use specta::Type;

/// Keys of a connection by how they stand now.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Type)]
pub struct KeyCounts {
    pub total: i32,
    /// Enabled, present, not expired, no open circuit.
    pub ok: i32,
    /// An open (or half-open) circuit: cooling down.
    pub cooling: i32,
    /// Expired or missing (a token past its expiry, a secret not in the keychain, a login gone).
    pub expired: i32,
    pub disabled: i32,
}

/// The window that binds a connection now: the provider's reading with the highest use.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct WindowLine {
    pub profile: String,
    pub name: String,
    /// 0–1.
    pub utilization: f64,
    pub resets_at: Option<String>,
    pub resets_in_secs: Option<i32>,
}

/// One connection's line.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ConnectionStatus {
    pub slug: String,
    /// `legacy`, `balanced` or `priority`; `suspended` when activated but not routing.
    pub mode: String,
    pub keys: KeyCounts,
    /// Seconds until the first cooling key may be tried again (none known: `None`).
    pub cooling_in_secs: Option<i32>,
    pub window: Option<WindowLine>,
    /// What today's attempts cost at the configured prices (`None`: a model without a price).
    pub spend_today_usd: Option<f64>,
    /// The connection's USD cap for today (a `connection:SLUG --usd N --per day` limit).
    pub cap_today_usd: Option<f64>,
}

/// One pool's line.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct PoolStatusLine {
    pub name: String,
    pub mode: Option<switchyard_core::states::Strategy>,
    pub state: switchyard_core::states::PoolState,
    pub members: i32,
}

/// `switchyard status`.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct StatusView {
    pub connections: Vec<ConnectionStatus>,
    pub pools: Vec<PoolStatusLine>,
}
