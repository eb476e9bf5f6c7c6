//! The `route_bindings` table (migration 0015): turn bindings, conversation bindings and pools'
//! conversation members a team relay's replicas share (invariant 25). A row is `scope` (`turn`,
//! `conversation`, `pool:<id>`), `key` (a turn key or a conversation key's hash, never a client's
//! raw id), `model` (`''` for a turn), the `target` kept (profile id or pool member key), its
//! last use, the window it was bound with and when it ends. Reads see only rows not yet expired;
//! [`sweep`] deletes the others.

use sqlx::AnyConnection;

use crate::error::StoreError;

/// One binding to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindingRow {
    pub scope: String,
    pub key: String,
    pub model: String,
    pub target: String,
    pub last_ms: i64,
    pub window_ms: i64,
}

impl BindingRow {
    pub fn expires_ms(&self) -> i64 {
        self.last_ms.saturating_add(self.window_ms)
    }
}

/// Writes `rows` in one statement (insert or replace by `(scope, key, model)`).
pub async fn put(conn: &mut AnyConnection, rows: &[BindingRow]) -> Result<(), StoreError> {
    if rows.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO route_bindings (scope, key, model, target, last_ms, window_ms, expires_ms) VALUES {} \
         ON CONFLICT (scope, key, model) DO UPDATE SET target = excluded.target, last_ms = excluded.last_ms, \
         window_ms = excluded.window_ms, expires_ms = excluded.expires_ms",
        crate::values::value_rows(crate::Backend::of(conn), rows.len(), 7)
    );
    let mut q = sqlx::query(&sql);
    for r in rows {
        q = q
            .bind(&r.scope)
            .bind(&r.key)
            .bind(&r.model)
            .bind(&r.target)
            .bind(r.last_ms)
            .bind(r.window_ms)
            .bind(r.expires_ms());
    }
    q.execute(conn).await?;
    Ok(())
}

/// Deletes every binding that ended before `now_ms`; returns how many.
pub async fn sweep(conn: &mut AnyConnection, now_ms: i64) -> Result<u64, StoreError> {
    Ok(sqlx::query("DELETE FROM route_bindings WHERE expires_ms <= $1")
        .bind(now_ms)
        .execute(conn)
        .await?
        .rows_affected())
}
