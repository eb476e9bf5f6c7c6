//! Use cases of Switchyard, the only crate front ends call. The CLI subcommands and the Tauri
//! commands are thin adapters over [`Engine`]; the relay drives [`Router`].
//!
//! The use cases by file:
//! - `connections.rs`, `profiles.rs`, `reorder.rs` — connection and profile lifecycle (CAS
//!   writes; `inputs.rs` holds their inputs, `views/` — every view front ends get — and `rows.rs` their outputs).
//! - `credentials.rs` — keychain writes and rotation, ordered through the journal;
//!   `orphans.rs`, `staging.rs`, `dir_lock.rs` — start-up clean-up that never takes a live key.
//! - `verify.rs`, `evidence.rs` — test/discovery and the evidence it records; `reverify.rs` —
//!   the relay's background re-verification of keys whose evidence is half its max age.
//! - `activation.rs`, `readiness.rs`, `pending.rs` — activation behind the
//!   gates, readiness per profile, suspension, imported modes waiting for their gates;
//!   `affinity.rs` — what balanced routing keeps on one key (turn or conversation);
//!   `quota_aware.rs` — whether selection skips keys whose quota readings are spent;
//!   `fallback.rs` — fallback chains across connections, gated like activation.
//! - `circuits.rs` — circuits written through to SQLite; `portable.rs` — export/import.
//! - `alerts.rs` — which routing changes the desktop notifies (rate limited), `routing_overview`.
//! - `start_with_system.rs` — whether the desktop app starts with the session (a setting).
//! - `relay_settings.rs` (token, port), `attempts.rs` (the ledger as listed), `upstream_timeout.rs`,
//!   `ledger.rs` (the batching attempts writer), `ledger_retention.rs` (its cap, a setting),
//!   `quota.rs` (the latest limit readings).
//! - `usage.rs` (requests, tokens and cost summed from the ledger), `prices.rs` (the user's
//!   price table and key fees), `time_zone.rs` (the user's days).
//! - `secret_cache.rs` — secrets by (locator, credential revision), for the router;
//!   `presence.rs` — whether they are in the keychain, by the same key, for views and readiness.
//! - `router/` — the hot path: `snapshot.rs`, `attempt.rs` (the loop's steps),
//!   `quota.rs` (readings from every answer's limit headers) and `route.rs` (the loop itself).
//!
//! A request's path through [`Router::route`] (docs/design.md, "The request path"):
//!
//! ```text
//! RouteRequest ─► start ─► loop { next_attempt ─► Transport::attempt ─► Reply { outcome, facts }
//!                                  │ Unavailable → Routed::Unavailable (why) / Kept
//!                                  │ facts → model, account state, quota board, response origins
//!                                  │ Deliver → attempt_succeeded, commit → Routed::Delivered(Recording)
//!                                  └ Failed  → Recording written, attempt_failed → plan:
//!                                              FailoverTo / RetrySame → loop; GiveUp → Kept / NoAnswer }
//! ```

mod activation;
mod affinity;
mod alerts;
mod attempts;
mod circuits;
mod clock;
mod connections;
mod credentials;
mod dir_lock;
mod engine;
mod error;
mod evidence;
mod fallback;
mod fault;
mod inputs;
mod ledger;
mod ledger_retention;
mod orphans;
mod pending;
mod portable;
mod presence;
mod prices;
mod profiles;
mod quota;
mod quota_aware;
mod readiness;
mod relay_settings;
mod reorder;
mod reverify;
mod router;
mod rows;
mod secret_cache;
mod settings;
mod staging;
mod start_with_system;
mod time_zone;
mod upstream_timeout;
mod usage;
mod verify;
mod views;

pub use alerts::{
    alerts_between, Alert, AlertKind, AlertLimiter, AlertWatch, ConnectionState, KeyState, ALERT_MIN_GAP,
};
pub use attempts::AttemptView;
pub use clock::{Clock, SystemClock};
pub use dir_lock::LOCK_FILE;
pub use engine::{default_data_dir, Engine, DB_FILE};
pub use error::EngineError;
pub use evidence::{ModelProof, DEFAULT_MAX_EVIDENCE_AGE_MS};
pub use fallback::{FallbackHopView, FallbackStatus};
pub use fault::FaultPoint;
pub use inputs::{ConnectionEdit, NewConnection, NewProfile, ProfileEdit};
pub use ledger::RETENTION_ROWS;
pub use ledger_retention::{MAX_RETENTION_ROWS, MIN_RETENTION_ROWS, RETENTION_KEY};
pub use portable::{Conflict, ImportReport, ImportedConnection, ImportedProfile};
pub use prices::{KeyFeeView, NewPrice, PriceTable, PriceView};
pub use quota::{ProfileQuota, QuotaView, QuotaWindowView};
pub use readiness::MAX_EVIDENCE_AGE_KEY;
pub use relay_settings::{DEFAULT_RELAY_PORT, RELAY_PORT_KEY, RELAY_TOKEN_REVISION_KEY};
pub use reorder::OrderEntry;
pub use reverify::{Backoff as ReverifyBackoff, KeyCheck, Reverified, ReverifyTask, REVERIFY_POLL};
pub use router::{
    AttemptFacts, AttemptReport, KeysLater, LaterKeys, Outcome, QuotaBoard, Recording, Refusal, Reply, RequestKeys,
    Route, RouteRequest, Routed, Router, Snapshot, Target, Transport, DROPPED_ACCOUNT_STATE, MAX_QUOTA_READINGS,
    MAX_RESPONSE_ORIGINS, QUOTA_FLUSH_EVERY,
};
pub use settings::{SettingsView, UserSetting};
pub use staging::LEASE_MS;
pub use start_with_system::START_WITH_SYSTEM_KEY;
pub use switchyard_core::portable::MAX_BYTES as MAX_IMPORT_BYTES;
pub use switchyard_core::secret_shape::{echo_safe, NOT_SHOWN};
pub use switchyard_core::{ErrorCode, InvalidInput};
pub use switchyard_vault::Secret;
pub use time_zone::{TimeZoneView, TIME_ZONE_KEY};
pub use upstream_timeout::DEFAULT_FIRST_BYTE_TIMEOUT;
pub use usage::{UsageBy, UsageChart, UsageRow, UsageSeries, UsageView, NO_MODEL, UNTAGGED};
pub use views::{
    AffinityView, EvidenceSummary, ExcludedView, GateView, HealthView, ModelGateView, ProfileReadiness, QuotaAwareView,
    RoutingStatus, VerifyEvent, VerifyReport, VerifyResult,
};
pub use views::{CacheView, TrafficView};
pub use views::{ConnectionDetail, ConnectionView, HeaderView, ModelMapping, ProfileView, Removal};
