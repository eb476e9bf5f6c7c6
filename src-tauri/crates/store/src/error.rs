//! Store errors: the variants callers branch on (conflict, not found, duplicate).

use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    /// A CAS write named a revision that is no longer current.
    #[error("stale revision: expected {expected}, found {found}")]
    Conflict { expected: i64, found: i64 },
    /// The row does not exist (any more).
    #[error("{0} not found")]
    NotFound(&'static str),
    /// A unique constraint refused the write; `field` names the duplicated value.
    #[error("{field} already exists")]
    Duplicate { field: &'static str },
    #[error("database error: {0}")]
    Db(sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("corrupt row in {table}: {detail}")]
    Corrupt { table: &'static str, detail: String },
    /// A store copy cannot go on (the target is not an empty Switchyard store, or a value does
    /// not fit the target's column): nothing was copied.
    #[error("{0}")]
    CopyRefused(String),
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        if let sqlx::Error::Database(db) = &e {
            if db.is_unique_violation() {
                let msg = db.message();
                // Our own schema's constraint names (not provider text): map them to the field.
                let field = if msg.contains("connections.slug") {
                    "slug"
                } else if msg.contains("profiles.label") {
                    "label"
                } else if msg.contains("profiles.connection_id") {
                    "primary"
                } else {
                    "row"
                };
                return StoreError::Duplicate { field };
            }
        }
        StoreError::Db(e)
    }
}

/// After a CAS `UPDATE … WHERE id = ? AND revision = ?` matched nothing: tell conflict from
/// not-found by reading the current revision.
pub(crate) async fn cas_failure(
    conn: &mut sqlx::AnyConnection,
    table: &'static str,
    id: &str,
    expected: i64,
) -> StoreError {
    let sql = format!("SELECT revision FROM {table} WHERE id = $1");
    match sqlx::query_scalar::<_, i64>(&sql).bind(id).fetch_optional(conn).await {
        Ok(Some(found)) => StoreError::Conflict { expected, found },
        Ok(None) => StoreError::NotFound(table),
        Err(e) => StoreError::from(e),
    }
}
