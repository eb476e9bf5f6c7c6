//! The routing core: eligibility, deterministic SWRR, turn bindings, circuits with
//! single-flight probes, the attempt planner, activation gates and the failure taxonomy
//! types. Pure and clock-injected: wall-clock times are unix ms (`cooldown::unix_ms`),
//! in-memory bindings take `Instant`. Provider error classification lives in
//! `switchyard-providers`; persistence in `switchyard-store`.
//!
//! One request, as the engine drives it:
//! 1. `TurnBindings::get` → bound profile; `Eligibility::evaluate` over `ProfileView`s with
//!    `CircuitBoard::view()`;
//! 2. `select_for_turn` → `Selection`; `TurnBindings::bind`;
//! 3. `CircuitBoard::admit` → `Closed`, `Probe(lease)` (reason `probe`) or `Blocked`;
//! 4. after the attempt: `CircuitBoard::record_failure` or resolve the lease, then
//!    `plan_next` (after a failure) → `FailoverTo` (→ `TurnBindings::rebind`) / `RetrySame` / `GiveUp`;
//! 5. `TurnBindings::commit` once the first content byte reached the client.
//!
//! Under conversation affinity (`affinity.rs`; core only, not yet wired into the engine) step 2
//! is `select_for_call` with the turn binding and `ConversationBindings::get` for
//! (`conversation_key`, model); then `bind` the conversation when `CallSelection::bind_to`
//! says so, else `touch` it (`ConversationStep::Kept`), and record a `Moved` step's cause.

pub mod affinity;
pub mod binding;
pub mod board;
pub mod circuit;
pub mod client_rule;
pub mod conversation_binding;
pub mod cooldown;
pub mod eligibility;
pub mod failure;
pub mod fallback;
pub mod gate;
pub mod hasher;
pub mod planner;
pub mod pool;
pub mod probe;
pub mod quota_reserve;
pub mod selection;
pub mod swrr;
pub mod token_load;

pub use affinity::{
    select_for_call, Affinity, CallInput, CallSelection, ConversationStep, Move, MoveCause, DEFAULT_AFFINITY_WINDOW,
};
pub use binding::{Binding, RebindError, TurnBindings, BINDING_IDLE_TTL};
pub use board::{BoardView, CircuitBoard, ResetCause};
pub use circuit::{
    CircuitHealth, CircuitLookup, CircuitSnapshot, HealthEntry, HealthState, NoCircuits, PersistedState, ProfileHealth,
};
pub use client_rule::{identify_client, may_serve, with_beta, ClientFacts, TOKEN_BETA};
pub use conversation_binding::{ConversationBinding, ConversationBindings, DEFAULT_CONVERSATION_CAPACITY};
pub use cooldown::{unix_ms, CooldownEnd, CooldownPolicy};
pub use eligibility::{evaluate, Criteria, Eligibility, EvidenceView, Exclusion, ModelSet, ProfileView};
pub use failure::{Failure, FailureKind, Scope};
pub use fallback::{ChainError, ChainNode, FallbackKind, Hop, MAX_CHAIN_HOPS};
pub use gate::{evaluate_gates, evaluate_gates_under_quota, ExcludedProfile, GateReport, ModelGate};
pub use planner::{attempt_limit, plan_next, GiveUp, Plan, PlanInput, DEFAULT_MAX_ATTEMPTS};
pub use pool::{
    check_members, choose_member, hand_off_order, may_hand_off, MemberGate, MemberOut, MemberPick, MemberReason,
    MemberSlot, PoolBindings, PoolError, PoolGates, PoolMember, POOL_WARM_WINDOW,
};
pub use probe::{Admission, ProbeLease};
pub use quota_reserve::{
    believable_reset, QuotaBlocks, QuotaPolicy, QuotaReading, MAX_QUOTA_HORIZON_MS, MAX_QUOTA_WINDOW_MINUTES,
    MAX_RESERVE_PCT, QUOTA_RESET_SLACK_MS,
};
pub use selection::{select_for_turn, Selection, SelectionReason, Strategy};
pub use swrr::{select_priority, Candidate, Swrr, SwrrTable};
pub use token_load::{
    TokenLoad, TokenLoadTable, BALANCE_MIN_TOKENS, BALANCE_SPACING, BALANCE_TOLERANCE, TOKEN_HALF_LIFE,
};
