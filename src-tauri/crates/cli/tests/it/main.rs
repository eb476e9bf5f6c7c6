//! The integration tests of this crate, in one binary (one link of the workspace instead of
//! one per file): a module per file, the shared helpers once.

mod cache;
mod client;
mod common;
mod exec;
mod fallback;
mod journey;
mod output;
mod portable;
mod quota;
mod redaction;
mod relay_fd_limit;
mod routing;
mod startup_race;
mod usage;
