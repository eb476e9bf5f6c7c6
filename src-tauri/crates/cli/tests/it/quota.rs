//! `switchyard quota` across processes (issues 15 and 28): `relay serve` reads the mock
//! provider's limit headers — request limits, and the subscription windows of three accounts —
//! writes them as it stops, and a later `quota` shows them: `--json` in the exact contract
//! shape (kind, status, reset, run-out forecast, binding window, age), human text as a table
//! with remaining/limit or the share used, the reset countdown and time, the forecast and the
//! age — without the key anywhere.

use crate::common;

use crate::common::{post_messages, run, TestResult};
use serde_json::Value;
use switchyard_mock_provider::{KeyScript, MockProvider, ResetAt, Subscription, UsageWindow};
use switchyard_store::quota::{self, QuotaRow};
use switchyard_store::Store;

const CANARY: &str = "sk-canary-cli-quota-5e1b";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quota_shows_what_the_relay_read_with_its_age_in_the_contract_shape() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key(CANARY, KeyScript::new(["m1"]).quota(30, 29));
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let base = mock.base_url();
    let add =
        ["connection", "add", "c", "--protocol", "anthropic", "--base-url", &base, "--model", "m1", "--secret-stdin"];
    assert_eq!(run(d, &add, Some(CANARY))?.code, 0, "connection added (legacy)");
    let before = run(d, &["--json", "quota", "c"], None)?;
    let empty: Value = serde_json::from_str(&before.stdout)?;
    assert_eq!(empty["profiles"][0]["windows"], serde_json::json!([]), "no readings before any answer");

    let token = run(d, &["relay", "token"], None)?.stdout.trim().to_string();
    let relay = common::serve(d)?;
    let addr = relay.addr.clone();
    let answers: Vec<String> = (0..3).map(|_| post_messages(&addr, &token, "")).collect::<Result<_, _>>()?;
    assert!(relay.stop()?, "SIGTERM stops the relay cleanly, writing what it read");
    for a in &answers {
        assert!(a.starts_with("HTTP/1.1 200"), "each call is served: {a:.80}");
    }

    let shown = run(d, &["--json", "quota", "c"], None)?;
    assert_eq!(shown.code, 0, "quota succeeds: {}", shown.stderr);
    let body: Value = serde_json::from_str(&shown.stdout)?;
    let keys: Vec<&str> = body.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    assert_eq!(keys, ["profiles"], "top level: profiles only");
    let p = &body["profiles"][0];
    let mut pkeys: Vec<&str> = p.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    pkeys.sort_unstable();
    assert_eq!(pkeys, ["id", "windows"], "a profile: id and windows");
    let w = &p["windows"][0];
    let mut wkeys: Vec<&str> = w.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    wkeys.sort_unstable();
    assert_eq!(
        wkeys,
        [
            "age_secs",
            "binding",
            "exhausts_at",
            "kind",
            "limit",
            "model",
            "name",
            "remaining",
            "resets_at",
            "seen_at",
            "status",
            "utilization"
        ],
        "a window has exactly the contract's fields"
    );
    assert_eq!((w["kind"].as_str(), w["exhausts_at"].as_str()), (Some("requests"), None), "an API limit: no forecast");
    assert_eq!((w["name"].as_str(), w["model"].as_str()), (Some("requests"), Some("m1")), "per model");
    assert_eq!((w["limit"].as_i64(), w["remaining"].as_i64()), (Some(30), Some(27)), "the third answer's report");
    assert_eq!(w["utilization"], Value::Null, "the provider said nothing about utilization: null");
    let seen = w["seen_at"].as_str().unwrap_or_default();
    assert!(seen.ends_with('Z') && chrono_like(seen), "seen_at is RFC 3339 UTC: {seen}");
    assert!(w["resets_at"].as_str().is_some_and(|t| t.ends_with('Z')), "resets_at is RFC 3339 UTC");

    let human = run(d, &["quota", "c"], None)?;
    assert!(human.stdout.contains("27/30 left"), "remaining/limit: {}", human.stdout);
    assert!(human.stdout.contains("in ") && human.stdout.contains("as of"), "countdown and age: {}", human.stdout);
    let missing = run(d, &["quota", "nope"], None)?;
    assert_eq!(missing.code, 4, "an unknown connection is not found");
    let all = format!("{}{}{}{}", shown.stdout, shown.stderr, human.stdout, human.stderr);
    assert!(!all.contains("canary"), "no secret in quota output");
    mock.shutdown().await?;
    Ok(())
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ`.
fn chrono_like(t: &str) -> bool {
    t.len() == 24 && t.as_bytes()[10] == b'T' && t.as_bytes()[4] == b'-'
}

const SUB_CANARIES: [&str; 3] = ["sk-canary-cli-sub-a-71c0", "sk-canary-cli-sub-b-71c0", "sk-canary-cli-sub-c-71c0"];

fn used(used: f64, in_secs: u64) -> Option<UsageWindow> {
    Some(UsageWindow { used, reset: ResetAt::InSecs(in_secs) })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscription_windows_of_three_accounts_show_with_kind_reset_forecast_and_age() -> TestResult {
    let mock = MockProvider::start().await?;
    let windows = [
        Subscription {
            five_hour: used(0.42, 8_058),
            seven_day: used(0.61, 345_600),
            seven_day_opus: used(0.9, 259_200),
            ..Subscription::default()
        },
        Subscription { five_hour: used(0.97, 2_820), seven_day: used(0.99, 86_400), ..Subscription::default() },
        Subscription {
            five_hour: used(0.05, 17_400),
            seven_day: used(0.12, 518_400),
            seven_day_sonnet: used(0.02, 518_400),
            ..Subscription::default()
        },
    ];
    for (secret, w) in SUB_CANARIES.iter().zip(&windows) {
        mock.set_key(secret, KeyScript::new(["m1"]).subscription(w.clone()));
    }
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let base = mock.base_url();
    let add =
        ["connection", "add", "c", "--protocol", "anthropic", "--base-url", &base, "--model", "m1", "--secret-stdin"];
    assert_eq!(run(d, &add, Some(SUB_CANARIES[0]))?.code, 0, "connection added");
    assert_eq!(run(d, &["profile", "edit", "c", "primary", "--label", "max-a"], None)?.code, 0, "renamed");
    for (label, secret) in [("max-b", SUB_CANARIES[1]), ("max-c", SUB_CANARIES[2])] {
        let added = run(d, &["profile", "add", "c", "--label", label, "--secret-stdin"], Some(secret))?;
        assert_eq!(added.code, 0, "{label} added: {}", added.stderr);
    }
    assert_eq!(run(d, &["verify", "c"], None)?.code, 0, "verified");
    assert_eq!(run(d, &["routing", "activate", "c", "balanced"], None)?.code, 0, "balanced");
    mock.reset_counts();

    let token = run(d, &["relay", "token"], None)?.stdout.trim().to_string();
    let relay = common::serve(d)?;
    let addr = relay.addr.clone();
    for n in 0..3 {
        // Three conversations (three first questions), so three turns SWRR assigns.
        let body =
            format!(r#"{{"model":"m1","max_tokens":8,"messages":[{{"role":"user","content":"question {n}"}}]}}"#);
        let headers = format!("x-api-key: {token}\r\nanthropic-version: 2023-06-01\r\n");
        let answer = common::post(&addr, "/c/c/v1/messages", &headers, &body)?;
        assert!(answer.starts_with("HTTP/1.1 200"), "call {n} is served: {answer:.80}");
    }
    assert!(relay.stop()?, "SIGTERM stops the relay cleanly, writing what it read");
    for secret in SUB_CANARIES {
        assert_eq!(mock.hits(secret), 1, "balanced routing gave each account one of three conversations");
    }

    // The forecast needs the window's first reading of the last hour: a test cannot wait an
    // hour, so max-a's 5-hour row gets the base an earlier answer would have left (30 points
    // less, an hour before), exactly as the relay's writer stores it.
    let ids = profile_ids(d)?;
    let store = Store::open(&d.join("switchyard.db")).await?;
    let mut conn = store.acquire().await?;
    let connection_id = connection_id(d)?;
    let rows = quota::for_connection(&mut conn, &connection_id).await?;
    let five =
        rows.iter().find(|r| r.profile_id == ids[0] && r.name == "unified_5h").ok_or("max-a's 5-hour reading")?;
    let seeded = QuotaRow {
        base_seen_at_ms: Some(five.seen_at_ms - 3_600_000),
        base_utilization: five.utilization.map(|u| u - 0.3),
        ..five.clone()
    };
    quota::upsert_batch(&mut conn, &[seeded]).await?;
    drop(conn);

    let shown = run(d, &["--json", "quota", "c"], None)?;
    assert_eq!(shown.code, 0, "quota succeeds: {}", shown.stderr);
    let body: Value = serde_json::from_str(&shown.stdout)?;
    let of = |id: &str, name: &str| -> Value {
        body["profiles"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["id"] == id))
            .and_then(|p| p["windows"].as_array())
            .and_then(|ws| ws.iter().find(|w| w["name"] == name).cloned())
            .unwrap_or(Value::Null)
    };
    let a5 = of(&ids[0], "unified_5h");
    assert_eq!(of(&ids[0], "unified_7d_opus")["binding"], true, "max-a's most used window, Opus, binds it");
    assert_eq!((a5["kind"].as_str(), a5["utilization"].as_f64()), (Some("five_hour"), Some(0.42)), "max-a's 5 h");
    assert!(a5["exhausts_at"].as_str().is_some_and(|t| t.ends_with('Z')), "a run-out forecast: {a5}");
    assert!(a5["age_secs"].as_i64().is_some_and(|s| (0..60).contains(&s)), "with its age: {a5}");
    let opus = of(&ids[0], "unified_7d_opus");
    assert_eq!((opus["kind"].as_str(), opus["model"].as_str()), (Some("seven_day_model"), None), "the Opus window");
    let b7 = of(&ids[1], "unified_7d");
    assert_eq!(
        (b7["status"].as_str(), b7["binding"].as_bool()),
        (Some("allowed_warning"), Some(true)),
        "max-b's weekly window is nearly spent and binds its account"
    );
    let c_overall = of(&ids[2], "unified");
    assert_eq!(
        (c_overall["kind"].as_str(), c_overall["status"].as_str()),
        (Some("overall"), Some("allowed")),
        "overall"
    );

    let human = run(d, &["quota", "c"], None)?;
    for want in ["weekly opus *", "weekly sonnet", "in 1 h 5", "42% used", "allowed_warning", "RUNS OUT", "as of"] {
        assert!(human.stdout.contains(want), "the table shows {want:?}: {}", human.stdout);
    }
    let all = format!("{}{}{}{}", shown.stdout, shown.stderr, human.stdout, human.stderr);
    assert!(!all.contains("canary"), "no secret in quota output");
    mock.shutdown().await?;
    Ok(())
}

/// The ids of `c`'s profiles in the order max-a, max-b, max-c.
fn profile_ids(d: &std::path::Path) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let listed: Value = serde_json::from_str(&run(d, &["--json", "profile", "list", "c"], None)?.stdout)?;
    let id = |label: &str| -> Option<String> {
        listed.as_array()?.iter().find(|p| p["label"] == label).and_then(|p| p["id"].as_str().map(str::to_string))
    };
    ["max-a", "max-b", "max-c"].into_iter().map(|l| id(l).ok_or_else(|| format!("{l} is listed").into())).collect()
}

/// The id of connection `c`.
fn connection_id(d: &std::path::Path) -> Result<String, Box<dyn std::error::Error>> {
    let shown: Value = serde_json::from_str(&run(d, &["--json", "connection", "show", "c"], None)?.stdout)?;
    shown["connection"]["id"].as_str().map(str::to_string).ok_or_else(|| "connection show names the id".into())
}
