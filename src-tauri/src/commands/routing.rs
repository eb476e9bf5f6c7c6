//! Verification (progress forwarded as the typed `VerifyProgress` event), routing status,
//! gated activation, deactivation, affinity and health reset.

use std::sync::Arc;

use switchyard_engine::{AffinityMode, Engine, RoutingStatus, Strategy, VerifyEvent, VerifyReport};
use tauri::{AppHandle, Runtime, State};

use crate::events::emit_verify_progress;
use crate::ipc::IpcError;

/// Who activations from the window are recorded as.
const ACTOR: &str = "desktop";

/// Verifies every profile of `slug`, or only `profile`; `deep` sends one 1-token request
/// per enabled model. Emits `VerifyProgress` as each profile starts and finishes.
#[tauri::command]
#[specta::specta]
pub async fn verify<R: Runtime>(
    app: AppHandle<R>,
    engine: State<'_, Arc<Engine>>,
    slug: String,
    profile: Option<String>,
    deep: bool,
) -> Result<VerifyReport, IpcError> {
    let progress = |event: VerifyEvent| emit_verify_progress(&app, &slug, event);
    Ok(engine.verify(&slug, profile.as_deref(), deep, &progress).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn routing_status(engine: State<'_, Arc<Engine>>, slug: String) -> Result<RoutingStatus, IpcError> {
    Ok(engine.routing_status(&slug).await?)
}

/// Activates `balanced` or `priority`; when the gates fail the error carries the report.
#[tauri::command]
#[specta::specta]
pub async fn routing_activate(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    mode: Strategy,
) -> Result<RoutingStatus, IpcError> {
    Ok(engine.routing_activate(&slug, mode, ACTOR).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn routing_deactivate(engine: State<'_, Arc<Engine>>, slug: String) -> Result<RoutingStatus, IpcError> {
    Ok(engine.routing_deactivate(&slug).await?)
}

/// Sets what balanced routing keeps on one key: `conversation` or `turn`, and (when given) the
/// conversation window in minutes, 1 to 1440.
#[tauri::command]
#[specta::specta]
pub async fn routing_affinity(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    mode: AffinityMode,
    window_min: Option<i32>,
) -> Result<RoutingStatus, IpcError> {
    Ok(engine.set_affinity(&slug, mode, window_min.map(i64::from)).await?)
}

/// Closes a profile's circuits (all, or only the one of `model`).
#[tauri::command]
#[specta::specta]
pub async fn health_reset(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    profile: String,
    model: Option<String>,
) -> Result<(), IpcError> {
    Ok(engine.health_reset(&slug, &profile, model.as_deref()).await?)
}
