//! A replica killed with SIGKILL under load: the configuration lives in the store (nothing of
//! it is lost), nginx passes over the dead upstream so clients keep being served, and the
//! ledger loses at most the rows the dead replica had not written yet — one batch, measured.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::call::new_conversation;
use super::cluster::{report, Cluster, Options};
use crate::common::TestResult;

/// The most rows a replica's ledger writer holds before it writes them (engine
/// `ledger/mod.rs` `BATCH`; it also writes at least every 100 ms).
const LEDGER_BATCH: u64 = 256;

const CLIENTS: usize = 4;

/// What one client loop saw: per call, when it started (relative to the kill; negative before),
/// its status and the replica that served it.
type Seen = Vec<(f64, u16, String)>;

/// The configuration as the CLI shows it: connections, profiles (with their revisions), relay
/// users (without when each last called), and the routing settings of `routing status` (not its health, traffic or cache, which
/// move with the load).
fn config(cluster: &Cluster) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for args in [&["--json", "connection", "list"][..], &["--json", "profile", "list", "c"]] {
        out.push(cluster.store.cli_ok(args, None)?.stdout);
    }
    // The users as configured: `last_used` is traffic (issue 41), not configuration.
    let mut users: Vec<serde_json::Value> =
        serde_json::from_str(&cluster.store.cli_ok(&["--json", "relay", "users", "list"], None)?.stdout)?;
    for u in &mut users {
        if let Some(u) = u.as_object_mut() {
            u.remove("last_used");
        }
    }
    out.push(serde_json::to_string_pretty(&users)?);
    let status: serde_json::Value =
        serde_json::from_str(&cluster.store.cli_ok(&["--json", "routing", "status", "c"], None)?.stdout)?;
    let profiles: Vec<serde_json::Value> = status["profiles"]
        .as_array()
        .map(|ps| ps.iter().map(|p| serde_json::json!([p["id"], p["label"], p["weight"], p["enabled"]])).collect())
        .unwrap_or_default();
    let routing =
        serde_json::json!([status["mode"], status["state"], status["affinity"], status["quota_aware"], profiles]);
    out.push(routing.to_string());
    Ok(out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_under_load_loses_no_config_keeps_serving_and_bounds_ledger_loss() -> TestResult {
    let Some(mut cluster) = Cluster::start("kill_under_load", Options::default()).await? else { return Ok(()) };
    let before = config(&cluster)?;
    assert!(
        before[1].contains("\"three\"") && before[2].contains("\"team\"") && before[3].contains("balanced"),
        "the snapshot holds the configuration: {before:?}"
    );
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let kill_after = Duration::from_millis(2000);
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (addr, token, stop) = (cluster.nginx.addr.clone(), cluster.token.clone(), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut seen: Seen = Vec::new();
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    let at = started.elapsed().as_secs_f64() - kill_after.as_secs_f64();
                    let (status, upstream) = match new_conversation(&addr, &token, &format!("client {c} call {i}")) {
                        Ok(answer) => (answer.status, answer.upstream()),
                        Err(_) => (0, String::new()),
                    };
                    seen.push((at, status, upstream));
                    i += 1;
                }
                seen
            })
        })
        .collect();
    std::thread::sleep(kill_after);
    let killed = cluster.replicas[1].addr.clone();
    cluster.replicas[1].kill_9();
    let killed_at = started.elapsed().as_secs_f64() - kill_after.as_secs_f64();
    std::thread::sleep(Duration::from_millis(2500));
    stop.store(true, Ordering::Relaxed);
    let mut seen: Seen = Vec::new();
    for client in clients {
        seen.extend(client.join().map_err(|_| "client thread")?);
    }

    let ok = seen.iter().filter(|(_, status, _)| *status == 200).count() as u64;
    let by_killed_before = seen.iter().filter(|(at, s, u)| *at < 0.0 && *s == 200 && *u == killed).count();
    let failed_after: Vec<&(f64, u16, String)> =
        seen.iter().filter(|(at, status, _)| *at > killed_at && *status != 200).collect();
    let failed_around = seen.iter().filter(|(_, status, _)| *status != 200).count();
    assert!(by_killed_before > 0, "the killed replica was serving before the kill ({killed}): {}", cluster.logs());
    assert!(
        failed_after.is_empty(),
        "every call started after the kill is served by the other replicas (nginx passes over the dead one): \
         {failed_after:?}\n{}",
        cluster.logs()
    );
    for i in [0, 2] {
        let addr = cluster.replicas[i].addr.clone();
        let answer = new_conversation(&addr, &cluster.token, &format!("straight to replica {i} after the kill"))?;
        assert_eq!(answer.status, 200, "replica {i} keeps serving: {}", answer.body);
    }
    let direct = 2;

    // The survivors stop gracefully: they flush their ledgers.
    for i in [0, 2] {
        let name = cluster.replicas[i].name.clone();
        assert!(cluster.replicas[i].stop(), "replica {name} drains and exits 0: {}", cluster.replicas[i].log_tail());
    }
    let rows: u64 = cluster.store.sql("SELECT count(*) FROM attempts WHERE status = 200")?.parse()?;
    let answered = ok + direct;
    let lost = answered.saturating_sub(rows);
    report(&format!(
        "kill -9 under load ({CLIENTS} clients, {:.1} s): {answered} answered 200, {rows} ledger rows with status 200, \
         {lost} lost ({:.2} %); {failed_around} calls in flight at the kill failed; the killed replica served {by_killed_before} before",
        started.elapsed().as_secs_f64(),
        lost as f64 * 100.0 / answered.max(1) as f64
    ));
    assert!(rows <= answered, "no ledger row without an answer: {rows} rows for {answered} answers");
    assert!(lost <= LEDGER_BATCH, "ledger loss is at most the dead replica's unwritten batch: lost {lost}");
    assert!(
        lost <= by_killed_before as u64,
        "only the killed replica's rows can be missing: lost {lost}, it served {by_killed_before}"
    );
    let after = config(&cluster)?;
    assert_eq!(before, after, "no configuration lost or changed by the kill");
    Ok(())
}
