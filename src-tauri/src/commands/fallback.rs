//! Fallback chains (issue 16): show, set (stored inactive), clear, activate behind the hop
//! gates (the refusal carries the report), deactivate; and when each key was last checked and
//! when the relay's background re-verification is due.

use std::sync::Arc;

use switchyard_engine::{Engine, FallbackStatus, KeyCheck};
use tauri::State;

use crate::ipc::IpcError;

#[tauri::command]
#[specta::specta]
pub async fn fallback_status(engine: State<'_, Arc<Engine>>, slug: String) -> Result<FallbackStatus, IpcError> {
    Ok(engine.fallback_status(&slug).await?)
}

/// Sets the chain to `hops` (`OTHER` or `OTHER=MODEL`, in order); an empty list clears it.
#[tauri::command]
#[specta::specta]
pub async fn fallback_set(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    hops: Vec<String>,
) -> Result<FallbackStatus, IpcError> {
    if hops.is_empty() {
        return Ok(engine.fallback_clear(&slug).await?);
    }
    Ok(engine.fallback_set(&slug, &hops).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn fallback_activate(engine: State<'_, Arc<Engine>>, slug: String) -> Result<FallbackStatus, IpcError> {
    Ok(engine.fallback_activate(&slug).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn fallback_deactivate(engine: State<'_, Arc<Engine>>, slug: String) -> Result<FallbackStatus, IpcError> {
    Ok(engine.fallback_deactivate(&slug).await?)
}

/// Per key of `slug`: when it was last checked and when the background check is due.
#[tauri::command]
#[specta::specta]
pub async fn key_checks(engine: State<'_, Arc<Engine>>, slug: String) -> Result<Vec<KeyCheck>, IpcError> {
    Ok(engine.reverify_plan(&slug).await?)
}
