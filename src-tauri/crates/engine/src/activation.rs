//! Routing mode use cases: explicit activation behind the gates, deactivation, status, and
//! the automatic suspend/resume when evidence goes stale or is restored.

use switchyard_core::routing::QuotaBlocks;
use switchyard_core::RoutingMode;
use switchyard_store::connections::{self, Routing};
use switchyard_store::quota;

use crate::clock::rfc3339;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::evidence::{decode_models, evidence_view, stale_reason};
use crate::quota_aware::{self, blocks_from_rows};
use crate::readiness::Readiness;
use crate::routing_views::{
    AffinityView, EvidenceSummary, HealthView, ProfileReadiness, QuotaAwareView, RoutingStatus,
};
use crate::views::small;

const ACTIVE: &str = "active";
const SUSPENDED: &str = "suspended";

impl Engine {
    /// Switches `slug` to balanced or priority routing if the gates hold; otherwise fails
    /// with the full gate report and changes nothing.
    pub async fn routing_activate(&self, slug: &str, mode: &str, actor: &str) -> Result<RoutingStatus, EngineError> {
        let mode: RoutingMode = mode.parse()?;
        if mode == RoutingMode::Legacy {
            return Err(EngineError::Invalid(switchyard_core::InvalidInput::new(
                "mode",
                "activate takes balanced or priority; use `routing deactivate` for legacy",
            )));
        }
        let ready = self.readiness(self.connection_by_slug(slug).await?).await?;
        let gates = ready.gate_view();
        if !gates.ok {
            return Err(EngineError::GateFailed {
                message: format!("cannot activate {mode} routing for '{slug}': {}", gates.failures.join("; ")),
                gates: Box::new(gates),
            });
        }
        let routing = Routing {
            mode: mode.as_str().to_string(),
            state: ACTIVE.into(),
            note: None,
            wanted_mode: None,
            activated_at: Some(self.now_ms()),
            activated_by: Some(actor.to_string()),
        };
        let mut conn = self.store.acquire().await?;
        connections::update_routing(
            &mut conn,
            &ready.connection.id,
            ready.connection.revision,
            &routing,
            self.now_ms(),
        )
        .await
        .map_err(|e| EngineError::from_store("connection", slug, e))?;
        drop(conn);
        self.routing_status(slug).await
    }

    /// Returns `slug` to legacy routing (primary only, no retries). A pending mode from an
    /// import is dropped too: the user asked for legacy.
    pub async fn routing_deactivate(&self, slug: &str) -> Result<RoutingStatus, EngineError> {
        let row = self.connection_by_slug(slug).await?;
        let routing = Routing {
            mode: RoutingMode::Legacy.as_str().into(),
            state: ACTIVE.into(),
            note: None,
            wanted_mode: None,
            activated_at: None,
            activated_by: None,
        };
        let mut conn = self.store.acquire().await?;
        connections::update_routing(&mut conn, &row.id, row.revision, &routing, self.now_ms())
            .await
            .map_err(|e| EngineError::from_store("connection", slug, e))?;
        drop(conn);
        self.routing_status(slug).await
    }

    /// Mode, state, gate report and per-profile readiness and health. Suspends or resumes
    /// the connection first if its evidence changed since the last look.
    pub async fn routing_status(&self, slug: &str) -> Result<RoutingStatus, EngineError> {
        self.reconcile_routing(slug).await?;
        let ready = self.readiness(self.connection_by_slug(slug).await?).await?;
        let affinity = self.affinity_setting(&ready.connection.id).await?.view();
        let policy = self.quota_policy(&ready.connection.id).await?;
        let blocks = if policy.enabled {
            let mut conn = self.store.acquire().await?;
            let rows = quota::for_connection(&mut conn, &ready.connection.id).await?;
            blocks_from_rows(&policy, &rows, ready.now_ms)
        } else {
            QuotaBlocks::NONE
        };
        Ok(self.status_of(&ready, affinity, quota_aware::view(policy), &blocks))
    }

    /// Suspends an active balanced/priority connection whose gates no longer hold, and
    /// resumes a suspended one whose gates hold again. A legacy connection changes only when
    /// it has a pending mode (from an import) and the gates hold: that mode is restored.
    pub(crate) async fn reconcile_routing(&self, slug: &str) -> Result<(), EngineError> {
        let row = self.connection_by_slug(slug).await?;
        if row.routing_mode == RoutingMode::Legacy.as_str() {
            // A mode wanted by an imported configuration starts once the gates hold.
            self.restore_pending(row).await?;
            return Ok(());
        }
        let ready = self.readiness(row).await?;
        let report = ready.gate_view();
        let row = &ready.connection;
        let next = match (row.routing_state.as_str(), report.ok) {
            (ACTIVE, false) => Some((SUSPENDED, Some(suspension_note(&report.failures)))),
            (SUSPENDED, true) => Some((ACTIVE, None)),
            (SUSPENDED, false) => {
                let note = Some(suspension_note(&report.failures));
                (note != row.routing_note).then_some((SUSPENDED, note))
            }
            _ => None,
        };
        let Some((state, note)) = next else {
            return Ok(());
        };
        let routing = Routing {
            mode: row.routing_mode.clone(),
            state: state.into(),
            note,
            wanted_mode: row.wanted_mode.clone(),
            activated_at: row.activated_at,
            activated_by: row.activated_by.clone(),
        };
        let mut conn = self.store.acquire().await?;
        match connections::update_routing(&mut conn, &row.id, row.revision, &routing, self.now_ms()).await {
            Ok(_) => {
                tracing::info!(slug, state, "routing state changed");
                Ok(())
            }
            // Someone else changed the row meanwhile; the next look reconciles again.
            Err(switchyard_store::StoreError::Conflict { .. }) => Ok(()),
            Err(e) => Err(EngineError::from_store("connection", slug, e)),
        }
    }

    fn status_of(
        &self,
        ready: &Readiness,
        affinity: AffinityView,
        quota_aware: QuotaAwareView,
        blocks: &QuotaBlocks,
    ) -> RoutingStatus {
        let c = &ready.connection;
        let profiles = ready
            .profiles
            .iter()
            .zip(&ready.evidence)
            .zip(&ready.credential)
            .map(|((p, e), cred)| {
                let stale = e.as_ref().and_then(|e| stale_reason(p, e, &ready.basis, ready.max_age_ms, ready.now_ms));
                let evidence = match (e, &stale) {
                    (None, _) => "none",
                    (Some(_), Some(_)) => "stale",
                    (Some(_), None) => "current",
                };
                ProfileReadiness {
                    id: p.id.clone(),
                    label: p.label.clone(),
                    weight: small(p.weight),
                    priority: small(p.priority),
                    enabled: p.enabled,
                    primary: p.is_primary,
                    credential: (*cred).to_string(),
                    evidence: evidence.to_string(),
                    evidence_detail: e.as_ref().map(|e| EvidenceSummary {
                        verified_at: rfc3339(e.verified_at),
                        outcome: e.outcome.clone(),
                        models: decode_models(e),
                        stale_reason: stale.clone(),
                    }),
                    health: self.board.health_entries(&p.id, ready.now_ms).iter().map(HealthView::from).collect(),
                }
            })
            .collect();
        debug_assert!(ready.evidence.iter().flatten().all(|e| evidence_view(e).credential_revision >= 0));
        RoutingStatus {
            slug: c.slug.clone(),
            mode: c.routing_mode.clone(),
            state: c.routing_state.clone(),
            note: c.routing_note.clone(),
            activated_at: c.activated_at.map(rfc3339),
            activated_by: c.activated_by.clone(),
            pending_mode: c.wanted_mode.clone().filter(|_| c.routing_mode == "legacy"),
            affinity,
            quota_aware,
            gates: ready.gate_view_under_quota(blocks),
            profiles,
        }
    }
}

fn suspension_note(failures: &[String]) -> String {
    format!(
        "suspended (routing as legacy) because the activation gates no longer hold: {}; run `switchyard verify` to restore them",
        failures.join("; ")
    )
}
