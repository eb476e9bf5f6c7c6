//! What the engine returns to front ends — JSON for the CLI, IPC for the desktop (specta
//! types) — in one module: never database rows, never secret material; small integers are
//! i32 (or typed as such for TypeScript) and times RFC 3339 text. States are the closed enums of
//! `switchyard_core::states` (docs/interface.md, "Desktop IPC").
//!
//! - `connection.rs` — connections, profiles, headers, mappings, removals.
//! - `routing.rs` — `routing status`: gates, per-profile readiness and health, affinity,
//!   quota-aware selection; verification progress and results.
//! - `cache.rs` — prompt-cache hit ratios and traffic shares per profile.
//! - `cli_backend.rs` — the CLI backend setting of a connection.
//! - `attempt.rs`, `quota.rs`, `usage.rs`, `prices.rs` — the ledger, limit readings, usage and cost.
//! - `relay_user.rs` — the relay's per-person tokens (`relay users list`).
//! - `status.rs` — `switchyard status`: every connection and pool in one screen.
//! - `ipc_error.rs` — the error shape of the desktop's IPC and the console's API.
//! - `limit.rs` — limits as set and as they stand, and the audit's rows.
//! - `fallback.rs`, `key_check.rs` — fallback chains, background re-verification.
//! - `pool.rs` — pools: members, gates, state, shares against weights.
//! - `evidence.rs`, `import.rs`, `time_zone.rs` — verification proofs, import reports, the
//!   user's time zone. (Client set-up's views are the `switchyard-client-setup` crate's.)
//!
//! The use-case files build these and re-export the ones they return.

mod attempt;
mod cache;
mod cli_backend;
mod connection;
mod evidence;
mod fallback;
mod import;
mod ipc_error;
mod key_check;
mod limit;
mod pool;
mod prices;
mod quota;
mod relay_user;
mod routing;
mod status;
mod time_zone;
mod usage;

pub use attempt::*;
pub use cache::*;
pub use cli_backend::*;
pub use connection::*;
pub use evidence::*;
pub use fallback::*;
pub use import::*;
pub use ipc_error::IpcError;
pub use key_check::*;
pub use limit::*;
pub use pool::*;
pub use prices::*;
pub use quota::*;
pub use relay_user::*;
pub use routing::*;
pub use status::*;
pub use time_zone::*;
pub use usage::*;
