//! The integration tests of this crate, in one binary (one link of the workspace instead of
//! one per file): a module per file, the shared helpers once.

// clippy.toml allows unwrap and expect in #[test] functions and #[cfg(test)] modules; the
// helpers of an integration-test binary are neither, so the whole binary allows them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod design_map;
mod discovery;
mod gemini;
mod headers;
mod kinds;
mod lifecycle;
mod load_once;
mod oauth_logins;
mod oauth_sign_in;
mod orphans;
mod pools;
mod portable;
mod portable_fallback;
mod portable_fuzz;
mod portable_pending;
mod quota;
mod redirect;
mod relay_token;
mod relay_users;
mod reorder;
mod rotation;
mod route_loop;
mod sealed_vault;
mod store_backend;
mod usage;
