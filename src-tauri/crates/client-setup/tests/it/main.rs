//! Client set-up's integration tests, one binary (jj's `tests/runner.rs`): a temp HOME with the
//! clients' files, a temp data dir on the real keychain (run under scripts/with-keychain), the
//! mock provider over real HTTP.

mod common;
mod hardening;
mod setup_restore;
