//! Relay commands: status, the relay token (the only command whose answer carries it: the
//! relay's own credential, never a provider secret), token rotation, port change, retry.

use std::sync::Arc;

use tauri::State;

use crate::ipc::IpcError;
use crate::relay::{RelayService, RelayStatus};

#[tauri::command]
#[specta::specta]
pub fn relay_status(relay: State<'_, Arc<RelayService>>) -> RelayStatus {
    relay.status()
}

/// The relay token, for the Relay screen's reveal and copy; `rotate` replaces it first (the
/// relay restarts and accepts only the new one).
#[tauri::command]
#[specta::specta]
pub async fn relay_token(relay: State<'_, Arc<RelayService>>, rotate: bool) -> Result<String, IpcError> {
    Ok(relay.token(rotate).await?.expose().to_string())
}

/// Saves the relay port (1024–65535) and restarts the relay on it.
#[tauri::command]
#[specta::specta]
pub async fn relay_set_port(relay: State<'_, Arc<RelayService>>, port: i32) -> Result<RelayStatus, IpcError> {
    Ok(relay.set_port(port).await?)
}

/// Starts the relay again (after its port was freed).
#[tauri::command]
#[specta::specta]
pub async fn relay_restart(relay: State<'_, Arc<RelayService>>) -> Result<RelayStatus, IpcError> {
    Ok(relay.restart().await)
}
