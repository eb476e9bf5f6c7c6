//! What an attempt row can leave for the ledger's writer to compute, off the request path
//! ([`Later`]): a forwarded request's keys ([`DeferredKeys`]: legacy forwarding reads no body
//! before it goes upstream, so the turn, conversation and session its row carries
//! ([`LedgerKeys`]) are read from the body's copy), and a legacy answer's token usage
//! ([`DeferredUsage`]: read from the answer's copy; nothing on the request path needs it), and
//! for a routed attempt the lesson its usage teaches its key's token load ([`LoadLesson`],
//! learned by the writer once it has read the usage).
//! Issue 40: the usage read was 6.8k of a one-line legacy request's ~89k instructions on the
//! relay's one request thread, and as much of a balanced one's ~111k.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use switchyard_core::connection::Protocol;
use switchyard_core::prompt_cache::prompt_tokens;
use switchyard_core::routing::TokenLoadTable;
use switchyard_providers::usage::Usage;
use switchyard_store::attempts::AttemptRow;

use crate::limits::ticket::{Settlement, Ticket};
use crate::telemetry::Told;

/// The keys a deferred computation gives an attempt row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LedgerKeys {
    pub turn: String,
    pub conversation: Option<String>,
    pub session: Option<String>,
}

/// Computes a request's [`LedgerKeys`] (from its body, which it holds) on the ledger's writer.
pub struct DeferredKeys(pub Box<dyn FnOnce() -> LedgerKeys + Send + Sync>);

impl DeferredKeys {
    /// Runs the computation.
    pub(crate) fn compute(self) -> LedgerKeys {
        (self.0)()
    }
}

impl std::fmt::Debug for DeferredKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeferredKeys")
    }
}

/// Reads an answer's token usage (from the answer's copy, which it holds) on the ledger's writer.
pub struct DeferredUsage(pub Box<dyn FnOnce() -> Usage + Send + Sync>);

impl DeferredUsage {
    /// Runs the read.
    pub(crate) fn read(self) -> Usage {
        (self.0)()
    }
}

impl std::fmt::Debug for DeferredUsage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeferredUsage")
    }
}

/// What a routed attempt's row teaches its key's token load (`token_load.rs`): a successful
/// attempt's prompt tokens, counted in its dialect, as of when the attempt ended. Learned on the
/// request thread when the usage is known there (a stream's), else by the ledger's writer once
/// it has read the usage — before the row is written, so a row read back has been learned.
#[derive(Debug)]
pub(crate) struct LoadLesson {
    pub(crate) loads: Arc<Mutex<TokenLoadTable>>,
    pub(crate) protocol: Protocol,
    pub(crate) at: Instant,
}

impl LoadLesson {
    /// Adds `row`'s prompt tokens to its key's load, if it succeeded and reported any.
    pub(crate) fn learn(&self, row: &AttemptRow) {
        learn_load(&self.loads, self.protocol, || self.at, row);
    }
}

/// [`LoadLesson::learn`], for a lesson learned where it is made (no `Arc` to share; the clock
/// read only when there is something to learn).
pub(crate) fn learn_load(
    loads: &Mutex<TokenLoadTable>,
    protocol: Protocol,
    at: impl FnOnce() -> Instant,
    row: &AttemptRow,
) {
    if !row.status.is_some_and(|s| (200..300).contains(&s)) {
        return;
    }
    let prompt = prompt_tokens(protocol, row.input_tokens, row.cache_read_tokens, row.cache_write_tokens);
    let Some(tokens) = prompt.and_then(|p| u64::try_from(p).ok()).filter(|&p| p > 0) else { return };
    let model = row.model.as_deref().unwrap_or("");
    let mut loads = loads.lock().unwrap_or_else(PoisonError::into_inner);
    loads.load_mut(&row.connection_id, model).record(&row.profile_id, tokens, at());
}

/// What the writer computes for one row before it is written.
#[derive(Debug, Default)]
pub(crate) struct Later {
    pub(crate) keys: Option<DeferredKeys>,
    pub(crate) usage: Option<DeferredUsage>,
    /// A routed attempt's token-load lesson, learned once `usage` is read.
    pub(crate) lesson: Option<LoadLesson>,
    /// The request's limits, settled with what the row holds once it is filled.
    pub(crate) ticket: Option<Ticket>,
    /// What telemetry needs besides the row (`None` with telemetry off).
    pub(crate) told: Option<Told>,
}

impl Later {
    pub(crate) fn is_empty(&self) -> bool {
        self.keys.is_none()
            && self.usage.is_none()
            && self.lesson.is_none()
            && self.ticket.is_none()
            && self.told.is_none()
    }

    /// Fills `row` with what was left for later; the settlement of the request's limits, if
    /// it holds any, and what telemetry was told.
    pub(crate) fn fill(self, row: &mut AttemptRow) -> (Option<Settlement>, Option<Told>) {
        if let Some(keys) = self.keys {
            let keys = keys.compute();
            row.turn = keys.turn;
            row.conversation = keys.conversation;
            row.session = keys.session;
        }
        if let Some(usage) = self.usage {
            let usage = usage.read();
            row.input_tokens = usage.input_tokens;
            row.output_tokens = usage.output_tokens;
            row.cache_read_tokens = usage.cache_read_tokens;
            row.cache_write_tokens = usage.cache_write_tokens;
        }
        if let Some(lesson) = self.lesson {
            lesson.learn(row);
        }
        (self.ticket.map(|t| t.settle(row)), self.told)
    }
}
