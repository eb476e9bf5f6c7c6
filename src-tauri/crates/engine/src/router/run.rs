//! The routing state of one request ([`RequestRun`]), made once from its [`RouteRequest`] and
//! owned by the loop: the snapshot it routes on (a hop's, once it moved), the model, its keys,
//! its [`Policy`] and [`Hops`], its [`Counts`], which profiles it tried, what its next attempt
//! should be, whether its turn is committed, and the [`View`] its decisions are made on.

use std::sync::Arc;

use switchyard_core::conversation::ConversationKey;
use switchyard_core::routing::{may_serve, FailureKind, SelectionReason};
use switchyard_core::states::{OfficialClient, ProfileKind};

use crate::config::rows::client_of;
use crate::error::EngineError;
use crate::ledger::DeferredKeys;
use crate::limits::ticket::Ticket;
use crate::router::admission::Admitting;
use crate::router::ending::Refused;
use crate::router::policy::{Counts, Hops, Policy};
use crate::router::refusal::Unavailable;
use crate::router::request::{RequestKeys, RouteRequest, FORWARDED_TURN};
use crate::router::state::{RoutingState, Subject, View, ViewKeys};
use crate::router::{Resolved, Router, Snapshot};
use crate::telemetry::RequestMark;

/// What the next attempt of a request should be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum NextStep {
    /// The first decision on the connection (under its affinity).
    First,
    /// To the planner's choice (the most preferred untried eligible profile).
    Failover(FailureKind, String),
    RetrySame(String, SelectionReason),
}

/// The keys a request is routed and recorded by.
#[derive(Debug)]
pub(crate) struct RunKeys {
    pub turn: String,
    pub conversation: Option<ConversationKey>,
    /// The client's session, hashed (ledger only).
    pub session: Option<String>,
    /// Forwarding: the keys the first attempt's ledger row computes later (`turn` is
    /// [`FORWARDED_TURN`] meanwhile; forwarding never routes by it).
    pub later: Option<DeferredKeys>,
}

/// What the ledger records of the request besides its attempts.
#[derive(Debug)]
pub(crate) struct Recorded {
    /// The caller's tags as a JSON object.
    pub tags: Option<String>,
    /// The relay user the request came from.
    pub user: Option<String>,
}

/// The routing state of one request (one HTTP call to the relay), made from its
/// [`RouteRequest`] by [`Router::start_run`] and owned by the loop.
#[derive(Debug)]
pub(crate) struct RequestRun {
    pub(crate) snapshot: Arc<Snapshot>,
    /// The model asked of the current connection (client-facing name; a hop's own name on a hop
    /// that names one), if the request names one.
    pub(crate) model: Option<String>,
    /// The model the client asked for, once a hop asks for another (`OTHER=MODEL`).
    pub(crate) requested: Option<String>,
    pub(crate) keys: RunKeys,
    pub(crate) recorded: Recorded,
    /// The official client the request identifies as (token and external profiles serve only
    /// their own client).
    pub(crate) client: Option<OfficialClient>,
    pub(crate) policy: Policy,
    pub(crate) hops: Hops,
    pub(crate) counts: Counts,
    pub(super) tried: Vec<String>,
    pub(super) next: NextStep,
    pub(crate) committed: bool,
    /// An attempt of this request left the key that produced the conversation's account-bound
    /// items (failover, a conversation move, a turn moved off its binding, a hop).
    pub(super) moved_off: bool,
    /// Owned logins this request renewed after a 401 (once each; `login.rs`).
    pub(crate) renewed: Vec<String>,
    /// What the current connection's first decision read (`None` until it is made).
    pub(super) view: Option<View>,
    /// What admission took from the limits the request meets (`None`: none met it); the
    /// delivering attempt's row settles it, else dropping it returns everything.
    pub(super) ticket: Option<Ticket>,
    /// When the request started and its span ids (`None`: telemetry is off).
    pub(crate) mark: Option<RequestMark>,
    /// The kind of the last failed attempt's failure (telemetry's `failure_kind`).
    pub(crate) failed: Option<FailureKind>,
}

impl RequestRun {
    pub(crate) fn attempts(&self) -> u32 {
        self.counts.attempts
    }

    /// The model as a key ("" when the request names none).
    pub(crate) fn model_key(&self) -> &str {
        self.model.as_deref().unwrap_or("")
    }

    /// The keys of this run's decisions on its connection at `now` (the engine clock's instant
    /// and wall time, read once per decision).
    pub(crate) fn view_keys(&self, (now, now_ms): (std::time::Instant, i64)) -> ViewKeys<'_> {
        ViewKeys {
            subject: Subject::Connection { id: &self.snapshot.connection_id, profiles: &self.snapshot.profiles },
            model: self.model_key(),
            turn: Some(&self.keys.turn),
            conversation: self.keys.conversation.as_ref(),
            window: self.snapshot.affinity.window(),
            now,
            now_ms,
        }
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

    /// Starts routing on a hop: `snapshot` is the hop's connection, asked for `model`; its own
    /// policy, its own attempt bound, nothing tried there yet, another account than the
    /// request's own, and its own view.
    pub(crate) fn enter_hop(&mut self, snapshot: Arc<Snapshot>, model: String) {
        if self.requested.is_none() {
            self.requested = self.model.clone();
        }
        self.snapshot = snapshot;
        self.model = Some(model);
        self.policy = Policy::decide(&self.snapshot, self.model.as_deref(), None, None);
        self.counts.enter_hop(self.policy.is_legacy());
        self.tried.clear();
        self.next = NextStep::First;
        self.moved_off = true;
        self.view = None;
    }

    /// The failure kind of a planned failover still pending (its target was not eligible).
    pub(crate) fn last_failover_kind(&self) -> Option<FailureKind> {
        match &self.next {
            NextStep::Failover(kind, _) => Some(*kind),
            _ => None,
        }
    }
}

/// How a request starts: its run, or why it cannot (a pool that cannot take it).
pub(crate) enum Start {
    Run(Box<RequestRun>),
    Refused(Unavailable),
}

impl Router {
    /// Starts the routing of one request: its target (a pool's member chosen first), its policy
    /// and hops, its turn's committed state, a fallen turn resumed on its hop, and (routed only:
    /// legacy has one key anyway) the profile a continued Responses answer came from, when
    /// remembered — an unknown id (evicted, or from before a restart) routes normally.
    pub(crate) async fn start_run(&self, request: RouteRequest) -> Result<Start, EngineError> {
        let RouteRequest { target, model, keys, tags, previous_response_id, pinned, client, user, estimate } = request;
        let mark = self.telemetry.mark(|| self.engine.now_ms());
        // Admission first: a refused request changes nothing (no pool member chosen, no binding).
        let admitting = Admitting {
            mark: mark.as_ref(),
            snapshot: target.snapshot(),
            user: user.as_deref(),
            connection: target.snapshot().map(|s| (s.connection_id.as_str(), s.slug.as_str())),
            pool: match &target {
                Resolved::Pool { pool, .. } => Some((pool.id.as_str(), pool.name.as_str())),
                Resolved::Connection(_) => None,
            },
            model: model.as_deref(),
            estimate,
            protocol: target.protocol(),
        };
        let ticket = match self.admit_limits(admitting).await {
            Ok(ticket) => ticket,
            Err(refused) => return Ok(Start::Refused(refused)),
        };
        let keys = match keys {
            RequestKeys::Now { turn, conversation, session } => RunKeys { turn, conversation, session, later: None },
            RequestKeys::Later(later) => {
                RunKeys { turn: FORWARDED_TURN.to_string(), conversation: None, session: None, later: Some(later) }
            }
        };
        let now = self.engine.monotonic();
        let (snapshot, model, mut hops) = match target {
            Resolved::Connection(snapshot) => {
                let hops = if pinned.is_some() { Hops::None } else { Hops::of(&snapshot, model.as_deref()) };
                (snapshot, model, hops)
            }
            Resolved::Pool { pool, member } => {
                // Boxed, as every path a plain connection's request does not take (its future
                // is kilobytes, and the request's future would be sized by it).
                let started = Box::pin(self.start_pool(
                    &pool,
                    member.as_deref(),
                    model.as_deref(),
                    &keys,
                    previous_response_id.as_deref(),
                ))
                .await?;
                match started {
                    Ok(start) => (start.snapshot, start.model, Hops::Pool(start.route)),
                    Err(refused) => {
                        let pool = Some(pool.name.as_str());
                        let (user, model) = (user.as_deref(), model.as_deref());
                        self.tell_refused(Refused { mark, snapshot: None, pool, user, model });
                        return Ok(Start::Refused(refused));
                    }
                }
            }
        };
        // A turn that fell back earlier continues on its hop.
        let (snapshot, model, requested, resumed) =
            match self.fallen_hop(&snapshot, model.as_deref(), &mut hops, &keys.turn).await? {
                Some((hop, hop_model)) => (hop, Some(hop_model), model, true),
                None => (snapshot, model, hops.pool().and_then(|p| p.requested.clone()), false),
            };
        let continuing = match previous_response_id {
            Some(previous) if snapshot.strategy.is_some() && model.is_some() && pinned.is_none() => {
                self.state.origin(&snapshot.connection_id, &previous, now, self.engine.now_ms()).await
            }
            _ => None,
        };
        let policy = Policy::decide(&snapshot, model.as_deref(), pinned, continuing);
        let moved_off = resumed || hops.pool().is_some_and(|p| p.moved);
        let committed = self.state.committed(&keys.turn, now);
        let run = RequestRun {
            counts: Counts { eligible_at_start: policy.is_legacy().then_some(1), ..Counts::default() },
            snapshot,
            model,
            requested,
            keys,
            recorded: Recorded { tags, user },
            client,
            policy,
            hops,
            tried: Vec::new(),
            next: NextStep::First,
            committed,
            moved_off,
            renewed: Vec::new(),
            view: None,
            ticket,
            mark,
            failed: None,
        };
        Ok(Start::Run(Box::new(run)))
    }
}
