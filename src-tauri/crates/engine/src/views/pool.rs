//! Pools as `pool list`, `pool status`, `routing status POOL` and the Pools screen show them:
//! members (connection, model, weight, order), whether each counts and why not, the pool's
//! state, and the shares each member took of conversations and tokens against its weight.

use serde::Serialize;
use specta::Type;
use switchyard_core::states::{PoolState, Strategy};

/// One member as shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct PoolMemberView {
    /// `CONN` or `CONN=MODEL`: the name pinned paths (`/c/POOL@MEMBER/…`) and reports use.
    pub member: String,
    pub slug: String,
    /// The model the member is asked for (`None`: the requested model as is).
    pub model: Option<String>,
    pub weight: i32,
    /// Place in the priority order (0 first).
    pub order: i32,
    /// The member counts toward the gates and may be chosen.
    pub ready: bool,
    /// Why it does not count, in words.
    pub why_out: Option<String>,
}

/// A pool as `pool list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct PoolView {
    pub name: String,
    pub protocol: String,
    /// `balanced` or `priority` (`None` before the first activation).
    pub mode: Option<Strategy>,
    /// `active` (routes), `suspended` (activated, but no member counts), `inactive`
    /// (never activated or deactivated), `pending` (imported activated; waits for its gates).
    pub state: PoolState,
    pub members: Vec<PoolMemberView>,
    /// The member `switchyard exec POOL` launched last.
    pub last_launched: Option<String>,
    pub revision: i32,
}

/// The pool's gates: whether `pool activate` would pass, and why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct PoolGateView {
    pub ok: bool,
    /// Members that count.
    pub counting: i32,
    pub failures: Vec<String>,
}

/// One member's share of what the pool served (from the ledger: conversations by the member
/// that opened them, tokens by the member that served them), next to its weight's share.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct PoolShareView {
    pub member: String,
    pub weight_share: f64,
    pub conversations: i32,
    pub conversation_share: f64,
    pub tokens: f64,
    pub token_share: f64,
}

/// `pool status POOL` / `routing status POOL`.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct PoolStatus {
    pub pool: PoolView,
    pub gates: PoolGateView,
    /// Why an activated pool does not route, in words.
    pub note: Option<String>,
    pub shares: Vec<PoolShareView>,
}
