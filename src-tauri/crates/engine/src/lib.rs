//! Use cases of Switchyard, the only crate front ends call. The CLI subcommands and the Tauri
//! commands are thin adapters over [`Engine`]; the relay drives [`Router`].
//!
//! The use cases by file:
//! - `connections.rs`, `profiles.rs`, `reorder.rs` — connection and profile lifecycle (CAS
//!   writes; `inputs.rs` holds their inputs, `views.rs`/`rows.rs` their outputs).
//! - `credentials.rs` — keychain writes and rotation, ordered through the journal;
//!   `orphans.rs`, `staging.rs`, `dir_lock.rs` — start-up clean-up that never takes a live key.
//! - `verify.rs`, `evidence.rs` — test/discovery and the evidence it records.
//! - `activation.rs`, `readiness.rs`, `routing_views.rs`, `pending.rs` — activation behind the
//!   gates, readiness per profile, suspension, imported modes waiting for their gates;
//!   `affinity.rs` — what balanced routing keeps on one key (turn or conversation);
//!   `quota_aware.rs` — whether selection skips keys whose quota readings are spent.
//! - `circuits.rs` — circuits written through to SQLite; `portable.rs` — export/import.
//! - `relay_settings.rs` (token, port), `attempts.rs` (the ledger as listed), `upstream_timeout.rs`,
//!   `ledger.rs` (the batching attempts writer), `quota.rs` (the latest limit readings).
//! - `secret_cache.rs` — secrets by (locator, credential revision), for readiness and the router.
//! - `router/` — the hot path: `snapshot.rs`, `attempt.rs` (the loop's steps),
//!   `quota.rs` (readings from every answer's limit headers) and `route.rs` (the loop itself).
//!
//! A request's path through [`Router::route`] (docs/design.md, "The request path"):
//!
//! ```text
//! start_turn ─► loop { next_attempt ─► Transport::attempt ─► Reply
//!                        │ Unavailable → Routed::Unavailable / Kept
//!                        │ Deliver → attempt_succeeded, commit → Routed::Delivered(Recording)
//!                        └ Failed  → Recording written, attempt_failed → plan:
//!                                    FailoverTo / RetrySame → loop; GiveUp → Kept / NoAnswer }
//! ```

mod activation;
mod affinity;
mod attempts;
mod circuits;
mod clock;
mod connections;
mod credentials;
mod dir_lock;
mod engine;
mod error;
mod evidence;
mod fault;
mod inputs;
mod ledger;
mod orphans;
mod pending;
mod portable;
mod profiles;
mod quota;
mod quota_aware;
mod readiness;
mod relay_settings;
mod reorder;
mod router;
mod routing_views;
mod rows;
mod secret_cache;
mod staging;
mod upstream_timeout;
mod verify;
mod views;

pub use attempts::AttemptView;
pub use clock::{Clock, SystemClock};
pub use dir_lock::LOCK_FILE;
pub use engine::{default_data_dir, Engine, DB_FILE};
pub use error::EngineError;
pub use evidence::{ModelProof, DEFAULT_MAX_EVIDENCE_AGE_MS};
pub use fault::FaultPoint;
pub use inputs::{ConnectionEdit, NewConnection, NewProfile, ProfileEdit};
pub use ledger::RETENTION_ROWS;
pub use portable::{Conflict, ImportReport, ImportedConnection, ImportedProfile};
pub use quota::{ProfileQuota, QuotaView, QuotaWindowView};
pub use readiness::MAX_EVIDENCE_AGE_KEY;
pub use relay_settings::{DEFAULT_RELAY_PORT, RELAY_PORT_KEY};
pub use reorder::OrderEntry;
pub use router::{
    AttemptReport, QuotaBoard, Recording, Reply, Route, Routed, Router, Snapshot, Target, Transport, TurnRun,
    DROPPED_ACCOUNT_STATE, MAX_QUOTA_READINGS, MAX_RESPONSE_ORIGINS, QUOTA_FLUSH_EVERY,
};
pub use routing_views::{
    AffinityView, EvidenceSummary, ExcludedView, GateView, HealthView, ModelGateView, ProfileReadiness, QuotaAwareView,
    RoutingStatus, VerifyEvent, VerifyReport, VerifyResult,
};
pub use staging::LEASE_MS;
pub use switchyard_core::portable::MAX_BYTES as MAX_IMPORT_BYTES;
pub use switchyard_core::secret_shape::{echo_safe, NOT_SHOWN};
pub use switchyard_core::{ErrorCode, InvalidInput};
pub use switchyard_vault::Secret;
pub use upstream_timeout::DEFAULT_FIRST_BYTE_TIMEOUT;
pub use views::{ConnectionDetail, ConnectionView, HeaderView, ModelMapping, ProfileView, Removal};
