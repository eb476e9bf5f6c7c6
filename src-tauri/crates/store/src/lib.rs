//! The store of Switchyard: an SQLite file (the embedded default) or a Postgres database, behind
//! one sqlx `Any` interface. One module per table; every update of a mutable row is a
//! compare-and-swap on its `revision` and fails with [`StoreError::Conflict`] when stale.
//! Functions take `&mut AnyConnection` so the engine can compose them in one transaction; the
//! SQL uses `$N` placeholders, which both backends accept.

pub mod attempts;
pub mod audit;
pub mod circuits;
pub mod connections;
pub mod console_sessions;
pub mod copy;
mod db;
pub mod error;
pub mod evidence;
pub mod fallback;
mod flag;
pub mod journal;
pub mod key_fees;
pub mod limit_counters;
pub mod limits;
pub mod pools;
pub mod prices;
pub mod profiles;
pub mod quota;
mod real;
pub mod relay_users;
pub mod response_origins;
pub mod route_bindings;
pub mod routing_view;
pub mod sealed_secrets;
pub mod settings;
pub mod swrr_positions;
mod values;

pub use db::{ensure_postgres_database, Backend, Location, Store, Tx};
pub use error::StoreError;
pub use sqlx::AnyConnection;
