//! The integration tests of this crate, in one binary (one link of the workspace instead of
//! one per file): a module per file, the shared helpers once.

// clippy.toml allows unwrap and expect in #[test] functions and #[cfg(test)] modules; the
// helpers of an integration-test binary are neither, so the whole binary allows them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cli_backend;
mod cli_backend_isolation;
mod common;
mod continuity;
mod conversations;
mod fallback;
mod gemini;
mod hardening;
mod idle_expiry;
mod journeys;
mod legacy_keys;
mod limits;
mod manual_clock;
mod oauth_logins;
mod pools;
mod quota;
mod quota_aware;
mod request_fuzz;
mod reverify;
mod streamed_forwarding;
mod subscription_clients;
mod subscription_windows;
mod tags;
mod team_edge;
mod token_refresh;
mod unauthenticated_bodies;
mod wire;
