//! The integration tests of this crate, in one binary (one link of the workspace instead of
//! one per file): a module per file, the shared helpers once.
//! Kept apart, each in a binary of its own: `stream_allocations.rs` (see its first lines for why).

// clippy.toml allows unwrap and expect in #[test] functions and #[cfg(test)] modules; the
// helpers of an integration-test binary are neither, so the whole binary allows them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod chat_chunk_role;
mod gemini;
mod gemini_stream;
mod quota;
mod redirect;
mod response_names;
mod taxonomy;
mod usage_reading;
