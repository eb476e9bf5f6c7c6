//! Start-up clean-up of orphan keychain entries: journaled secrets that no profile
//! references, except writes still in flight (writer alive and lease not run out). It runs
//! under the data-dir lock, so no writer of any process commits while it decides; if another
//! process keeps the lock, clean-up is skipped until the next start.

use std::collections::HashSet;
use std::time::Duration;

use switchyard_store::journal::{self, JournalEntry};
use switchyard_store::profiles;
use switchyard_vault::Locator;

use crate::config::staging::writer_alive;
use crate::context::Context;
use crate::error::EngineError;

/// How long start-up waits for the data-dir lock before skipping clean-up.
const CLEANUP_WAIT: Duration = Duration::from_secs(5);

/// What clean-up does with one journal entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Written, not yet committed: its writer lives and the lease holds. Left alone.
    InFlight,
    /// A profile references it: only the journal entry goes.
    Settled,
    /// Nobody references it and nobody will commit it: the secret and the entry go.
    Orphan,
}

/// The clean-up rule. An entry with a writer is in flight while `now_ms` is before its lease
/// and `alive(pid)` says the writer can still commit; an entry without one (a secret to
/// delete, or one journaled before writers were recorded) never is.
pub(crate) fn fate(entry: &JournalEntry, referenced: bool, now_ms: i64, alive: impl FnOnce(i64) -> bool) -> Fate {
    if let (Some(pid), Some(until)) = (entry.owner_pid, entry.lease_until) {
        if now_ms < until && alive(pid) {
            return Fate::InFlight;
        }
    }
    if referenced {
        Fate::Settled
    } else {
        Fate::Orphan
    }
}

impl Context {
    /// Removes orphan keychain entries (see [`fate`]); returns how many secrets were deleted.
    pub async fn collect_orphans(&self) -> Result<usize, EngineError> {
        let Some(_held) = self.try_lock_data_dir(CLEANUP_WAIT).await? else {
            tracing::warn!("another switchyard process holds the data dir lock; orphan clean-up skipped");
            return Ok(0);
        };
        let mut conn = self.store.acquire().await?;
        let journaled = journal::list(&mut conn).await?;
        if journaled.is_empty() {
            return Ok(0);
        }
        let referenced: HashSet<(String, String)> = profiles::all_locators(&mut conn).await?.into_iter().collect();
        let now = self.now_ms();
        let mut removed = 0;
        for entry in journaled {
            let key = (entry.service.clone(), entry.account.clone());
            match fate(&entry, referenced.contains(&key), now, |pid| writer_alive(pid, &key.0, &key.1)) {
                Fate::InFlight => continue,
                Fate::Settled => {}
                Fate::Orphan => {
                    let loc = Locator { service: entry.service.clone(), account: entry.account.clone() };
                    if self.vault_delete(loc).await? {
                        removed += 1;
                    }
                }
            }
            journal::clear(&mut conn, &entry.service, &entry.account).await?;
        }
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(owner_pid: Option<i64>, lease_until: Option<i64>) -> JournalEntry {
        JournalEntry { service: "s".into(), account: "a".into(), created_at: 0, owner_pid, lease_until }
    }

    #[test]
    fn a_live_writer_within_its_lease_is_left_alone() {
        let e = entry(Some(7), Some(1_000));
        assert_eq!(fate(&e, false, 999, |_| true), Fate::InFlight, "written, not yet committed: not an orphan");
    }

    #[test]
    fn a_dead_writer_or_a_lapsed_lease_makes_an_orphan() {
        let e = entry(Some(7), Some(1_000));
        assert_eq!(fate(&e, false, 999, |_| false), Fate::Orphan, "a writer that died never commits");
        assert_eq!(fate(&e, false, 1_000, |_| true), Fate::Orphan, "past the lease even a live writer lost it");
    }

    #[test]
    fn entries_without_a_writer_follow_the_references() {
        assert_eq!(fate(&entry(None, None), false, 0, |_| true), Fate::Orphan, "a secret to delete goes");
        assert_eq!(fate(&entry(None, None), true, 0, |_| true), Fate::Settled, "a referenced secret stays");
    }

    #[test]
    fn the_writer_is_only_asked_while_the_lease_holds() {
        let e = entry(Some(7), Some(1_000));
        let asked = std::cell::Cell::new(false);
        let _ = fate(&e, false, 5_000, |_| {
            asked.set(true);
            true
        });
        assert!(!asked.get(), "past the lease no process probe is needed");
    }
}
