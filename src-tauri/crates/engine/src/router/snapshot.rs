//! What the relay routes by, per connection: definition, profiles, evidence, the effective
//! strategy and the affinity and quota-aware settings, reloaded from SQLite at most once a
//! second so edits made by the CLI or the desktop reach a running relay quickly without a
//! database read per request.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use switchyard_core::routing::{Affinity, Criteria, Hop, ProfileView as RouteProfile, QuotaPolicy, Strategy};
use switchyard_core::states::ProfileKind;
use switchyard_core::{BasisFingerprint, Header, Protocol, RoutingMode, RoutingState};
use switchyard_store::profiles::ProfileRow;

use crate::context::Context;
use crate::error::EngineError;
use crate::router::secret_cache::SecretCache;

/// How long a snapshot is used before it is reloaded.
pub const SNAPSHOT_TTL: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub struct Snapshot {
    pub connection_id: String,
    pub slug: String,
    pub protocol: Protocol,
    pub base_url: String,
    pub headers: Vec<Header>,
    pub mapping: BTreeMap<String, String>,
    /// Enabled models (client-facing names).
    pub models: Vec<String>,
    /// `None`: legacy routing (legacy mode, or an activated mode that is suspended).
    pub strategy: Option<Strategy>,
    /// What balanced routing keeps on one key (the connection's `routing affinity`).
    pub affinity: Affinity,
    /// Quota-aware selection (`routing quota-aware`): off, or which readings skip a key.
    pub quota_policy: QuotaPolicy,
    /// The fallback chain the relay may use now (activated and its gates hold; empty
    /// otherwise). Tried only when no profile of this connection is eligible, before output.
    pub fallback: Vec<Hop>,
    /// Index of the primary profile.
    pub primary: Option<usize>,
    pub profiles: Vec<RouteProfile>,
    pub(crate) rows: Vec<ProfileRow>,
    pub basis: BasisFingerprint,
    pub max_age_ms: i64,
    /// How long the relay waits for the provider's first byte.
    pub first_byte_timeout: Duration,
    /// The CLI backend while it is on (`router/cli_backend.rs`): which profiles the official
    /// CLI serves.
    pub cli: Option<crate::router::CliBackend>,
    /// Where owned logins' requests go (`codex-backend-url`), read with the snapshot when the
    /// connection has an `oauth` profile (so an attempt reads no setting).
    pub login_backend: Option<String>,
    pub(crate) loaded: Instant,
}

impl Snapshot {
    pub fn criteria(&self, now_ms: i64) -> Criteria<'_> {
        Criteria { basis: &self.basis, max_evidence_age_ms: self.max_age_ms, now_ms }
    }

    /// Whether a request to this connection is forwarded: legacy routing with no fallback
    /// chain routes by nothing in the body, so the body goes upstream as it streams in and
    /// is read (for the ledger's keys and the model) only after the answer. With the CLI
    /// backend on the body is read first (the CLI gets a prompt, not bytes).
    pub fn forwards(&self) -> bool {
        self.strategy.is_none() && self.fallback.is_empty() && self.cli.is_none()
    }

    /// Whether the relay answers `GET …/models` itself: a routed connection lists the models
    /// some profile has current evidence for; legacy passes the listing through.
    pub fn lists_models(&self) -> bool {
        self.strategy.is_some()
    }

    /// The model name sent upstream: mapped only where the connection's mapping says so.
    pub fn upstream_model<'a>(&'a self, model: &'a str) -> &'a str {
        self.mapping.get(model).map_or(model, String::as_str)
    }

    /// Models some profile has current evidence for (the relay's `GET /models`).
    pub fn served_models(&self, now_ms: i64) -> Vec<String> {
        let criteria = self.criteria(now_ms);
        let mut out: Vec<String> = self
            .profiles
            .iter()
            .filter(|p| p.enabled && p.credential_health(now_ms).usable())
            .filter_map(|p| {
                p.evidence
                    .as_ref()
                    .filter(|e| switchyard_core::routing::eligibility::evidence_is_current(p, e, &criteria))
            })
            .flat_map(|e| e.models.iter().map(str::to_string))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    pub fn is_fresh(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.loaded) < SNAPSHOT_TTL
    }
}

#[cfg(test)]
impl Snapshot {
    /// A legacy snapshot of `slug` with no profiles, for tests that need only its names.
    pub(crate) fn for_test(slug: &str, protocol: Protocol, models: &[&str]) -> Snapshot {
        Snapshot {
            connection_id: format!("c_{slug}"),
            slug: slug.to_string(),
            protocol,
            base_url: "http://127.0.0.1:9/v1".into(),
            headers: Vec::new(),
            mapping: BTreeMap::new(),
            models: models.iter().map(|m| m.to_string()).collect(),
            strategy: None,
            affinity: Affinity::default(),
            quota_policy: QuotaPolicy::default(),
            fallback: Vec::new(),
            primary: None,
            profiles: Vec::new(),
            rows: Vec::new(),
            basis: BasisFingerprint(String::new()),
            max_age_ms: 0,
            first_byte_timeout: Duration::from_secs(60),
            cli: None,
            login_backend: None,
            loaded: Instant::now(),
        }
    }
}

impl Context {
    /// Loads the routing snapshot of `slug` (secret presence from `secrets`).
    pub(crate) async fn load_snapshot(&self, slug: &str, secrets: &SecretCache) -> Result<Snapshot, EngineError> {
        let row = self.connection_by_slug(slug).await?;
        let ready = self.readiness_with(row, Some(secrets)).await?;
        let mode: RoutingMode = ready.connection.routing_mode.parse()?;
        let state: RoutingState = ready.connection.routing_state.parse()?;
        // Routing is only on while the gates hold; otherwise it routes as legacy (suspended).
        let strategy = match (Strategy::from_mode(mode), state) {
            (Some(s), RoutingState::Active) if ready.gates().ok => Some(s),
            _ => None,
        };
        let first_byte_timeout = self.first_byte_timeout(&ready.connection.id).await?;
        let affinity = self.affinity_setting(&ready.connection.id).await?.affinity();
        let quota_policy = self.quota_policy(&ready.connection.id).await?;
        let fallback = self.active_chain(&ready.connection).await?;
        let cli = self.load_cli_backend(&ready.connection.id, ready.def.protocol, &ready.profiles).await?;
        let login_backend = if ready.routes.iter().any(|p| p.credential.kind == ProfileKind::Oauth) {
            Some(self.login_endpoints().await?.backend_url)
        } else {
            None
        };
        Ok(Snapshot {
            cli,
            login_backend,
            fallback,
            first_byte_timeout,
            affinity,
            quota_policy,
            connection_id: ready.connection.id.clone(),
            slug: ready.connection.slug.clone(),
            protocol: ready.def.protocol,
            base_url: ready.def.base_url.clone(),
            headers: ready.def.headers.clone(),
            mapping: ready.def.mapping.clone(),
            models: ready.def.models.clone(),
            strategy,
            primary: ready.profiles.iter().position(|p| p.is_primary),
            profiles: ready.routes,
            rows: ready.profiles,
            basis: ready.basis,
            max_age_ms: ready.max_age_ms,
            loaded: self.monotonic(),
        })
    }
}
