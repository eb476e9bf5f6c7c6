//! Export and import of shared configurations (issue 7): the file chosen in the window's save
//! or open dialog is written or read here, the rest is `Engine::export` / `Engine::import`.

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use specta::Type;
use switchyard_engine::{Conflict, Engine, ImportReport, MAX_IMPORT_BYTES};
use tauri::State;

use crate::ipc::IpcError;
use switchyard_engine::ErrorCode;

/// Where the export went and how many connections it holds.
#[derive(Debug, Clone, Serialize, Type)]
pub struct ExportResult {
    pub path: String,
    pub connections: i32,
}

fn invalid(message: String) -> IpcError {
    IpcError { code: ErrorCode::Invalid, message, gates: None }
}

/// The file's text, refused over the format's 1 MiB limit before it is read.
fn read_document(path: &str) -> Result<String, IpcError> {
    let file = Path::new(path);
    let size = std::fs::metadata(file).map_err(|e| invalid(format!("cannot read {path}: {e}")))?.len();
    if size > MAX_IMPORT_BYTES as u64 {
        return Err(invalid(format!(
            "{path} is {size} bytes; a shared configuration is at most {MAX_IMPORT_BYTES} bytes (1 MiB)"
        )));
    }
    std::fs::read_to_string(file).map_err(|e| invalid(format!("cannot read {path}: {e}")))
}

/// Pasted or dropped text, refused over the format's 1 MiB limit like a file.
fn check_text(text: &str) -> Result<(), IpcError> {
    if text.len() > MAX_IMPORT_BYTES {
        return Err(invalid(format!(
            "the pasted text is {} bytes; a shared configuration is at most {MAX_IMPORT_BYTES} bytes (1 MiB)",
            text.len()
        )));
    }
    Ok(())
}

/// Writes every connection (or `slugs`) as format v1 to `path`; never a key, locator or evidence.
#[tauri::command]
#[specta::specta]
pub async fn export_config(
    engine: State<'_, Arc<Engine>>,
    slugs: Option<Vec<String>>,
    path: String,
) -> Result<ExportResult, IpcError> {
    let text = engine.export(slugs.as_deref()).await?;
    let count = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v["connections"].as_array().map(Vec::len))
        .unwrap_or_default();
    std::fs::write(&path, text).map_err(|e| invalid(format!("cannot write {path}: {e}")))?;
    Ok(ExportResult { path, connections: i32::try_from(count).unwrap_or(i32::MAX) })
}

/// What importing `path` would create, rename or skip; writes nothing.
#[tauri::command]
#[specta::specta]
pub async fn import_preview(
    engine: State<'_, Arc<Engine>>,
    path: String,
    on_conflict: Conflict,
) -> Result<ImportReport, IpcError> {
    let text = read_document(&path)?;
    Ok(engine.import(&text, true, on_conflict).await?)
}

/// Imports `path` in one transaction: profiles disabled and without keys, modes pending.
#[tauri::command]
#[specta::specta]
pub async fn import_apply(
    engine: State<'_, Arc<Engine>>,
    path: String,
    on_conflict: Conflict,
) -> Result<ImportReport, IpcError> {
    let text = read_document(&path)?;
    Ok(engine.import(&text, false, on_conflict).await?)
}

/// What importing `text` (a configuration pasted from chat, or a dropped file's content) would
/// create, rename or skip; writes nothing.
#[tauri::command]
#[specta::specta]
pub async fn import_text_preview(
    engine: State<'_, Arc<Engine>>,
    text: String,
    on_conflict: Conflict,
) -> Result<ImportReport, IpcError> {
    check_text(&text)?;
    Ok(engine.import(&text, true, on_conflict).await?)
}

/// Imports `text` like `import_apply` imports a file.
#[tauri::command]
#[specta::specta]
pub async fn import_text_apply(
    engine: State<'_, Arc<Engine>>,
    text: String,
    on_conflict: Conflict,
) -> Result<ImportReport, IpcError> {
    check_text(&text)?;
    Ok(engine.import(&text, false, on_conflict).await?)
}
