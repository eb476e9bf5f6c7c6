//! Use cases of Switchyard, the only crate front ends call: connection and profile
//! lifecycle, credential storage and rotation, start-up clean-up. The CLI subcommands and the
//! Tauri commands are thin adapters over [`Engine`].

mod clock;
mod connections;
mod credentials;
mod dir_lock;
mod engine;
mod error;
mod evidence;
mod fault;
mod health;
mod ledger;
mod orphans;
mod pending;
mod portable;
mod profiles;
mod readiness;
mod relay_settings;
mod reorder;
mod requests;
mod router;
mod routing;
mod routing_views;
mod rows;
mod staging;
mod upstream_timeout;
mod verify;
mod views;

pub use clock::{Clock, SystemClock};
pub use dir_lock::LOCK_FILE;
pub use engine::{default_data_dir, Engine, DB_FILE};
pub use error::EngineError;
pub use evidence::{ModelProof, DEFAULT_MAX_EVIDENCE_AGE_MS};
pub use fault::FaultPoint;
pub use ledger::RETENTION_ROWS;
pub use portable::{Conflict, ImportReport, ImportedConnection, ImportedProfile};
pub use readiness::MAX_EVIDENCE_AGE_KEY;
pub use relay_settings::{AttemptView, DEFAULT_RELAY_PORT, RELAY_PORT_KEY};
pub use reorder::OrderEntry;
pub use requests::{ConnectionEdit, NewConnection, NewProfile, ProfileEdit};
pub use router::{AttemptReport, Recording, Reply, Route, Routed, Router, Snapshot, Target, Transport, TurnRun};
pub use routing_views::{
    EvidenceSummary, ExcludedView, GateView, HealthView, ModelGateView, ProfileReadiness, RoutingStatus, VerifyEvent,
    VerifyReport, VerifyResult,
};
pub use staging::LEASE_MS;
pub use switchyard_core::portable::MAX_BYTES as MAX_IMPORT_BYTES;
pub use switchyard_core::secret_shape::{echo_safe, NOT_SHOWN};
pub use switchyard_core::{ErrorCode, InvalidInput};
pub use switchyard_vault::Secret;
pub use upstream_timeout::DEFAULT_FIRST_BYTE_TIMEOUT;
pub use views::{ConnectionDetail, ConnectionView, HeaderView, ModelMapping, ProfileView, Removal};
