//! The integration tests of this crate, in one binary (one link of the workspace instead of
//! one per file): a module per file, the shared helpers once.

// clippy.toml allows unwrap and expect in #[test] functions and #[cfg(test)] modules; the
// helpers of an integration-test binary are neither, so the whole binary allows them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod attempts_tagged;
mod cas;
mod gemini_migration;
mod journal;
mod leases;
mod migration;
mod pools;
mod quota;
