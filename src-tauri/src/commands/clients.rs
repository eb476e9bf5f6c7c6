//! Client set-up commands ("Use with …" on a connection page): preview the change to a coding
//! agent's config file, write it (refused when the file moved since the preview: the window
//! passes back the hash it previewed), status, restore — adapters over `switchyard-client-setup`.
//! The relay token is written into the file but never returned: previews show it as a placeholder.

use std::sync::Arc;

use switchyard_client_setup::{
    self as client_setup, Client, ClientHome, ClientPreview, ClientRequest, ClientRestoreReport, ClientSetupReport,
    ClientStatus,
};
use switchyard_engine::{Engine, EngineError};
use tauri::State;

use crate::ipc::IpcError;
use crate::relay::RelayService;

/// The port the window's relay listens on (the setting when it is not listening).
fn relay_port(relay: &RelayService) -> Option<u16> {
    relay.status().bound_port.and_then(|p| u16::try_from(p).ok()).or_else(RelayService::port_from_env)
}

fn request(
    relay: &RelayService,
    client: &str,
    slug: String,
    move_key: Option<String>,
) -> Result<ClientRequest, EngineError> {
    let move_key = move_key.filter(|l| !l.trim().is_empty());
    Ok(ClientRequest {
        client: client.parse()?,
        slug: Some(slug),
        home: ClientHome::from_env(),
        port: relay_port(relay),
        move_key,
    })
}

#[tauri::command]
#[specta::specta]
pub async fn client_status(engine: State<'_, Arc<Engine>>, client: String) -> Result<ClientStatus, IpcError> {
    let client: Client = client.parse()?;
    Ok(client_setup::status(&engine, client, &ClientHome::from_env()).await?)
}

/// The exact change as a unified diff, and the hash of the file it was computed from.
#[tauri::command]
#[specta::specta]
pub async fn client_preview(
    engine: State<'_, Arc<Engine>>,
    relay: State<'_, Arc<RelayService>>,
    client: String,
    slug: String,
    move_key: Option<String>,
) -> Result<ClientPreview, IpcError> {
    Ok(client_setup::preview(&engine, &request(&relay, &client, slug, move_key)?).await?)
}

/// Writes the previewed change; `conflict` when the file changed since `file_hash` was read.
#[tauri::command]
#[specta::specta]
pub async fn client_setup(
    engine: State<'_, Arc<Engine>>,
    relay: State<'_, Arc<RelayService>>,
    client: String,
    slug: String,
    move_key: Option<String>,
    file_hash: String,
) -> Result<ClientSetupReport, IpcError> {
    Ok(client_setup::setup(&engine, &request(&relay, &client, slug, move_key)?, &file_hash).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn client_restore(
    engine: State<'_, Arc<Engine>>,
    client: String,
    force: bool,
) -> Result<ClientRestoreReport, IpcError> {
    let client: Client = client.parse()?;
    Ok(client_setup::restore(&engine, client, &ClientHome::from_env(), force).await?.report)
}
