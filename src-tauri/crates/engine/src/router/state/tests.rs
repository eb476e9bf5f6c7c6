//! One test body for both routing states: what selection relies on — a view, a compare-and-swap
//! that a concurrent decision loses, bindings that read back, pool members, origins, the
//! committed flag — holds whether the state lives in memory ([`LocalState`]) or in a store
//! ([`SharedState`], here over an SQLite file, and over Postgres when `SWITCHYARD_TEST_PG` names
//! a server: `scripts/with-postgres`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use switchyard_core::conversation::{conversation_key, ConversationKey};
use switchyard_core::credential_health::CredentialFacts;
use switchyard_core::routing::{CircuitBoard, ConversationStep, CooldownPolicy, ProfileView, Swrr};
use switchyard_core::turn::ClientIds;
use switchyard_core::Protocol;
use switchyard_store::{Location, Store};

use super::local::LocalState;
use super::shared::SharedState;
use super::{Going, RoutingState, Subject, ViewKeys};
use crate::clock::Clock;

#[derive(Debug)]
struct Fixed(i64);

impl Clock for Fixed {
    fn now_ms(&self) -> i64 {
        self.0
    }
}

const NOW_MS: i64 = 1_800_000_000_000;

fn profiles() -> Vec<ProfileView> {
    ["p1", "p2", "p3"]
        .iter()
        .map(|id| ProfileView {
            id: (*id).to_string(),
            weight: if *id == "p1" { 2 } else { 1 },
            priority: 0,
            enabled: true,
            credential_present: true,
            credential_revision: 1,
            evidence: None,
            credential: CredentialFacts::default(),
        })
        .collect()
}

fn keys<'a>(
    subject: Subject<'a>,
    turn: Option<&'a str>,
    conversation: Option<&'a ConversationKey>,
    now: Instant,
) -> ViewKeys<'a> {
    ViewKeys { subject, model: "m1", turn, conversation, window: Some(Duration::from_secs(600)), now, now_ms: NOW_MS }
}

/// What both implementations must do, in the order selection uses it.
async fn exercise(state: &impl RoutingState, what: &str) {
    let now = Instant::now();
    let profiles = profiles();
    let eligible = [0, 1, 2];
    let body = serde_json::json!({"messages": [{"role": "user", "content": "hello"}]});
    let (conversation, _) = conversation_key(Protocol::Anthropic, "conn", &ClientIds::default(), &body);
    let subject = Subject::Connection { id: "conn-1", profiles: &profiles };
    let k = keys(subject, Some("turn-1"), Some(&conversation), now);

    let mut view = state.read(&k).await.unwrap_or_default();
    assert_eq!((view.turn.as_deref(), view.conversation.as_ref()), (None, None), "{what}: a fresh state binds nothing");
    assert_eq!(view.swrr, Swrr::default(), "{what}: a fresh state has no position");
    assert!(state.advance(&k, &mut view).await.unwrap_or(false), "{what}: a view nobody decided on writes nothing");

    // Two decisions read the same position; the first to write wins, the second decides again.
    let mut a = state.read(&k).await.unwrap_or_default();
    let mut b = state.read(&k).await.unwrap_or_default();
    let first = a.swrr.select(&profiles, &eligible);
    assert!(state.advance(&k, &mut a).await.unwrap_or(false), "{what}: the first decision is written");
    let _ = b.swrr.select(&profiles, &eligible);
    assert!(!state.advance(&k, &mut b).await.unwrap_or(true), "{what}: a decision on a stale position loses");
    assert_eq!(b.swrr, a.swrr, "{what}: the loser's view holds the winner's position");
    let second = b.swrr.select(&profiles, &eligible);
    assert!(state.advance(&k, &mut b).await.unwrap_or(false), "{what}: decided again, it is written");
    let mut picks = vec![first, second];
    for _ in 0..2 {
        let mut v = state.read(&k).await.unwrap_or_default();
        picks.push(v.swrr.select(&profiles, &eligible));
        assert!(state.advance(&k, &mut v).await.unwrap_or(false), "{what}: sequential decisions never race");
    }
    let ids: Vec<&str> = picks.iter().flatten().map(|&i| profiles[i].id.as_str()).collect();
    assert_eq!(
        ids,
        ["p1", "p2", "p3", "p1"],
        "{what}: 2:1:1 in SWRR order over every decision, the lost race included"
    );

    // Bindings read back.
    let going = Going { target: "p2", failover: false, step: ConversationStep::Assigned { index: 1 } };
    state.bind(&k, &view, going).await.unwrap_or_default();
    let view = state.read(&k).await.unwrap_or_default();
    assert_eq!(view.turn.as_deref(), Some("p2"), "{what}: the turn is bound to the going attempt's key");
    let bound = view.conversation.as_ref().map(|c| c.profile_id.as_str());
    assert_eq!(bound, Some("p2"), "{what}: the conversation is kept on it");
    let failover = Going { target: "p3", failover: true, step: ConversationStep::Untracked };
    state.bind(&k, &view, failover).await.unwrap_or_default();
    let view = state.read(&k).await.unwrap_or_default();
    assert_eq!(view.turn.as_deref(), Some("p3"), "{what}: a failover moves the turn");
    let kept = view.conversation.as_ref().map(|c| c.profile_id.as_str());
    assert_eq!(kept, Some("p2"), "{what}: a failover never moves the conversation");

    // A pool's conversation member.
    let pool = keys(Subject::Pool { id: "pool-1" }, None, Some(&conversation), now);
    let view = state.read(&pool).await.unwrap_or_default();
    assert!(view.conversation.is_none(), "{what}: no member yet");
    let member = Going { target: "conn-a=m1", failover: false, step: ConversationStep::Assigned { index: 0 } };
    state.bind(&pool, &view, member).await.unwrap_or_default();
    let view = state.read(&pool).await.unwrap_or_default();
    let kept = view.conversation.as_ref().map(|c| c.profile_id.as_str());
    assert_eq!(kept, Some("conn-a=m1"), "{what}: the pool conversation is kept on its member");
    assert!(view.turn.is_none(), "{what}: a pool has no turn binding");

    // Origins and the committed flag.
    state.remember_origin("conn-1", "resp_1", "p1", now, NOW_MS);
    for _ in 0..50 {
        if state.origin("conn-1", "resp_1", now, NOW_MS).await.is_some() {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(state.origin("conn-1", "resp_1", now, NOW_MS).await.as_deref(), Some("p1"), "{what}: origin kept");
    assert_eq!(state.origin("conn-2", "resp_1", now, NOW_MS).await, None, "{what}: origins are per connection");
    assert!(!state.committed("turn-1", now), "{what}: no output yet");
    state.commit("turn-1", now);
    assert!(state.committed("turn-1", now), "{what}: the turn is committed once output went out");
}

async fn shared_on(location: Location) -> Option<Arc<SharedState>> {
    let store = Store::open_at(&location).await.ok()?;
    let board = Arc::new(CircuitBoard::new(CooldownPolicy::default()));
    Some(SharedState::start(store, board, Arc::new(Fixed(NOW_MS)), Duration::from_secs(30)))
}

#[tokio::test]
async fn the_local_state_keeps_what_selection_relies_on() {
    exercise(&LocalState::default(), "local").await;
}

#[tokio::test]
async fn the_shared_state_keeps_what_selection_relies_on() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let state = shared_on(Location::File(dir.path().join("store.db"))).await;
    let state = state.unwrap_or_else(|| panic!("an SQLite store opens"));
    exercise(state.as_ref(), "shared on SQLite").await;
    let Ok(server) = std::env::var("SWITCHYARD_TEST_PG") else { return };
    let name = format!("sy_state_{:x}", std::process::id());
    let url = switchyard_store::ensure_postgres_database(server.trim(), &name).await;
    let url = url.unwrap_or_else(|e| panic!("the test database: {e}"));
    let state = shared_on(Location::Postgres(url)).await.unwrap_or_else(|| panic!("Postgres opens"));
    exercise(state.as_ref(), "shared on Postgres").await;
}

#[tokio::test]
async fn two_replicas_on_one_store_share_positions_and_bindings() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let location = Location::File(dir.path().join("store.db"));
    let (Some(a), Some(b)) = (shared_on(location.clone()).await, shared_on(location).await) else {
        panic!("both replicas open the store")
    };
    let profiles = profiles();
    let now = Instant::now();
    let k = keys(Subject::Connection { id: "conn-1", profiles: &profiles }, Some("t"), None, now);
    let mut on_a = a.read(&k).await.unwrap_or_default();
    let mut on_b = b.read(&k).await.unwrap_or_default();
    let _ = on_a.swrr.select(&profiles, &[0, 1, 2]);
    assert!(a.advance(&k, &mut on_a).await.unwrap_or(false), "replica a decides first");
    let _ = on_b.swrr.select(&profiles, &[0, 1, 2]);
    assert!(!b.advance(&k, &mut on_b).await.unwrap_or(true), "replica b's decision on the old position loses");
    let going = Going { target: "p1", failover: false, step: ConversationStep::Untracked };
    a.bind(&k, &on_a, going).await.unwrap_or_default();
    let seen = b.read(&k).await.unwrap_or_default();
    assert_eq!(seen.turn.as_deref(), Some("p1"), "replica b reads the turn replica a bound");
}

#[test]
fn the_local_state_forgets_a_connection_s_positions() {
    let state = LocalState::default();
    let profiles = profiles();
    let k = keys(Subject::Connection { id: "conn-1", profiles: &profiles }, None, None, Instant::now());
    let mut view = state.view(&k);
    let _ = view.swrr.select(&profiles, &[0, 1, 2]);
    assert!(state.write_position(&k, &mut view), "written");
    assert_ne!(state.view(&k).swrr, Swrr::default(), "the position is kept");
    state.forget(Subject::Connection { id: "conn-1", profiles: &profiles });
    assert_eq!(state.view(&k).swrr, Swrr::default(), "a changed mode starts the position afresh");
}
