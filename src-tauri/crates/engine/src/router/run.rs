//! The routing state of one request ([`TurnRun`]), made once from its [`RouteRequest`] and
//! owned by the loop: the snapshot it routes on (a fallback hop's, once it fell back), the
//! model, its keys, how many attempts it made and which profiles it tried, what the next
//! attempt should be, whether the turn is committed, and the profile a continued Responses
//! answer pins it to (`continuity`).

use std::sync::Arc;

use switchyard_core::conversation::ConversationKey;
use switchyard_core::routing::{may_serve, FailureKind, SelectionReason};
use switchyard_core::states::{OfficialClient, ProfileKind};

use crate::config::rows::client_of;
use crate::error::EngineError;
use crate::router::fallback::ChainPosition;
use crate::router::request::{KeysLater, RequestKeys, RouteRequest, FORWARDED_TURN};
use crate::router::select::Attempt;
use crate::router::{Refusal, Router, Snapshot};

/// What the next attempt of a request should be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Pending {
    First,
    /// To the planner's choice (the most preferred untried eligible profile).
    Failover(FailureKind, String),
    RetrySame(String, SelectionReason),
}

/// The routing state of one request (one HTTP call to the relay), made from its
/// [`RouteRequest`] by [`Router::start_run`] and owned by the loop.
#[derive(Debug)]
pub(crate) struct TurnRun {
    pub(crate) snapshot: Arc<Snapshot>,
    /// The model the client asked for (client-facing name), if the request names one.
    pub(crate) model: Option<String>,
    pub(crate) turn: String,
    pub(crate) conversation: Option<ConversationKey>,
    pub(crate) session: Option<String>,
    pub(crate) tags: Option<String>,
    /// The relay user the request came from (ledger only).
    pub(crate) user: Option<String>,
    /// Forwarding: the keys the first attempt's ledger row computes later (`turn` is
    /// [`FORWARDED_TURN`] meanwhile; forwarding never routes by it).
    pub(crate) keys_later: Option<KeysLater>,
    pub(super) attempts: u32,
    pub(super) same_retries: u32,
    pub(super) tried: Vec<String>,
    /// Profiles eligible when the request (or its hop) started: counted by the first
    /// choice's evaluation, so a request evaluates eligibility once to start (legacy: 1).
    pub(crate) eligible_at_start: Option<usize>,
    pub(super) pending: Pending,
    pub(crate) committed: bool,
    /// Where the request stands on its connection's fallback chain (`fallback.rs`).
    pub(crate) chain: ChainPosition,
    /// The model the client asked for, once a hop asks for another (`OTHER=MODEL`).
    pub(crate) requested: Option<String>,
    /// Attempts made on connections before the current one (the planner bounds each hop).
    pub(super) hop_base: u32,
    /// The profile that produced the response this request continues (`previous_response_id`):
    /// the only one it may go to.
    pub(super) continuing: Option<String>,
    /// An attempt of this request left the key that produced the conversation's account-bound
    /// items (failover, a conversation move, a turn moved off its binding).
    pub(super) moved_off: bool,
    /// The official client the request identifies as (token and external profiles serve only
    /// their own client).
    pub(crate) client: Option<OfficialClient>,
    /// The profile the request names (`x-switchyard-profile`): one attempt there, nothing else
    /// (`pinned.rs`).
    pub(crate) pinned: Option<String>,
    /// The upstream base URL of a pinned attempt whose credential is for another endpoint than
    /// the connection's (an external Codex login: the ChatGPT backend).
    pub(crate) upstream_base: Option<String>,
    /// Why no attempt may be made, when a rule other than eligibility said so (the client rule,
    /// a named profile): the refusal the relay answers with.
    pub(crate) refused: Option<Refusal>,
    /// Owned logins this request renewed after a 401 (once each; `login.rs`).
    pub(crate) renewed: Vec<String>,
    /// On a shared store: what the first decision read there (`shared.rs`).
    pub(crate) pulled: Option<crate::router::shared::Pulled>,
}

impl TurnRun {
    /// Legacy routing: the primary only, one attempt, no retries.
    pub(crate) fn is_legacy(&self) -> bool {
        self.snapshot.strategy.is_none() || self.model.is_none()
    }

    pub(crate) fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Whether the client rule lets profile `index` of the run's snapshot serve this request
    /// when selection picks among profiles (core `may_serve`: an API key always, a token only
    /// for its own client, an external login only requests naming it) — or, for an external
    /// Claude Code login on a connection whose CLI backend is on, any client: the official CLI
    /// itself then uses the login (`cli_backend.rs`), never the request's client.
    pub(crate) fn may_use(&self, index: usize) -> bool {
        let Some(profile) = self.snapshot.profiles.get(index) else { return false };
        let kind = profile.credential.kind;
        kind == ProfileKind::ApiKey
            || may_serve(kind, self.snapshot.rows.get(index).and_then(client_of), self.client, false)
            || (kind == ProfileKind::External && self.snapshot.cli_target(&profile.id).is_some())
    }

    /// The profile this request is pinned to by its `previous_response_id`, if known.
    pub(crate) fn continuing(&self) -> Option<&str> {
        self.continuing.as_deref()
    }

    /// Starts routing on a fallback hop (`run.snapshot` is already the hop's): the hop's own
    /// attempt bound, nothing tried there yet, and another account than the request's own.
    pub(crate) fn enter_hop(&mut self) {
        self.hop_base = self.attempts;
        self.same_retries = 0;
        self.tried.clear();
        self.pending = Pending::First;
        self.continuing = None;
        self.moved_off = true;
        self.refused = None;
        // The hop's first decision reads its own connection's view from a shared store.
        self.pulled = None;
    }

    /// The failure kind of a planned failover still pending (its target was not eligible).
    pub(crate) fn last_failover_kind(&self) -> Option<FailureKind> {
        match &self.pending {
            Pending::Failover(kind, _) => Some(*kind),
            _ => None,
        }
    }

    /// The reason recorded for `attempt`: `fallback:<kind>` (a chain) or `pool:<kind>` (a pool
    /// hand-off) for the first attempt on a hop.
    pub(crate) fn reason_of(&mut self, attempt: &Attempt) -> String {
        match self.chain.fresh.take() {
            Some(kind) if self.chain.pool.is_some() => format!("pool:{kind}"),
            Some(kind) => format!("fallback:{kind}"),
            None => attempt.reason.to_string(),
        }
    }
}

impl Router {
    /// Starts the routing of one request: its turn's committed state, a fallen turn resumed
    /// on its hop, and (routed only: legacy has one key anyway) the profile a continued
    /// Responses answer came from, when remembered — an unknown id (evicted, or from before
    /// a restart) routes normally.
    pub(crate) async fn start_run(&self, request: RouteRequest) -> Result<TurnRun, EngineError> {
        let RouteRequest { snapshot, model, keys, tags, previous_response_id, pinned, client, user, pool } = request;
        let (turn, conversation, session, keys_later) = match keys {
            RequestKeys::Now { turn, conversation, session } => (turn, conversation, session, None),
            RequestKeys::Later(later) => (FORWARDED_TURN.to_string(), None, None, Some(later)),
        };
        let committed = self.bindings_lock().peek(&turn, self.engine.monotonic()).is_some_and(|b| b.committed);
        let mut run = TurnRun {
            snapshot,
            model,
            turn,
            conversation,
            session,
            tags,
            user,
            keys_later,
            attempts: 0,
            same_retries: 0,
            tried: Vec::new(),
            eligible_at_start: None,
            pending: Pending::First,
            committed,
            continuing: None,
            moved_off: pool.as_ref().is_some_and(|p| p.moved),
            requested: pool.as_ref().and_then(|p| p.requested.clone()),
            chain: ChainPosition { pool, ..ChainPosition::default() },
            hop_base: 0,
            client,
            pinned,
            upstream_base: None,
            refused: None,
            renewed: Vec::new(),
            pulled: None,
        };
        if run.is_legacy() {
            run.eligible_at_start = Some(1);
        }
        self.resume_fallen_turn(&mut run).await?;
        if let Some(previous) = previous_response_id.filter(|_| !run.is_legacy()) {
            run.continuing = self.responses_lock().origin(&run.snapshot.connection_id, &previous);
            if run.continuing.is_none() {
                run.continuing = self.shared_origin(&run.snapshot.connection_id, &previous).await;
            }
        }
        Ok(run)
    }
}
