//! A connection's fallback chain as `routing status` and the Routing tab show it.

use serde::Serialize;
use specta::Type;

use super::GateView;

/// One hop as shown: the connection's slug and the model it is asked for (`None`: the
/// requested model, unchanged).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct FallbackHopView {
    pub slug: String,
    pub model: Option<String>,
}

/// `routing status --json`'s `fallback` object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct FallbackStatus {
    pub chain: Vec<FallbackHopView>,
    /// The relay falls back now: activated and the gates hold.
    pub active: bool,
    /// Activated by the user (it may be suspended while its gates do not hold).
    pub activated: bool,
    pub activated_at: Option<String>,
    /// Imported from a file that had it activated: it turns on once its gates hold.
    pub pending: bool,
    /// Why an activated chain is not in use, in words.
    pub note: Option<String>,
    /// Per hop and model (`SLUG:MODEL`): who has current evidence; `failures` says what is missing.
    pub gates: GateView,
}
