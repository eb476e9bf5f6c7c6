//! The attempt ledger's batching writer: the request path only sends a row into a bounded
//! channel; a writer on its own thread computes what rows left for later (a forwarded
//! request's keys, read from its body's copy), writes batches (see `attempts::insert_batch`)
//! and keeps the table under its retention cap.
//!
//! Its own thread, not a task on the relay's runtime: `relay serve` answers requests on one
//! thread, and the writer's work — the keys, binding 20 columns per row, the statement round
//! trips to SQLite's worker — was 17k of the 102k instructions that thread spent per one-line
//! legacy request (callgrind). A row waits in the channel until the writer wakes (once per
//! batch, at most every [`LINGER`]), so the request path wakes no thread.

mod deferred;
pub(crate) mod retention;

pub(crate) use deferred::{learn_load, Later, LoadLesson};
pub use deferred::{DeferredKeys, DeferredUsage, LedgerKeys};

use std::sync::Arc;
use std::time::Duration;

use switchyard_store::attempts::{self, AttemptRow};
use switchyard_store::limit_counters;

use crate::limits::ticket::Settlement;
use crate::telemetry::{RequestEnd, Telemetry};
use switchyard_store::Store;
use tokio::sync::{mpsc, oneshot};

pub use crate::settings::values::RETENTION_ROWS;
const BATCH: usize = 256;
const LINGER: Duration = Duration::from_millis(100);
const QUEUE: usize = 16_384;

enum Msg {
    Row(Box<AttemptRow>),
    /// A legacy row whose keys or usage are computed here, off the request path.
    /// (One box for both: the row and what is left for later travel together.)
    Later(Box<(AttemptRow, Later)>),
    /// A request's limits settled or returned (`limits/ticket.rs`).
    Settle(Settlement),
    /// A request that ended without a row saying so, for telemetry (`telemetry/`).
    Ended(Box<RequestEnd>),
    Flush(oneshot::Sender<()>),
}

#[derive(Debug, Clone)]
pub struct Ledger {
    tx: mpsc::Sender<Msg>,
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ledger message")
    }
}

impl Ledger {
    /// Starts the writer on a thread of its own (with its own current-thread runtime); it
    /// ends when the last sender is dropped, after writing what was queued.
    /// What it writes is also counted and traced by `telemetry` (on this thread).
    pub fn start(store: Store, telemetry: Arc<Telemetry>) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        let writer = move || match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(runtime) => runtime.block_on(write_loop(store, telemetry, rx)),
            Err(e) => tracing::error!(error = %e, "attempt ledger writer not started; attempts are not recorded"),
        };
        if let Err(e) = std::thread::Builder::new().name("switchyard-ledger".into()).spawn(writer) {
            tracing::error!(error = %e, "attempt ledger thread not started; attempts are not recorded");
        }
        Ledger { tx }
    }

    /// Queues a row; when the queue is full the row is dropped with a warning rather than
    /// slowing the request down.
    pub fn record(&self, row: AttemptRow) {
        if self.tx.try_send(Msg::Row(Box::new(row))).is_err() {
            tracing::warn!("attempt ledger queue full; one attempt record dropped");
        }
    }

    /// Queues a row whose keys or usage `later` computes on the writer's thread (legacy
    /// forwarding reads no body before it forwards; a legacy answer's usage is for the row).
    pub(crate) fn record_later(&self, row: AttemptRow, later: Later) {
        if later.is_empty() {
            return self.record(row);
        }
        if self.tx.try_send(Msg::Later(Box::new((row, later)))).is_err() {
            tracing::warn!("attempt ledger queue full; one attempt record dropped");
        }
    }

    /// Queues a request's limit settlement (written with the batch it comes with). A full queue
    /// drops it with a warning: the reservation then stays held until its window ends — the
    /// limit errs on the side of refusing, never of admitting more.
    pub(crate) fn settle(&self, settlement: Settlement) {
        if self.tx.try_send(Msg::Settle(settlement)).is_err() {
            tracing::warn!("attempt ledger queue full; one limit settlement dropped (its reservation stays held)");
        }
    }

    /// Tells telemetry of a request that ended without a row saying so (every attempt failed,
    /// nothing was eligible). A full queue drops it: a counter then misses one request.
    pub(crate) fn ended(&self, end: RequestEnd) {
        if self.tx.try_send(Msg::Ended(Box::new(end))).is_err() {
            tracing::warn!("attempt ledger queue full; one request's end not counted");
        }
    }

    /// Waits until every queued row is written.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Msg::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }
}

/// What one pass of the writer takes from the channel.
#[derive(Default)]
struct Pass {
    batch: Vec<AttemptRow>,
    settlements: Vec<Settlement>,
    flushes: Vec<oneshot::Sender<()>>,
}

async fn write_loop(store: Store, telemetry: Arc<Telemetry>, mut rx: mpsc::Receiver<Msg>) {
    let mut since_prune = 0usize;
    let mut prices_read: Option<std::time::Instant> = None;
    while let Some(first) = rx.recv().await {
        if prices_read.is_none_or(|at| at.elapsed() >= crate::telemetry::PRICES_TTL) {
            telemetry.read_prices(&store).await;
            prices_read = Some(std::time::Instant::now());
        }
        let mut pass = Pass { batch: Vec::with_capacity(BATCH), ..Pass::default() };
        take(first, &mut pass, &telemetry);
        drain(&mut rx, &mut pass, &telemetry);
        // A short batch lingers without listening: rows sent meanwhile wait in the channel
        // instead of waking this task (and with it a parked worker thread) once per request.
        if pass.batch.len() < BATCH && pass.flushes.is_empty() {
            tokio::time::sleep(LINGER).await;
            drain(&mut rx, &mut pass, &telemetry);
        }
        let Pass { mut batch, settlements, flushes } = pass;
        if !batch.is_empty() {
            let rows = batch.len();
            since_prune += rows;
            let full = std::mem::take(&mut batch);
            if let Err(e) = write_batch(&store, full).await {
                tracing::warn!(error = %e, rows, "attempt ledger write failed");
            }
            if since_prune >= 1000 {
                since_prune = 0;
                if let Ok(mut conn) = store.acquire().await {
                    let keep = crate::ledger::retention::retention_rows(&mut conn).await.unwrap_or(RETENTION_ROWS);
                    if let Err(e) = attempts::prune(&mut conn, keep).await {
                        tracing::warn!(error = %e, "attempt ledger not pruned");
                    }
                }
            }
        }
        if !settlements.is_empty() {
            if let Err(e) = write_settlements(&store, &settlements).await {
                tracing::warn!(error = %e, "limit settlements not written; their reservations stay held");
            }
        }
        for done in flushes {
            let _ = done.send(());
        }
    }
}

/// Takes what is already queued, up to a full batch or a flush request.
fn drain(rx: &mut mpsc::Receiver<Msg>, pass: &mut Pass, telemetry: &Telemetry) {
    while pass.batch.len() < BATCH && pass.flushes.is_empty() {
        match rx.try_recv() {
            Ok(m) => take(m, pass, telemetry),
            Err(_) => break,
        }
    }
}

/// Takes one message; a row is counted and traced as it is taken (telemetry counts what the
/// relay did, written or not).
fn take(m: Msg, pass: &mut Pass, telemetry: &Telemetry) {
    match m {
        Msg::Row(r) => pass.batch.push(*r),
        Msg::Later(pair) => {
            let (mut r, later) = *pair;
            let (settlement, told) = later.fill(&mut r);
            if let Some(settlement) = settlement {
                pass.settlements.push(settlement);
            }
            if let Some(told) = told {
                telemetry.row(&r, &told);
            }
            pass.batch.push(r);
        }
        Msg::Settle(s) => pass.settlements.push(s),
        Msg::Ended(end) => telemetry.ended(&end),
        Msg::Flush(done) => pass.flushes.push(done),
    }
}

/// Settles counters and frees slots: one transaction (one commit for the pass).
async fn write_settlements(store: &Store, settlements: &[Settlement]) -> Result<(), switchyard_store::StoreError> {
    let mut tx = store.begin_rows().await?;
    for s in settlements {
        limit_counters::settle(&mut tx, &s.settles).await?;
        if let Some((owner, holder)) = &s.slots {
            limit_counters::release(&mut tx, owner, holder).await?;
        }
    }
    tx.commit().await?;
    Ok(())
}

/// Up to 64 rows are one statement (an implicit transaction); `insert_batch` wraps longer
/// batches in one transaction itself. The rows move into the statement's arguments.
async fn write_batch(store: &Store, rows: Vec<AttemptRow>) -> Result<(), switchyard_store::StoreError> {
    let mut conn = store.acquire().await?;
    attempts::insert_batch(&mut conn, rows).await
}

#[cfg(test)]
mod tests {
    use switchyard_store::settings;

    use super::*;

    fn row(i: i64) -> AttemptRow {
        AttemptRow {
            at_ms: i,
            connection_id: "c".into(),
            turn: format!("t{i}"),
            attempt: 1,
            profile_id: "p".into(),
            reason: "legacy_primary".into(),
            status: Some(200),
            ..Default::default()
        }
    }

    async fn rows_after_writing(n: i64, retention: Option<i64>) -> usize {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::open(&dir.path().join("ledger.db")).await.expect("store");
        if let Some(keep) = retention {
            let mut conn = store.acquire().await.expect("acquire");
            let key = crate::ledger::retention::RETENTION_KEY;
            settings::put(&mut conn, key, &keep.to_string(), None, 0).await.expect("put");
        }
        let ledger = Ledger::start(store.clone(), std::sync::Arc::new(crate::telemetry::Telemetry::off()));
        for i in 0..n {
            ledger.record(row(i));
            if i % 256 == 255 {
                ledger.flush().await; // the queue never overflows in this test
            }
        }
        ledger.flush().await;
        let mut conn = store.acquire().await.expect("acquire");
        attempts::for_connection(&mut conn, "c", 1_000_000).await.expect("list").len()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_writer_prunes_to_the_retention_setting() {
        let kept = rows_after_writing(4_000, Some(1_000)).await;
        // Pruned every 1 000 rows written: at most the cap plus one interval remain.
        assert!(
            (1_000..2_000).contains(&kept),
            "a 1 000-row cap keeps 1 000 plus what came since the last prune: {kept}"
        );
        let all = rows_after_writing(4_000, None).await;
        assert_eq!(all, 4_000, "under the default cap (100 000) nothing is pruned");
    }
}
