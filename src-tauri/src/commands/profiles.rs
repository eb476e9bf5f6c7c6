//! Profile commands: add (the secret arrives once, as an argument, and is never returned;
//! a kind other than an API key with its credential input), edit, reorder, replace credential
//! (a token with its expiry), remove, and an external profile's sign-in: the command to run in a
//! terminal and "check again".

use std::sync::Arc;

use switchyard_engine::{
    BrowserSignInView, DeviceCodeView, Engine, NewCredential, NewProfile, OrderEntry, ProfileEdit, ProfileView, Removal,
};
use tauri::State;

use crate::ipc::IpcError;
use crate::secret_arg::SecretArg;

#[tauri::command]
#[specta::specta]
/// `credential` absent: an API key. An `external` profile takes no secret.
pub async fn profile_add(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    input: NewProfile,
    secret: Option<SecretArg>,
    credential: Option<NewCredential>,
) -> Result<ProfileView, IpcError> {
    let secret = secret.map(SecretArg::into_secret);
    Ok(engine.profile_add_kind(&slug, input, credential.unwrap_or_default(), secret).await?)
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

/// Replaces the credential; evidence taken with the old one is stale from now on. `expires`
/// (RFC 3339): a new token's expiry.
#[tauri::command]
#[specta::specta]
pub async fn profile_rotate(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    profile: String,
    secret: SecretArg,
    expires: Option<String>,
) -> Result<ProfileView, IpcError> {
    Ok(engine.profile_rotate_until(&slug, &profile, secret.into_secret(), expires.as_deref()).await?)
}

/// The terminal command that signs an external profile in again (the window cannot host the
/// official CLI's interactive login).
#[tauri::command]
#[specta::specta]
pub async fn profile_login_command(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    profile: String,
) -> Result<String, IpcError> {
    Ok(engine.profile_login_command(&slug, &profile).await?)
}

/// "Check again" after signing in in a terminal: the profile as it is now (routing
/// reconciled), or `precondition` while the official CLI is still not signed in.
#[tauri::command]
#[specta::specta]
pub async fn profile_check_login(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    profile: String,
) -> Result<ProfileView, IpcError> {
    Ok(engine.profile_login_finished(&slug, &profile).await?)
}

/// An owned login's sign-in: a device code to show (the engine holds the code itself).
#[tauri::command]
#[specta::specta]
pub async fn profile_oauth_begin(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    profile: String,
) -> Result<DeviceCodeView, IpcError> {
    Ok(engine.oauth_device_begin(&slug, &profile).await?)
}

/// Whether the owned login's device code was approved: the signed-in profile, or
/// `precondition` while it is not yet.
#[tauri::command]
#[specta::specta]
pub async fn profile_oauth_check(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    profile: String,
) -> Result<ProfileView, IpcError> {
    Ok(engine.oauth_device_check(&slug, &profile).await?)
}

/// An owned login's browser sign-in (PKCE): the authorize URL to open; the engine holds the
/// verifier and state and listens for the callback on 127.0.0.1:1455.
#[tauri::command]
#[specta::specta]
pub async fn profile_oauth_browser_begin(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    profile: String,
) -> Result<BrowserSignInView, IpcError> {
    Ok(engine.oauth_browser_begin(&slug, &profile).await?)
}

/// Waits for the browser sign-in to come back: the signed-in profile, or `precondition` when it
/// timed out, was given up or refused.
#[tauri::command]
#[specta::specta]
pub async fn profile_oauth_browser_wait(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    profile: String,
) -> Result<ProfileView, IpcError> {
    Ok(engine.oauth_browser_wait(&slug, &profile).await?)
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
