//! SQLite store of Switchyard. One module per table; every update of a mutable row is a
//! compare-and-swap on its `revision` and fails with [`StoreError::Conflict`] when stale.
//! Functions take `&mut SqliteConnection` so the engine can compose them in one transaction.

pub mod attempts;
pub mod circuits;
pub mod connections;
mod db;
pub mod error;
pub mod evidence;
pub mod fallback;
pub mod journal;
pub mod key_fees;
pub mod pools;
pub mod prices;
pub mod profiles;
pub mod quota;
pub mod relay_users;
pub mod sealed_secrets;
pub mod settings;

pub use db::{Store, Tx};
pub use error::StoreError;
pub use sqlx::SqliteConnection;
