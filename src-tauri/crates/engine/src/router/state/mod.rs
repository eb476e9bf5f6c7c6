//! The routing state's one seam ([`RoutingState`]): SWRR positions, turn and conversation
//! bindings, pools' conversation members, half-open probe claims beyond this process, response
//! origins and other replicas' quota readings. Selection reads a [`View`], decides on its copy
//! of the SWRR position, commits what it advanced ([`RoutingState::advance`]: compare-and-swap;
//! a lost race returns a fresh view and the caller decides again) and records where the going
//! attempt is bound ([`RoutingState::bind`]); it never knows where the state lives.
//!
//! Two implementations, chosen once when the router starts ([`Sharing`]): [`local::LocalState`]
//! keeps everything in this process's memory (a desktop, or a relay on its own data dir), and
//! [`shared::SharedState`] keeps it in a team store every replica reads and writes (invariant
//! 25), with the local tables as its cache. [`States`] is the one the router holds.
//!
//! Per process either way (documented, not shared): token loads, fallen turns, a turn's
//! committed flag, the probe's in-memory claim on the circuit board.

pub(crate) mod local;
mod origins;
pub(crate) mod shared;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::time::{Duration, Instant};

use switchyard_core::conversation::ConversationKey;
use switchyard_core::routing::{ConversationBinding, ConversationStep, ProbeLease, ProfileView, Swrr};

use switchyard_store::limit_counters::{Full, Holder, Take};
use switchyard_store::Store;

use crate::error::EngineError;
use crate::router::quota::QuotaBoard;

pub use origins::MAX_RESPONSE_ORIGINS;
pub use shared::{DEFAULT_PROBE_LEASE, RESPONSE_ORIGIN_TTL_MS};

/// Where a router keeps its routing state, chosen once when it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// In this process's memory.
    Local,
    /// In the team store every replica shares; a half-open probe's lease lasts `probe_lease`
    /// unless its outcome ends it first.
    Shared { probe_lease: Duration },
}

/// What a decision is about.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Subject<'a> {
    /// A request to a connection: the SWRR position of (connection, model), the turn's and the
    /// conversation's bindings, and (shared) the circuits of `profiles`.
    Connection { id: &'a str, profiles: &'a [ProfileView] },
    /// A request to a pool: SWRR over conversations for (pool, model) and the member a
    /// conversation is kept on.
    Pool { id: &'a str },
}

/// The keys of one decision's view.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ViewKeys<'a> {
    pub subject: Subject<'a>,
    pub model: &'a str,
    /// The turn (connections only; `None`: no turn binding is read or written).
    pub turn: Option<&'a str>,
    pub conversation: Option<&'a ConversationKey>,
    /// How long a conversation binding lasts without a call (the affinity window, or a pool's
    /// warm window); `None`: conversations are not kept.
    pub window: Option<Duration>,
    /// The engine clock, monotonic and wall (ms).
    pub now: Instant,
    pub now_ms: i64,
}

impl ViewKeys<'_> {
    /// The SWRR position's key: a connection id, or `pool:<id>`.
    fn swrr_target(&self) -> std::borrow::Cow<'_, str> {
        match self.subject {
            Subject::Connection { id, .. } => std::borrow::Cow::Borrowed(id),
            Subject::Pool { id } => std::borrow::Cow::Owned(format!("pool:{id}")),
        }
    }
}

/// What one decision reads: the run's own copy of the SWRR position and the bindings as they
/// stand. The same for either implementation.
#[derive(Debug, Clone, Default)]
pub(crate) struct View {
    /// The SWRR position (a copy: [`RoutingState::advance`] writes it back).
    pub swrr: Swrr,
    /// The profile the turn is bound to.
    pub turn: Option<String>,
    /// The key (or pool member) the conversation is kept on, while its binding lasts.
    pub conversation: Option<ConversationBinding>,
    /// The revision the position was read at (0: none stored yet).
    revision: i64,
    /// `swrr.moves()` when read: a decision advanced the position when it differs.
    moves: u64,
    /// Lost compare-and-swaps so far.
    races: u32,
    /// Shared only: the bindings as the store last had them (a kept one is written again only
    /// when due a touch).
    stored: shared::Stored,
}

impl View {
    fn read(swrr: Swrr, revision: i64) -> Self {
        let moves = swrr.moves();
        View { swrr, revision, moves, ..View::default() }
    }

    /// Whether the decision made on this view moved its SWRR position.
    fn advanced(&self) -> bool {
        self.swrr.moves() != self.moves
    }
}

/// Where a going attempt's request is kept.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Going<'a> {
    /// The profile (or pool member) chosen.
    pub target: &'a str,
    /// A failover: the turn's binding moves to `target` (only when one exists).
    pub failover: bool,
    /// What the decision does to the conversation's binding.
    pub step: ConversationStep,
}

/// What the state says about a probe this process's circuit board admitted.
#[derive(Debug)]
pub(crate) enum Claim {
    /// This request probes; a lease held beyond this process (if any) is released when the
    /// guard drops.
    Ours(Option<Box<shared::StoreLease>>),
    /// Another replica probes (or the cooldown is not over there): not now.
    Held,
    /// The circuit was closed meanwhile: go without a probe.
    Closed,
}

/// The routing state a router decides on. See the module.
pub(crate) trait RoutingState: Send + Sync {
    /// What a decision of `keys` reads.
    fn read(&self, keys: &ViewKeys<'_>) -> impl Future<Output = Result<View, EngineError>> + Send;

    /// Writes the SWRR position the decision made on `view` advanced. `false`: another decision
    /// advanced it first; `view` then holds the position as it is now, to decide again.
    fn advance(&self, keys: &ViewKeys<'_>, view: &mut View) -> impl Future<Output = Result<bool, EngineError>> + Send;

    /// Keeps the request's turn and conversation on the going attempt's target.
    fn bind(
        &self,
        keys: &ViewKeys<'_>,
        view: &View,
        going: Going<'_>,
    ) -> impl Future<Output = Result<(), EngineError>> + Send;

    /// Claims beyond this process the probe `lease` this process's board admitted.
    fn claim_probe(&self, lease: &ProbeLease, now_ms: i64) -> impl Future<Output = Result<Claim, EngineError>> + Send;

    /// The profile that produced Responses answer `response_id` of `connection_id`, if known.
    fn origin(
        &self,
        connection_id: &str,
        response_id: &str,
        now: Instant,
        now_ms: i64,
    ) -> impl Future<Output = Option<String>> + Send;

    /// Remembers that `profile_id` produced `response_id` (off the request path).
    fn remember_origin(&self, connection_id: &str, response_id: &str, profile_id: &str, now: Instant, now_ms: i64);

    /// Takes the quota readings other replicas recorded since `since` onto `board`; returns
    /// where the next pass starts.
    fn adopt_quota(&self, board: &QuotaBoard, since: i64) -> impl Future<Output = i64> + Send;

    /// Whether the turn's output reached its client (per process).
    fn committed(&self, turn: &str, now: Instant) -> bool;

    /// Notes that the turn's output reached its client.
    fn commit(&self, turn: &str, now: Instant);

    /// Forgets what this process keeps of a connection (its mode changed) or a pool (its members
    /// or mode changed).
    fn forget(&self, subject: Subject<'_>);

    /// Takes a request's reservation from every limit it meets (`takes`, sorted), all or
    /// nothing, in one decision of `store` — never a counter of this process, so replicas on one
    /// store hold a limit together (invariant 28). `Ok(None)`: admitted. Both implementations
    /// keep it as provided: a desktop's SQLite file (its write lock serializes the takes, and the
    /// counters outlive the process) and a team's Postgres (each limit window one row every
    /// replica's take locks) run the same store decision, `limits::admit_in`.
    fn admit(
        &self,
        store: &Store,
        takes: &[Take],
        holder: Holder<'_>,
        now_ms: i64,
    ) -> impl Future<Output = Result<Option<Full>, EngineError>> + Send {
        crate::limits::admit_in(store, takes, holder, now_ms)
    }
}

/// The state a router holds: one implementation, chosen when it starts.
// One value per router, behind an `Arc`: the variants' sizes cost nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum States {
    Local(local::LocalState),
    Shared(std::sync::Arc<shared::SharedState>),
}

impl States {
    /// Whether the state is shared with other replicas (reported, never asked by selection).
    pub(crate) fn is_shared(&self) -> bool {
        matches!(self, States::Shared(_))
    }
}

macro_rules! each {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            States::Local($s) => $e,
            States::Shared($s) => $e,
        }
    };
}

/// An async call on either state, awaited. The shared state's futures are boxed: they hold
/// store round trips (kilobytes each), and unboxed they would size every request's future by
/// them — a local relay's too (hyper keeps one per connection).
macro_rules! each_await {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            States::Local($s) => $e.await,
            States::Shared($s) => Box::pin($e).await,
        }
    };
}

impl RoutingState for States {
    async fn read(&self, keys: &ViewKeys<'_>) -> Result<View, EngineError> {
        each_await!(self, s => s.read(keys))
    }

    async fn advance(&self, keys: &ViewKeys<'_>, view: &mut View) -> Result<bool, EngineError> {
        each_await!(self, s => s.advance(keys, view))
    }

    async fn bind(&self, keys: &ViewKeys<'_>, view: &View, going: Going<'_>) -> Result<(), EngineError> {
        each_await!(self, s => s.bind(keys, view, going))
    }

    async fn claim_probe(&self, lease: &ProbeLease, now_ms: i64) -> Result<Claim, EngineError> {
        each_await!(self, s => s.claim_probe(lease, now_ms))
    }

    async fn origin(&self, connection_id: &str, response_id: &str, now: Instant, now_ms: i64) -> Option<String> {
        each_await!(self, s => s.origin(connection_id, response_id, now, now_ms))
    }

    fn remember_origin(&self, connection_id: &str, response_id: &str, profile_id: &str, now: Instant, now_ms: i64) {
        each!(self, s => s.remember_origin(connection_id, response_id, profile_id, now, now_ms))
    }

    async fn adopt_quota(&self, board: &QuotaBoard, since: i64) -> i64 {
        each_await!(self, s => s.adopt_quota(board, since))
    }

    fn committed(&self, turn: &str, now: Instant) -> bool {
        each!(self, s => s.committed(turn, now))
    }

    fn commit(&self, turn: &str, now: Instant) {
        each!(self, s => s.commit(turn, now))
    }

    fn forget(&self, subject: Subject<'_>) {
        each!(self, s => s.forget(subject))
    }
}
