//! Typed events the window listens to (tauri-specta exports them to `bindings.ts`).

use serde::Serialize;
use specta::Type;
use switchyard_engine::VerifyEvent;
use tauri::{AppHandle, Runtime};
use tauri_specta::Event;

use crate::relay::RelayStatus;

/// Progress of a `verify` command: which connection, and the engine's event.
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct VerifyProgress {
    pub slug: String,
    pub progress: VerifyEvent,
}

/// Forwards one engine progress event to the window; a closed window is not an error.
pub fn emit_verify_progress<R: Runtime>(app: &AppHandle<R>, slug: &str, progress: VerifyEvent) {
    let event = VerifyProgress { slug: slug.to_string(), progress };
    if let Err(e) = event.emit(app) {
        tracing::debug!(error = %e, "verify progress not delivered");
    }
}

/// The relay started, stopped or failed. Carries the status only, never the token.
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct RelayStatusChanged {
    pub status: RelayStatus,
}

/// Tells the window the relay's new status; a closed window is not an error.
pub fn emit_relay_status<R: Runtime>(app: &AppHandle<R>, status: &RelayStatus) {
    let event = RelayStatusChanged { status: status.clone() };
    if let Err(e) = event.emit(app) {
        tracing::debug!(error = %e, "relay status not delivered");
    }
}
