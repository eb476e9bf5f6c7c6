//! The integration tests of this crate, in one binary (one link of the workspace instead of
//! one per file): a module per file, the shared helpers once.

// clippy.toml allows unwrap and expect in #[test] functions and #[cfg(test)] modules; the
// helpers of an integration-test binary are neither, so the whole binary allows them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cache;
mod canary_sweep;
mod cli_backend;
mod client;
mod common;
mod exec;
mod exec_login;
mod fallback;
mod journey;
mod kinds;
mod oauth;
mod output;
mod pools;
mod portable;
mod quota;
mod redaction;
mod relay_fd_limit;
mod routing;
mod startup_race;
mod status;
mod store_copy;
mod store_postgres;
mod team_edge;
mod team_replicas;
mod telemetry;
mod usage;
