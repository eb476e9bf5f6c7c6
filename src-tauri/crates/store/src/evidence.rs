//! The `evidence` table: the latest test/discovery result per profile, bound to the
//! credential revision and basis fingerprint it was taken under.

use sqlx::{AnyConnection, FromRow};

use crate::error::StoreError;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct EvidenceRow {
    pub profile_id: String,
    pub credential_revision: i64,
    pub basis_fingerprint: String,
    pub verified_at: i64,
    pub outcome: String,
    pub source: String,
    pub models_json: String,
    pub detail: Option<String>,
    pub revision: i64,
}

/// Replaces the profile's evidence (a new verification supersedes the old one).
pub async fn upsert(conn: &mut AnyConnection, e: &EvidenceRow) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar::<_, i64>(
        "INSERT INTO evidence (profile_id, credential_revision, basis_fingerprint, verified_at, outcome, source, models_json, detail) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT(profile_id) DO UPDATE SET \
         credential_revision = excluded.credential_revision, basis_fingerprint = excluded.basis_fingerprint, \
         verified_at = excluded.verified_at, outcome = excluded.outcome, source = excluded.source, \
         models_json = excluded.models_json, detail = excluded.detail, revision = evidence.revision + 1 RETURNING revision",
    )
    .bind(&e.profile_id)
    .bind(e.credential_revision)
    .bind(&e.basis_fingerprint)
    .bind(e.verified_at)
    .bind(&e.outcome)
    .bind(&e.source)
    .bind(&e.models_json)
    .bind(&e.detail)
    .fetch_one(conn)
    .await?)
}

pub async fn for_profile(conn: &mut AnyConnection, profile_id: &str) -> Result<Option<EvidenceRow>, StoreError> {
    Ok(sqlx::query_as::<_, EvidenceRow>(
        "SELECT profile_id, credential_revision, basis_fingerprint, verified_at, outcome, source, models_json, detail, revision \
         FROM evidence WHERE profile_id = $1",
    )
    .bind(profile_id)
    .fetch_optional(conn)
    .await?)
}

/// The evidence of every profile of a connection, in one query (readiness loads it once).
pub async fn for_connection(conn: &mut AnyConnection, connection_id: &str) -> Result<Vec<EvidenceRow>, StoreError> {
    Ok(sqlx::query_as::<_, EvidenceRow>(
        "SELECT e.profile_id, e.credential_revision, e.basis_fingerprint, e.verified_at, e.outcome, e.source, \
         e.models_json, e.detail, e.revision \
         FROM evidence e JOIN profiles p ON p.id = e.profile_id WHERE p.connection_id = $1",
    )
    .bind(connection_id)
    .fetch_all(conn)
    .await?)
}
