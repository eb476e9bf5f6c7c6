//! Probe leases on circuit rows: one claim wins, and a copy's `release_all_leases` ends every
//! lease (a copied store's leases name replicas of the store it came from), so the next claim of
//! any replica wins at once instead of after the lease.

use switchyard_store::circuits::{self, CircuitRow, ProbeClaim};
use switchyard_store::StoreError;

use crate::cas::seeded;

#[tokio::test]
async fn releasing_every_lease_lets_another_replica_claim_at_once() -> Result<(), StoreError> {
    let (_dir, store) = seeded().await?;
    let mut conn = store.acquire().await?;
    let cooled = CircuitRow {
        profile_id: "p1".into(),
        model: String::new(),
        state: "open".into(),
        kind: Some("rate_limited".into()),
        until_ms: Some(1_000),
        backoff_level: 1,
        revision: 0,
        updated_at: 1,
        lease_owner: None,
        lease_until_ms: None,
    };
    circuits::upsert(&mut conn, &cooled).await?;
    assert_eq!(
        circuits::claim_probe(&mut conn, "p1", "", ("a", "a#1"), 2_000, 60_000).await?,
        ProbeClaim::Claimed,
        "the cooldown ended: replica a takes the probe"
    );
    assert_eq!(
        circuits::claim_probe(&mut conn, "p1", "", ("b", "b#1"), 2_000, 60_000).await?,
        ProbeClaim::Held,
        "b waits while a's lease runs"
    );
    assert_eq!(circuits::release_all_leases(&mut conn).await?, 1, "one lease ended");
    assert_eq!(
        circuits::claim_probe(&mut conn, "p1", "", ("b", "b#1"), 2_000, 60_000).await?,
        ProbeClaim::Claimed,
        "with the lease gone, b takes the probe at once"
    );
    let row = circuits::all(&mut conn).await?.pop().ok_or(StoreError::NotFound("circuits"))?;
    assert_eq!((row.state.as_str(), row.until_ms), ("open", Some(1_000)), "the cooldown itself is kept");
    Ok(())
}
