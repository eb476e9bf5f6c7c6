//! Use cases of Switchyard, the only crate front ends call: connection and profile
//! lifecycle, credential storage and rotation, start-up clean-up. The CLI subcommands and the
//! Tauri commands are thin adapters over [`Engine`].

mod clock;
mod connections;
mod credentials;
mod engine;
mod error;
mod fault;
mod profiles;
mod requests;
mod rows;
mod views;

pub use clock::{Clock, SystemClock};
pub use engine::{default_data_dir, Engine, DB_FILE};
pub use error::EngineError;
pub use fault::FaultPoint;
pub use requests::{ConnectionEdit, NewConnection, NewProfile, ProfileEdit};
pub use switchyard_core::{ErrorCode, InvalidInput};
pub use switchyard_vault::Secret;
pub use views::{ConnectionDetail, ConnectionView, HeaderView, ModelMapping, ProfileView, Removal};
