//! A connection's caps (issue 41, one person's spend cap): each limit on `connection:SLUG` as it
//! stands, setting a daily/monthly USD cap or requests per minute, removing one.

use std::sync::Arc;

use switchyard_engine::{CapKind, Engine, LimitInput, LimitStatusView, LimitView};
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

/// Every limit as configured.
#[tauri::command]
#[specta::specta]
pub async fn limit_list(engine: State<'_, Arc<Engine>>) -> Result<Vec<LimitView>, IpcError> {
    Ok(engine.limit_list().await?)
}

/// Every limit's current window (per user for a `users` limit), or those of `scope`.
#[tauri::command]
#[specta::specta]
pub async fn limit_status(
    engine: State<'_, Arc<Engine>>,
    scope: Option<String>,
) -> Result<Vec<LimitStatusView>, IpcError> {
    Ok(engine.limit_status(scope.as_deref()).await?)
}

/// Sets a limit (`limits set`): a new one, or a new capacity for the same id.
#[tauri::command]
#[specta::specta]
pub async fn limit_set(engine: State<'_, Arc<Engine>>, input: LimitInput) -> Result<LimitView, IpcError> {
    Ok(engine.limit_set_input(&input).await?)
}

/// Removes a limit by id.
#[tauri::command]
#[specta::specta]
pub async fn limit_remove(engine: State<'_, Arc<Engine>>, id: String) -> Result<(), IpcError> {
    Ok(engine.limit_remove(&id).await?)
}
