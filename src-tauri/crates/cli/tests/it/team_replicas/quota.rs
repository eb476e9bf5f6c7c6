//! Quota readings across replicas: a window one replica read as spent keeps every replica's
//! quota-aware selection off that key (each quota writer pass writes this replica's readings and
//! reads the others', `QuotaBoard::adopt`), not only the replica that saw the answer.

use std::time::Duration;

use switchyard_mock_provider::KeyScript;

use super::call::{new_conversation, MODEL};
use super::cluster::{report, Cluster, Options, COOLED};
use crate::common::TestResult;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quota_window_one_replica_read_as_spent_keeps_the_others_off_that_key() -> TestResult {
    let Some(cluster) = Cluster::start("quota_shared", Options::default()).await? else { return Ok(()) };
    cluster.store.cli_ok(&["routing", "quota-aware", "c", "on", "--reserve-pct", "10"], None)?;
    // The heaviest key answers 200 but reports 1 request of 100 left: under the 10 % reserve.
    cluster.mock.set_key(COOLED, KeyScript::new([MODEL]).quota(100, 1));
    std::thread::sleep(Duration::from_millis(1500)); // every replica's snapshot has the setting
    let a = cluster.replicas[0].addr.clone();
    for i in 0..20 {
        let answer = new_conversation(&a, &cluster.token, &format!("on replica a {i}"))?;
        assert_eq!(answer.status, 200, "served on a: {}\n{}", answer.body, cluster.logs());
        if cluster.mock.hits(COOLED) >= 1 {
            break;
        }
    }
    assert_eq!(cluster.mock.hits(COOLED), 1, "replica a read the key's spent window from one answer");
    // a's writer pass stores the reading, b's and c's next passes read it (2 s each).
    std::thread::sleep(Duration::from_millis(5000));
    cluster.mock.reset_counts();
    for i in 0..20 {
        let addr = &cluster.replicas[1 + i % 2].addr;
        let answer = new_conversation(addr, &cluster.token, &format!("on replica b or c {i}"))?;
        assert_eq!(answer.status, 200, "served on b/c: {}\n{}", answer.body, cluster.logs());
    }
    let hits = cluster.hits();
    report(&format!("quota read on a, 20 new turns on b and c: keys 5:3:2 got {hits:?}"));
    assert_eq!(hits[0], 0, "no replica sends to a key another replica read as under its reserve: {hits:?}");
    assert_eq!(hits.iter().sum::<u64>(), 20, "the turns went to the other keys: {hits:?}");
    Ok(())
}
