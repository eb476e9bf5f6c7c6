//! Background re-verification (issue 16.5): while the relay runs, keys whose evidence is older
//! than half its max age — of connections whose routing reads evidence (a routed mode, or a
//! hop of an activated fallback chain; never plain legacy, issue 27) — are verified again — the models listing only, never a deep check —
//! exactly as `switchyard verify SLUG PROFILE` records it, so routing lapses only when a key
//! really stopped working, not because a week passed. Bounded concurrency, a per-key jitter
//! (so keys verified together are not re-verified together) and a doubling backoff after a
//! pass that recorded no evidence. Time is the engine's clock: a test steps a manual clock.
//! The relay's `Service` owns the task ([`ReverifyTask`]); [`Engine::reverify_plan`] is what
//! front ends show (last checked, next due).

pub use crate::views::KeyCheck;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::stream::{self, StreamExt};
use switchyard_core::RoutingMode;
use switchyard_store::connections::ConnectionRow;
use switchyard_store::fallback::{self, ChainRow};
use switchyard_store::{connections, evidence, profiles};

use crate::clock::rfc3339;
use crate::context::Context;
use crate::engine::Engine;
use crate::error::EngineError;

/// Keys re-verified at once.
pub const REVERIFY_CONCURRENCY: usize = 2;
/// How often (real time) the task looks for due keys.
pub const REVERIFY_POLL: Duration = Duration::from_secs(30);
/// The first retry after a failed re-verification; doubles per failure.
pub const REVERIFY_BACKOFF_MS: i64 = 5 * 60 * 1000;

/// What one background pass did to one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reverified {
    pub slug: String,
    pub profile_id: String,
    /// The verify outcome (`verified`, `auth_invalid`, `unverified`).
    pub outcome: String,
}

/// Per key: consecutive failures and when the next try is allowed (engine-clock ms).
#[derive(Debug, Default)]
pub struct Backoff {
    keys: Mutex<HashMap<String, (u32, i64)>>,
}

impl Backoff {
    fn get(&self, id: &str) -> Option<(u32, i64)> {
        self.keys.lock().unwrap_or_else(PoisonError::into_inner).get(id).copied()
    }

    fn set(&self, id: &str, failed: bool, now_ms: i64, cap_ms: i64) {
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        if !failed {
            keys.remove(id);
            return;
        }
        let n = keys.get(id).map_or(0, |(n, _)| *n) + 1;
        let wait = REVERIFY_BACKOFF_MS.saturating_mul(1 << (n - 1).min(16)).min(cap_ms.max(REVERIFY_BACKOFF_MS));
        keys.insert(id.to_string(), (n, now_ms + wait + jitter(id, wait / 10)));
    }
}

/// A stable spread in `0..span` per key.
fn jitter(id: &str, span: i64) -> i64 {
    if span <= 0 {
        return 0;
    }
    let h = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    i64::try_from(h % u64::try_from(span).unwrap_or(1)).unwrap_or(0)
}

/// When evidence taken at `verified_at` is due again: half the max age, plus up to a tenth of
/// it per key (never later than 60 % of the max age, well before it goes stale).
fn due_at(id: &str, verified_at: i64, max_age_ms: i64) -> i64 {
    verified_at + max_age_ms / 2 + jitter(id, max_age_ms / 10)
}

/// The background task; dropping it stops it.
#[derive(Debug)]
pub struct ReverifyTask {
    handle: tokio::task::JoinHandle<()>,
    /// Passes done (tests wait on it instead of sleeping).
    passes: tokio::sync::watch::Receiver<u64>,
}

impl Drop for ReverifyTask {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

impl ReverifyTask {
    /// Starts re-verifying `engine`'s keys on the current tokio runtime, looking every `poll`.
    pub fn start(engine: Arc<Engine>, poll: Duration) -> Self {
        let backoff = Arc::new(Backoff::default());
        let (done, passes) = tokio::sync::watch::channel(0u64);
        let handle = tokio::spawn(async move {
            loop {
                tokio::time::sleep(poll).await;
                if let Err(e) = engine.reverify_due(&backoff).await {
                    tracing::warn!(code = e.code().as_str(), "background re-verification pass failed");
                }
                done.send_modify(|n| *n += 1);
            }
        });
        ReverifyTask { handle, passes }
    }

    /// Waits until `n` more passes have run from now (each reads the clock afresh).
    pub async fn passes(&self, n: u64) {
        let mut passes = self.passes.clone();
        let from = *passes.borrow_and_update();
        let _ = passes.wait_for(|&done| done >= from + n).await;
    }
}

impl Context {
    /// One background pass: verifies (listing only) every enabled key whose evidence is due
    /// and which is not backing off; returns what it did.
    pub async fn reverify_due(&self, backoff: &Backoff) -> Result<Vec<Reverified>, EngineError> {
        let max_age = self.max_evidence_age_ms().await?;
        let now = self.now_ms();
        let mut due: Vec<(String, String)> = Vec::new();
        {
            let mut conn = self.store.acquire().await?;
            let all = connections::list(&mut conn).await?;
            let wanted = needs_evidence(&all, &fallback::all(&mut conn).await?);
            for c in all.iter().filter(|c| wanted.contains(c.id.as_str())) {
                let rows = profiles::for_connection(&mut conn, &c.id).await?;
                let ev = evidence::for_connection(&mut conn, &c.id).await?;
                for p in rows.iter().filter(|p| p.enabled) {
                    let Some(e) = ev.iter().find(|e| e.profile_id == p.id) else { continue };
                    // A key refused as invalid stays so until someone replaces or re-verifies it.
                    if e.outcome != "ok" || due_at(&p.id, e.verified_at, max_age) > now {
                        continue;
                    }
                    if backoff.get(&p.id).is_some_and(|(_, next)| next > now) {
                        continue;
                    }
                    due.push((c.slug.clone(), p.id.clone()));
                }
            }
        }
        let done: Vec<Reverified> = stream::iter(due)
            .map(|(slug, id)| async move {
                let outcome = match self.verify(&slug, Some(&id), false, &|_| {}).await {
                    Ok(report) => {
                        report.results.first().map_or_else(|| "unverified".to_string(), |r| r.outcome.to_string())
                    }
                    Err(e) => {
                        tracing::warn!(code = e.code().as_str(), "background re-verification failed");
                        "unverified".to_string()
                    }
                };
                backoff.set(&id, outcome != "verified", self.now_ms(), max_age / 4);
                tracing::info!(%slug, profile = %id, %outcome, "key re-verified in the background");
                Reverified { slug, profile_id: id, outcome }
            })
            .buffer_unordered(REVERIFY_CONCURRENCY)
            .collect()
            .await;
        Ok(done)
    }

    /// When each key of `slug` was last checked and when the background check is due.
    pub async fn reverify_plan(&self, slug: &str) -> Result<Vec<KeyCheck>, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let max_age = self.max_evidence_age_ms().await?;
        let mut conn = self.store.acquire().await?;
        let checked = needs_evidence(&connections::list(&mut conn).await?, &fallback::all(&mut conn).await?)
            .contains(connection.id.as_str());
        let rows = profiles::for_connection(&mut conn, &connection.id).await?;
        let ev = evidence::for_connection(&mut conn, &connection.id).await?;
        Ok(rows
            .iter()
            .map(|p| {
                let e = ev.iter().find(|e| e.profile_id == p.id);
                KeyCheck {
                    profile_id: p.id.clone(),
                    label: p.label.clone(),
                    last_checked: e.map(|e| rfc3339(e.verified_at)),
                    next_due: e
                        .filter(|e| checked && e.outcome == "ok" && p.enabled)
                        .map(|e| rfc3339(due_at(&p.id, e.verified_at, max_age))),
                }
            })
            .collect())
    }
}

/// The connections whose evidence routing reads, by id: a routed mode (balanced or priority,
/// active or suspended — verification is what restores a suspended one), an imported mode
/// waiting for its gates, and the hops of an activated (or imported activated) fallback chain,
/// whose gates read the hops' evidence. A legacy connection is routed to its primary whatever
/// its evidence says, so its key is not called in the background (a legacy chain source
/// included: its primary's health decides).
fn needs_evidence<'a>(all: &'a [ConnectionRow], chains: &[ChainRow]) -> HashSet<&'a str> {
    let routed = all
        .iter()
        .filter(|c| c.routing_mode.parse::<RoutingMode>().ok() != Some(RoutingMode::Legacy) || c.wanted_mode.is_some());
    let hops: HashSet<String> = chains
        .iter()
        .filter(|r| r.active || r.wanted)
        .flat_map(|r| crate::readiness::fallback::decode_hops(r).into_iter().map(|(id, _)| id))
        .collect();
    routed.chain(all.iter().filter(|c| hops.contains(&c.id))).map(|c| c.id.as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_times_spread_between_half_and_six_tenths_of_the_max_age() {
        let max = 7 * 24 * 3_600_000;
        for id in ["p_1", "p_2", "p_abc", "p_zzz"] {
            let due = due_at(id, 0, max);
            assert!((max / 2..max * 6 / 10).contains(&due), "{id}: due at {due}, between 50 % and 60 % of {max}");
        }
        assert_ne!(due_at("p_1", 0, max), due_at("p_2", 0, max), "keys verified together are spread");
    }

    #[test]
    fn backoff_doubles_and_a_success_clears_it() {
        let b = Backoff::default();
        b.set("p", true, 0, i64::MAX);
        let first = b.get("p").map(|(_, t)| t).unwrap_or_default();
        b.set("p", true, 0, i64::MAX);
        let second = b.get("p").map(|(_, t)| t).unwrap_or_default();
        assert!(first >= REVERIFY_BACKOFF_MS && second >= 2 * REVERIFY_BACKOFF_MS, "{first} then {second}");
        b.set("p", false, 0, i64::MAX);
        assert_eq!(b.get("p"), None, "a success forgets the failures");
    }
}
