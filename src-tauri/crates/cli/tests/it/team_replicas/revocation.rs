//! `relay users revoke NAME` on the shared store: every replica refuses the token within a
//! second (each re-reads the live token hashes every `USERS_REFRESH_MS`), measured per replica.

use std::time::{Duration, Instant};

use super::call::new_conversation;
use super::cluster::{report, Cluster, Options};
use crate::common::TestResult;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_user_token_gets_401_within_a_second_on_every_replica() -> TestResult {
    let Some(cluster) = Cluster::start("revoke", Options::default()).await? else { return Ok(()) };
    let bob = cluster.store.user_add("bob")?;
    let addrs: Vec<String> = cluster.replicas.iter().map(|r| r.addr.clone()).collect();
    // A user added after the replicas started is accepted by each within the refresh too.
    for addr in &addrs {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let answer = new_conversation(addr, &bob, "before the revocation")?;
            if answer.status == 200 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "bob's new token is accepted on {addr}: {} {}",
                answer.status,
                answer.body
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    cluster.store.cli_ok(&["relay", "users", "revoke", "bob"], None)?;
    let revoked = Instant::now();
    let mut took = Vec::new();
    for addr in &addrs {
        loop {
            let answer = new_conversation(addr, &bob, "after the revocation")?;
            if answer.status == 401 {
                took.push(revoked.elapsed());
                break;
            }
            assert_eq!(answer.status, 200, "until refused, served: {}", answer.body);
            assert!(revoked.elapsed() < Duration::from_secs(3), "{addr} still accepts bob 3 s after the revocation");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    report(&format!("revoked token refused after {took:?} on replicas a, b, c (measured from the revoke's exit)"));
    for (addr, t) in addrs.iter().zip(&took) {
        assert!(*t <= Duration::from_secs(1), "{addr} refused the revoked token after {t:?}, more than a second");
    }
    for addr in &addrs {
        let answer = new_conversation(addr, &cluster.token, "another user's token")?;
        assert_eq!(answer.status, 200, "another user's token still works on {addr}: {}", answer.body);
    }
    Ok(())
}
