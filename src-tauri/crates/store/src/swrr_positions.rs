//! The `swrr_positions` table (migration 0015): SWRR current weights per (target, model) — a
//! connection id, or `pool:<id>` for a pool — shared by a team relay's replicas so weights hold
//! over all their decisions together. The weights are text `id=current` joined by `,`, in the
//! state's order (profile ids and pool member keys hold neither `=` nor `,`). A write is a
//! compare-and-swap on `revision`: a replica that lost the race reads again and decides again.

use sqlx::AnyConnection;

use crate::error::StoreError;

/// The stored position of `(target, model)`: its weights text and revision (`None`: no row yet).
pub async fn get(conn: &mut AnyConnection, target: &str, model: &str) -> Result<Option<(String, i64)>, StoreError> {
    Ok(sqlx::query_as::<_, (String, i64)>(
        "SELECT weights, revision FROM swrr_positions WHERE target = $1 AND model = $2",
    )
    .bind(target)
    .bind(model)
    .fetch_optional(conn)
    .await?)
}

/// Writes `weights` if the stored revision is still `revision` (0: no row yet). True when written;
/// false when another writer advanced it first (read again and decide again).
pub async fn advance(
    conn: &mut AnyConnection,
    target: &str,
    model: &str,
    revision: i64,
    weights: &str,
) -> Result<bool, StoreError> {
    let done = if revision == 0 {
        sqlx::query(
            "INSERT INTO swrr_positions (target, model, weights, revision) VALUES ($1, $2, $3, 1) \
             ON CONFLICT (target, model) DO NOTHING",
        )
        .bind(target)
        .bind(model)
        .bind(weights)
        .execute(conn)
        .await?
    } else {
        sqlx::query(
            "UPDATE swrr_positions SET weights = $3, revision = revision + 1 \
             WHERE target = $1 AND model = $2 AND revision = $4",
        )
        .bind(target)
        .bind(model)
        .bind(weights)
        .bind(revision)
        .execute(conn)
        .await?
    };
    Ok(done.rows_affected() == 1)
}
