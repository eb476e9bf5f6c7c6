//! Tauri commands: each fetches the engine from state, makes one engine call and maps the
//! error. No domain logic here.

use serde::Serialize;
use specta::Type;
use switchyard_engine::{ConnectionDetail, Engine};
use tauri::State;

use crate::ipc::IpcError;

/// What the window shows in its header.
#[derive(Debug, Clone, Serialize, Type)]
pub struct AppInfo {
    pub version: String,
    pub data_dir: String,
}

#[tauri::command]
#[specta::specta]
pub async fn list_connections(
    engine: State<'_, Engine>,
) -> Result<Vec<ConnectionDetail>, IpcError> {
    Ok(engine.connection_overview().await?)
}

#[tauri::command]
#[specta::specta]
pub fn app_info(engine: State<'_, Engine>) -> AppInfo {
    AppInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        data_dir: engine.data_dir().display().to_string(),
    }
}
