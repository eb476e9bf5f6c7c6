//! The `quota` table on a real SQLite file: unknown values stay NULL, a newer reading wins,
//! an older or orphaned one is skipped, and readings go with their profile.

use switchyard_store::connections::{self, Definition};
use switchyard_store::profiles::{self, NewProfile};
use switchyard_store::quota::{self, QuotaRow};
use switchyard_store::{Store, StoreError};

async fn seeded() -> Result<(tempfile::TempDir, Store), StoreError> {
    let dir = tempfile::tempdir().map_err(|e| StoreError::Corrupt { table: "tmp", detail: e.to_string() })?;
    let store = Store::open(&dir.path().join("t.db")).await?;
    let mut conn = store.acquire().await?;
    let def = Definition {
        protocol: "anthropic".into(),
        base_url: "https://api.example.com".into(),
        headers_json: "[]".into(),
        models_json: "[\"m\"]".into(),
        mapping_json: "{}".into(),
        basis_fingerprint: "f".repeat(64),
    };
    connections::insert(&mut conn, "c1", "main", &def, 1).await?;
    for (id, primary) in [("p1", true), ("p2", false)] {
        let p = NewProfile {
            id,
            connection_id: "c1",
            label: id,
            weight: 1,
            priority: 0,
            enabled: true,
            is_primary: primary,
            locator: None,
        };
        profiles::insert(&mut conn, &p, 1).await?;
    }
    drop(conn);
    Ok((dir, store))
}

fn reading(profile: &str, name: &str, model: &str, remaining: Option<i64>, seen_at_ms: i64) -> QuotaRow {
    QuotaRow {
        profile_id: profile.into(),
        name: name.into(),
        model: model.into(),
        limit_value: Some(50),
        remaining,
        utilization: None,
        resets_at_ms: None,
        status: None,
        window_minutes: None,
        seen_at_ms,
        claim: None,
        base_seen_at_ms: None,
        base_utilization: None,
    }
}

#[tokio::test]
async fn the_newest_reading_per_window_wins_and_unknowns_stay_null() -> Result<(), StoreError> {
    let (_dir, store) = seeded().await?;
    let mut conn = store.acquire().await?;
    let account = QuotaRow {
        limit_value: None,
        utilization: Some(0.42),
        resets_at_ms: Some(9_000),
        status: Some("allowed".into()),
        ..reading("p1", "unified_5h", "", None, 10)
    };
    let rows =
        vec![reading("p1", "requests", "m", Some(49), 10), reading("p2", "requests", "m", Some(30), 10), account];
    assert_eq!(quota::upsert_batch(&mut conn, &rows).await?, 3, "three new readings are stored");
    let newer = reading("p1", "requests", "m", Some(48), 20);
    let older = reading("p2", "requests", "m", Some(5), 5);
    assert_eq!(quota::upsert_batch(&mut conn, &[newer.clone(), older]).await?, 1, "only the newer reading is written");
    let stored = quota::for_connection(&mut conn, "c1").await?;
    assert_eq!(stored.len(), 3, "one row per (profile, window, model)");
    assert_eq!(stored[0], newer, "p1 requests: the newer reading replaced the older one");
    assert_eq!(stored[1].remaining, None, "p1 unified_5h: unknown remaining stays NULL, not 0");
    assert_eq!(stored[1].utilization, Some(0.42), "p1 unified_5h: utilization round-trips");
    assert_eq!(stored[2].remaining, Some(30), "p2 requests: an older reading never replaces a newer one");
    Ok(())
}

#[tokio::test]
async fn the_claim_and_the_forecast_base_round_trip_and_follow_the_newest_reading() -> Result<(), StoreError> {
    let (_dir, store) = seeded().await?;
    let mut conn = store.acquire().await?;
    let overall = QuotaRow {
        limit_value: None,
        status: Some("rejected".into()),
        claim: Some("seven_day_opus".into()),
        ..reading("p1", "unified", "", None, 10)
    };
    let five = QuotaRow {
        limit_value: None,
        utilization: Some(0.5),
        base_seen_at_ms: Some(1),
        base_utilization: Some(0.25),
        ..reading("p1", "unified_5h", "", None, 10)
    };
    quota::upsert_batch(&mut conn, &[overall.clone(), five.clone()]).await?;
    let stored = quota::for_connection(&mut conn, "c1").await?;
    assert_eq!(stored, [overall, five.clone()], "the claim and the base are stored as written (migration 0009)");
    let next =
        QuotaRow { base_seen_at_ms: Some(5), base_utilization: Some(0.3), ..reading("p1", "unified_5h", "", None, 20) };
    quota::upsert_batch(&mut conn, std::slice::from_ref(&next)).await?;
    let stored = quota::for_connection(&mut conn, "c1").await?;
    assert_eq!(stored[1], next, "a newer reading brings its own base (none of the old one's values stay)");
    Ok(())
}

#[tokio::test]
async fn readings_of_deleted_profiles_are_skipped_and_removed() -> Result<(), StoreError> {
    let (_dir, store) = seeded().await?;
    let mut conn = store.acquire().await?;
    quota::upsert_batch(&mut conn, &[reading("p2", "requests", "m", Some(1), 1)]).await?;
    let rev = profiles::by_id(&mut conn, "p2").await?.map(|p| p.revision).unwrap_or_default();
    profiles::delete(&mut conn, "p2", rev).await?;
    assert!(quota::for_connection(&mut conn, "c1").await?.is_empty(), "a profile's readings go with it");
    let late = [reading("p2", "requests", "m", Some(0), 2), reading("gone", "requests", "", Some(0), 2)];
    assert_eq!(
        quota::upsert_batch(&mut conn, &late).await?,
        0,
        "a late write for a deleted profile is skipped, not an error"
    );
    Ok(())
}

#[tokio::test]
async fn a_reset_clears_its_scope_and_no_reading_seen_before_it_comes_back() -> Result<(), StoreError> {
    let (_dir, store) = seeded().await?;
    let mut conn = store.acquire().await?;
    let rows = [
        reading("p1", "requests", "m", Some(0), 10),
        reading("p1", "requests", "n", Some(0), 10),
        reading("p1", "unified_5h", "", Some(0), 10),
        reading("p2", "requests", "m", Some(0), 10),
    ];
    quota::upsert_batch(&mut conn, &rows).await?;
    assert_eq!(quota::clear(&mut conn, "p1", Some("m"), 20).await?, 1, "a reset of model m clears p1's m window");
    assert_eq!(quota::clear(&mut conn, "p2", None, 20).await?, 1, "a reset of p2 clears all of p2");
    let left: Vec<(String, String, String)> =
        quota::for_connection(&mut conn, "c1").await?.into_iter().map(|r| (r.profile_id, r.name, r.model)).collect();
    let want = [("p1", "requests", "n"), ("p1", "unified_5h", "")].map(|(p, n, m)| (p.into(), n.into(), m.into()));
    assert_eq!(left, want, "listings never show the markers");
    let late = [reading("p1", "requests", "m", Some(0), 15), reading("p2", "unified_5h", "", Some(0), 20)];
    assert_eq!(quota::upsert_batch(&mut conn, &late).await?, 0, "readings seen before the reset are not written back");
    let after = [reading("p1", "requests", "m", Some(3), 21), reading("p2", "requests", "m", Some(4), 21)];
    assert_eq!(quota::upsert_batch(&mut conn, &after).await?, 2, "readings seen after it are");
    let resets = quota::resets(&mut conn).await?;
    let got: Vec<(&str, &str, i64)> =
        resets.iter().map(|r| (r.profile_id.as_str(), r.model.as_str(), r.at_ms)).collect();
    assert_eq!(got, [("p1", "m", 20), ("p2", "", 20)], "the resets, for a running relay's memory");
    Ok(())
}

#[tokio::test]
async fn prune_keeps_the_newest_readings_and_every_marker() -> Result<(), StoreError> {
    let (_dir, store) = seeded().await?;
    let mut conn = store.acquire().await?;
    let rows: Vec<QuotaRow> = (0..10).map(|i| reading("p1", "requests", &format!("m{i}"), Some(1), i)).collect();
    quota::upsert_batch(&mut conn, &rows).await?;
    quota::clear(&mut conn, "p2", None, 1).await?;
    assert_eq!(quota::prune(&mut conn, 4).await?, 6, "all but the four newest readings go");
    let models: Vec<String> = quota::for_connection(&mut conn, "c1").await?.into_iter().map(|r| r.model).collect();
    assert_eq!(models, ["m6", "m7", "m8", "m9"], "the newest are kept");
    assert_eq!(quota::resets(&mut conn).await?.len(), 1, "a marker is not a reading: pruning keeps it");
    Ok(())
}
