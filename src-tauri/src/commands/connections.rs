//! Connection commands: overview, show, add (optionally with the legacy key), edit, remove.

use std::sync::Arc;

use switchyard_engine::{ConnectionDetail, ConnectionEdit, ConnectionView, Engine, NewConnection, Removal};
use tauri::State;

use crate::ipc::IpcError;
use crate::secret_arg::SecretArg;

/// Every connection with its profiles.
#[tauri::command]
#[specta::specta]
pub async fn list_connections(engine: State<'_, Arc<Engine>>) -> Result<Vec<ConnectionDetail>, IpcError> {
    Ok(engine.connection_overview().await?)
}

/// One connection with its profiles (priority order).
#[tauri::command]
#[specta::specta]
pub async fn connection_show(engine: State<'_, Arc<Engine>>, slug: String) -> Result<ConnectionDetail, IpcError> {
    Ok(engine.connection_show(&slug).await?)
}

/// Adds a connection; with `secret` its key becomes the primary profile (legacy mode).
#[tauri::command]
#[specta::specta]
pub async fn connection_add(
    engine: State<'_, Arc<Engine>>,
    input: NewConnection,
    secret: Option<SecretArg>,
) -> Result<ConnectionDetail, IpcError> {
    let secret = secret.map(SecretArg::into_secret);
    Ok(engine.connection_add(input, secret).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn connection_edit(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    edit: ConnectionEdit,
) -> Result<ConnectionView, IpcError> {
    Ok(engine.connection_edit(&slug, edit).await?)
}

/// Removes a connection, its profiles and their keychain entries.
#[tauri::command]
#[specta::specta]
pub async fn connection_remove(engine: State<'_, Arc<Engine>>, slug: String) -> Result<Removal, IpcError> {
    Ok(engine.connection_remove(&slug).await?)
}
