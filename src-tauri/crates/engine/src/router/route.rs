//! The one routing loop (docs/design.md, "The request path"): for each physical attempt,
//! choose the profile (legacy primary, sticky binding, SWRR or priority, failover, probe)
//! with its admission and lease, let the transport make the HTTP call, settle the circuits,
//! plan the next step and record the attempt — exactly once, through a [`Recording`] guard
//! that writes on completion, failure or drop. The relay only does HTTP: it implements
//! [`Transport`] and turns [`Routed`] into a response. Legacy routing is the same loop with
//! a one-attempt pass-through policy (`TurnRun::is_legacy`).

use std::future::Future;
use std::sync::Arc;

use switchyard_core::connection::Protocol;
use switchyard_core::prompt_cache::prompt_tokens;
use switchyard_core::routing::{Failure, Plan};
use switchyard_providers::usage::Usage;
use switchyard_store::attempts::AttemptRow;
use switchyard_vault::Secret;

use crate::error::EngineError;
use crate::router::attempt::Attempt;
use crate::router::{AttemptReport, NextAttempt, Router, Snapshot, TurnRun};

/// What the transport needs for one physical attempt.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The connection this attempt goes to: the request's own, or a fallback hop (its base
    /// URL, headers, mapping and timeout apply).
    pub snapshot: &'a Snapshot,
    pub profile_id: &'a str,
    pub secret: &'a Secret,
    /// 1 for the first attempt of the request.
    pub number: u32,
    /// Legacy pass-through: deliver whatever comes back, as it comes.
    pub pass_through: bool,
    /// The model the client asked for (client-facing name), if the request names one.
    pub model: Option<&'a str>,
    /// This attempt goes to another account than the one that produced the conversation's
    /// account-bound items (a failover or a move): drop those items from the body (Responses
    /// `reasoning` items with `encrypted_content`, Anthropic signed `thinking` blocks).
    pub strip_account_state: bool,
}

/// The transport's classified answer to one attempt.
#[derive(Debug)]
pub enum Reply<D, K> {
    /// A success to hand to the client (`body`: what the relay streams on). The attempt's
    /// usage and any later failure are set on the [`Recording`] the engine returns with it.
    Deliver { status: u16, ttfb_ms: Option<i64>, body: D },
    /// The attempt failed before any output. `kept`: an answer to deliver as it is when no
    /// other attempt succeeds (an upstream error answer); `None` when nothing came back.
    Failed { failure: Failure, status: Option<u16>, ttfb_ms: Option<i64>, kept: Option<K> },
}

/// The HTTP side of the loop.
pub trait Transport {
    /// What a successful attempt hands on (the relay: held bytes and the stream's tail).
    type Delivered;
    /// An error answer kept for delivery.
    type Kept;

    fn attempt(&self, target: Target<'_>) -> impl Future<Output = Reply<Self::Delivered, Self::Kept>> + Send;

    /// Whether the last attempt's body had account-bound items dropped (asked by
    /// `Target::strip_account_state`); recorded in the attempt's `moved` column.
    fn dropped_account_state(&self) -> bool {
        false
    }

    /// The model of a request whose body was still streaming when it was sent (legacy
    /// forwarding reads no body first), read once the attempt was answered; the loop takes
    /// it when the run has none.
    fn late_model(&self) -> Option<String> {
        None
    }
}

/// The `moved` value of an attempt whose body had account-bound items dropped (appended
/// after a conversation move's cause: `excluded:rate_limited;dropped_account_state`).
pub const DROPPED_ACCOUNT_STATE: &str = "dropped_account_state";

/// Which attempt produced what the client gets (outside legacy mode it is told in headers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The connection that served (a fallback hop's slug when the request fell back).
    pub connection: String,
    pub connection_id: String,
    pub profile_id: String,
    pub attempts: u32,
    pub reason: String,
    pub legacy: bool,
}

/// How a request ended.
// One value per request, moved once into the response: boxing the recording buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Routed<D, K> {
    /// An attempt succeeded: deliver `body`; `recording` writes its ledger row when dropped.
    Delivered { body: D, recording: Recording, route: Route },
    /// Every attempt failed; deliver the last kept error answer as it is.
    Kept { kept: K, route: Route },
    /// The last attempt got no answer (network, timeout) and nothing was kept.
    NoAnswer { failure: Failure, route: Route },
    /// No profile may serve the request now (503, or 429 when all are cooling down).
    /// `continuity`: the request continues a response whose profile cannot serve now.
    Unavailable { status: u16, retry_after_secs: Option<u64>, message: String, continuity: bool },
}

/// The ledger row of one physical attempt, written exactly once: by [`Recording::finish`]
/// or when dropped (the client went away mid-attempt or mid-stream).
#[derive(Debug)]
pub struct Recording {
    router: Arc<Router>,
    row: Option<AttemptRow>,
    /// The connection's dialect, to count the prompt for the token load; `None` for legacy
    /// attempts (no load is kept for them).
    load_protocol: Option<Protocol>,
    started: std::time::Instant,
    /// Legacy forwarding: the keys the ledger's task computes before writing the row.
    keys_later: Option<crate::router::attempt::KeysLater>,
    pub report: AttemptReport,
}

impl Recording {
    fn start(router: &Arc<Router>, run: &TurnRun, attempt: &Attempt, reason: String) -> Self {
        let row = AttemptRow {
            at_ms: 0,
            connection_id: run.snapshot.connection_id.clone(),
            turn: run.turn.clone(),
            attempt: i64::from(attempt.number),
            profile_id: attempt.profile_id.clone(),
            reason,
            model: run.model.clone(),
            status: None,
            failure_kind: None,
            scope: None,
            ttfb_ms: None,
            duration_ms: None,
            input_tokens: None,
            output_tokens: None,
            session: run.session.clone(),
            conversation: run.conversation.as_ref().map(|c| c.as_str().to_string()),
            moved: attempt.moved.map(|m| m.to_string()),
            cache_read_tokens: None,
            cache_write_tokens: None,
            tags: run.tags.clone(),
        };
        Recording {
            router: router.clone(),
            keys_later: run.keys_later.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take(),
            row: Some(row),
            load_protocol: (!run.is_legacy()).then_some(run.snapshot.protocol),
            // Durations are measurements of the real wire, not decisions: the real clock.
            started: std::time::Instant::now(),
            report: AttemptReport::default(),
        }
    }

    /// Sets the tokens the answer reported (input, output and prompt-cache counts).
    pub fn set_usage(&mut self, usage: Usage) {
        self.report.input_tokens = usage.input_tokens;
        self.report.output_tokens = usage.output_tokens;
        self.report.cache_read_tokens = usage.cache_read_tokens;
        self.report.cache_write_tokens = usage.cache_write_tokens;
    }

    /// The model the row names (learned after the attempt: `Transport::late_model`).
    fn set_model(&mut self, model: Option<&str>) {
        if let Some(row) = self.row.as_mut() {
            row.model = model.map(str::to_string);
        }
    }

    /// Records a failure seen after delivery started (the first one counts).
    pub fn set_failure(&mut self, failure: Failure) {
        self.report.failure.get_or_insert(failure);
    }

    /// The engine clock's wall time.
    pub fn now(&self) -> std::time::SystemTime {
        self.router.engine.now_system()
    }

    /// Notes in the `moved` column that the attempt's body had account-bound items dropped.
    fn mark_dropped_account_state(&mut self) {
        if let Some(row) = self.row.as_mut() {
            row.moved = Some(match row.moved.take() {
                Some(cause) => format!("{cause};{DROPPED_ACCOUNT_STATE}"),
                None => DROPPED_ACCOUNT_STATE.to_string(),
            });
        }
    }

    /// Writes the row now.
    pub fn finish(mut self) {
        self.write();
    }

    fn write(&mut self) {
        let Some(mut row) = self.row.take() else { return };
        let duration_ms = i64::try_from(self.started.elapsed().as_millis()).unwrap_or(i64::MAX);
        let r = &self.report;
        row.at_ms = self.router.engine.now_ms() - duration_ms;
        row.status = r.status.map(i64::from);
        row.failure_kind = r.failure.map(|f| f.kind.as_str().to_string());
        row.scope = r.failure.map(|f| f.scope.as_str().to_string());
        row.ttfb_ms = r.ttfb_ms;
        row.duration_ms = Some(duration_ms);
        row.input_tokens = r.input_tokens;
        row.output_tokens = r.output_tokens;
        row.cache_read_tokens = r.cache_read_tokens;
        row.cache_write_tokens = r.cache_write_tokens;
        self.learn_load(&row);
        match self.keys_later.take() {
            Some(keys) => self.router.ledger.record_later(row, keys),
            None => self.router.ledger.record(row),
        }
    }
}

impl Recording {
    /// Adds a successful attempt's prompt tokens to its key's token load (in memory; the
    /// balance moves of `token_load.rs` read it).
    fn learn_load(&self, row: &AttemptRow) {
        let Some(protocol) = self.load_protocol else { return };
        if !row.status.is_some_and(|s| (200..300).contains(&s)) {
            return;
        }
        let prompt = prompt_tokens(protocol, row.input_tokens, row.cache_read_tokens, row.cache_write_tokens);
        let Some(tokens) = prompt.and_then(|p| u64::try_from(p).ok()).filter(|&p| p > 0) else { return };
        let model = row.model.as_deref().unwrap_or("");
        let now = self.router.engine.monotonic();
        self.router.loads_lock().load_mut(&row.connection_id, model).record(&row.profile_id, tokens, now);
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.write();
    }
}

impl Router {
    /// Routes one request through `transport` until an attempt succeeds, the planner gives
    /// up, or nothing is eligible.
    pub async fn route<T: Transport>(
        self: &Arc<Self>,
        mut run: TurnRun,
        transport: &T,
    ) -> Result<Routed<T::Delivered, T::Kept>, EngineError> {
        let mut kept: Option<(T::Kept, Route)> = None;
        loop {
            let mut attempt = match self.next_attempt(&mut run).await? {
                NextAttempt::Go(a) => a,
                NextAttempt::Unavailable { status, retry_after_secs, message, continuity } => {
                    if self.fall_back_unavailable(&mut run).await? {
                        continue;
                    }
                    return Ok(match kept {
                        Some((kept, route)) => {
                            Routed::Kept { kept, route: Route { attempts: run.attempts(), ..route } }
                        }
                        None => Routed::Unavailable { status, retry_after_secs, message, continuity },
                    });
                }
            };
            let route = Route {
                connection: run.snapshot.slug.clone(),
                connection_id: run.snapshot.connection_id.clone(),
                profile_id: attempt.profile_id.clone(),
                attempts: run.attempts(),
                reason: run.reason_of(&attempt),
                legacy: run.is_legacy() && !run.fell_back(),
            };
            let mut recording = Recording::start(self, &run, &attempt, route.reason.clone());
            let target = Target {
                snapshot: &run.snapshot,
                profile_id: &attempt.profile_id,
                secret: &attempt.secret,
                number: attempt.number,
                pass_through: run.is_legacy(),
                model: run.model.as_deref(),
                strip_account_state: attempt.strip_account_state,
            };
            let reply = transport.attempt(target).await;
            if run.model.is_none() {
                run.model = transport.late_model();
                recording.set_model(run.model.as_deref());
            }
            if attempt.strip_account_state && transport.dropped_account_state() {
                recording.mark_dropped_account_state();
            }
            let (failure, kept_now) = match reply {
                Reply::Deliver { status, ttfb_ms, body } => {
                    self.attempt_succeeded(&mut attempt).await;
                    if !run.is_legacy() {
                        self.commit(&mut run);
                    }
                    recording.report.status = Some(status);
                    recording.report.ttfb_ms = ttfb_ms;
                    return Ok(Routed::Delivered { body, recording, route });
                }
                Reply::Failed { failure, status, ttfb_ms, kept } => {
                    recording.report.status = status;
                    recording.report.ttfb_ms = ttfb_ms;
                    recording.report.failure = Some(failure);
                    (failure, kept)
                }
            };
            recording.finish();
            let plan = self.attempt_failed(&mut run, &mut attempt, failure).await;
            if let Some(k) = kept_now {
                kept = Some((k, route.clone()));
            }
            if matches!(plan, Plan::FailoverTo(..) | Plan::RetrySame) {
                continue;
            }
            if self.fall_back_after(&mut run, failure, &plan).await? {
                continue;
            }
            return Ok(match kept {
                Some((kept, kept_route)) => {
                    Routed::Kept { kept, route: Route { attempts: run.attempts(), ..kept_route } }
                }
                None => Routed::NoAnswer { failure, route },
            });
        }
    }
}
