//! The integration tests of this crate, in one binary (one link of the workspace instead of
//! one per file): a module per file, the shared helpers once.
//! Kept apart, each in a binary of its own: `autostart_ipc.rs` (see its first lines for why).

// clippy.toml allows unwrap and expect in #[test] functions and #[cfg(test)] modules; the
// helpers of an integration-test binary are neither, so the whole binary allows them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod accounts;
mod bindings;
mod common;
mod fallback_ipc;
mod ipc;
mod portable_ipc;
mod portable_text_ipc;
mod tray;
