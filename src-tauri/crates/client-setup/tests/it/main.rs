//! Client set-up's integration tests, one binary (jj's `tests/runner.rs`): a temp HOME with the
//! clients' files, a temp data dir on the real keychain (run under scripts/with-keychain), the
//! mock provider over real HTTP.

// clippy.toml allows unwrap and expect in #[test] functions and #[cfg(test)] modules; the
// helpers of an integration-test binary are neither, so the whole binary allows them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod gemini_cli;
mod hardening;
mod setup_restore;
