//! The integration tests of this crate, in one binary (one link of the workspace instead of
//! one per file): a module per file, the shared helpers once.

mod common;
mod continuity;
mod conversations;
mod fallback;
mod hardening;
mod idle_expiry;
mod journeys;
mod legacy_keys;
mod manual_clock;
mod quota;
mod quota_aware;
mod request_fuzz;
mod reverify;
mod streamed_forwarding;
mod tags;
mod token_refresh;
mod unauthenticated_bodies;
mod wire;
