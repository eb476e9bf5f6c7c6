//! Pools (issue 29): list, show (members, gates, shares against weights), add and edit
//! (stored inactive), remove, activate behind the pool's gates (the refusal carries the
//! report), deactivate. One engine call each.

use std::sync::Arc;

use switchyard_engine::{Engine, PoolStatus, PoolView, Strategy};
use tauri::State;

use crate::ipc::IpcError;

#[tauri::command]
#[specta::specta]
pub async fn pool_list(engine: State<'_, Arc<Engine>>) -> Result<Vec<PoolView>, IpcError> {
    Ok(engine.pool_list().await?)
}

#[tauri::command]
#[specta::specta]
pub async fn pool_status(engine: State<'_, Arc<Engine>>, pool: String) -> Result<PoolStatus, IpcError> {
    Ok(engine.pool_status(&pool).await?)
}

/// Adds a pool; `members` are `CONN[=MODEL][:WEIGHT]`, in priority order.
#[tauri::command]
#[specta::specta]
pub async fn pool_add(
    engine: State<'_, Arc<Engine>>,
    pool: String,
    protocol: String,
    members: Vec<String>,
) -> Result<PoolStatus, IpcError> {
    Ok(engine.pool_add(&pool, &protocol, &members).await?)
}

/// Replaces a pool's members (it goes inactive until activated again).
#[tauri::command]
#[specta::specta]
pub async fn pool_edit(
    engine: State<'_, Arc<Engine>>,
    pool: String,
    members: Vec<String>,
    if_revision: Option<i32>,
) -> Result<PoolStatus, IpcError> {
    Ok(engine.pool_edit(&pool, &members, if_revision.map(i64::from)).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn pool_remove(engine: State<'_, Arc<Engine>>, pool: String) -> Result<(), IpcError> {
    Ok(engine.pool_remove(&pool).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn pool_activate(
    engine: State<'_, Arc<Engine>>,
    pool: String,
    mode: Strategy,
) -> Result<PoolStatus, IpcError> {
    Ok(engine.pool_activate(&pool, mode).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn pool_deactivate(engine: State<'_, Arc<Engine>>, pool: String) -> Result<PoolStatus, IpcError> {
    Ok(engine.pool_deactivate(&pool).await?)
}
