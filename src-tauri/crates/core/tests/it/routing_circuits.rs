//! Circuit and probe-lease tests under concurrency: single-flight half-open probes with
//! 1,000 racing tasks, cancelled holders, resets by credential replacement / disable /
//! deletion, backoff on failed probes, and a simulated restart from persisted snapshots.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::fixture::NOW;
use switchyard_core::routing::{
    Admission, CircuitBoard, CircuitHealth, CircuitSnapshot, CooldownPolicy, Exclusion, Failure, FailureKind,
    PersistedState, ProbeLease, ResetCause, Scope,
};
use tokio::sync::{oneshot, Barrier};

const M: &str = "gpt-test";

fn rate_limit_until(until_ms: i64) -> Failure {
    Failure::new(FailureKind::RateLimited, Scope::Credential).with_retry_at(Some(until_ms))
}

/// A board whose credential circuit for "a" is half-open at NOW.
fn half_open_board() -> Arc<CircuitBoard> {
    let board = Arc::new(CircuitBoard::default());
    let opened = board.record_failure("a", M, &rate_limit_until(NOW), NOW - 10_000);
    assert!(opened.is_some(), "a rate limit opens the credential circuit");
    board
}

fn claim(board: &Arc<CircuitBoard>) -> Option<ProbeLease> {
    match board.admit("a", M, NOW) {
        Admission::Probe(lease) => Some(lease),
        _ => None,
    }
}

fn blocked_reason(board: &Arc<CircuitBoard>) -> Option<Exclusion> {
    match board.admit("a", M, NOW) {
        Admission::Blocked(r) => Some(r),
        _ => None,
    }
}

#[test]
fn the_board_and_leases_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<CircuitBoard>();
    send_sync::<ProbeLease>();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_tasks_race_for_one_probe_and_exactly_one_wins() {
    let board = half_open_board();
    let barrier = Arc::new(Barrier::new(1_000));
    let winners = Arc::new(AtomicUsize::new(0));
    let in_flight = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..1_000 {
        let (board, barrier) = (Arc::clone(&board), Arc::clone(&barrier));
        let (winners, in_flight) = (Arc::clone(&winners), Arc::clone(&in_flight));
        tasks.push(tokio::spawn(async move {
            let admission = board.admit("a", M, NOW);
            match &admission {
                Admission::Probe(_) => {
                    winners.fetch_add(1, Ordering::SeqCst);
                }
                Admission::Blocked(Exclusion::ProbeInFlight) => {
                    in_flight.fetch_add(1, Ordering::SeqCst);
                }
                other => {
                    panic!("a half-open circuit admits a probe or says probe_in_flight: {other:?}")
                }
            }
            // Everyone holds what they got until all have tried.
            barrier.wait().await;
            drop(admission);
        }));
    }
    for t in tasks {
        assert!(t.await.is_ok(), "no task panicked");
    }
    assert_eq!(winners.load(Ordering::SeqCst), 1, "exactly one task may claim the half-open probe");
    assert_eq!(in_flight.load(Ordering::SeqCst), 999, "all others see probe_in_flight");
    assert!(claim(&board).is_some(), "the winner dropped its lease unresolved: claimable again");
}

/// Decrements a holder count when dropped; declared after the lease so it drops first.
struct Holder(Arc<AtomicUsize>);
impl Drop for Holder {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn probes_stay_single_flight_while_holders_are_cancelled() {
    let board = half_open_board();
    let holders = Arc::new(AtomicUsize::new(0));
    let overlaps = Arc::new(AtomicUsize::new(0));
    let claims = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for i in 0..1_000 {
        let board = Arc::clone(&board);
        let (holders, overlaps, claims) = (Arc::clone(&holders), Arc::clone(&overlaps), Arc::clone(&claims));
        tasks.push(tokio::spawn(async move {
            for _ in 0..20 {
                if let Some(lease) = claim(&board) {
                    if holders.fetch_add(1, Ordering::SeqCst) != 0 {
                        overlaps.fetch_add(1, Ordering::SeqCst);
                    }
                    let _holder = Holder(Arc::clone(&holders));
                    claims.fetch_add(1, Ordering::SeqCst);
                    if i % 2 == 0 {
                        // Hold the lease across an await point: the task may be aborted here.
                        tokio::task::yield_now().await;
                    }
                    drop(_holder);
                    drop(lease);
                }
                tokio::task::yield_now().await;
            }
        }));
    }
    // Cancel every third task wherever it is (mid-probe or not).
    for t in tasks.iter().step_by(3) {
        t.abort();
    }
    for t in tasks {
        let _ = t.await;
    }
    assert_eq!(overlaps.load(Ordering::SeqCst), 0, "two holders of one probe at once");
    assert!(claims.load(Ordering::SeqCst) > 0, "the test exercised claims");
    assert_eq!(holders.load(Ordering::SeqCst), 0, "every holder went away");
    assert!(claim(&board).is_some(), "after cancelled and finished holders the circuit must be claimable again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_task_holding_the_probe_releases_it() {
    let board = half_open_board();
    for round in 0..50 {
        let (tx, rx) = oneshot::channel();
        let b = Arc::clone(&board);
        let task = tokio::spawn(async move {
            let lease = claim(&b);
            let _ = tx.send(lease.is_some());
            std::future::pending::<()>().await;
            drop(lease);
        });
        assert_eq!(rx.await.ok(), Some(true), "round {round}: the task claimed the probe");
        assert_eq!(
            blocked_reason(&board),
            Some(Exclusion::ProbeInFlight),
            "while the task holds the lease nobody else may probe"
        );
        task.abort();
        assert!(task.await.is_err_and(|e| e.is_cancelled()), "the task was cancelled");
        assert!(claim(&board).is_some(), "round {round}: a dropped future must not leave the circuit claimed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replacement_disable_and_deletion_release_claims() {
    for cause in [ResetCause::CredentialReplaced, ResetCause::Disabled, ResetCause::Deleted] {
        let board = half_open_board();
        let (tx, rx) = oneshot::channel();
        let (release_tx, release_rx) = oneshot::channel::<()>();
        let b = Arc::clone(&board);
        let holder = tokio::spawn(async move {
            let lease = claim(&b);
            let _ = tx.send(lease.is_some());
            let _ = release_rx.await;
            // The stale lease resolves after the reset: it must not touch the new circuit.
            lease.map(ProbeLease::succeed).unwrap_or_default()
        });
        assert_eq!(rx.await.ok(), Some(true), "{cause:?}: the holder claimed the probe");

        board.reset_profile("a", cause);
        assert!(
            matches!(board.admit("a", M, NOW), Admission::Closed),
            "{cause:?}: a reset closes the circuits and releases the claim"
        );

        assert!(board.record_failure("a", M, &rate_limit_until(NOW), NOW - 1).is_some(), "reopen");
        let fresh = claim(&board);
        assert!(fresh.is_some(), "{cause:?}: the re-opened circuit is claimable despite the old lease");

        let _ = release_tx.send(());
        let stale = holder.await.unwrap_or_default();
        assert!(stale.is_empty(), "{cause:?}: the stale lease changed nothing");
        assert_eq!(
            blocked_reason(&board),
            Some(Exclusion::ProbeInFlight),
            "{cause:?}: the new claim survives the stale lease's resolution"
        );
        drop(fresh);
        assert!(claim(&board).is_some(), "{cause:?}: and is released by its own drop");
    }
}

#[test]
fn failed_probes_double_the_backoff_and_success_closes() {
    let board = Arc::new(CircuitBoard::default());
    let rl = Failure::new(FailureKind::RateLimited, Scope::Credential);
    let snap = board.record_failure("a", M, &rl, NOW);
    assert_eq!(snap.and_then(|s| s.until_ms), Some(NOW + 30_000), "first cooldown is 30 s");

    let t1 = NOW + 30_000;
    let lease = match board.admit("a", M, t1) {
        Admission::Probe(l) => l,
        other => panic!("cooldown over: expected the probe, got {other:?}"),
    };
    let changed = lease.fail(&rl, t1);
    assert_eq!(
        changed.first().map(|s| (s.until_ms, s.backoff_level)),
        Some((Some(t1 + 60_000), 1)),
        "a failed probe re-opens with doubled backoff"
    );
    assert!(
        matches!(board.admit("a", M, t1 + 59_999), Admission::Blocked(Exclusion::CircuitOpen)),
        "still cooling one ms before the doubled cooldown ends"
    );

    let t2 = t1 + 60_000;
    let lease = match board.admit("a", M, t2) {
        Admission::Probe(l) => l,
        other => panic!("second cooldown over: expected the probe, got {other:?}"),
    };
    let closed = lease.succeed();
    assert_eq!(closed.first().map(|s| s.state), Some(PersistedState::Closed), "a successful probe closes the circuit");
    let again = board.record_failure("a", M, &rl, t2);
    assert_eq!(
        again.map(|s| (s.until_ms, s.backoff_level)),
        Some((Some(t2 + 30_000), 0)),
        "after closing, the backoff starts over at 30 s"
    );
}

#[test]
fn a_provider_failure_during_a_probe_only_releases_it() {
    let board = half_open_board();
    let lease = claim(&board);
    let changed = lease.map(|l| l.fail(&Failure::new(FailureKind::ServerError, Scope::Provider), NOW));
    assert_eq!(changed, Some(vec![]), "a 5xx proves nothing about the credential");
    assert!(claim(&board).is_some(), "the circuit is half-open and claimable again");
}

#[test]
fn auth_invalid_has_no_time_end_until_reverified() {
    let board = Arc::new(CircuitBoard::default());
    let auth = Failure::new(FailureKind::AuthInvalid, Scope::Credential);
    assert!(board.record_failure("a", M, &auth, NOW).is_some(), "opens");
    let year_later = NOW + 365 * 24 * 3_600_000;
    assert!(
        matches!(board.admit("a", M, year_later), Admission::Blocked(Exclusion::AuthInvalid)),
        "an invalid credential never half-opens by time"
    );
    board.reset_profile("a", ResetCause::Reverified);
    assert!(matches!(board.admit("a", M, year_later), Admission::Closed), "re-verification closes it");
}

#[test]
fn a_restart_keeps_cooldowns_and_forgets_claims() {
    let board = half_open_board();
    let forbidden = Failure::new(FailureKind::ModelForbidden, Scope::CredentialModel);
    assert!(board.record_failure("b", M, &forbidden, NOW).is_some(), "b/model opens");
    assert!(board.record_failure("c", M, &rate_limit_until(NOW + 60_000), NOW).is_some(), "c opens");
    let held = claim(&board);
    assert!(held.is_some(), "a's probe is claimed before the restart");

    let persisted = serde_json::to_string(&board.snapshots()).unwrap_or_default();
    assert!(!persisted.contains("claim"), "claims are never part of the persisted shape");
    let rows: Vec<CircuitSnapshot> = serde_json::from_str(&persisted).unwrap_or_default();
    assert_eq!(rows.len(), 3, "three open circuits were persisted");
    std::mem::forget(held); // the old process dies without running destructors

    let restarted = Arc::new(CircuitBoard::restore(CooldownPolicy::default(), rows));
    assert!(
        matches!(restarted.admit("a", M, NOW), Admission::Probe(_)),
        "no claim survives a restart: the half-open circuit is claimable"
    );
    assert_eq!(
        restarted.health("c", M, NOW).credential,
        CircuitHealth::Open { kind: FailureKind::RateLimited, until_ms: Some(NOW + 60_000) },
        "the cooldown and its wall-clock end survive the restart"
    );
    assert!(
        matches!(restarted.admit("b", M, NOW), Admission::Blocked(Exclusion::ModelCircuitOpen)),
        "the model circuit survives the restart"
    );
    assert!(matches!(restarted.admit("b", "other-model", NOW), Admission::Closed), "and still only for that model");
}

/// A shared store's row for "a" (credential-wide), open until `until_ms`.
fn stored_open(until_ms: i64) -> CircuitSnapshot {
    CircuitSnapshot {
        profile_id: "a".into(),
        model: String::new(),
        state: PersistedState::Open,
        kind: Some(FailureKind::RateLimited),
        until_ms: Some(until_ms),
        backoff_level: 0,
    }
}

#[test]
fn a_sync_brings_another_replicas_cooldown_and_its_close() {
    let board = Arc::new(CircuitBoard::default());
    board.sync_profiles(["a", "b"], [(stored_open(NOW + 60_000), false)]);
    assert_eq!(blocked_reason(&board), Some(Exclusion::CircuitOpen), "a cooldown set elsewhere blocks here");
    board.sync_profiles(["a", "b"], []);
    assert!(matches!(board.admit("a", M, NOW), Admission::Closed), "no row any more: closed here too");
}

#[test]
fn a_probe_lease_held_by_another_replica_admits_no_probe_here_until_a_sync_clears_it() {
    let board = Arc::new(CircuitBoard::default());
    board.sync_profiles(["a"], [(stored_open(NOW), true)]);
    assert_eq!(blocked_reason(&board), Some(Exclusion::ProbeInFlight), "the lease is held elsewhere");
    board.sync_profiles(["a"], [(stored_open(NOW), false)]);
    let lease = claim(&board).expect("the lease ended: this replica may probe");
    // A sync while our probe is in flight keeps our claim, so the probe's outcome still lands.
    board.sync_profiles(["a"], [(stored_open(NOW), false)]);
    assert_eq!(blocked_reason(&board), Some(Exclusion::ProbeInFlight), "our own probe is still in flight");
    let closed = lease.succeed();
    assert_eq!(closed.len(), 1, "the probe's success closes the circuit it claimed before the sync");
    assert!(matches!(board.admit("a", M, NOW), Admission::Closed), "closed after the probe");
}

#[test]
fn a_refused_shared_claim_marks_the_circuit_held_elsewhere() {
    let board = half_open_board();
    let lease = claim(&board).expect("the local claim");
    drop(lease);
    board.mark_held_elsewhere("a", None);
    assert_eq!(blocked_reason(&board), Some(Exclusion::ProbeInFlight), "the store said another replica probes");
}
