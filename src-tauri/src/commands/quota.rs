//! Quota: the latest limit readings of a connection's profiles (read-only; the relay writes them).

use std::sync::Arc;

use switchyard_engine::{Engine, QuotaView};
use tauri::State;

use crate::ipc::IpcError;

/// Every profile of `slug` with its last-seen windows; `null` where the provider said nothing.
#[tauri::command]
#[specta::specta]
pub async fn quota(engine: State<'_, Arc<Engine>>, slug: String) -> Result<QuotaView, IpcError> {
    Ok(engine.quota(&slug).await?)
}
