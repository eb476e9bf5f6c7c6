//! Circuits across replicas: a cooldown one replica opens is obeyed by the others at their next
//! decision, the half-open probe is one lease for the whole team (exactly one probe however
//! many replicas race for it), and a replica that dies holding the lease loses it when the
//! lease ends, after which another replica probes.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use switchyard_mock_provider::{Behaviour, KeyScript};

use super::call::{new_conversation, MODEL};
use super::cluster::{report, Cluster, Options, COOLED, KEYS, PROBE_LEASE_SECS};
use crate::common::TestResult;

/// New conversations sent to `addr` one after another until the cooled key was hit once (its
/// first answer, scripted by the test); each is answered 200 (a failover when it was the one).
fn hit_cooled_once(cluster: &Cluster, addr: &str, what: &str) -> TestResult {
    for i in 0..20 {
        let answer = new_conversation(addr, &cluster.token, &format!("{what} {i}"))?;
        assert_eq!(answer.status, 200, "{what} {i} is served (failing over): {}\n{}", answer.body, cluster.logs());
        if cluster.mock.hits(COOLED) >= 1 {
            return Ok(());
        }
    }
    Err(format!("the cooled key was never picked in 20 new conversations: {:?}", cluster.hits()).into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_concurrent_turns_at_a_cooled_keys_half_open_send_exactly_one_probe() -> TestResult {
    let options = Options { probe_lease: true, ..Options::default() };
    let Some(cluster) = Cluster::start("half_open", options).await? else { return Ok(()) };
    // One 429 with `retry-after: 2`, then a slow answer: the probe is still in flight while the
    // whole burst is routed, so a second probe could not hide behind a closed circuit.
    let script =
        KeyScript::new([MODEL]).behaviour(Behaviour::sequence([Behaviour::rate_limited(2), Behaviour::slow(4000)]));
    cluster.mock.set_key(COOLED, script);
    hit_cooled_once(&cluster, &cluster.nginx.addr, "before the cooldown")?;
    std::thread::sleep(Duration::from_millis(3000)); // the 2 s cooldown has ended everywhere
    cluster.mock.reset_counts();

    const BURST: usize = 30;
    let start = Arc::new(Barrier::new(BURST));
    let clients: Vec<_> = (0..BURST)
        .map(|i| {
            let (addr, token, start) = (cluster.nginx.addr.clone(), cluster.token.clone(), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                new_conversation(&addr, &token, &format!("burst {i}"))
            })
        })
        .collect();
    let mut upstreams = std::collections::BTreeMap::<String, u32>::new();
    for client in clients {
        let answer = client.join().map_err(|_| "client thread")??;
        assert_eq!(answer.status, 200, "every turn of the burst is served: {}\n{}", answer.body, cluster.logs());
        *upstreams.entry(answer.upstream()).or_default() += 1;
    }
    let hits = cluster.hits();
    report(&format!("half-open burst of {BURST}: keys 5:3:2 (5 cooled) got {hits:?}; per replica {upstreams:?}"));
    assert_eq!(upstreams.len(), 3, "the burst reached all three replicas: {upstreams:?}");
    assert_eq!(
        hits[0], 1,
        "exactly one probe reaches the cooled key across three replicas (one lease in the store); hits {hits:?}"
    );
    assert_eq!(hits.iter().sum::<u64>(), BURST as u64, "the rest went to the other keys, once each: {hits:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_on_one_replica_keeps_the_next_turns_on_the_others_off_that_key() -> TestResult {
    let Some(cluster) = Cluster::start("cooldown_shared", Options::default()).await? else { return Ok(()) };
    cluster.mock.set_key(COOLED, KeyScript::new([MODEL]).behaviour(Behaviour::rate_limited(60)));
    let a = cluster.replicas[0].addr.clone();
    hit_cooled_once(&cluster, &a, "on replica a")?;
    cluster.mock.reset_counts();
    let others = [cluster.replicas[1].addr.clone(), cluster.replicas[2].addr.clone()];
    for i in 0..20 {
        let addr = &others[i % 2];
        let answer =
            new_conversation(addr, &cluster.token, &format!("on replica {} {i}", if i % 2 == 0 { "b" } else { "c" }))?;
        assert_eq!(answer.status, 200, "turn {i} on {addr} is served: {}\n{}", answer.body, cluster.logs());
    }
    let hits = cluster.hits();
    report(&format!("after a 429 (Retry-After 60) on replica a: 20 turns on b and c gave keys 5:3:2 {hits:?}"));
    assert_eq!(hits[0], 0, "replicas b and c obey the cooldown replica a opened: no call reaches the key; {hits:?}");
    assert_eq!(hits[1] + hits[2], 20, "the other keys serve every turn: {hits:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_holding_the_probe_lease_hands_the_probe_on_when_the_lease_ends() -> TestResult {
    let options = Options { probe_lease: true, ..Options::default() };
    let Some(mut cluster) = Cluster::start("probe_lease", options).await? else { return Ok(()) };
    let lease = Duration::from_secs(PROBE_LEASE_SECS);
    // A 429 with `retry-after: 2`, then a probe that hangs (the replica dies under it).
    let script =
        KeyScript::new([MODEL]).behaviour(Behaviour::sequence([Behaviour::rate_limited(2), Behaviour::slow(60_000)]));
    cluster.mock.set_key(COOLED, script);
    let a = cluster.replicas[0].addr.clone();
    hit_cooled_once(&cluster, &a, "on replica a")?;
    std::thread::sleep(Duration::from_millis(3000));

    // New conversations on a, one at a time, until one is the probe (it hangs at the key).
    let mut probe_at = None;
    let mut hanging = Vec::new();
    for i in 0..20 {
        let (addr, token) = (a.clone(), cluster.token.clone());
        hanging.push(std::thread::spawn(move || new_conversation(&addr, &token, &format!("probe try {i}"))));
        let sent = Instant::now();
        while sent.elapsed() < Duration::from_millis(400) && cluster.mock.hits(COOLED) < 2 {
            std::thread::sleep(Duration::from_millis(10));
        }
        if cluster.mock.hits(COOLED) >= 2 {
            probe_at = Some(sent);
            break;
        }
    }
    let probe_at =
        probe_at.ok_or_else(|| format!("replica a never probed the key: {:?}\n{}", cluster.hits(), cluster.logs()))?;
    cluster.replicas[0].kill_9();
    cluster.mock.set_key(COOLED, KeyScript::new([MODEL])); // the next probe succeeds at once
    cluster.mock.reset_counts();
    drop(hanging); // their connections died with replica a

    // Until the lease ends, b keeps off the key (the lease is a's, though a is dead).
    let b = cluster.replicas[1].addr.clone();
    let mut calls = 0;
    while probe_at.elapsed() + Duration::from_millis(700) < lease {
        let answer = new_conversation(&b, &cluster.token, &format!("on b inside the lease {calls}"))?;
        assert_eq!(answer.status, 200, "b serves inside the lease: {}\n{}", answer.body, cluster.logs());
        calls += 1;
        assert_eq!(
            cluster.mock.hits(COOLED),
            0,
            "{:.1} s after a claimed the probe (lease {PROBE_LEASE_SECS} s) b must not send to the key; hits {:?}",
            probe_at.elapsed().as_secs_f64(),
            cluster.hits()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // After it, one probe from b reaches the key.
    let mut probed_after = None;
    while probe_at.elapsed() < lease + Duration::from_secs(4) {
        let answer = new_conversation(&b, &cluster.token, &format!("on b after the lease {calls}"))?;
        assert_eq!(answer.status, 200, "b serves after the lease: {}\n{}", answer.body, cluster.logs());
        calls += 1;
        if cluster.mock.hits(COOLED) >= 1 {
            probed_after = Some(probe_at.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    report(&format!(
        "probe lease {PROBE_LEASE_SECS} s, holder killed: b probed the key {probed_after:?} after a claimed it ({calls} calls on b)"
    ));
    let probed_after = probed_after.ok_or_else(|| {
        format!("b never probed the key within the lease + 4 s: {:?} {:?}\n{}", cluster.hits(), KEYS, cluster.logs())
    })?;
    assert!(probed_after + Duration::from_millis(700) >= lease, "not before the lease ended: {probed_after:?}");
    assert_eq!(cluster.mock.hits(COOLED), 1, "exactly one probe from b: {:?}", cluster.hits());
    Ok(())
}
