//! Limits held exactly across three replicas on one Postgres (issue 41; invariant 28–31), over
//! real HTTP through nginx: concurrent bursts spread over the replicas are admitted exactly to
//! a request limit and a USD budget, and nothing refused reaches the provider; concurrency slots
//! hold across replicas and a killed replica's slots come back after their lease; scopes,
//! expiry and rotation hold on every replica; a store that cannot be reached refuses.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use switchyard_mock_provider::{Behaviour, KeyScript};

use super::call::{messages, Answer, MODEL};
use super::cluster::{report, Cluster, Options, KEYS, LIMIT_LEASE_SECS};
use crate::common::TestResult;

/// The mock's default answer is five words: five output tokens.
const OUTPUT_TOKENS: u64 = 5;

fn body(text: &str) -> Value {
    json!({"model": MODEL, "max_tokens": OUTPUT_TOKENS, "messages": [{"role": "user", "content": text}]})
}

/// Every key's hits, summed.
fn provider_hits(cluster: &Cluster) -> u64 {
    cluster.hits().iter().sum()
}

/// Waits until the current UTC minute has at least `left` seconds to run (a burst then stays in
/// one window).
fn inside_a_minute(left: u64) {
    let second = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() % 60).unwrap_or(0);
    if second + left > 59 {
        std::thread::sleep(Duration::from_secs(60 - second));
    }
}

/// `n` calls at once through nginx as `token` (each on its own thread and connection).
fn burst(addr: &str, token: &str, n: usize, label: &str) -> Result<Vec<Answer>, Box<dyn std::error::Error>> {
    let calls: Vec<_> = (0..n)
        .map(|i| {
            let (addr, token, text) = (addr.to_string(), token.to_string(), format!("{label} {i}"));
            std::thread::spawn(move || messages(&addr, &token, &body(&text), Duration::from_secs(30)))
        })
        .collect();
    let mut answers = Vec::new();
    for c in calls {
        answers.push(c.join().map_err(|_| "a client thread panicked")??);
    }
    Ok(answers)
}

/// Waits for the replicas to read a change (limits and users are re-read within a second).
fn let_replicas_read() {
    std::thread::sleep(Duration::from_millis(1300));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_limit_and_a_usd_budget_admit_exactly_across_replicas() -> TestResult {
    let Some(cluster) = Cluster::start("limit_exact", Options::default()).await? else { return Ok(()) };
    // Three users, each 30 requests a minute, each sending 100 at once: three runs of exactness.
    // Every user also meets a token limit they never reach: two limits per request, admitted in
    // one call of the store's `switchyard_admit` (one round trip, all or nothing).
    cluster.store.cli_ok(&["limits", "set", "users", "--tokens", "1000000000", "--per", "day"], None)?;
    let mut tokens = Vec::new();
    for name in ["r1", "r2", "r3"] {
        tokens.push((name, cluster.store.user_add(name)?));
        cluster
            .store
            .cli_ok(&["limits", "set", &format!("user:{name}"), "--requests", "30", "--per", "minute"], None)?;
    }
    let_replicas_read();
    let mut figures = Vec::new();
    for (name, token) in &tokens {
        inside_a_minute(20);
        let before = provider_hits(&cluster);
        let answers = burst(&cluster.nginx.addr, token, 100, name)?;
        let served = answers.iter().filter(|a| a.status == 200).count();
        let limit_id = format!("user-{name}-requests-minute");
        let refused = answers
            .iter()
            .filter(|a| a.status == 429 && a.header("x-switchyard-reason") == Some(&format!("limit:{limit_id}")))
            .count();
        let upstreams: std::collections::BTreeSet<String> = answers.iter().map(Answer::upstream).collect();
        let reached = provider_hits(&cluster) - before;
        figures.push(format!("{name}: {served} served, {refused} refused, {reached} reached the provider"));
        assert_eq!(served, 30, "exactly the limit is served across replicas ({name}): {}", cluster.logs());
        assert_eq!(refused, 70, "every other request is refused with limit:{limit_id}");
        assert_eq!(reached, 30, "none of the 70 refused reached the provider");
        assert!(upstreams.len() >= 3, "the burst was spread over the replicas: {upstreams:?}");
    }
    report(&format!("requests 30/minute, 100 at once, three runs: {}", figures.join("; ")));
    // A $0.10 budget at exactly $0.01 a request ($2,000 per million output tokens, input free,
    // max_tokens = the mock's five output tokens): exactly ten served across replicas.
    cluster.store.cli_ok(&["prices", "set", MODEL, "--input", "0", "--output", "2000"], None)?;
    let spender = cluster.store.user_add("spender")?;
    cluster.store.cli_ok(&["limits", "set", "user:spender", "--usd", "0.10", "--per", "minute"], None)?;
    let_replicas_read();
    inside_a_minute(20);
    let before = provider_hits(&cluster);
    let answers = burst(&cluster.nginx.addr, &spender, 30, "spend")?;
    let served = answers.iter().filter(|a| a.status == 200).count();
    let refusals: Vec<&Answer> = answers.iter().filter(|a| a.status == 429).collect();
    report(&format!("usd $0.10/minute at $0.01 a request, 30 at once: {served} served, {} refused", refusals.len()));
    assert_eq!(served, 10, "$0.10 at $0.01 a request: exactly ten served: {}", cluster.logs());
    assert_eq!(provider_hits(&cluster) - before, 10, "the refused never reached the provider");
    assert_eq!(refusals.len(), 20, "the rest are refused");
    for r in &refusals {
        assert_eq!(r.header("x-switchyard-reason"), Some("limit:user-spender-usd-minute"));
        let retry: u64 = r.header("retry-after").ok_or("retry-after")?.parse()?;
        assert!((1..=60).contains(&retry), "retry-after is the wait until the minute ends: {retry}");
    }
    // Settled: the window holds exactly $0.10 used and nothing reserved once the ledgers wrote.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let status: Value =
        serde_json::from_str(&cluster.store.cli_ok(&["--json", "limits", "status", "user:spender"], None)?.stdout)?;
    assert!((status[0]["used"].as_f64().unwrap_or(-1.0) - 0.10).abs() < 1e-9, "$0.10 settled: {status}");
    assert_eq!(status[0]["reserved"].as_f64(), Some(0.0), "nothing left reserved: {status}");
    // Until the window resets every request is refused; after it, served again.
    let retry: u64 = refusals[0].header("retry-after").unwrap_or("60").parse()?;
    let still = messages(&cluster.nginx.addr, &spender, &body("still spent"), Duration::from_secs(30))?;
    assert_eq!(still.status, 429, "still spent within the window");
    tokio::time::sleep(Duration::from_secs(retry + 1)).await;
    let again = messages(&cluster.nginx.addr, &spender, &body("a new minute"), Duration::from_secs(30))?;
    assert_eq!(again.status, 200, "a new window serves again: {}", again.body);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_slots_hold_across_replicas_and_a_killed_replica_s_come_back_after_their_lease() -> TestResult {
    let options = Options { limit_lease: true, ..Options::default() };
    let Some(mut cluster) = Cluster::start("limit_slots", options).await? else { return Ok(()) };
    for (_, secret, _) in KEYS {
        cluster.mock.set_key(secret, KeyScript::new([MODEL]).model(MODEL, Behaviour::slow(1500)));
    }
    cluster.store.cli_ok(&["limits", "set", "user:team", "--concurrency", "2"], None)?;
    let_replicas_read();
    cluster.mock.reset_in_flight();
    let stream = |text: &str| json!({"model": MODEL, "max_tokens": 8, "stream": true, "messages": [{"role": "user", "content": text}]});
    let calls: Vec<_> = (0..8)
        .map(|i| {
            let (addr, token, body) = (cluster.nginx.addr.clone(), cluster.token.clone(), stream(&format!("slow {i}")));
            std::thread::spawn(move || messages(&addr, &token, &body, Duration::from_secs(30)))
        })
        .collect();
    let mut statuses = Vec::new();
    for c in calls {
        statuses.push(c.join().map_err(|_| "client thread")??.status);
    }
    let served = statuses.iter().filter(|s| **s == 200).count();
    report(&format!(
        "concurrency 2, 8 slow streams at once over 3 replicas: {served} served, max in flight at the provider {}",
        cluster.mock.max_in_flight()
    ));
    assert!(
        cluster.mock.max_in_flight() <= 2,
        "the provider never saw more than two at once: {}",
        cluster.mock.max_in_flight()
    );
    assert!((1..=2).contains(&served) && statuses.iter().all(|s| *s == 200 || *s == 429), "{statuses:?}");
    // Replica a takes both slots with two long requests, and is killed holding them.
    for (_, secret, _) in KEYS {
        cluster.mock.set_key(secret, KeyScript::new([MODEL]).model(MODEL, Behaviour::slow(20_000)));
    }
    tokio::time::sleep(Duration::from_millis(600)).await; // the slots of the burst are freed
    let a = cluster.replicas[0].addr.clone();
    let holders: Vec<_> = (0..2)
        .map(|i| {
            let (addr, token, body) = (a.clone(), cluster.token.clone(), stream(&format!("held {i}")));
            std::thread::spawn(move || messages(&addr, &token, &body, Duration::from_secs(30)))
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(5);
    while cluster.mock.in_flight() < 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(cluster.mock.in_flight(), 2, "replica a's two requests are at the provider");
    cluster.replicas[0].kill_9();
    let killed = Instant::now();
    for h in holders {
        let _ = h.join();
    }
    for (_, secret, _) in KEYS {
        cluster.mock.set_key(secret, KeyScript::new([MODEL]));
    }
    let b = cluster.replicas[1].addr.clone();
    let right_after = messages(&b, &cluster.token, &body("right after the kill"), Duration::from_secs(30))?;
    assert_eq!(right_after.status, 429, "the dead replica's slots are still held: {}", right_after.body);
    let freed = loop {
        let answer = messages(&b, &cluster.token, &body("after the lease"), Duration::from_secs(30))?;
        if answer.status == 200 {
            break killed.elapsed();
        }
        assert!(killed.elapsed() < Duration::from_secs(LIMIT_LEASE_SECS + 5), "the slots never came back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    report(&format!("a killed replica's slots came back {freed:?} after the kill (lease {LIMIT_LEASE_SECS} s)"));
    assert!(freed <= Duration::from_secs(LIMIT_LEASE_SECS + 2), "within the lease (and a renewal): {freed:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scopes_expiry_and_rotation_hold_on_every_replica_and_a_lost_store_refuses() -> TestResult {
    let Some(cluster) = Cluster::start("limit_scope", Options::default()).await? else { return Ok(()) };
    let addrs: Vec<String> = cluster.replicas.iter().map(|r| r.addr.clone()).collect();
    let scoped = {
        let out = cluster.store.cli_ok(&["--json", "relay", "users", "add", "narrow", "--models", "claude-*"], None)?;
        serde_json::from_str::<Value>(&out.stdout)?["token"].as_str().unwrap_or_default().to_string()
    };
    let elsewhere = {
        let out = cluster.store.cli_ok(&["--json", "relay", "users", "add", "away", "--connections", "d"], None)?;
        serde_json::from_str::<Value>(&out.stdout)?["token"].as_str().unwrap_or_default().to_string()
    };
    let expired = {
        let args = ["--json", "relay", "users", "add", "gone", "--expires", "2020-01-01T00:00:00Z"];
        let out = cluster.store.cli_ok(&args, None)?;
        serde_json::from_str::<Value>(&out.stdout)?["token"].as_str().unwrap_or_default().to_string()
    };
    let_replicas_read();
    let before = provider_hits(&cluster);
    for addr in &addrs {
        let model = messages(addr, &scoped, &body("m1 is not claude-*"), Duration::from_secs(30))?;
        assert_eq!(
            (model.status, model.header("x-switchyard-reason")),
            (403, Some("not_in_scope")),
            "{addr}: {}",
            model.body
        );
        let conn = messages(addr, &elsewhere, &body("c is not d"), Duration::from_secs(30))?;
        assert_eq!((conn.status, conn.header("x-switchyard-reason")), (403, Some("not_in_scope")), "{addr}");
        let old = messages(addr, &expired, &body("expired"), Duration::from_secs(30))?;
        assert_eq!(old.status, 401, "{addr}: an expired token is nobody's");
    }
    assert_eq!(provider_hits(&cluster), before, "nothing out of scope reached the provider");
    // Rotation: the old token is refused on every replica within a second, the new one served.
    let old = cluster.token.clone();
    let out = cluster.store.cli_ok(&["--json", "relay", "users", "rotate", "team"], None)?;
    let rotated_at = Instant::now();
    let new = serde_json::from_str::<Value>(&out.stdout)?["token"].as_str().unwrap_or_default().to_string();
    assert!(new.starts_with("syu_") && new != old, "a new token is printed once");
    let mut took = Vec::new();
    for addr in &addrs {
        loop {
            let answer = messages(addr, &old, &body("old token"), Duration::from_secs(30))?;
            if answer.status == 401 {
                took.push(rotated_at.elapsed());
                break;
            }
            assert!(rotated_at.elapsed() < Duration::from_secs(3), "{addr} still accepts the rotated token");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let fresh = messages(addr, &new, &body("new token"), Duration::from_secs(30))?;
        assert_eq!(fresh.status, 200, "{addr} serves the new token: {}", fresh.body);
    }
    report(&format!("rotated token refused after {took:?} on replicas a, b, c"));
    assert!(took.iter().all(|t| *t <= Duration::from_secs(1)), "within a second everywhere: {took:?}");
    // Every admin change above is one audit row, naming the CLI's user; no token in it.
    let audit = cluster.store.cli_ok(&["--json", "audit", "list"], None)?.stdout;
    let rows: Vec<Value> = serde_json::from_str(&audit)?;
    let actions: Vec<&str> = rows.iter().filter_map(|r| r["action"].as_str()).collect();
    assert_eq!(actions.iter().filter(|a| **a == "user.add").count(), 4, "team, narrow, away, gone: {actions:?}");
    assert_eq!(actions.iter().filter(|a| **a == "user.rotate").count(), 1, "{actions:?}");
    assert!(rows.iter().all(|r| r["actor"].as_str().is_some_and(|a| a.starts_with("cli:"))), "{audit}");
    for token in [&old, &new, &scoped, &elsewhere, &expired] {
        assert!(!audit.contains(token.as_str()), "no token in the audit");
        assert!(cluster.store.sql("SELECT count(*) FROM audit WHERE detail LIKE '%syu_%'")? == "0", "nor in its table");
    }
    // The store lost: with a limit on the user, the replicas refuse 503 limits_unavailable and
    // send nothing (each replica warm first, so its routing snapshot is fresh).
    cluster.store.cli_ok(&["limits", "set", "users", "--requests", "1000", "--per", "minute"], None)?;
    let_replicas_read();
    for addr in &addrs {
        let warm = messages(addr, &new, &body("warm"), Duration::from_secs(30))?;
        assert_eq!(warm.status, 200, "{addr} serves under the limit");
    }
    let before = provider_hits(&cluster);
    let db = cluster.store.url.rsplit('/').next().unwrap_or_default().to_string();
    let server = std::env::var("SWITCHYARD_TEST_PG")?;
    let cut = format!(
        "ALTER DATABASE {db} ALLOW_CONNECTIONS false; SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '{db}'"
    );
    let done = std::process::Command::new("psql").arg(&server).args(["-qtA", "-c", &cut]).output()?;
    assert!(done.status.success(), "the store is cut off: {}", String::from_utf8_lossy(&done.stderr));
    let mut reasons = Vec::new();
    for addr in &addrs {
        let answer = messages(addr, &new, &body("no store"), Duration::from_secs(30))?;
        reasons.push((answer.status, answer.header("x-switchyard-reason").unwrap_or("-").to_string()));
    }
    let restore = format!("ALTER DATABASE {db} ALLOW_CONNECTIONS true");
    let _ = std::process::Command::new("psql").arg(&server).args(["-qtA", "-c", &restore]).output()?;
    assert_eq!(provider_hits(&cluster), before, "nothing was forwarded without the store: {reasons:?}");
    assert!(
        reasons.iter().all(|(s, r)| *s == 503 && r == "limits_unavailable"),
        "every replica refuses 503 limits_unavailable: {reasons:?}"
    );
    Ok(())
}
