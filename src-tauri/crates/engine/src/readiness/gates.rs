//! Everything routing decisions read about one connection, gathered once: the decoded
//! definition, profiles, evidence, whether each credential is there (the secret in the
//! keychain; for an external profile, the official CLI's credential file), each credential's
//! kind and expiry (health is judged at the decision's clock, never stored), and the gates.

use switchyard_core::routing::{
    evaluate_gates, evaluate_gates_under_quota, Criteria, GateReport, NoCircuits, ProfileView as RouteProfile,
    QuotaBlocks,
};
use switchyard_core::states::CredentialPresence;
use switchyard_core::BasisFingerprint;
use switchyard_store::connections::ConnectionRow;
use switchyard_store::evidence::{self, EvidenceRow};
use switchyard_store::profiles::{self, ProfileRow};

use crate::config::rows::{credential_facts, Definition};
use crate::context::Context;
use crate::error::EngineError;
use crate::readiness::evidence::evidence_view;
use crate::settings::{Scope, EVIDENCE_MAX_AGE_MS};

/// Settings key of the maximum evidence age in milliseconds.
pub const MAX_EVIDENCE_AGE_KEY: &str = EVIDENCE_MAX_AGE_MS.key;

pub(crate) struct Readiness {
    pub connection: ConnectionRow,
    pub def: Definition,
    pub basis: BasisFingerprint,
    pub profiles: Vec<ProfileRow>,
    pub evidence: Vec<Option<EvidenceRow>>,
    /// `present`, `missing` or `unknown` per profile (same order).
    pub credential: Vec<CredentialPresence>,
    pub routes: Vec<RouteProfile>,
    pub max_age_ms: i64,
    pub now_ms: i64,
}

impl Readiness {
    pub fn criteria(&self) -> Criteria<'_> {
        Criteria { basis: &self.basis, max_evidence_age_ms: self.max_age_ms, now_ms: self.now_ms }
    }

    /// Each profile's id and label (what a refused activation shows labels by).
    pub fn labels(&self) -> Vec<(String, String)> {
        self.profiles.iter().map(|p| (p.id.clone(), p.label.clone())).collect()
    }

    /// The label of a profile id (the id itself if unknown).
    pub fn label_of(&self, id: &str) -> String {
        self.profiles.iter().find(|p| p.id == id).map_or_else(|| id.to_string(), |p| p.label.clone())
    }

    /// The gate report as shown to people and scripts.
    pub fn gate_view(&self) -> crate::views::GateView {
        crate::views::GateView::new(&self.gates(), &|id| self.label_of(id))
    }

    /// The gate report as shown, with the keys quota-aware selection skips now listed as
    /// `quota_reserve`; `ok` and `failures` stay those of [`Readiness::gates`] (quota blocks end
    /// by themselves and, like cooldowns, do not decide activation or suspension).
    pub fn gate_view_under_quota(&self, blocks: &QuotaBlocks) -> crate::views::GateView {
        let mut view = self.gate_view();
        if blocks.is_empty() {
            return view;
        }
        let shown = evaluate_gates_under_quota(&self.routes, &self.def.models, &self.criteria(), &NoCircuits, blocks);
        view.models = crate::views::GateView::new(&shown, &|id| self.label_of(id)).models;
        view
    }

    /// The activation gates, judged on evidence (cooldowns come and go by themselves and do
    /// not decide activation or suspension).
    pub fn gates(&self) -> GateReport {
        evaluate_gates(&self.routes, &self.def.models, &self.criteria(), &NoCircuits)
    }
}

impl Context {
    pub async fn max_evidence_age_ms(&self) -> Result<i64, EngineError> {
        self.setting(&EVIDENCE_MAX_AGE_MS, Scope::Global).await
    }

    /// Sets how old evidence may be before it is stale (milliseconds, at least one minute).
    pub async fn set_max_evidence_age_ms(&self, ms: i64) -> Result<(), EngineError> {
        self.set_setting(&EVIDENCE_MAX_AGE_MS, Scope::Global, ms).await
    }

    pub(crate) async fn readiness(&self, connection: ConnectionRow) -> Result<Readiness, EngineError> {
        self.readiness_with(connection, None).await
    }

    /// Readiness where secret presence comes from `secrets` (the relay's cache: no keychain
    /// call once a (locator, credential revision) was read) instead of asking the keychain.
    pub(crate) async fn readiness_with(
        &self,
        connection: ConnectionRow,
        secrets: Option<&crate::router::secret_cache::SecretCache>,
    ) -> Result<Readiness, EngineError> {
        self.readiness_loads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let def = Definition::decode(&connection)?;
        let basis = def.fingerprint();
        let (profiles, evidence) = {
            let mut conn = self.store.acquire().await?;
            let rows = profiles::for_connection(&mut conn, &connection.id).await?;
            let mut all = evidence::for_connection(&mut conn, &connection.id).await?;
            let ev: Vec<_> = rows
                .iter()
                .map(|r| all.iter().position(|e| e.profile_id == r.id).map(|i| all.swap_remove(i)))
                .collect();
            (rows, ev)
        };
        let mut credential = Vec::with_capacity(profiles.len());
        for p in &profiles {
            credential.push(match secrets {
                Some(cache) if credential_facts(p).kind.has_secret() => cache.presence(self, p).await,
                _ => self.credential_state(p).await,
            });
        }
        let routes = profiles
            .iter()
            .zip(&evidence)
            .zip(&credential)
            .map(|((p, e), c)| RouteProfile {
                id: p.id.clone(),
                weight: u32::try_from(p.weight).unwrap_or(1),
                priority: p.priority,
                enabled: p.enabled,
                credential_present: *c == CredentialPresence::Present,
                credential_revision: p.credential_revision,
                evidence: e.as_ref().map(evidence_view),
                credential: credential_facts(p),
            })
            .collect();
        Ok(Readiness {
            connection,
            def,
            basis,
            profiles,
            evidence,
            credential,
            routes,
            max_age_ms: self.max_evidence_age_ms().await?,
            now_ms: self.now_ms(),
        })
    }
}
