//! Profile commands: add (the secret arrives once, as an argument, and is never returned),
//! edit, reorder, replace credential, remove.

use std::sync::Arc;

use switchyard_engine::{Engine, NewProfile, OrderEntry, ProfileEdit, ProfileView, Removal};
use tauri::State;

use crate::ipc::IpcError;
use crate::secret_arg::SecretArg;

#[tauri::command]
#[specta::specta]
pub async fn profile_add(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    input: NewProfile,
    secret: SecretArg,
) -> Result<ProfileView, IpcError> {
    Ok(engine.profile_add(&slug, input, secret.into_secret()).await?)
}

/// Label, weight, priority, enabled flag or primary status (CAS on `if_revision`).
#[tauri::command]
#[specta::specta]
pub async fn profile_edit(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    profile: String,
    edit: ProfileEdit,
) -> Result<ProfileView, IpcError> {
    Ok(engine.profile_edit(&slug, &profile, edit).await?)
}

/// New priority order of every profile of the connection, first tried first.
#[tauri::command]
#[specta::specta]
pub async fn profile_reorder(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    order: Vec<OrderEntry>,
) -> Result<Vec<ProfileView>, IpcError> {
    Ok(engine.profile_reorder(&slug, &order).await?)
}

/// Replaces the credential; evidence taken with the old one is stale from now on.
#[tauri::command]
#[specta::specta]
pub async fn profile_rotate(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    profile: String,
    secret: SecretArg,
) -> Result<ProfileView, IpcError> {
    Ok(engine.profile_rotate(&slug, &profile, secret.into_secret()).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn profile_remove(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    profile: String,
) -> Result<Removal, IpcError> {
    Ok(engine.profile_remove(&slug, &profile).await?)
}
