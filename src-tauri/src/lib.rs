//! The Switchyard desktop shell: opens the engine on the shared data dir
//! (`SWITCHYARD_DATA_DIR` or the per-user default), starts the relay, registers the commands
//! and shows the window; on quit (window closed, SIGTERM, SIGINT) it stops the relay
//! gracefully and flushes the attempt ledger. All behaviour lives in `switchyard-engine`.

pub mod autostart;
pub mod commands;
pub mod events;
pub mod ipc;
pub mod relay;
pub mod secret_arg;
pub mod tray;
pub mod tray_menu;

use std::sync::{Arc, Mutex, PoisonError};

use switchyard_engine::{default_data_dir, Engine};
use tauri::{AppHandle, Manager, RunEvent, Runtime};

use crate::events::emit_relay_status;
use crate::relay::RelayService;

/// The tauri-specta builder with every command and event for the runtime `$r`: the app uses
/// Wry, tests Tauri's mock runtime. (A macro because `collect_commands!` cannot name a
/// generic parameter of an enclosing function.)
#[macro_export]
macro_rules! specta_builder_for {
    ($r:ty) => {
        tauri_specta::Builder::<$r>::new()
            .commands(tauri_specta::collect_commands![
                $crate::commands::app_info,
                $crate::commands::connections::list_connections,
                $crate::commands::connections::connection_show,
                $crate::commands::connections::connection_add,
                $crate::commands::connections::connection_edit,
                $crate::commands::connections::connection_remove,
                $crate::commands::profiles::profile_add,
                $crate::commands::profiles::profile_edit,
                $crate::commands::profiles::profile_reorder,
                $crate::commands::profiles::profile_rotate,
                $crate::commands::profiles::profile_remove,
                $crate::commands::profiles::profile_login_command,
                $crate::commands::profiles::profile_check_login,
                $crate::commands::profiles::profile_oauth_begin,
                $crate::commands::profiles::profile_oauth_check,
                $crate::commands::profiles::profile_oauth_browser_begin,
                $crate::commands::profiles::profile_oauth_browser_wait,
                $crate::commands::routing::verify::<$r>,
                $crate::commands::routing::routing_status,
                $crate::commands::routing::routing_activate,
                $crate::commands::routing::routing_deactivate,
                $crate::commands::routing::routing_affinity,
                $crate::commands::routing::health_reset,
                $crate::commands::fallback::fallback_status,
                $crate::commands::fallback::fallback_set,
                $crate::commands::fallback::fallback_activate,
                $crate::commands::fallback::fallback_deactivate,
                $crate::commands::fallback::key_checks,
                $crate::commands::pools::pool_list,
                $crate::commands::pools::pool_status,
                $crate::commands::pools::pool_add,
                $crate::commands::pools::pool_edit,
                $crate::commands::pools::pool_remove,
                $crate::commands::pools::pool_activate,
                $crate::commands::pools::pool_deactivate,
                $crate::commands::activity::attempts,
                $crate::commands::activity::attempts_of,
                $crate::commands::quota::quota,
                $crate::commands::limits::connection_limits,
                $crate::commands::limits::connection_cap_set,
                $crate::commands::limits::limit_remove,
                $crate::commands::limits::limit_list,
                $crate::commands::limits::limit_status,
                $crate::commands::limits::limit_set,
                $crate::commands::usage::usage_chart,
                $crate::commands::usage::usage_table,
                $crate::commands::users::relay_user_list,
                $crate::commands::users::relay_user_add,
                $crate::commands::users::relay_user_edit,
                $crate::commands::users::relay_user_rotate,
                $crate::commands::users::relay_user_revoke,
                $crate::commands::users::audit_list,
                $crate::commands::relay::relay_status,
                $crate::commands::relay::relay_token,
                $crate::commands::relay::relay_set_port,
                $crate::commands::relay::relay_restart,
                $crate::commands::clients::client_status,
                $crate::commands::clients::client_preview,
                $crate::commands::clients::client_setup,
                $crate::commands::clients::client_restore,
                $crate::commands::portable::export_config,
                $crate::commands::portable::import_preview,
                $crate::commands::portable::import_apply,
                $crate::commands::portable::import_text_preview,
                $crate::commands::portable::import_text_apply,
                $crate::commands::autostart::autostart_status,
                $crate::commands::autostart::autostart_set,
            ])
            .events(tauri_specta::collect_events![$crate::events::VerifyProgress, $crate::events::RelayStatusChanged])
            // The engine's gate sentences, so the UI's test fake says exactly what the engine says.
            .constant(
                "GATE_SENTENCES",
                std::collections::BTreeMap::from([
                    ("no_model", switchyard_engine::GATE_NO_MODEL),
                    ("model_unserved", switchyard_engine::GATE_MODEL_UNSERVED),
                    ("no_pair", switchyard_engine::GATE_NO_PAIR),
                ]),
            )
    };
}

/// The builder of the app; also used to export `ui/src/bindings.ts`.
pub fn specta_builder() -> tauri_specta::Builder<tauri::Wry> {
    specta_builder_for!(tauri::Wry)
}

/// Renders the TypeScript bindings (the checked-in `ui/src/bindings.ts` must equal this).
pub fn export_bindings(path: &std::path::Path) -> Result<(), String> {
    specta_builder()
        .export(
            specta_typescript::Typescript::default()
                .header("// Generated by tauri-specta from src-tauri; do not edit.\n// @ts-nocheck\n"),
            path,
        )
        .map_err(|e| e.to_string())
}

pub fn run() {
    switchyard_relay::init_logging();
    // The relay's connection cap follows the descriptor limit; raising it is the binary's call.
    switchyard_relay::raise_fd_limit();
    let builder = specta_builder();
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .invoke_handler(builder.invoke_handler())
        .setup(move |app| {
            builder.mount_events(app);
            let data_dir = default_data_dir();
            let engine = Arc::new(tauri::async_runtime::block_on(Engine::open(&data_dir))?);
            // Admin changes made in the window are the audit's `desktop`.
            engine.set_actor("desktop");
            let port = RelayService::port_from_env();
            // The router spawns its ledger writer, so it is made inside the runtime.
            let relay = Arc::new(tauri::async_runtime::block_on(async { RelayService::new(engine.clone(), port) }));
            let handle = app.handle().clone();
            relay.on_change(move |status| emit_relay_status(&handle, status));
            let engine_for_autostart = engine.clone();
            app.manage(engine);
            app.manage(relay.clone());
            app.manage(Stopping::default());
            tauri::async_runtime::spawn(async move { relay.start().await });
            app.manage(tray::Alerts::default());
            app.manage(tray::NotifierState(Arc::new(tray::DesktopNotifier(app.handle().clone()))));
            if let Err(e) = tray::install(app.handle()) {
                tracing::warn!(error = %e, "no tray icon (the platform has no tray?); the window works without it");
            }
            tray::spawn_refresh(app.handle().clone());
            // The autostart entry follows the setting (and this binary's current path).
            match tauri::async_runtime::block_on(engine_for_autostart.start_with_system()) {
                Ok(on) => {
                    if let Err(e) = autostart::apply(on) {
                        tracing::warn!(error = %e, "the autostart entry could not be updated");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "the start-with-system setting could not be read"),
            }
            exit_on_signal(app.handle().clone());
            Ok(())
        })
        .build(tauri::generate_context!());
    let app = match app {
        Ok(app) => app,
        Err(e) => {
            tracing::error!(error = %e, "the desktop app could not start");
            std::process::exit(1);
        }
    };
    let handle = app.handle().clone();
    let code = app.run_return(|handle, event| {
        if let RunEvent::ExitRequested { .. } = event {
            begin_stop(handle);
        }
    });
    finish_stop(&handle);
    if code != 0 {
        std::process::exit(code);
    }
}

/// The relay's graceful stop, begun by the first exit request.
#[derive(Default)]
struct Stopping(Mutex<Option<tauri::async_runtime::JoinHandle<()>>>);

/// Stops accepting relay connections now; in-flight responses keep draining.
fn begin_stop<R: Runtime>(handle: &AppHandle<R>) {
    let (Some(relay), Some(stopping)) = (handle.try_state::<Arc<RelayService>>(), handle.try_state::<Stopping>())
    else {
        return;
    };
    let mut slot = stopping.0.lock().unwrap_or_else(PoisonError::into_inner);
    if slot.is_none() {
        let relay = relay.inner().clone();
        *slot = Some(tauri::async_runtime::spawn(async move { relay.stop().await }));
    }
}

/// After the event loop ended: waits for the relay to drain and the ledger to be flushed,
/// then closes the database.
fn finish_stop<R: Runtime>(handle: &AppHandle<R>) {
    begin_stop(handle);
    let task = handle.try_state::<Stopping>().and_then(|s| s.0.lock().unwrap_or_else(PoisonError::into_inner).take());
    let engine = handle.try_state::<Arc<Engine>>().map(|e| e.inner().clone());
    tauri::async_runtime::block_on(async move {
        if let Some(task) = task {
            let _ = task.await;
        }
        if let Some(engine) = engine {
            engine.close().await;
        }
    });
}

/// SIGTERM and SIGINT quit like closing the window (relay drained, ledger flushed).
fn exit_on_signal<R: Runtime>(handle: AppHandle<R>) {
    #[cfg(unix)]
    tauri::async_runtime::spawn(async move {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
            return;
        };
        tokio::select! {
            _ = term.recv() => {},
            _ = int.recv() => {},
        }
        tracing::info!("signal received; quitting");
        handle.exit(0);
    });
    #[cfg(not(unix))]
    let _ = handle;
}
