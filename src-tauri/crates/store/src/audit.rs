//! The `audit` table: one row per admin change (users, scopes, limits) — who, what, when, the
//! revision before and after. Never a secret: the callers write names, ids, revisions and a
//! JSON summary of the new values (no token, no key).

use sqlx::{AnyConnection, FromRow};

use crate::error::StoreError;

#[derive(Debug, Clone, Default, PartialEq, Eq, FromRow)]
pub struct AuditRow {
    pub at_ms: i64,
    /// `cli:<os user>`, `desktop`, or `user:<name>` (an admin token's user).
    pub actor: String,
    /// `user.add`, `user.edit`, `user.rotate`, `user.revoke`, `limit.set`, `limit.remove`, ….
    pub action: String,
    /// What changed: a user's name, a limit's id.
    pub subject: String,
    pub revision_before: Option<i64>,
    pub revision_after: Option<i64>,
    /// A JSON object of the values set (never a secret).
    pub detail: Option<String>,
}

pub async fn insert(conn: &mut AnyConnection, row: &AuditRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO audit (at_ms, actor, action, subject, revision_before, revision_after, detail) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(row.at_ms)
    .bind(&row.actor)
    .bind(&row.action)
    .bind(&row.subject)
    .bind(row.revision_before)
    .bind(row.revision_after)
    .bind(row.detail.as_deref())
    .execute(conn)
    .await?;
    Ok(())
}

/// Rows at or after `since_ms`, oldest first; `actor` narrows to one actor (`user:NAME`,
/// `cli:…`, `desktop`) or, given a bare name, to the rows that name it as actor or subject.
pub async fn list(conn: &mut AnyConnection, since_ms: i64, name: Option<&str>) -> Result<Vec<AuditRow>, StoreError> {
    let base =
        "SELECT at_ms, actor, action, subject, revision_before, revision_after, detail FROM audit WHERE at_ms >= $1";
    Ok(match name {
        None => sqlx::query_as::<_, AuditRow>(&format!("{base} ORDER BY id")).bind(since_ms).fetch_all(conn).await?,
        Some(name) => {
            sqlx::query_as::<_, AuditRow>(&format!("{base} AND (actor = $2 OR actor = $3 OR subject = $2) ORDER BY id"))
                .bind(since_ms)
                .bind(name)
                .bind(format!("user:{name}"))
                .fetch_all(conn)
                .await?
        }
    })
}
