//! The `circuits` table: persisted cooldowns per profile (`model = ''`) and per
//! (profile, model). On an embedded store probe claims live in memory only; on a shared store
//! (a team relay's replicas) the half-open probe is a lease on the row (`lease_owner`,
//! `lease_until_ms`, migration 0015) claimed by one conditional update ([`claim_probe`]).

use sqlx::{AnyConnection, FromRow};

use crate::error::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct CircuitRow {
    pub profile_id: String,
    pub model: String,
    pub state: String,
    pub kind: Option<String>,
    pub until_ms: Option<i64>,
    pub backoff_level: i64,
    pub revision: i64,
    pub updated_at: i64,
    /// The replica holding the half-open probe's lease, and until when (shared store only).
    pub lease_owner: Option<String>,
    pub lease_until_ms: Option<i64>,
}

/// Writes the circuit's current state, creating the row if needed; any probe lease on it ends
/// (the write is a probe's outcome or a new failure).
pub async fn upsert(conn: &mut AnyConnection, c: &CircuitRow) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar::<_, i64>(
        "INSERT INTO circuits (profile_id, model, state, kind, until_ms, backoff_level, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
         ON CONFLICT(profile_id, model) DO UPDATE SET state = excluded.state, kind = excluded.kind, \
         until_ms = excluded.until_ms, backoff_level = excluded.backoff_level, updated_at = excluded.updated_at, \
         lease_owner = NULL, lease_until_ms = NULL, revision = circuits.revision + 1 RETURNING revision",
    )
    .bind(&c.profile_id)
    .bind(&c.model)
    .bind(&c.state)
    .bind(&c.kind)
    .bind(c.until_ms)
    .bind(c.backoff_level)
    .bind(c.updated_at)
    .fetch_one(conn)
    .await?)
}

/// Resets every circuit of a profile (credential replacement, disable, re-verification).
pub async fn clear_profile(conn: &mut AnyConnection, profile_id: &str) -> Result<u64, StoreError> {
    Ok(sqlx::query("DELETE FROM circuits WHERE profile_id = $1").bind(profile_id).execute(conn).await?.rows_affected())
}

/// Every stored circuit (start-up rebuilds the in-memory board from these).
pub async fn all(conn: &mut AnyConnection) -> Result<Vec<CircuitRow>, StoreError> {
    Ok(sqlx::query_as::<_, CircuitRow>(
        "SELECT profile_id, model, state, kind, until_ms, backoff_level, revision, updated_at, lease_owner, \
         lease_until_ms FROM circuits ORDER BY profile_id, model",
    )
    .fetch_all(conn)
    .await?)
}

/// Deletes one circuit row (`model = ''` is the credential-wide one).
pub async fn clear_one(conn: &mut AnyConnection, profile_id: &str, model: &str) -> Result<u64, StoreError> {
    Ok(sqlx::query("DELETE FROM circuits WHERE profile_id = $1 AND model = $2")
        .bind(profile_id)
        .bind(model)
        .execute(conn)
        .await?
        .rows_affected())
}

/// What a probe claim found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeClaim {
    /// This replica holds the probe's lease until the time it asked for.
    Claimed,
    /// Another replica holds it, or the circuit is still cooling.
    Held,
    /// No row: the circuit was closed meanwhile (another replica's probe succeeded).
    Closed,
}

/// Claims the half-open probe of (profile, model) as `lease` (`<replica>#<n>`) until
/// `lease_until_ms`, in one conditional update: only when the cooldown ended by `now_ms` and no
/// unexpired lease of another replica exists (a lease of this replica — `replica` — is one it
/// abandoned and is releasing: its board admits one probe at a time). Of any number of replicas
/// claiming at once exactly one gets [`ProbeClaim::Claimed`].
pub async fn claim_probe(
    conn: &mut AnyConnection,
    profile_id: &str,
    model: &str,
    (replica, lease): (&str, &str),
    now_ms: i64,
    lease_until_ms: i64,
) -> Result<ProbeClaim, StoreError> {
    let claimed = sqlx::query(
        "UPDATE circuits SET lease_owner = $3, lease_until_ms = $4 WHERE profile_id = $1 AND model = $2 \
         AND state = 'open' AND until_ms IS NOT NULL AND until_ms <= $5 \
         AND (lease_until_ms IS NULL OR lease_until_ms <= $5 OR lease_owner LIKE $6)",
    )
    .bind(profile_id)
    .bind(model)
    .bind(lease)
    .bind(lease_until_ms)
    .bind(now_ms)
    .bind(format!("{replica}#%"))
    .execute(&mut *conn)
    .await?
    .rows_affected();
    if claimed == 1 {
        return Ok(ProbeClaim::Claimed);
    }
    let exists = sqlx::query_scalar::<_, i64>("SELECT revision FROM circuits WHERE profile_id = $1 AND model = $2")
        .bind(profile_id)
        .bind(model)
        .fetch_optional(conn)
        .await?;
    Ok(if exists.is_some() { ProbeClaim::Held } else { ProbeClaim::Closed })
}

/// Ends every probe lease (a copied store's leases name replicas of the store it came from).
pub async fn release_all_leases(conn: &mut AnyConnection) -> Result<u64, StoreError> {
    Ok(sqlx::query("UPDATE circuits SET lease_owner = NULL, lease_until_ms = NULL WHERE lease_owner IS NOT NULL")
        .execute(conn)
        .await?
        .rows_affected())
}

/// Ends probe lease `owner` (`<replica>#<n>`) on (profile, model) without an outcome (the probe was abandoned:
/// client gone, cancelled), so another replica may probe at once instead of after the lease.
pub async fn release_probe(
    conn: &mut AnyConnection,
    profile_id: &str,
    model: &str,
    owner: &str,
) -> Result<u64, StoreError> {
    Ok(sqlx::query(
        "UPDATE circuits SET lease_owner = NULL, lease_until_ms = NULL \
         WHERE profile_id = $1 AND model = $2 AND lease_owner = $3",
    )
    .bind(profile_id)
    .bind(model)
    .bind(owner)
    .execute(conn)
    .await?
    .rows_affected())
}
