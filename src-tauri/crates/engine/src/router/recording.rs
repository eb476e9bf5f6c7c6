//! The ledger row of one physical attempt, written exactly once through a drop guard
//! ([`Recording`]): on completion, on failure, or when the client goes away mid-attempt or
//! mid-stream. A successful routed attempt also teaches its key's token load.

use std::sync::Arc;

use switchyard_core::connection::Protocol;
use switchyard_core::routing::Failure;
use switchyard_providers::usage::Usage;
use switchyard_store::attempts::AttemptRow;

use crate::ledger::{learn_load, DeferredKeys, DeferredUsage, Later, LoadLesson};
use crate::limits::ticket::Ticket;
use crate::router::attempt::Attempt;
use crate::router::{RequestRun, Router};
use crate::telemetry::{Ending, Told};

/// The `moved` value of an attempt whose body had account-bound items dropped (appended
/// after a conversation move's cause: `excluded:rate_limited;dropped_account_state`).
pub const DROPPED_ACCOUNT_STATE: &str = "dropped_account_state";

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
    keys_later: Option<DeferredKeys>,
    /// An answer's usage, read by the ledger's task before writing the row.
    usage_later: Option<DeferredUsage>,
    /// The request's limits, settled with this (delivering) attempt's row.
    ticket: Option<Ticket>,
    /// What telemetry needs besides the row (`None` with telemetry off).
    told: Option<Told>,
    pub report: AttemptReport,
}

impl Recording {
    pub(crate) fn start(router: &Arc<Router>, run: &mut RequestRun, attempt: &Attempt, reason: String) -> Self {
        let row = AttemptRow {
            at_ms: 0,
            connection_id: run.snapshot.connection_id.clone(),
            turn: run.keys.turn.clone(),
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
            session: run.keys.session.clone(),
            conversation: run.keys.conversation.as_ref().map(|c| c.as_str().to_string()),
            moved: attempt.moved.map(|m| m.to_string()),
            cache_read_tokens: None,
            cache_write_tokens: None,
            tags: run.recorded.tags.clone(),
            reference_cost_micro_usd: None,
            user_name: run.recorded.user.clone(),
            pool_id: run.hops.pool().map(|p| p.pool_id.clone()),
            origin_id: run.hops.origin_left().map(|origin| origin.connection_id.clone()),
            limit_id: None,
        };
        let told = run.mark.clone().map(|mark| Told {
            snapshot: Some(run.snapshot.clone()),
            pool: run.hops.pool().map(|p| p.pool.clone()),
            mark,
            ends: None,
        });
        Recording {
            told,
            router: router.clone(),
            keys_later: run.keys.later.take(),
            usage_later: None,
            ticket: None,
            row: Some(row),
            load_protocol: run.policy.commits().then_some(run.snapshot.protocol),
            // Durations are measurements of the real wire, not decisions: the real clock.
            started: std::time::Instant::now(),
            report: AttemptReport::default(),
        }
    }

    /// Sets the tokens the answer reported (input, output and prompt-cache counts).
    pub fn set_usage(&mut self, usage: Usage) {
        self.usage_later = None;
        self.report.input_tokens = usage.input_tokens;
        self.report.output_tokens = usage.output_tokens;
        self.report.cache_read_tokens = usage.cache_read_tokens;
        self.report.cache_write_tokens = usage.cache_write_tokens;
    }

    /// The tokens the answer reported, read by `read` from the answer's copy on the ledger's
    /// writer (a routed attempt's key learns its token load from them there, before its row
    /// is written: `LoadLesson`).
    pub fn set_usage_later(&mut self, read: DeferredUsage) {
        self.usage_later = Some(read);
    }

    /// The model the row names (learned after the attempt: `AttemptFacts::late_model`).
    pub(crate) fn set_model(&mut self, model: Option<&str>) {
        if let Some(row) = self.row.as_mut() {
            row.model = model.map(str::to_string);
        }
    }

    /// Keeps the request's limits until this attempt's row settles them.
    pub(crate) fn hold(&mut self, ticket: Option<Ticket>) {
        self.ticket = ticket;
    }

    /// This attempt's answer goes to the client: its row ends the request (telemetry).
    pub(crate) fn ends_request(&mut self) {
        if let Some(told) = self.told.as_mut() {
            told.ends = Some(Ending::Delivered);
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
    pub(crate) fn mark_dropped_account_state(&mut self) {
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
        row.reference_cost_micro_usd = r.reference_cost_usd.map(|usd| (usd * 1e6).round() as i64);
        let usage = self.usage_later.take();
        // Usage known now (a stream's) teaches the key's token load now; else the writer
        // teaches it once it has read the usage.
        let at = || self.router.engine.monotonic();
        let lesson = match self.load_protocol {
            Some(protocol) if usage.is_some() => {
                Some(LoadLesson { loads: self.router.loads.clone(), protocol, at: at() })
            }
            Some(protocol) => {
                learn_load(&self.router.loads, protocol, at, &row);
                None
            }
            None => None,
        };
        let later =
            Later { keys: self.keys_later.take(), usage, lesson, ticket: self.ticket.take(), told: self.told.take() };
        self.router.ledger.record_later(row, later);
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.write();
    }
}

/// What the relay measured of one attempt, for the ledger.
#[derive(Debug, Clone, Default)]
pub struct AttemptReport {
    pub status: Option<u16>,
    pub failure: Option<Failure>,
    pub ttfb_ms: Option<i64>,
    pub duration_ms: i64,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub cache_read_tokens: Option<i64>,
    pub cache_write_tokens: Option<i64>,
    /// The official CLI's list-price figure for the attempt (CLI backend only; USD).
    pub reference_cost_usd: Option<f64>,
}
