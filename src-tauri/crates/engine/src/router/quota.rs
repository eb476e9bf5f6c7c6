//! Quota readings the relay sees go by: the latest reading per (profile, window, model), with
//! the time it was seen, in a bounded map the request path only inserts into. A background
//! task writes the readings that changed to the `quota` table every [`FLUSH_EVERY`] (and
//! `Router::flush` writes the rest), so a restart shows the last known state with its age.
//! `Engine::quota` shows them (`crate::report::quota`); quota-aware selection judges them
//! (`QuotaBoard::blocks`, read by `select.rs` when the connection turned it on). Each writer
//! pass first drops the readings a `health reset` (of any process) cleared, and after writing
//! keeps the stored readings under the same cap as the memory ([`MAX_READINGS`]): readings of
//! client-chosen model names cannot pile up in either.
//!
//! Forecasting: each reading keeps its window's recent history (`switchyard_providers::quota::
//! History`: at most one sample per 5 min over the last hour, started over when the window
//! rolls over — its reset moved a minute or more — or refills), and the row written carries
//! the history's base, the first reading of the last hour, so the quota view (any process)
//! forecasts "runs out at" from two facts: the base and the latest reading. A reading whose
//! reset moved less than a minute is the same window (jitter): it updates the one reading.
//! After a restart the history starts empty (the base comes back within the hour).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use switchyard_core::lru::Lru;

use switchyard_core::routing::{ProfileView as RouteProfile, QuotaBlocks, QuotaPolicy, QuotaReading};
use switchyard_providers::quota::History;
use switchyard_providers::QuotaWindow;
use switchyard_store::quota::{self, QuotaReset, QuotaRow};
use switchyard_store::Store;

use crate::router::state::{RoutingState, States};
use crate::router::Router;

/// Readings kept in memory, and in the store; past it the oldest one is forgotten (the store
/// drops its oldest at the next write).
pub const MAX_READINGS: usize = 4096;

/// How often changed readings are written.
pub const FLUSH_EVERY: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    profile_id: String,
    name: &'static str,
    /// `''` for a window of the whole account.
    model: String,
}

#[derive(Debug, Clone)]
struct Reading {
    window: QuotaWindow,
    seen_at_ms: i64,
    /// Not written since it changed.
    dirty: bool,
    /// The window's recent readings in its current period (the forecast's base).
    history: History,
}

/// The latest readings, shared by the request path and the writer.
#[derive(Debug)]
pub struct QuotaBoard {
    /// Bounded: the least recently recorded reading goes first (readings are recorded in
    /// the order they are seen).
    readings: Mutex<Lru<Key, Reading>>,
    /// The instant the board was made (the LRU's use order needs one; nothing expires).
    started: Instant,
    /// Periodic writer passes done (tests wait on it instead of sleeping through the tick).
    passes: tokio::sync::watch::Sender<u64>,
}

impl Default for QuotaBoard {
    fn default() -> Self {
        QuotaBoard {
            readings: Mutex::new(Lru::new(MAX_READINGS, None)),
            started: Instant::now(),
            passes: tokio::sync::watch::channel(0).0,
        }
    }
}

impl QuotaBoard {
    fn lock(&self) -> std::sync::MutexGuard<'_, Lru<Key, Reading>> {
        self.readings.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `windows` as the latest readings of `profile_id`; per-model windows under `model`.
    pub fn record(&self, profile_id: &str, model: Option<&str>, windows: Vec<QuotaWindow>, seen_at_ms: i64) {
        let mut map = self.lock();
        // No idle expiry: the instant only orders the entries, so the board's own start will do.
        let now = self.started;
        for window in windows {
            let model = if window.per_model { model.unwrap_or_default() } else { "" };
            let key = Key { profile_id: profile_id.to_string(), name: window.name, model: model.to_string() };
            // The same windows come back with every answer: update in place (no key copy).
            match map.get_mut(&key, now) {
                Some(kept) => {
                    kept.history.record(seen_at_ms, window.utilization, window.resets_at_ms);
                    (kept.window, kept.seen_at_ms, kept.dirty) = (window, seen_at_ms, true);
                }
                None => {
                    let mut history = History::default();
                    history.record(seen_at_ms, window.utilization, window.resets_at_ms);
                    map.insert(key, Reading { window, seen_at_ms, dirty: true, history }, now);
                }
            }
        }
    }

    /// Takes readings another replica wrote to a shared store (`rows`, read back) where this
    /// board has none as new for their key; they are not written again from here. Returns the
    /// newest `seen_at_ms` among `rows` (where the next read starts, less a margin).
    pub(crate) fn adopt(&self, rows: &[QuotaRow]) -> Option<i64> {
        let mut map = self.lock();
        let now = self.started;
        for r in rows {
            let Some((name, per_model, family)) = switchyard_providers::quota::kind::window_named(&r.name) else {
                continue;
            };
            let minutes = r.window_minutes.and_then(|m| u32::try_from(m).ok());
            let Some(kind) = switchyard_providers::quota::kind_of(name, minutes) else { continue };
            let key = Key { profile_id: r.profile_id.clone(), name, model: r.model.clone() };
            if map.peek_mut(&key, now).is_some_and(|kept| kept.seen_at_ms >= r.seen_at_ms) {
                continue;
            }
            let window = QuotaWindow {
                name,
                kind,
                per_model,
                family,
                limit: r.limit_value.and_then(|v| u64::try_from(v).ok()),
                remaining: r.remaining.and_then(|v| u64::try_from(v).ok()),
                utilization: r.utilization,
                resets_at_ms: r.resets_at_ms,
                status: r.status.clone(),
                window_minutes: minutes,
                claim: r.claim.clone(),
            };
            let mut history = History::default();
            if let (Some(at), Some(u)) = (r.base_seen_at_ms, r.base_utilization) {
                history.record(at, Some(u), r.resets_at_ms);
            }
            history.record(r.seen_at_ms, r.utilization, r.resets_at_ms);
            map.insert(key, Reading { window, seen_at_ms: r.seen_at_ms, dirty: false, history }, now);
        }
        rows.iter().map(|r| r.seen_at_ms).max()
    }

    /// The readings changed since the last call, as rows, now marked written.
    fn take_changed(&self) -> Vec<(Key, QuotaRow)> {
        let mut map = self.lock();
        map.iter_mut()
            .filter(|(_, r)| r.dirty)
            .map(|(k, r)| {
                r.dirty = false;
                (k.clone(), row(k, r))
            })
            .collect()
    }

    /// Marks rows that could not be written as changed again, unless a newer reading came.
    fn retry_later(&self, rows: Vec<(Key, QuotaRow)>) {
        let mut map = self.lock();
        for (key, r) in rows {
            let reading = map.peek_mut(&key, self.started);
            if let Some(reading) = reading.filter(|reading| reading.seen_at_ms == r.seen_at_ms) {
                reading.dirty = true;
            }
        }
    }

    /// The blocks `policy` puts on `profiles` at `now_ms` from the latest readings (empty when
    /// the policy is off: the map is not even looked at).
    pub fn blocks(&self, profiles: &[RouteProfile], policy: &QuotaPolicy, now_ms: i64) -> QuotaBlocks {
        let mut blocks = QuotaBlocks::default();
        if !policy.enabled {
            return blocks;
        }
        let map = self.lock();
        for (k, r) in map.iter().filter(|(k, _)| profiles.iter().any(|p| p.id == k.profile_id)) {
            let w = &r.window;
            let reading = QuotaReading {
                limit: w.limit,
                remaining: w.remaining,
                utilization: w.utilization,
                resets_at_ms: w.resets_at_ms,
                status: w.status.as_deref(),
            };
            match w.family {
                Some(family) => blocks.judge_family(policy, &k.profile_id, family, &reading, now_ms),
                None => blocks.judge(policy, &k.profile_id, &k.model, &reading, now_ms),
            }
        }
        blocks
    }

    /// Forgets the readings seen at or before a reset of their profile (and model).
    fn apply_resets(&self, resets: &[QuotaReset]) {
        if resets.is_empty() {
            return;
        }
        self.lock().retain(|k, r| {
            !resets.iter().any(|x| {
                x.profile_id == k.profile_id && (x.model.is_empty() || x.model == k.model) && r.seen_at_ms <= x.at_ms
            })
        });
    }

    /// How many readings are kept.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn row(k: &Key, r: &Reading) -> QuotaRow {
    let w = &r.window;
    let base = r.history.base();
    QuotaRow {
        profile_id: k.profile_id.clone(),
        name: k.name.to_string(),
        model: k.model.clone(),
        limit_value: w.limit.and_then(|v| i64::try_from(v).ok()),
        remaining: w.remaining.and_then(|v| i64::try_from(v).ok()),
        utilization: w.utilization,
        resets_at_ms: w.resets_at_ms,
        status: w.status.clone(),
        window_minutes: w.window_minutes.map(i64::from),
        seen_at_ms: r.seen_at_ms,
        claim: w.claim.clone(),
        base_seen_at_ms: base.map(|b| b.at_ms),
        base_utilization: base.map(|b| b.utilization),
    }
}

/// Drops what a `health reset` cleared, then writes the changed readings of `board` and keeps
/// the stored ones under [`MAX_READINGS`]. Nothing is read or written while the board is empty.
pub(crate) async fn write_changed(board: &QuotaBoard, store: &Store) {
    if board.is_empty() {
        return;
    }
    let mut conn = match store.acquire().await {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "quota readings not written; retrying later");
            return;
        }
    };
    match quota::resets(&mut conn).await {
        Ok(resets) => board.apply_resets(&resets),
        Err(e) => tracing::warn!(error = %e, "quota resets not read; retrying later"),
    }
    let changed = board.take_changed();
    if changed.is_empty() {
        return;
    }
    let rows: Vec<QuotaRow> = changed.iter().map(|(_, r)| r.clone()).collect();
    match quota::upsert_batch(&mut conn, &rows).await {
        Ok(_) => {
            if let Err(e) = quota::prune(&mut conn, MAX_READINGS).await {
                tracing::warn!(error = %e, "old quota readings not pruned; retrying at the next write");
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, rows = rows.len(), "quota readings not written; retrying later");
            board.retry_later(changed);
        }
    }
}

/// Spawns the writer on the current tokio runtime; it ends when the board is dropped. Each pass
/// also takes the readings other replicas wrote (`RoutingState::adopt_quota`: nothing when the
/// state is this process's own), so quota-aware selection on every replica judges every
/// replica's readings within about two passes.
pub(crate) fn spawn_writer(board: &Arc<QuotaBoard>, store: Store, state: &Arc<States>) {
    let board = Arc::downgrade(board);
    let state = Arc::downgrade(state);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(FLUSH_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        let mut since = 0;
        loop {
            tick.tick().await;
            let (Some(board), Some(state)) = (board.upgrade(), state.upgrade()) else { break };
            write_changed(&board, &store).await;
            since = state.adopt_quota(&board, since).await;
            board.passes.send_modify(|n| *n += 1);
        }
    });
}

impl Router {
    /// The number of periodic quota writer passes done so far, as it changes (every
    /// [`FLUSH_EVERY`]); a pass writes the readings that changed since the last one.
    pub fn quota_writer_passes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.quota.passes.subscribe()
    }

    /// Writes every changed quota reading now (the writer does it every [`FLUSH_EVERY`]).
    pub async fn flush_quota(&self) {
        write_changed(&self.quota, &self.engine.store).await;
    }

    /// The in-memory readings (for tests and diagnostics).
    pub fn quota_board(&self) -> &QuotaBoard {
        &self.quota
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An enabled profile of weight 1 whose key is there (no evidence: the board ignores it).
    fn present_profile(id: &str) -> RouteProfile {
        RouteProfile {
            id: id.to_string(),
            weight: 1,
            priority: 0,
            enabled: true,
            credential_present: true,
            credential: Default::default(),
            credential_revision: 1,
            evidence: None,
        }
    }

    fn window(name: &'static str, per_model: bool, remaining: u64) -> QuotaWindow {
        QuotaWindow {
            name,
            kind: switchyard_providers::quota::kind_of(name, None)
                .unwrap_or(switchyard_providers::WindowKind::Requests),
            per_model,
            family: switchyard_providers::quota::family_of(name),
            limit: Some(100),
            remaining: Some(remaining),
            utilization: None,
            resets_at_ms: None,
            status: None,
            window_minutes: None,
            claim: None,
        }
    }

    /// A subscription window `used` (share) that resets at `reset`.
    fn used(name: &'static str, used: f64, reset: i64) -> QuotaWindow {
        QuotaWindow {
            limit: None,
            remaining: None,
            utilization: Some(used),
            resets_at_ms: Some(reset),
            ..window(name, false, 0)
        }
    }

    /// The stored row of `profile`'s window `name` (account-wide), as the writer would write it.
    fn row_of(board: &QuotaBoard, profile: &str, name: &str) -> Option<QuotaRow> {
        board.lock().iter().find(|(k, _)| k.profile_id == profile && k.name == name).map(|(k, r)| row(k, r))
    }

    #[test]
    fn the_base_is_the_first_reading_of_the_last_hour_and_jitter_keeps_one_window() {
        const H: i64 = 3_600_000;
        let board = QuotaBoard::default();
        let reset = 10 * H;
        board.record("p1", Some("m1"), vec![used("codex_5h", 0.25, reset)], 0);
        board.record("p1", Some("m1"), vec![used("codex_5h", 0.40, reset + 30_000)], H / 2);
        board.record("p1", Some("m1"), vec![used("codex_5h", 0.50, reset - 20_000)], H);
        assert_eq!(board.len(), 1, "one window, whatever the jitter of its reset");
        let r = row_of(&board, "p1", "codex_5h").expect("kept");
        assert_eq!(
            (r.base_seen_at_ms, r.base_utilization, r.seen_at_ms, r.utilization),
            (Some(0), Some(0.25), H, Some(0.5)),
            "the base is the first reading of the last hour; the latest is the reading"
        );
        board.record("p1", Some("m1"), vec![used("codex_5h", 0.05, reset + 5 * H)], H + 60_000);
        let r = row_of(&board, "p1", "codex_5h").expect("kept");
        assert_eq!(
            r.base_seen_at_ms,
            Some(H + 60_000),
            "a reset five hours on is the next window: the base starts over"
        );
    }

    #[test]
    fn a_family_window_blocks_its_models_only() {
        let board = QuotaBoard::default();
        let spent = QuotaWindow { status: Some("rejected".into()), ..used("unified_7d_opus", 1.0, 60) };
        board.record("p1", Some("claude-sonnet-4"), vec![spent], 1);
        let profiles = [present_profile("p1")];
        let blocks = board.blocks(&profiles, &QuotaPolicy { enabled: true, reserve_pct: 0 }, 10);
        assert_eq!(blocks.until("p1", "claude-opus-4", 10), Some(60), "the Opus window blocks Opus models");
        assert_eq!(blocks.until("p1", "claude-sonnet-4", 10), None, "not Sonnet, though a Sonnet answer reported it");
    }

    #[test]
    fn the_latest_reading_per_window_and_model_is_kept_and_written_once() {
        let board = QuotaBoard::default();
        board.record("p1", Some("m1"), vec![window("requests", true, 9), window("unified_5h", false, 1)], 1);
        board.record("p1", Some("m2"), vec![window("requests", true, 5), window("unified_5h", false, 0)], 2);
        board.record("p1", Some("m1"), vec![window("requests", true, 8)], 3);
        assert_eq!(board.len(), 3, "requests per model; the account window once, whatever the model");
        let mut rows: Vec<QuotaRow> = board.take_changed().into_iter().map(|(_, r)| r).collect();
        rows.sort_by(|x, y| (&x.name, &x.model).cmp(&(&y.name, &y.model)));
        let got: Vec<(&str, &str, Option<i64>, i64)> =
            rows.iter().map(|r| (r.name.as_str(), r.model.as_str(), r.remaining, r.seen_at_ms)).collect();
        assert_eq!(
            got,
            [("requests", "m1", Some(8), 3), ("requests", "m2", Some(5), 2), ("unified_5h", "", Some(0), 2)],
            "the latest reading of each key, with when it was seen"
        );
        assert!(board.take_changed().is_empty(), "written readings are not written again until they change");
        board.record("p1", None, vec![window("unified_5h", false, 3)], 4);
        assert_eq!(board.take_changed().len(), 1, "only the changed one");
    }

    #[test]
    fn blocks_come_from_the_latest_reading_and_only_when_on() {
        let board = QuotaBoard::default();
        let reset = |mut w: QuotaWindow| {
            w.resets_at_ms = Some(60);
            w
        };
        board.record("p1", Some("m1"), vec![reset(window("requests", true, 0))], 1);
        board.record("p2", Some("m1"), vec![reset(window("requests", true, 3))], 1);
        board.record("other", Some("m1"), vec![reset(window("requests", true, 0))], 1);
        let profiles: Vec<RouteProfile> = ["p1", "p2"].iter().map(|id| present_profile(id)).collect();
        let on = QuotaPolicy { enabled: true, reserve_pct: 0 };
        let blocks = board.blocks(&profiles, &on, 10);
        assert_eq!(blocks.until("p1", "m1", 10), Some(60), "p1 has nothing left for m1");
        assert_eq!(blocks.until("p2", "m1", 10), None, "p2 has requests left");
        assert_eq!(blocks.until("other", "m1", 10), None, "keys of other connections are not looked at");
        assert!(board.blocks(&profiles, &QuotaPolicy::default(), 10).is_empty(), "off: nothing is blocked");
        board.record("p1", Some("m1"), vec![reset(window("requests", true, 40))], 2);
        assert!(board.blocks(&profiles, &on, 10).is_empty(), "a newer reading with room replaces the exhausted one");
    }

    #[test]
    fn the_map_is_bounded_and_forgets_the_oldest() {
        let board = QuotaBoard::default();
        for i in 0..MAX_READINGS + 10 {
            let seen = i64::try_from(i).unwrap_or(i64::MAX);
            board.record(&format!("p{i}"), None, vec![window("requests", false, 1)], seen);
        }
        assert_eq!(board.len(), MAX_READINGS, "never more than MAX_READINGS readings");
        let keys: Vec<String> = board.lock().iter().map(|(k, _)| k.profile_id.clone()).collect();
        assert!(!keys.iter().any(|k| k == "p0" || k == "p9"), "the oldest readings went first");
        assert!(keys.iter().any(|k| k == &format!("p{}", MAX_READINGS + 9)), "the newest stays");
    }

    #[test]
    fn a_reset_forgets_the_readings_seen_before_it_in_its_scope() {
        let board = QuotaBoard::default();
        board.record("p1", Some("m1"), vec![window("requests", true, 0), window("unified_5h", false, 0)], 1);
        board.record("p1", Some("m2"), vec![window("requests", true, 0)], 1);
        board.record("p2", Some("m1"), vec![window("requests", true, 0)], 1);
        let reset = |model: &str, at_ms| QuotaReset { profile_id: "p1".into(), model: model.into(), at_ms };
        board.apply_resets(&[reset("m1", 1)]);
        let mut left: Vec<(String, &str, String)> =
            board.lock().iter().map(|(k, _)| (k.profile_id.clone(), k.name, k.model.clone())).collect();
        left.sort();
        let want = [
            ("p1".to_string(), "requests", "m2".to_string()),
            ("p1".to_string(), "unified_5h", String::new()),
            ("p2".to_string(), "requests", "m1".to_string()),
        ];
        assert_eq!(left, want, "a reset of m1 clears p1's m1 windows only");
        board.record("p1", Some("m2"), vec![window("requests", true, 0)], 5);
        board.apply_resets(&[reset("", 4)]);
        let left: Vec<i64> =
            board.lock().iter().filter(|(k, _)| k.profile_id == "p1").map(|(_, r)| r.seen_at_ms).collect();
        assert_eq!(left, [5], "a reset of the whole profile clears what came before it, not what came after");
    }

    #[test]
    fn a_failed_write_is_retried_unless_a_newer_reading_came() {
        let board = QuotaBoard::default();
        board.record("p1", None, vec![window("requests", false, 9), window("tokens", false, 9)], 1);
        let changed = board.take_changed();
        board.record("p1", None, vec![window("tokens", false, 4)], 2);
        board.retry_later(changed);
        let mut again: Vec<(String, Option<i64>)> =
            board.take_changed().into_iter().map(|(_, r)| (r.name, r.remaining)).collect();
        again.sort();
        assert_eq!(
            again,
            [("requests".to_string(), Some(9)), ("tokens".to_string(), Some(4))],
            "the unwritten reading is retried; the newer one replaces the older"
        );
    }

    #[test]
    fn a_replica_adopts_another_replicas_readings_but_never_over_a_newer_one_of_its_own() {
        let (writer, reader) = (QuotaBoard::default(), QuotaBoard::default());
        writer.record("a", Some("m1"), vec![window("requests", false, 3)], 1_000);
        let rows: Vec<QuotaRow> = writer.take_changed().into_iter().map(|(_, r)| r).collect();
        reader.record("b", None, vec![window("requests", false, 50)], 5_000);
        reader.take_changed();
        assert_eq!(reader.adopt(&rows), Some(1_000), "the newest reading seen is where the next read starts");
        assert_eq!(reader.len(), 2, "the other replica's reading of 'a' is kept beside its own of 'b'");
        assert!(reader.take_changed().is_empty(), "an adopted reading is not written again from here");
        let stale = QuotaRow { profile_id: "b".into(), seen_at_ms: 4_000, remaining: Some(0), ..rows[0].clone() };
        reader.adopt(&[stale]);
        let kept = reader
            .lock()
            .peek_mut(&Key { profile_id: "b".into(), name: "requests", model: String::new() }, reader.started)
            .map(|r| r.window.remaining);
        assert_eq!(kept, Some(Some(50)), "an older reading from elsewhere does not replace a newer one seen here");
    }
}
