//! Use cases of Switchyard, the only crate front ends call. The CLI subcommands and the Tauri
//! commands are thin adapters over [`Engine`]; the relay drives [`Router`].
//!
//! In layers whose imports point down (docs/design.md, the map's slicing rule): `context/` at
//! the bottom ([`Context`]: the store, the vault and its presence cache, the clock, the circuit
//! board, the HTTP client of test/discovery, the data dir and install id, crash injection, the
//! sealer, the team-store flag — and nothing of any room), six rooms above it with `views/` and
//! `settings/`, each implementing its use cases on the context, and `engine.rs` on top
//! ([`Engine`]: the context plus the owned logins' refresh state, opened by [`Engine::open`] as
//! [`OpenOptions`] say).
//! - `config/` — what the user configures and the writes that keep it safe: connections,
//!   profiles and their order, external profiles' config directories and sign-in (CAS writes; `inputs.rs` the inputs, `rows.rs` the decoded
//!   rows), credentials in the keychain (rotation through the journal; `staging.rs`,
//!   `orphans.rs`, `dir_lock.rs`: start-up clean-up that never takes a live key), pools,
//!   portable export/import, the relay's token and port and its users, and each connection's
//!   routing settings (affinity, quota-aware, first-byte timeout, CLI backend, start with system).
//! - `readiness/` — whether a connection may route: `gates.rs` (everything routing reads about
//!   a connection, and the gates), evidence, `verify.rs` (test/discovery), `reverify.rs` (its
//!   background renewal), activation and suspension, pending imported modes, fallback chains,
//!   pool gates, circuits written through to the store.
//! - `router/` — the hot path the relay drives: `resolve.rs` (a name → a connection or a pool),
//!   `request.rs` (one `RouteRequest`), `run.rs` (a request's state), `policy.rs` (its kind,
//!   decided once: `Policy`, `Hops`, `Counts`), `refusal.rs`, `select.rs` (the next attempt's
//!   profile), `attempt.rs`, `transport.rs` (`Target`, `Reply`), `route.rs` (the loop), `settle.rs`
//!   (circuits and the planner), `recording.rs` (one ledger row per attempt), `fallback.rs` and
//!   `pool.rs` (hops), `quota.rs` (the quota board), `secret_cache.rs`, `snapshot.rs`, and
//!   `state/` (the routing state behind one seam: in this process's memory, or shared by a
//!   team's replicas through the store).
//! - `login/` — owned logins (ChatGPT/Codex): device-code and browser sign-in, single-flight
//!   refresh across tasks, processes and replicas (a lock file per login, and on a team store
//!   the login's lock there), the keychain item, the token endpoint.
//! - `ledger/` — the attempts writer (its own thread), `deferred.rs` (a forwarded request's keys,
//!   computed on the writer) and `retention.rs` (its cap).
//! - `report/` — usage and cost, prices, the user's time zone, attempts as listed, quota
//!   readings with their age, alerts for the desktop.
//! - `views/` — every view front ends get; `settings/` — every setting once, typed (`values.rs`:
//!   the value types and defaults the rooms re-export).
//!
//! Beside them: `store_location.rs` (where a data dir's store lives), `store_copy.rs` (a data dir
//! onto a team store), `sealed.rs` (the sealed vault), `error.rs`, `clock.rs`, `fault.rs` (crash
//! injection for tests).
//!
//! A request's path through [`Router::route`] (docs/design.md, "One request's path"):
//!
//! ```text
//! RouteRequest ─► start_run (pool member, Policy, Hops) ─► loop { next_attempt (on the run's View
//!                                  │   of the routing state) ─► Transport::attempt ─► Reply { outcome, facts }
//!                                  │ Unavailable → a hop, else Routed::Unavailable (why) / Kept
//!                                  │ facts → model, account state, quota board, response origins
//!                                  │ Deliver → attempt_succeeded, commit → Routed::Delivered(Recording)
//!                                  └ Failed  → Recording written, attempt_failed → plan:
//!                                              FailoverTo / RetrySame → loop; GiveUp → a hop, else Kept / NoAnswer }
//! ```

mod clock;
mod config;
mod console;
mod context;
mod engine;
mod error;
mod fault;
mod ledger;
mod limits;
mod login;
mod readiness;
mod report;
mod router;
mod sealed;
mod settings;
mod store_copy;
mod store_location;
mod telemetry;
mod views;

pub use clock::{Clock, SystemClock};
pub use config::accounts::{LoginLaunch, ACCOUNTS_DIR, CODEX_BACKEND_ENV, CODEX_BACKEND_URL};
pub use config::cli_backend::{kill_run_processes, CLI_RUNS_DIR, CLI_RUN_MARK, MAX_CLI_CONCURRENCY};
pub use config::dir_lock::LOCK_FILE;
pub use config::exec_account::{ExecAccount, LimitRefusal, LAUNCH_TAG};
pub use config::exec_pool::PoolLaunch;
pub use config::inputs::{ConnectionEdit, NewConnection, NewCredential, NewProfile, ProfileEdit};
pub use config::limits::{NewLimit, MAX_CAPACITY};
pub use config::portable::{Conflict, ImportReport, ImportedConnection, ImportedProfile};
pub use config::relay_settings::{DEFAULT_RELAY_PORT, RELAY_PORT_KEY, RELAY_TOKEN_REVISION_KEY};
pub use config::relay_users::{user_token_hash, Role, TokenGrant, UserGrant, USERS_REFRESH_MS, USER_TOKEN_PREFIX};
pub use config::reorder::OrderEntry;
pub use config::staging::LEASE_MS;
pub use config::start_with_system::START_WITH_SYSTEM_KEY;
pub use config::upstream_timeout::DEFAULT_FIRST_BYTE_TIMEOUT;
pub use console::admin::USER_ATTEMPTS_SCAN;
pub use console::{ConsoleCaller, ConsoleSession, CONSOLE_SESSION_MS};
pub use context::{acting_as, Context};
pub use engine::{default_data_dir, Engine, OpenOptions};
pub use error::{EngineError, GateRefusal};
pub use fault::FaultPoint;
pub use ledger::retention::{MAX_RETENTION_ROWS, MIN_RETENTION_ROWS, RETENTION_KEY};
pub use ledger::RETENTION_ROWS;
pub use ledger::{DeferredKeys, DeferredUsage, LedgerKeys};
pub use limits::{BOOK_TTL as LIMITS_REFRESH, DEFAULT_SLOT_LEASE};
pub use login::{DeviceCode, LoginEndpoints, CALLBACK_PORT, CLIENT_ID as LOGIN_CLIENT_ID, DEFAULT_ISSUER, LOGINS_DIR};
pub use readiness::evidence::{ModelProof, DEFAULT_MAX_EVIDENCE_AGE_MS};
pub use readiness::fallback::{FallbackHopView, FallbackStatus};
pub use readiness::gates::MAX_EVIDENCE_AGE_KEY;
pub use readiness::reverify::{Backoff as ReverifyBackoff, KeyCheck, Reverified, ReverifyTask, REVERIFY_POLL};
pub use report::alert_watch::{AlertLimiter, AlertWatch, ALERT_MIN_GAP};
pub use report::alerts::{
    alerts_between, rejected_windows, Alert, AlertKind, ConnectionState, KeyState, RejectedWindow,
};
pub use report::attempts::AttemptView;
pub use report::prices::{KeyFeeView, NewPrice, PriceTable, PriceView};
pub use report::quota::{ProfileQuota, QuotaView, QuotaWindowView};
pub use report::status::status_line;
pub use report::time_zone::{TimeZoneView, TIME_ZONE_KEY};
pub use report::usage::{UsageBy, UsageChart, UsageRow, UsageSeries, UsageView, LOCAL_USER, NO_MODEL, UNTAGGED};
pub use router::{
    AttemptFacts, AttemptReport, CliBackend, CliTarget, CredentialUse, Outcome, Pin, PoolRoute, PoolSnapshot,
    QuotaBoard, Recording, Refusal, Reply, RequestKeys, Resolved, Route, RouteRequest, Routed, Router, RouterOptions,
    Sharing, Snapshot, Target, Transport, DEFAULT_PROBE_LEASE, DROPPED_ACCOUNT_STATE, MAX_QUOTA_READINGS,
    MAX_RESPONSE_ORIGINS, QUOTA_FLUSH_EVERY, RESPONSE_ORIGIN_TTL_MS,
};
pub use sealed::{VaultKind, VAULT_ENV, VAULT_KEY};
pub use settings::{SettingsView, UserSetting};
pub use store_copy::{CopiedProfile, StoreCopyReport};
#[cfg(feature = "test-hooks")]
pub use store_location::TEST_PG_ENV;
pub use store_location::{store_location, DB_FILE};
pub use switchyard_core::limit::{Measure, Period, UserScope};
pub use switchyard_core::portable::MAX_BYTES as MAX_IMPORT_BYTES;
pub use switchyard_core::routing::gate::{GATE_MODEL_UNSERVED, GATE_NO_MODEL, GATE_NO_PAIR};
pub use switchyard_core::secret_shape::{echo_safe, NOT_SHOWN};
pub use switchyard_core::states::{
    AffinityMode, CircuitState, CredentialHealthState, OfficialClient, PoolState, ProfileKind,
    RelayState as RelayServiceState, Strategy,
};
pub use switchyard_core::{ErrorCode, InvalidInput};
pub use switchyard_core::{RoutingMode, RoutingState};
pub use switchyard_store::Location as StoreLocation;
pub use switchyard_vault::{MasterKey, Secret, VaultError, MASTER_KEY_FILE_ENV};
pub use telemetry::{Telemetry, TelemetryOptions, METRICS_CONTENT_TYPE, OTLP_ENDPOINT_ENV};
pub use views::{
    AffinityView, EvidenceSummary, ExcludedView, GateView, HealthView, ModelGateView, ProfileReadiness, QuotaAwareView,
    RoutingStatus, VerifyEvent, VerifyReport, VerifyResult,
};
pub use views::{
    AuditView, CacheView, CapKind, CliBackendView, LimitInput, LimitStatusView, LimitView, MeView, NewUserToken,
    RelayUserInput, RelayUserView, TrafficView,
};
pub use views::{
    BrowserSignInView, ConnectionDetail, ConnectionView, CredentialHealthView, DeviceCodeView, HeaderView, LoginView,
    ModelMapping, ProfileView, Removal,
};
pub use views::{ConnectionStatus, IpcError, KeyCounts, PoolStatusLine, StatusView, WindowLine};
pub use views::{PoolGateView, PoolMemberView, PoolShareView, PoolStatus, PoolView};
