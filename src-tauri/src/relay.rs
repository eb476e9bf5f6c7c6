//! The relay inside the desktop app: `switchyard_relay::Service` (shared with the CLI's
//! `relay serve`), started with the app on the Tauri async runtime (port from settings,
//! `SWITCHYARD_RELAY_PORT` overriding it), restarted when the token rotates or the port
//! changes, stopped gracefully on quit (in-flight responses drain for a few seconds, the
//! attempt ledger is flushed).

pub use switchyard_relay::{RelayStatus, Service as RelayService, PORT_ENV};
