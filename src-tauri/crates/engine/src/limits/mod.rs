//! Limits (docs/design.md "Limits"; invariants 28–30): the configured caps as the router reads
//! them ([`book::LimitBook`], re-read at most every [`BOOK_TTL`]), their calendar windows in
//! the configured time zone (`window.rs`), and what an admitted request holds until it ends
//! ([`ticket::Ticket`]: settled with its ledger row on the ledger's writer, or returned whole
//! when the request fails before output). Admission itself is one step of the run
//! (`router/admission.rs`) through the routing-state seam (`RoutingState::admit`); the
//! counters are rows of the store, on a desktop's SQLite file as on a team's Postgres.

pub(crate) mod book;
pub(crate) mod ticket;
pub(crate) mod window;

use std::time::Duration;

/// How long the router uses the limits it read before reading them again (a limit set on any
/// replica holds everywhere within this time).
pub const BOOK_TTL: Duration = Duration::from_secs(1);

/// How long a concurrency slot lasts without a renewal (a killed replica's slots come back
/// after it); a running relay renews its slots every third of it.
pub const DEFAULT_SLOT_LEASE: Duration = Duration::from_secs(30);

use switchyard_store::limit_counters::{self, Full, Holder, Take};
use switchyard_store::{Backend, Store};

use crate::error::EngineError;

/// One store decision (invariant 28): every take of a request in one transaction that locks
/// only the limits' rows, committed when all fit, rolled back at the first that does not — or,
/// for a request meeting one periodic limit, its one conditional upsert alone (atomic by itself:
/// one round trip); on Postgres, several periodic limits in one call of `switchyard_admit` (one
/// round trip, all or nothing). Concurrency slots take the transaction. `Ok(None)`: admitted.
pub(crate) async fn admit_in(
    store: &Store,
    takes: &[Take],
    holder: Holder<'_>,
    now_ms: i64,
) -> Result<Option<Full>, EngineError> {
    if let [take] = takes {
        if !take.slot {
            let mut conn = store.acquire().await?;
            return Ok(limit_counters::admit_one(&mut conn, take).await?);
        }
    }
    if store.backend() == Backend::Postgres && takes.iter().all(|t| !t.slot) {
        let mut conn = store.acquire().await?;
        return Ok(limit_counters::admit_postgres(&mut conn, takes).await?);
    }
    let mut tx = store.begin_rows().await?;
    match limit_counters::admit(&mut tx, takes, holder, now_ms).await? {
        None => {
            tx.commit().await.map_err(switchyard_store::StoreError::from)?;
            Ok(None)
        }
        Some(full) => {
            tx.rollback().await.map_err(switchyard_store::StoreError::from)?;
            Ok(Some(full))
        }
    }
}
