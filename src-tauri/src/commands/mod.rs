//! Tauri commands: each fetches the engine from state, makes one engine call and maps the
//! error. No domain logic here; one module per noun.

pub mod activity;
pub mod autostart;
pub mod clients;
pub mod connections;
pub mod fallback;
pub mod limits;
pub mod pools;
pub mod portable;
pub mod profiles;
pub mod quota;
pub mod relay;
pub mod routing;
pub mod usage;
pub mod users;

use std::sync::Arc;

use serde::Serialize;
use specta::Type;
use switchyard_engine::Engine;
use tauri::State;

/// What the window shows in its header.
#[derive(Debug, Clone, Serialize, Type)]
pub struct AppInfo {
    pub version: String,
    pub data_dir: String,
}

#[tauri::command]
#[specta::specta]
pub fn app_info(engine: State<'_, Arc<Engine>>) -> AppInfo {
    AppInfo { version: env!("CARGO_PKG_VERSION").to_string(), data_dir: engine.data_dir().display().to_string() }
}
