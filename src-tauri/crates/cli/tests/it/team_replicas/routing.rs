//! Routing decisions across replicas: SWRR positions and turn bindings are the store's, not a
//! replica's, so weights hold over the traffic of all replicas together and a turn's calls keep
//! their key whichever replica nginx hands them to.

use std::collections::{BTreeMap, BTreeSet};

use super::call::{self, new_conversation, tool_loop};
use super::cluster::{report, Cluster, Options, KEYS};
use crate::common::TestResult;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swrr_5_3_2_holds_exactly_over_100_new_conversations_spread_over_three_replicas() -> TestResult {
    let Some(cluster) = Cluster::start("swrr", Options::default()).await? else { return Ok(()) };
    let mut by_replica: BTreeMap<String, u32> = BTreeMap::new();
    for i in 0..100 {
        let answer = new_conversation(&cluster.nginx.addr, &cluster.token, &format!("new conversation {i}"))?;
        assert_eq!(answer.status, 200, "conversation {i} is served: {}\n{}", answer.body, cluster.logs());
        *by_replica.entry(answer.upstream()).or_default() += 1;
    }
    let hits = cluster.hits();
    report(&format!("SWRR over 100 new conversations: keys 5:3:2 got {hits:?}; per replica {by_replica:?}"));
    assert_eq!(by_replica.len(), 3, "nginx spread the conversations over all three replicas: {by_replica:?}");
    assert!(by_replica.values().all(|n| *n >= 30), "round robin, about a third each: {by_replica:?}");
    assert_eq!(
        hits,
        [50, 30, 20],
        "one SWRR position in the store: the keys get exactly their weights over the conversations of all \
         replicas together (per-replica positions drift); per replica {by_replica:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_loop_turn_keeps_its_key_while_its_calls_cross_replicas() -> TestResult {
    let options = Options { turn_affinity: true, ..Options::default() };
    let Some(cluster) = Cluster::start("tool_loop", options).await? else { return Ok(()) };
    const TURNS: usize = 20;
    // 2, 3 or 4 calls per turn: with a fixed count that is a multiple of three, round robin
    // would hand every replica the same call of every turn, and per-replica SWRR positions
    // would move in lockstep and agree by accident (seen with 3 calls: no turn split today).
    let calls = |turn: usize| 2 + turn % 3;
    let mut replicas_of_turn: Vec<BTreeSet<String>> = vec![BTreeSet::new(); TURNS];
    for (turn, replicas) in replicas_of_turn.iter_mut().enumerate() {
        let text = format!("turn {turn}: list the files");
        for step in 0..calls(turn) {
            let body = tool_loop(&text, step);
            let answer =
                call::messages(&cluster.nginx.addr, &cluster.token, &body, std::time::Duration::from_secs(30))?;
            assert_eq!(answer.status, 200, "turn {turn} call {step} is served: {}\n{}", answer.body, cluster.logs());
            replicas.insert(answer.upstream());
        }
    }
    // Which key served each call, from what the provider received (the turn's opening text).
    let mut keys_of_turn: Vec<BTreeSet<String>> = vec![BTreeSet::new(); TURNS];
    let mut calls_of_turn = vec![0_usize; TURNS];
    for request in cluster.mock.requests() {
        let Some(json) = request.json() else { continue };
        let Some(text) = json.pointer("/messages/0/content").and_then(|v| v.as_str()) else { continue };
        let Some(turn) = text.strip_prefix("turn ").and_then(|t| t.split(':').next()).and_then(|t| t.parse().ok())
        else {
            continue;
        };
        let turn: usize = turn;
        let key = request.key.clone().unwrap_or_default();
        let label = KEYS.iter().find(|(_, secret, _)| *secret == key).map_or("?", |(label, _, _)| label);
        keys_of_turn[turn].insert(label.to_string());
        calls_of_turn[turn] += 1;
    }
    let split: Vec<(usize, &BTreeSet<String>)> =
        keys_of_turn.iter().enumerate().filter(|(_, keys)| keys.len() != 1).collect();
    report(&format!(
        "tool loops: {} of {TURNS} turns split over keys: {split:?}; keys per turn {keys_of_turn:?}",
        split.len()
    ));
    assert!(
        replicas_of_turn.iter().all(|r| r.len() >= 2),
        "every turn's calls crossed replicas (else the test proves nothing): {replicas_of_turn:?}"
    );
    assert!(
        calls_of_turn.iter().enumerate().all(|(turn, n)| *n == calls(turn)),
        "each call reached the provider once: {calls_of_turn:?}"
    );
    assert!(
        split.is_empty(),
        "a turn's binding is shared: each turn's calls hit one key on whichever replica; split turns {split:?}"
    );
    let used: BTreeSet<&String> = keys_of_turn.iter().flatten().collect();
    assert!(used.len() >= 2, "new turns are still balanced over the keys: {used:?}");
    Ok(())
}
