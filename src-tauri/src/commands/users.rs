//! Relay users and the audit (issue 43: the console's Users and Audit screens; the desktop
//! carries the same commands so both are typed from one place): list, add (the token returned
//! once), edit, rotate (a new token once), revoke; the audit's rows.

use std::sync::Arc;

use switchyard_engine::{AuditView, Engine, NewUserToken, RelayUserInput, RelayUserView};
use tauri::State;

use crate::ipc::IpcError;

/// Every relay user, revoked ones included; never a token.
#[tauri::command]
#[specta::specta]
pub async fn relay_user_list(engine: State<'_, Arc<Engine>>) -> Result<Vec<RelayUserView>, IpcError> {
    Ok(engine.relay_user_list().await?)
}

/// Adds a user: their token, shown once.
#[tauri::command]
#[specta::specta]
pub async fn relay_user_add(
    engine: State<'_, Arc<Engine>>,
    name: String,
    input: RelayUserInput,
) -> Result<NewUserToken, IpcError> {
    Ok(engine.relay_user_add_input(&name, &input).await?)
}

/// Changes a user's role, scope or expiry (CAS on `if_revision`).
#[tauri::command]
#[specta::specta]
pub async fn relay_user_edit(
    engine: State<'_, Arc<Engine>>,
    name: String,
    input: RelayUserInput,
    if_revision: Option<u32>,
) -> Result<RelayUserView, IpcError> {
    Ok(engine.relay_user_edit_input(&name, &input, if_revision.map(i64::from)).await?)
}

/// A new token for a user, shown once; the old one is refused everywhere at once.
#[tauri::command]
#[specta::specta]
pub async fn relay_user_rotate(engine: State<'_, Arc<Engine>>, name: String) -> Result<NewUserToken, IpcError> {
    Ok(engine.relay_user_rotate_token(&name).await?)
}

/// Revokes a user's token.
#[tauri::command]
#[specta::specta]
pub async fn relay_user_revoke(engine: State<'_, Arc<Engine>>, name: String) -> Result<(), IpcError> {
    Ok(engine.relay_user_revoke(&name).await?)
}

/// The audit: every admin change, newest first (`since` RFC 3339 or `Nd`; `user` an actor's name).
#[tauri::command]
#[specta::specta]
pub async fn audit_list(
    engine: State<'_, Arc<Engine>>,
    since: Option<String>,
    user: Option<String>,
) -> Result<Vec<AuditView>, IpcError> {
    Ok(engine.audit_list(since.as_deref(), user.as_deref()).await?)
}
