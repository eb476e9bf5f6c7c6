//! Views of routing readiness: the gate report, per-profile readiness and health, and the
//! progress and results of verification. Shaped like `routing status --json` (docs/interface.md).

use serde::Serialize;
use specta::Type;
use switchyard_core::routing::{GateReport, HealthEntry};

use crate::clock::rfc3339;
use crate::readiness::evidence::ModelProof;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ExcludedView {
    pub profile: String,
    pub label: String,
    /// `disabled`, `secret_missing`, `missing` (not signed in), `expired` (a token past its
    /// expiry), `no_evidence`, `stale_evidence`, `auth_invalid`,
    /// `model_unsupported`, `circuit_open`, `model_circuit_open`, `quota_reserve` (quota-aware
    /// selection skips the key until its window's reset) or `probe_in_flight`.
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ModelGateView {
    pub model: String,
    /// Ids of the profiles that can serve the model.
    pub eligible: Vec<String>,
    /// Their labels, same order (for people; ids are what scripts should use).
    pub eligible_labels: Vec<String>,
    pub excluded: Vec<ExcludedView>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct GateView {
    pub ok: bool,
    pub models: Vec<ModelGateView>,
    /// Why the gates fail, in words (empty when `ok`).
    pub failures: Vec<String>,
}

impl GateView {
    /// The report with each profile id's label looked up through `label_of`.
    pub(crate) fn new(r: &GateReport, label_of: &dyn Fn(&str) -> String) -> Self {
        GateView {
            ok: r.ok,
            models: r
                .models
                .iter()
                .map(|m| ModelGateView {
                    model: m.model.clone(),
                    eligible: m.eligible.clone(),
                    eligible_labels: m.eligible.iter().map(|id| label_of(id)).collect(),
                    excluded: m
                        .excluded
                        .iter()
                        .map(|e| ExcludedView {
                            profile: e.profile.clone(),
                            label: label_of(&e.profile),
                            reason: e.reason.as_str().to_string(),
                        })
                        .collect(),
                })
                .collect(),
            failures: r.failures().into_iter().map(|f| relabel(&f, r, label_of)).collect(),
        }
    }
}

impl crate::error::GateRefusal {
    /// The refusal as front ends show it: labels for profile ids, in the report and its reasons.
    pub fn view(&self) -> GateView {
        let label_of =
            |id: &str| self.labels.iter().find(|(i, _)| i == id).map_or_else(|| id.to_string(), |(_, l)| l.clone());
        let mut view = GateView::new(&self.report, &label_of);
        view.failures = self
            .failures
            .iter()
            .map(|f| self.labels.iter().fold(f.clone(), |s, (id, label)| s.replace(id.as_str(), label)))
            .collect();
        view
    }
}

/// Failure sentences name profile ids; show labels to people instead.
fn relabel(sentence: &str, r: &GateReport, label_of: &dyn Fn(&str) -> String) -> String {
    let mut out = sentence.to_string();
    for m in &r.models {
        for e in &m.excluded {
            out = out.replace(&e.profile, &label_of(&e.profile));
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct HealthView {
    /// `None` for the credential-wide circuit.
    pub model: Option<String>,
    pub state: switchyard_core::states::CircuitState,
    pub kind: Option<String>,
    /// End of the cooldown (RFC 3339); `None` when closed or open until re-verified.
    pub until: Option<String>,
}

impl From<&HealthEntry> for HealthView {
    fn from(h: &HealthEntry) -> Self {
        use switchyard_core::states::CircuitState;
        let state = match h.state {
            switchyard_core::routing::HealthState::Closed => CircuitState::Closed,
            switchyard_core::routing::HealthState::Open => CircuitState::Open,
            switchyard_core::routing::HealthState::HalfOpen => CircuitState::HalfOpen,
        };
        HealthView {
            model: h.model.clone(),
            state,
            kind: h.kind.map(|k| k.as_str().to_string()),
            until: h.until_ms.map(rfc3339),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct EvidenceSummary {
    pub verified_at: String,
    pub outcome: switchyard_core::states::EvidenceOutcome,
    pub models: Vec<ModelProof>,
    /// Why the evidence no longer counts (`None` when current).
    pub stale_reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ProfileReadiness {
    pub id: String,
    pub label: String,
    pub weight: i32,
    pub priority: i32,
    pub enabled: bool,
    pub primary: bool,
    pub credential: switchyard_core::states::CredentialPresence,
    /// What the credential is (`api_key`, `token`, `external`).
    pub kind: switchyard_core::states::ProfileKind,
    /// The credential's health at this status's clock: `expired` and `missing` do not count.
    pub credential_health: crate::views::CredentialHealthView,
    pub evidence: switchyard_core::states::EvidenceState,
    pub evidence_detail: Option<EvidenceSummary>,
    pub health: Vec<HealthView>,
    /// Prompt-cache reads against the whole prompt over the profile's successful attempts in
    /// the ledger (`views/cache.rs`).
    pub cache: crate::views::CacheView,
    /// Its share of the connection's conversations and prompt tokens in the ledger.
    pub traffic: crate::views::TrafficView,
}

/// A connection's affinity as `routing status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct AffinityView {
    /// Only balanced routing uses it.
    pub mode: switchyard_core::states::AffinityMode,
    /// The conversation window in minutes (kept while the mode is `turn`).
    pub window_min: i32,
}

/// A connection's quota-aware selection as `routing status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct QuotaAwareView {
    /// Keys whose latest reading is exhausted or under the reserve are skipped until the reset.
    pub enabled: bool,
    /// Percent of a window kept in reserve (0 ..= 50; kept while off).
    pub reserve_pct: i32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct RoutingStatus {
    pub slug: String,
    pub mode: switchyard_core::RoutingMode,
    /// A suspended connection routes as legacy.
    pub state: switchyard_core::RoutingState,
    /// Why the connection is suspended, and what fixes it.
    pub note: Option<String>,
    pub activated_at: Option<String>,
    pub activated_by: Option<String>,
    /// A mode wanted by an imported configuration, not yet in force: it starts by itself
    /// once the profiles have credentials, are enabled and verified, and the gates hold.
    pub pending_mode: Option<switchyard_core::RoutingMode>,
    /// What balanced routing keeps on one key (`routing affinity`).
    pub affinity: AffinityView,
    /// Quota-aware selection (`routing quota-aware`); when on, `gates` lists the keys it skips
    /// now as `quota_reserve` (they do not decide activation or suspension).
    pub quota_aware: QuotaAwareView,
    pub gates: GateView,
    pub profiles: Vec<ProfileReadiness>,
}

/// The result of verifying one profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct VerifyResult {
    pub profile_id: String,
    pub label: String,
    /// `verified` (evidence recorded), `auth_invalid` (recorded: the key is refused) or
    /// `unverified` (nothing proven; `detail` says why).
    pub outcome: switchyard_core::states::VerifyOutcome,
    pub models: Vec<ModelProof>,
    pub failure_kind: Option<String>,
    pub detail: String,
}

/// Progress of `verify`, one event when a profile starts and one when it finishes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum VerifyEvent {
    Started { profile_id: String, label: String, index: i32, total: i32 },
    Finished { result: VerifyResult, done: i32, total: i32 },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct VerifyReport {
    pub slug: String,
    pub results: Vec<VerifyResult>,
    pub routing: RoutingStatus,
    /// Set when this verification restored a pending imported routing mode, saying so.
    pub routing_restored: Option<String>,
}

impl VerifyReport {
    /// The results of enabled profiles that did not end `verified` (`auth_invalid` or
    /// `unverified`): keys routing cannot use now. A disabled profile's result is reported
    /// but does not count here, nor does one removed while it was verified.
    pub fn not_verified(&self) -> Vec<&VerifyResult> {
        let enabled = |id: &str| self.routing.profiles.iter().any(|p| p.id == id && p.enabled);
        self.results
            .iter()
            .filter(|r| r.outcome != switchyard_core::states::VerifyOutcome::Verified && enabled(&r.profile_id))
            .collect()
    }
}
