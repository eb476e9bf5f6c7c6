//! The integration tests of this crate, in one binary (one link of the workspace instead of
//! one per file): a module per file, the shared helpers once.
//! Kept apart, each in a binary of its own: `routing_no_alloc.rs` (see its first lines for why).

// clippy.toml allows unwrap and expect in #[test] functions and #[cfg(test)] modules; the
// helpers of an integration-test binary are neither, so the whole binary allows them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod affinity_world;
mod body_skim;
mod credential_health;
mod fixture;
mod portable_format;
mod routing_affinity;
mod routing_circuits;
mod routing_eligibility;
mod routing_fallback;
mod routing_pool;
mod routing_swrr;
mod routing_token_balance;
mod routing_turns;
