//! Quota readings through the engine: what the router observes is written off the request
//! path (periodically and at shutdown), survives a restart with its age, keeps unknown values
//! unknown, marks readings whose window has reset as stale, and never carries a secret. A
//! manual clock steps time; the memory vault holds the keys.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use crate::common::ManualClock;
use switchyard_core::Protocol;
use switchyard_engine::{Engine, NewConnection, NewProfile, Router, Secret, MAX_QUOTA_READINGS, QUOTA_FLUSH_EVERY};
use switchyard_vault::MemoryVault;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const CANARY: &str = "sk-canary-3c9e1a7f5b2d4e60";

/// 2027-01-15T08:00:00Z.
const T0: i64 = 1_800_000_000_000;

impl ManualClock {
    fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

async fn open(dir: &std::path::Path, clock: &Arc<ManualClock>) -> Result<Arc<Engine>, Box<dyn std::error::Error>> {
    Ok(Arc::new(Engine::open_with(dir, Arc::new(MemoryVault::new()), clock.clone()).await?))
}

/// An Anthropic connection `c` with profiles `a` (primary) and `b`; returns their ids.
async fn seed(engine: &Engine) -> Result<(String, String), Box<dyn std::error::Error>> {
    let conn = NewConnection {
        slug: "c".into(),
        protocol: "anthropic".into(),
        base_url: "https://api.example.com".into(),
        models: vec!["m1".into()],
        ..Default::default()
    };
    let detail = engine.connection_add(conn, Some(Secret::new(format!("{CANARY}-a")))).await?;
    let a = detail.profiles.first().map(|p| p.id.clone()).ok_or("the key is the primary profile")?;
    let p = NewProfile { label: "b".into(), weight: None, priority: None };
    let b = engine.profile_add("c", p, Secret::new(format!("{CANARY}-b"))).await?.id;
    Ok((a, b))
}

/// What the routing loop does with an answer's limit headers (the transport reads them into
/// windows dated by the engine clock; the loop keeps them on the router's board).
fn observe<H: switchyard_providers::HeaderSource + ?Sized>(
    router: &Router,
    profile: &str,
    model: Option<&str>,
    headers: &H,
) {
    let now_ms = router.engine().now_ms();
    let now = std::time::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(now_ms).unwrap_or_default());
    let windows = switchyard_providers::read_quota(Protocol::Anthropic, headers, now);
    if !windows.is_empty() {
        router.quota_board().record(profile, model, windows, now_ms);
    }
}

/// A data dir, a manual clock at [`T0`], the engine on them with [`seed`]'s connection (the
/// ids of `a` and `b`) and a router over it.
async fn started(
) -> Result<(tempfile::TempDir, Arc<ManualClock>, Arc<Engine>, (String, String), Arc<Router>), Box<dyn std::error::Error>>
{
    let dir = tempfile::tempdir()?;
    let clock = Arc::new(ManualClock(AtomicI64::new(T0)));
    let engine = open(dir.path(), &clock).await?;
    let ids = seed(&engine).await?;
    let router = Arc::new(Router::start(engine.clone()));
    Ok((dir, clock, engine, ids, router))
}

fn rfc3339(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms).map(|t| format!("{t:.3}")).unwrap_or_default()
}

/// Anthropic API-key headers: `remaining` of 50 requests, resetting `reset_in_ms` from `now`.
fn api_headers(remaining: u32, now: i64, reset_in_ms: i64) -> Vec<(String, String)> {
    vec![
        ("anthropic-ratelimit-requests-limit".into(), "50".into()),
        ("anthropic-ratelimit-requests-remaining".into(), remaining.to_string()),
        ("anthropic-ratelimit-requests-reset".into(), rfc3339(now + reset_in_ms)),
        ("anthropic-ratelimit-tokens-limit".into(), "garbage".into()),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readings_survive_a_restart_with_their_age_and_stale_ones_say_so() -> TestResult {
    let (dir, clock, engine, (a, b), router) = started().await?;

    observe(&router, &a, Some("m1"), api_headers(49, T0, 60_000).as_slice());
    clock.advance(1_000);
    let t1 = T0 + 1_000;
    observe(&router, &a, Some("m1"), api_headers(48, t1, 3_600_000).as_slice());
    let unified = [
        ("anthropic-ratelimit-unified-5h-utilization", "0.25".to_string()),
        ("anthropic-ratelimit-unified-5h-reset", ((t1 + 120_000) / 1000).to_string()),
        ("anthropic-ratelimit-unified-5h-status", CANARY.to_string()),
    ];
    observe(&router, &b, Some("m1"), &unified[..]);
    observe(&router, &b, Some("m1"), &[("content-type", "application/json")][..]);
    router.flush().await;
    drop(router);
    engine.close().await;
    drop(engine);

    clock.advance(300_000);
    let engine = open(dir.path(), &clock).await?;
    let view = engine.quota("c").await?;
    assert_eq!(view.profiles.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(), [&a, &b], "every profile, in order");

    let pa = &view.profiles[0];
    let names: Vec<(&str, Option<&str>)> = pa.windows.iter().map(|w| (w.name.as_str(), w.model.as_deref())).collect();
    assert_eq!(names, [("requests", Some("m1")), ("tokens", Some("m1"))], "per-model windows under the model called");
    let req = &pa.windows[0];
    assert_eq!((req.limit, req.remaining), (Some(50), Some(48)), "the latest reading won");
    assert_eq!(req.seen_at, rfc3339(t1), "seen_at is when the answer came, kept across the restart");
    assert_eq!(req.age_secs, 300, "its age counts from then");
    assert_eq!(req.resets_at.as_deref(), Some(rfc3339(t1 + 3_600_000).as_str()), "the reset is kept");
    assert!(!req.stale, "the window has not reset yet");
    let tokens = &pa.windows[1];
    assert_eq!(
        (tokens.limit, tokens.remaining, tokens.utilization, tokens.resets_at.as_deref()),
        (None, None, None, None),
        "a malformed limit is unknown, not 0"
    );

    let pb = &view.profiles[1];
    assert_eq!(pb.windows.len(), 1, "an answer without limit headers changes nothing");
    let five = &pb.windows[0];
    assert_eq!((five.name.as_str(), five.model.as_deref()), ("unified_5h", None), "account-wide: no model");
    assert_eq!(five.utilization, Some(0.25), "utilization kept");
    assert_eq!(five.status, None, "a key-shaped status is never stored");
    assert!(five.stale, "the 5 h window reset 3 min after the reading: it no longer holds");
    assert_eq!(five.resets_in_secs, Some(-180), "it reset 180 s ago");

    let text = serde_json::to_string(&view)?;
    assert!(!text.contains("sk-canary"), "no secret in the quota view: {text}");
    let db = crate::common::store_bytes(dir.path()).await;
    assert!(!String::from_utf8_lossy(&db).contains(CANARY), "no secret in the database");
    engine.close().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changed_readings_are_written_periodically_off_the_request_path() -> TestResult {
    let (_dir, _clock, engine, (a, _), router) = started().await?;
    observe(&router, &a, Some("m1"), api_headers(7, T0, 60_000).as_slice());
    assert!(engine.quota("c").await?.profiles[0].windows.is_empty(), "observing writes nothing on the request path");
    // The writer's tick is real time (a tokio interval, not a routing decision): wait for
    // its next pass, not for a guessed duration.
    let mut passes = router.quota_writer_passes();
    let seen = *passes.borrow_and_update();
    tokio::time::timeout(QUOTA_FLUSH_EVERY * 3, passes.wait_for(|&n| n > seen))
        .await
        .map_err(|_| format!("the writer runs every {QUOTA_FLUSH_EVERY:?}"))??;
    let windows = engine.quota("c").await?.profiles[0].windows.clone();
    let requests = windows.iter().find(|w| w.name == "requests").ok_or("the periodic writer stored the reading")?;
    assert_eq!(requests.remaining, Some(7), "the periodic writer stored the reading");
    router.flush().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readings_for_client_chosen_model_names_stay_within_the_cap_in_the_store_too() -> TestResult {
    let (_dir, clock, engine, (a, _), router) = started().await?;
    // A client names a new model on every call; each answer reports a per-model window. The
    // memory forgets the oldest; what it wrote before must not stay behind for ever.
    for round in 0..3 {
        for i in 0..MAX_QUOTA_READINGS / 2 {
            let model = format!("model-{round}-{i}");
            observe(&router, &a, Some(&model), api_headers(7, T0, 60_000).as_slice());
            clock.advance(1);
        }
        router.flush_quota().await;
    }
    assert!(router.quota_board().len() <= MAX_QUOTA_READINGS, "memory keeps its cap");
    let stored: usize = engine.quota("c").await?.profiles.iter().map(|p| p.windows.len()).sum();
    assert!(stored <= MAX_QUOTA_READINGS, "the store keeps the same cap: {stored} rows for {MAX_QUOTA_READINGS}");
    let newest = format!("model-2-{}", MAX_QUOTA_READINGS / 2 - 1);
    let kept = engine.quota("c").await?.profiles[0].windows.iter().any(|w| w.model.as_deref() == Some(newest.as_str()));
    assert!(kept, "the newest readings are the ones kept");
    router.flush().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_connection_is_not_found() -> TestResult {
    let dir = tempfile::tempdir()?;
    let clock = Arc::new(ManualClock(AtomicI64::new(T0)));
    let engine = open(dir.path(), &clock).await?;
    let err = engine.quota("nope").await.err().ok_or("an unknown slug must fail")?;
    assert_eq!(err.code(), switchyard_engine::ErrorCode::NotFound, "exit 4 in the CLI");
    Ok(())
}
