//! A fallback hop across replicas: when every key of `c` is cooling, a request falls back to
//! connection `d`, and the hop's decision must read `d`'s shared view (its circuits, SWRR row
//! and bindings) — not the view it read for `c`. A cooldown one replica set on a key of `d`
//! is then obeyed by the hops of the others.

use switchyard_mock_provider::{Behaviour, KeyScript};

use super::call::{new_conversation, MODEL};
use super::cluster::{report, Cluster, Options, FALLBACK_KEYS, KEYS};
use crate::common::TestResult;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cooldown_on_a_fallback_key_set_on_one_replica_is_obeyed_by_the_hops_of_the_others() -> TestResult {
    let options = Options { fallback: true, ..Options::default() };
    let Some(cluster) = Cluster::start("fallback_hop", options).await? else { return Ok(()) };
    for (_, secret, _) in KEYS {
        cluster.mock.set_key(secret, KeyScript::new([MODEL]).behaviour(Behaviour::rate_limited(600)));
    }
    let [(_, d_one, _), (_, d_two, _)] = FALLBACK_KEYS;
    cluster.mock.set_key(d_one, KeyScript::new([MODEL]).behaviour(Behaviour::rate_limited(600)));

    // On replica a: every key of c refuses (and cools), the turn falls back to d, until d-one
    // has refused once too (and cooled); d-two serves.
    let a = cluster.replicas[0].addr.clone();
    let mut opened = false;
    for i in 0..10 {
        let answer = new_conversation(&a, &cluster.token, &format!("on replica a {i}"))?;
        assert_eq!(answer.status, 200, "call {i} on a falls back and is served: {}\n{}", answer.body, cluster.logs());
        assert_eq!(answer.header("x-switchyard-connection"), Some("d"), "served by the fallback: {:?}", answer.headers);
        if cluster.mock.hits(d_one) >= 1 {
            opened = true;
            break;
        }
    }
    assert!(
        opened,
        "d-one was never picked on replica a: d hits {} / {}",
        cluster.mock.hits(d_one),
        cluster.mock.hits(d_two)
    );
    assert!(KEYS.iter().all(|(_, s, _)| cluster.mock.hits(s) == 1), "each key of c refused once: {:?}", cluster.hits());

    // On b and c: every turn falls back to d at once and its hop keeps off d-one.
    cluster.mock.reset_counts();
    let others = [cluster.replicas[1].addr.clone(), cluster.replicas[2].addr.clone()];
    for i in 0..20 {
        let addr = &others[i % 2];
        let answer = new_conversation(addr, &cluster.token, &format!("on another replica {i}"))?;
        assert_eq!(answer.status, 200, "turn {i} on {addr} is served: {}\n{}", answer.body, cluster.logs());
        assert_eq!(answer.header("x-switchyard-connection"), Some("d"), "served by the fallback: {:?}", answer.headers);
    }
    let (one, two) = (cluster.mock.hits(d_one), cluster.mock.hits(d_two));
    report(&format!(
        "fallback hops on b and c after d-one cooled on a: c {:?}, d-one {one}, d-two {two}",
        cluster.hits()
    ));
    assert_eq!(cluster.hits(), [0, 0, 0], "b and c obey the cooldowns of c's keys that a opened");
    assert_eq!(one, 0, "the hops on b and c read d's circuits from the store and keep off the key a cooled");
    assert_eq!(two, 20, "d-two serves every hop");
    Ok(())
}
