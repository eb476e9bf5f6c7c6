//! The attempt ledger as the Activity screen polls it.

use std::sync::Arc;

use switchyard_engine::{AttemptView, Engine};
use tauri::State;

use crate::ipc::IpcError;

/// The newest `limit` attempts of `slug` (1–10 000), newest first.
#[tauri::command]
#[specta::specta]
pub async fn attempts(engine: State<'_, Arc<Engine>>, slug: String, limit: i32) -> Result<Vec<AttemptView>, IpcError> {
    Ok(engine.attempts(&slug, i64::from(limit)).await?)
}

/// The newest `limit` attempts of `slug`, of `user` only when given (the console's filter).
#[tauri::command]
#[specta::specta]
pub async fn attempts_of(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    limit: i32,
    user: Option<String>,
) -> Result<Vec<AttemptView>, IpcError> {
    Ok(engine.attempts_of(&slug, i64::from(limit), user.as_deref()).await?)
}
