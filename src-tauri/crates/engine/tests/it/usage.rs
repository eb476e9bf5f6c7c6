//! Usage, cost and the ledger export through the engine on a real SQLite file: sums equal the
//! ledger rows they come from (property test over random ledgers), a missing price makes a
//! cost unknown and the result incomplete, a key's monthly fee is spread over that month's
//! tokens, days follow the user's time zone across DST changes, tags are summed per
//! name=value, and the export hands over every row past the old 10 000 listing cap, page by
//! page. Rows are written straight into the ledger table (the relay journey in
//! relay/tests/tags.rs covers how they get there).

use std::collections::BTreeMap;
use std::sync::atomic::AtomicI64;
use std::sync::Arc;

use crate::common::ManualClock;
use proptest::prelude::*;
use switchyard_engine::{Engine, NewConnection, NewPrice, NewProfile, Secret, UsageBy, UsageRow};
use switchyard_store::attempts::{self, AttemptRow};
use switchyard_store::Store;
use switchyard_vault::MemoryVault;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const CANARY: &str = "sk-canary-usage-7d1f3b9a2c4e6f80";

/// 2026-11-15T12:00:00Z.
const NOW: i64 = 1_795_262_400_000;

struct Fixture {
    _dir: tempfile::TempDir,
    engine: Engine,
    store: Store,
    connection_id: String,
    a: String,
    b: String,
}

/// An Anthropic connection `c` with profiles `a` (primary) and `b`; a second handle on the
/// same database file writes ledger rows.
async fn fixture() -> Result<Fixture, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let clock = Arc::new(ManualClock(AtomicI64::new(NOW)));
    let engine = Engine::open_with(dir.path(), Arc::new(MemoryVault::new()), clock).await?;
    let conn = NewConnection {
        slug: "c".into(),
        protocol: "anthropic".into(),
        base_url: "https://api.example.com".into(),
        models: vec!["m1".into(), "m2".into()],
        ..Default::default()
    };
    let detail = engine.connection_add(conn, Some(Secret::new(format!("{CANARY}-a")))).await?;
    let a = detail.profiles.first().map(|p| p.id.clone()).ok_or("the key is the primary profile")?;
    let p = NewProfile { label: "b".into(), weight: None, priority: None };
    let b = engine.profile_add("c", p, Secret::new(format!("{CANARY}-b"))).await?.id;
    let store = Store::open_at(&switchyard_engine::store_location(dir.path()).await?).await?;
    let connection_id = detail.connection.id.clone();
    Ok(Fixture { _dir: dir, engine, store, connection_id, a, b })
}

fn ms(text: &str) -> i64 {
    text.parse::<jiff::Timestamp>().map(|t| t.as_millisecond()).unwrap_or(0)
}

fn row(f: &Fixture, profile: &str, at_ms: i64, model: Option<&str>, tokens: [Option<i64>; 4]) -> AttemptRow {
    AttemptRow {
        at_ms,
        connection_id: f.connection_id.clone(),
        turn: format!("t{at_ms}"),
        attempt: 1,
        profile_id: profile.to_string(),
        reason: "swrr".into(),
        model: model.map(str::to_string),
        status: Some(200),
        ttfb_ms: Some(5),
        duration_ms: Some(9),
        input_tokens: tokens[0],
        output_tokens: tokens[1],
        cache_read_tokens: tokens[2],
        cache_write_tokens: tokens[3],
        ..Default::default()
    }
}

async fn insert(f: &Fixture, rows: &[AttemptRow]) -> TestResult {
    let mut conn = f.store.acquire().await?;
    attempts::insert_batch(&mut conn, rows.to_vec()).await?;
    Ok(())
}

fn by_key(rows: &[UsageRow]) -> BTreeMap<String, UsageRow> {
    rows.iter().map(|r| (r.key.clone(), r.clone())).collect()
}

fn price(input: f64, output: f64, cache_read: Option<f64>, cache_write: Option<f64>) -> NewPrice {
    NewPrice { input, output, cache_read, cache_write }
}

#[tokio::test]
async fn a_missing_price_makes_the_cost_unknown_and_the_total_incomplete() -> TestResult {
    let f = fixture().await?;
    let (a, b) = (f.a.clone(), f.b.clone());
    insert(
        &f,
        &[
            row(&f, &a, NOW - 1000, Some("m1"), [Some(1000), Some(2000), Some(10_000), Some(4000)]),
            row(&f, &b, NOW - 900, Some("m2"), [Some(10), Some(20), None, None]),
        ],
    )
    .await?;
    let none = f.engine.usage("c", None, UsageBy::Model).await?;
    assert!(!none.complete, "no price at all: incomplete");
    assert!(none.rows.iter().all(|r| r.cost_usd.is_none()), "no price, no cost: {:?}", none.rows);

    f.engine.set_price("m1", price(3.0, 15.0, Some(0.3), Some(3.75))).await?;
    let one = f.engine.usage("c", None, UsageBy::Model).await?;
    let rows = by_key(&one.rows);
    let m1 = rows.get("m1").and_then(|r| r.cost_usd).ok_or("m1 has a price now")?;
    // 1000 * 3 + 2000 * 15 + 10 000 * 0.3 + 4000 * 3.75 = 51 000 micro-USD.
    assert!((m1 - 0.051).abs() < 1e-12, "m1 costs exactly its tokens at its price: {m1}");
    assert_eq!(rows.get("m2").map(|r| r.cost_usd), Some(None), "m2 still has no price: unknown, not 0");
    assert_eq!(one.total.cost_usd, None, "a total with an unknown part is unknown");
    assert!(!one.complete, "m2 has no price: the result says it is incomplete");

    f.engine.set_price("m2", price(1.0, 2.0, None, None)).await?;
    let all = f.engine.usage("c", None, UsageBy::Profile).await?;
    assert!(all.complete, "every model priced and no cache tokens without a cache price");
    let total = all.total.cost_usd.ok_or("complete means a total")?;
    assert!((total - (0.051 + 0.000_05)).abs() < 1e-12, "total is the sum of the rows: {total}");

    // A cache count without a cache price is unknown too.
    f.engine.set_price("m1", price(3.0, 15.0, None, Some(3.75))).await?;
    let partial = f.engine.usage("c", None, UsageBy::Model).await?;
    assert_eq!(by_key(&partial.rows).get("m1").map(|r| r.cost_usd), Some(None), "cache reads without a price");
    assert!(!partial.complete);

    // An answer that reported no usage cannot be costed; a failure without usage costs nothing.
    f.engine.set_price("m1", price(3.0, 15.0, Some(0.3), Some(3.75))).await?;
    let mut failed = row(&f, &a, NOW - 500, Some("m1"), [None; 4]);
    failed.status = Some(429);
    failed.failure_kind = Some("rate_limited".into());
    insert(&f, &[failed]).await?;
    let with_failure = f.engine.usage("c", None, UsageBy::Profile).await?;
    assert!(with_failure.complete, "a failed attempt without usage costs nothing, known");
    assert_eq!(by_key(&with_failure.rows).get(&a).map(|r| (r.requests, r.errors)), Some((2, 1)));
    insert(&f, &[row(&f, &a, NOW - 400, Some("m1"), [None; 4])]).await?;
    let silent = f.engine.usage("c", None, UsageBy::Profile).await?;
    assert!(!silent.complete, "a 200 that reported no usage has an unknown cost");
    Ok(())
}

#[tokio::test]
async fn a_monthly_fee_is_spread_over_that_months_tokens() -> TestResult {
    let f = fixture().await?;
    f.engine.set_time_zone("UTC").await?;
    let b = f.b.clone();
    f.engine.set_key_fee("c", "b", Some(100.0)).await?;
    insert(
        &f,
        &[
            row(&f, &b, ms("2026-10-02T10:00:00Z"), Some("m1"), [Some(500), Some(250), None, None]),
            row(&f, &b, ms("2026-10-20T10:00:00Z"), Some("m1"), [Some(200), Some(50), None, None]),
            row(&f, &b, ms("2026-11-03T10:00:00Z"), Some("m1"), [Some(7), Some(3), None, None]),
        ],
    )
    .await?;
    let days = f.engine.usage("c", None, UsageBy::Day).await?;
    let rows = by_key(&days.rows);
    let cost = |day: &str| rows.get(day).and_then(|r| r.cost_usd).unwrap_or(f64::NAN);
    assert!((cost("2026-10-02") - 75.0).abs() < 1e-9, "750 of October's 1000 tokens: 75 of 100 USD");
    assert!((cost("2026-10-20") - 25.0).abs() < 1e-9, "250 of 1000: 25 USD");
    assert!((cost("2026-11-03") - 100.0).abs() < 1e-9, "November's only tokens carry November's fee");
    assert!(days.complete, "a fee key needs no model price");

    // A range starting mid-month still spreads over the whole month's tokens.
    let late = f.engine.usage("c", Some("2026-10-10T00:00:00Z"), UsageBy::Profile).await?;
    let b_cost = by_key(&late.rows).get(&b).and_then(|r| r.cost_usd).ok_or("b has usage")?;
    assert!((b_cost - 125.0).abs() < 1e-9, "25 (Oct 20, its share of October) + 100 (November): {b_cost}");

    f.engine.set_key_fee("c", "b", None).await?;
    assert!(!f.engine.usage("c", None, UsageBy::Profile).await?.complete, "without the fee, m1 has no price");
    Ok(())
}

#[tokio::test]
async fn days_are_counted_in_the_users_time_zone_across_dst_changes() -> TestResult {
    let f = fixture().await?;
    assert!(f.engine.set_time_zone("Mars/Olympus_Mons").await.is_err(), "an unknown zone is refused");
    f.engine.set_time_zone("America/New_York").await?;
    assert_eq!(f.engine.time_zone().await?.name, "America/New_York");
    let a = f.a.clone();
    let at = [
        "2026-03-08T04:59:59Z", // Mar 7, 23:59:59 EST
        "2026-03-08T05:00:00Z", // Mar 8, 00:00 EST (the 23-hour day)
        "2026-03-09T03:59:59Z", // Mar 8, 23:59:59 EDT
        "2026-03-09T04:00:00Z", // Mar 9, 00:00 EDT
        "2026-11-01T04:00:00Z", // Nov 1, 00:00 EDT (the 25-hour day)
        "2026-11-02T04:59:59Z", // Nov 1, 23:59:59 EST
        "2026-11-02T05:00:00Z", // Nov 2, 00:00 EST
    ];
    let rows: Vec<AttemptRow> =
        at.iter().map(|t| row(&f, &a, ms(t), Some("m1"), [Some(1), Some(1), None, None])).collect();
    insert(&f, &rows).await?;
    let days = f.engine.usage("c", None, UsageBy::Day).await?;
    let count: BTreeMap<String, i64> = days.rows.iter().map(|r| (r.key.clone(), r.requests)).collect();
    let want: BTreeMap<String, i64> =
        [("2026-03-07", 1), ("2026-03-08", 2), ("2026-03-09", 1), ("2026-11-01", 2), ("2026-11-02", 1)]
            .into_iter()
            .map(|(d, n)| (d.to_string(), n))
            .collect();
    assert_eq!(count, want, "each instant lands on its New York calendar day, DST included");

    f.engine.set_time_zone("UTC").await?;
    let utc = f.engine.usage("c", None, UsageBy::Day).await?;
    assert_eq!(
        utc.rows.iter().map(|r| (r.key.as_str(), r.requests)).collect::<Vec<_>>(),
        vec![("2026-03-08", 2), ("2026-03-09", 2), ("2026-11-01", 1), ("2026-11-02", 2)],
        "the same rows in UTC fall on other days"
    );
    f.engine.set_time_zone("system").await?;
    assert_eq!(f.engine.time_zone().await?.source, "system", "`system` drops the setting");
    Ok(())
}

#[tokio::test]
async fn tags_are_summed_per_name_and_value() -> TestResult {
    let f = fixture().await?;
    let a = f.a.clone();
    let tagged = |tags: Option<&str>, input: i64| {
        let mut r = row(&f, &a, NOW - 100, Some("m1"), [Some(input), Some(0), None, None]);
        r.tags = tags.map(str::to_string);
        r
    };
    insert(
        &f,
        &[
            tagged(Some(r#"{"job":"nightly","team":"infra"}"#), 10),
            tagged(Some(r#"{"job":"nightly"}"#), 20),
            tagged(Some(r#"{"job":"adhoc"}"#), 40),
            tagged(None, 80),
        ],
    )
    .await?;
    let usage = f.engine.usage("c", None, UsageBy::Tag).await?;
    let got: Vec<(String, i64, i64)> = usage.rows.iter().map(|r| (r.key.clone(), r.requests, r.input_tokens)).collect();
    assert_eq!(
        got,
        vec![
            ("(untagged)".into(), 1, 80),
            ("job=adhoc".into(), 1, 40),
            ("job=nightly".into(), 2, 30),
            ("team=infra".into(), 1, 10),
        ],
        "one row per name=value; an attempt with two tags counts in both"
    );
    assert_eq!((usage.total.requests, usage.total.input_tokens), (4, 150), "the total counts each attempt once");
    let exported = {
        let mut rows = Vec::new();
        f.engine
            .attempts_export("c", None, |r| {
                rows.push(r);
                true
            })
            .await?;
        rows
    };
    assert_eq!(exported.first().and_then(|r| r.tags.get("team")).map(String::as_str), Some("infra"));
    assert_eq!(exported.first().map(|r| r.connection.as_str()), Some("c"), "rows name their connection");
    Ok(())
}

#[tokio::test]
async fn the_export_streams_every_row_past_the_listing_cap() -> TestResult {
    let f = fixture().await?;
    let a = f.a.clone();
    const N: i64 = 12_345;
    let rows: Vec<AttemptRow> =
        (0..N).map(|i| row(&f, &a, NOW - (N - i) * 1000, Some("m1"), [Some(i), Some(1), None, None])).collect();
    insert(&f, &rows).await?;
    assert_eq!(f.engine.attempts("c", 1_000_000).await?.len(), 10_000, "the listing stays capped at 10 000");
    let mut seen = 0i64;
    let mut in_order = true;
    let sent = f
        .engine
        .attempts_export("c", None, |r| {
            in_order &= r.input_tokens == Some(i32::try_from(seen).unwrap_or(-1));
            seen += 1;
            true
        })
        .await?;
    assert_eq!((sent, seen), (N as u64, N), "every row, none twice");
    assert!(in_order, "oldest first, in ledger order across pages");
    let since = f.engine.attempts_export("c", Some(&chrono_text(NOW - 100 * 1000)), |_| true).await?;
    assert_eq!(since, 100, "--since keeps rows at or after the instant");
    let stopped = f.engine.attempts_export("c", None, |_| false).await?;
    assert_eq!(stopped, 1, "a sink that refuses stops the export at once");
    Ok(())
}

#[tokio::test]
async fn the_retention_cap_is_a_setting() -> TestResult {
    let f = fixture().await?;
    assert_eq!(f.engine.ledger_retention_rows().await?, switchyard_engine::RETENTION_ROWS, "default");
    assert!(f.engine.set_ledger_retention_rows(999).await.is_err(), "under 1 000 is refused");
    f.engine.set_ledger_retention_rows(5_000).await?;
    assert_eq!(f.engine.ledger_retention_rows().await?, 5_000);
    Ok(())
}

fn chrono_text(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms).map(|t| t.to_string()).unwrap_or_default()
}

/// Profile index, model index, status, the four token counts, tag index, age in ms.
type ArbRow = (usize, Option<usize>, Option<i64>, [Option<i64>; 4], Option<u8>, i64);

/// A random ledger row: one of two profiles, three models (one never priced) or none, any
/// status, tokens present or not, up to two tags, any instant in 90 days.
fn arb_row() -> impl Strategy<Value = ArbRow> {
    (
        0usize..2,
        proptest::option::of(0usize..3),
        proptest::option::of(prop_oneof![Just(200i64), Just(429), Just(500)]),
        [
            proptest::option::of(0i64..100_000),
            proptest::option::of(0i64..100_000),
            proptest::option::of(0i64..100_000),
            proptest::option::of(0i64..100_000),
        ],
        proptest::option::of(0u8..4),
        0i64..(90 * 86_400_000),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn usage_sums_equal_the_ledger_rows_they_come_from(rows in proptest::collection::vec(arb_row(), 0..120)) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| TestCaseError::fail(e.to_string()))?;
        rt.block_on(check_sums(rows)).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
}

async fn check_sums(spec: Vec<ArbRow>) -> Result<(), Box<dyn std::error::Error>> {
    let f = fixture().await?;
    f.engine.set_time_zone("Europe/Berlin").await?;
    f.engine.set_price("m0", price(3.0, 15.0, Some(0.3), Some(3.75))).await?;
    f.engine.set_price("m1", price(1.0, 4.0, Some(0.1), Some(1.25))).await?;
    let models = ["m0", "m1", "m2"];
    let tags = [r#"{"job":"a"}"#, r#"{"job":"b"}"#, r#"{"job":"a","team":"x"}"#, "{}"];
    let rows: Vec<AttemptRow> = spec
        .iter()
        .map(|(p, m, status, tokens, tag, offset)| {
            let profile = if *p == 0 { f.a.clone() } else { f.b.clone() };
            let mut r = row(&f, &profile, NOW - offset, m.map(|i| models[i]), *tokens);
            r.status = *status;
            r.failure_kind = status.filter(|s| *s != 200).map(|_| "server".to_string());
            r.tags = tag.map(|t| tags[usize::from(t)].to_string());
            r
        })
        .collect();
    insert(&f, &rows).await?;

    let sum = |pick: fn(&AttemptRow) -> Option<i64>| rows.iter().map(|r| pick(r).unwrap_or(0)).sum::<i64>();
    let want = (
        rows.len() as i64,
        sum(|r| r.input_tokens),
        sum(|r| r.output_tokens),
        sum(|r| r.cache_read_tokens),
        sum(|r| r.cache_write_tokens),
    );
    let shape = |r: &UsageRow| (r.requests, r.input_tokens, r.output_tokens, r.cache_read_tokens, r.cache_write_tokens);
    // Tokens of an unpriced model (or of no model), or an answer with a model and no usage,
    // are unknown.
    let unknown = rows.iter().any(|r| {
        let tokens = [r.input_tokens, r.output_tokens, r.cache_read_tokens, r.cache_write_tokens];
        let reported = r.input_tokens.is_some() || r.output_tokens.is_some();
        let any = tokens.iter().any(|t| t.unwrap_or(0) > 0);
        let answered = r.status == Some(200);
        let unpriced = r.model.as_deref().is_none_or(|m| m == "m2");
        (unpriced && reported && any) || (!reported && answered && r.model.is_some())
    });
    for by in [UsageBy::Profile, UsageBy::Model, UsageBy::Day, UsageBy::Tag] {
        let usage = f.engine.usage("c", None, by).await?;
        assert_eq!(shape(&usage.total), want, "the total is the ledger's sum ({by:?})");
        assert_eq!(usage.complete, !unknown, "complete exactly when every row's cost is known ({by:?})");
        let errors = rows.iter().filter(|r| r.status != Some(200)).count() as i64;
        assert_eq!(usage.total.errors, errors, "errors are the rows without a 2xx");
        if by != UsageBy::Tag {
            let mut parts = (0, 0, 0, 0, 0);
            for r in &usage.rows {
                let s = shape(r);
                parts = (parts.0 + s.0, parts.1 + s.1, parts.2 + s.2, parts.3 + s.3, parts.4 + s.4);
            }
            assert_eq!(parts, want, "the groups partition the rows ({by:?})");
            if let Some(total) = usage.total.cost_usd {
                let groups: f64 = usage.rows.iter().filter_map(|r| r.cost_usd).sum();
                assert!((groups - total).abs() < 1e-6, "group costs add up to the total ({by:?})");
            }
        }
    }
    // Each group equals the rows with that key.
    let usage = f.engine.usage("c", None, UsageBy::Profile).await?;
    for g in &usage.rows {
        let mine: Vec<&AttemptRow> = rows.iter().filter(|r| r.profile_id == g.key).collect();
        assert_eq!(g.requests, mine.len() as i64, "profile {} counts its own rows", g.key);
        assert_eq!(g.input_tokens, mine.iter().map(|r| r.input_tokens.unwrap_or(0)).sum::<i64>());
    }
    let tag = f.engine.usage("c", None, UsageBy::Tag).await?;
    let job_a = rows.iter().filter(|r| r.tags.as_deref().is_some_and(|t| t.contains(r#""job":"a""#))).count() as i64;
    assert_eq!(by_key(&tag.rows).get("job=a").map_or(0, |r| r.requests), job_a, "job=a counts its rows");
    Ok(())
}
