//! Starting with the system (issue 17): the wish is the engine's setting; the OS entry is
//! made to match it (`crate::autostart`).

use std::sync::Arc;

use serde::Serialize;
use specta::Type;
use switchyard_engine::Engine;
use tauri::State;

use crate::ipc::IpcError;
use switchyard_engine::ErrorCode;

/// Whether the app starts with the system, and the entry that makes it so.
#[derive(Debug, Clone, Serialize, Type)]
pub struct AutostartView {
    pub enabled: bool,
    /// The autostart entry (Linux: an XDG `.desktop` file), when there is one.
    pub entry: Option<String>,
}

fn view(enabled: bool) -> AutostartView {
    let entry = crate::autostart::entry_path()
        .filter(|p| enabled && crate::autostart::present_at(p))
        .map(|p| p.display().to_string());
    AutostartView { enabled, entry }
}

#[tauri::command]
#[specta::specta]
pub async fn autostart_status(engine: State<'_, Arc<Engine>>) -> Result<AutostartView, IpcError> {
    Ok(view(engine.start_with_system().await?))
}

/// Turns starting with the system on or off: the OS entry first, then the setting.
#[tauri::command]
#[specta::specta]
pub async fn autostart_set(engine: State<'_, Arc<Engine>>, enabled: bool) -> Result<AutostartView, IpcError> {
    crate::autostart::apply(enabled).map_err(|message| IpcError {
        code: ErrorCode::Precondition,
        message,
        gates: None,
    })?;
    engine.set_start_with_system(enabled).await?;
    Ok(view(enabled))
}
