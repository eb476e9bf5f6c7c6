//! A connection's caps (issue 41, one person's spend cap): each limit on `connection:SLUG` as it
//! stands, setting a daily/monthly USD cap or requests per minute, removing one.

use std::sync::Arc;

use switchyard_engine::{CapKind, Engine, LimitStatusView, LimitView};
use tauri::State;

use crate::ipc::IpcError;

/// The caps on `slug` with their current windows.
#[tauri::command]
#[specta::specta]
pub async fn connection_limits(engine: State<'_, Arc<Engine>>, slug: String) -> Result<Vec<LimitStatusView>, IpcError> {
    Ok(engine.connection_limits(&slug).await?)
}

/// Sets a cap of `kind` on `slug` (the same kind again changes its amount, keeping what was spent).
#[tauri::command]
#[specta::specta]
pub async fn connection_cap_set(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    kind: CapKind,
    amount: f64,
) -> Result<LimitView, IpcError> {
    Ok(engine.connection_cap_set(&slug, kind, amount).await?)
}

/// Removes a limit by id.
#[tauri::command]
#[specta::specta]
pub async fn limit_remove(engine: State<'_, Arc<Engine>>, id: String) -> Result<(), IpcError> {
    Ok(engine.limit_remove(&id).await?)
}
