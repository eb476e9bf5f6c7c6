//! The integration tests of this crate, in one binary (one link of the workspace instead of
//! one per file): a module per file, the shared helpers once.
//! Kept apart, each in a binary of its own: `stream_allocations.rs` (see its first lines for why).

mod chat_chunk_role;
mod quota;
mod redirect;
mod taxonomy;
mod usage_reading;
