//! The `connections` table: one row per endpoint configuration.

use sqlx::{AnyConnection, FromRow};

use crate::error::{cas_failure, StoreError};

/// A connection row as stored. JSON columns stay text here; the engine decodes them.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct ConnectionRow {
    pub id: String,
    pub slug: String,
    pub protocol: String,
    pub base_url: String,
    pub headers_json: String,
    pub models_json: String,
    pub mapping_json: String,
    pub basis_fingerprint: String,
    pub routing_mode: String,
    pub routing_state: String,
    pub routing_note: Option<String>,
    pub wanted_mode: Option<String>,
    pub activated_at: Option<i64>,
    pub activated_by: Option<String>,
    pub revision: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// The user-editable definition of a connection (what `connection edit` changes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    pub protocol: String,
    pub base_url: String,
    pub headers_json: String,
    pub models_json: String,
    pub mapping_json: String,
    pub basis_fingerprint: String,
}

const COLUMNS: &str = "id, slug, protocol, base_url, headers_json, models_json, mapping_json, basis_fingerprint, \
     routing_mode, routing_state, routing_note, wanted_mode, activated_at, activated_by, revision, created_at, updated_at";

pub async fn insert(
    conn: &mut AnyConnection,
    id: &str,
    slug: &str,
    def: &Definition,
    now_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO connections (id, slug, protocol, base_url, headers_json, models_json, mapping_json, \
         basis_fingerprint, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(id)
    .bind(slug)
    .bind(&def.protocol)
    .bind(&def.base_url)
    .bind(&def.headers_json)
    .bind(&def.models_json)
    .bind(&def.mapping_json)
    .bind(&def.basis_fingerprint)
    .bind(now_ms)
    .bind(now_ms)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn by_slug(conn: &mut AnyConnection, slug: &str) -> Result<Option<ConnectionRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM connections WHERE slug = $1");
    Ok(sqlx::query_as::<_, ConnectionRow>(&sql).bind(slug).fetch_optional(conn).await?)
}

pub async fn list(conn: &mut AnyConnection) -> Result<Vec<ConnectionRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM connections ORDER BY slug");
    Ok(sqlx::query_as::<_, ConnectionRow>(&sql).fetch_all(conn).await?)
}

/// CAS update of the definition; returns the new revision.
pub async fn update_definition(
    conn: &mut AnyConnection,
    id: &str,
    expected: i64,
    def: &Definition,
    now_ms: i64,
) -> Result<i64, StoreError> {
    let done = sqlx::query_scalar::<_, i64>(
        "UPDATE connections SET protocol = $1, base_url = $2, headers_json = $3, models_json = $4, mapping_json = $5, \
         basis_fingerprint = $6, revision = revision + 1, updated_at = $7 WHERE id = $8 AND revision = $9 RETURNING revision",
    )
    .bind(&def.protocol)
    .bind(&def.base_url)
    .bind(&def.headers_json)
    .bind(&def.models_json)
    .bind(&def.mapping_json)
    .bind(&def.basis_fingerprint)
    .bind(now_ms)
    .bind(id)
    .bind(expected)
    .fetch_optional(&mut *conn)
    .await?;
    match done {
        Some(rev) => Ok(rev),
        None => Err(cas_failure(conn, "connections", id, expected).await),
    }
}

/// Routing columns changed together by activation, suspension and deactivation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routing {
    pub mode: String,
    pub state: String,
    pub note: Option<String>,
    pub wanted_mode: Option<String>,
    pub activated_at: Option<i64>,
    pub activated_by: Option<String>,
}

/// CAS update of the routing columns; returns the new revision.
pub async fn update_routing(
    conn: &mut AnyConnection,
    id: &str,
    expected: i64,
    routing: &Routing,
    now_ms: i64,
) -> Result<i64, StoreError> {
    let done = sqlx::query_scalar::<_, i64>(
        "UPDATE connections SET routing_mode = $1, routing_state = $2, routing_note = $3, wanted_mode = $4, \
         activated_at = $5, activated_by = $6, revision = revision + 1, updated_at = $7 \
         WHERE id = $8 AND revision = $9 RETURNING revision",
    )
    .bind(&routing.mode)
    .bind(&routing.state)
    .bind(&routing.note)
    .bind(&routing.wanted_mode)
    .bind(routing.activated_at)
    .bind(&routing.activated_by)
    .bind(now_ms)
    .bind(id)
    .bind(expected)
    .fetch_optional(&mut *conn)
    .await?;
    match done {
        Some(rev) => Ok(rev),
        None => Err(cas_failure(conn, "connections", id, expected).await),
    }
}

/// CAS delete; profiles, evidence and circuits go with it (foreign keys cascade).
pub async fn delete(conn: &mut AnyConnection, id: &str, expected: i64) -> Result<(), StoreError> {
    let done = sqlx::query("DELETE FROM connections WHERE id = $1 AND revision = $2")
        .bind(id)
        .bind(expected)
        .execute(&mut *conn)
        .await?;
    if done.rows_affected() == 1 {
        Ok(())
    } else {
        Err(cas_failure(conn, "connections", id, expected).await)
    }
}
