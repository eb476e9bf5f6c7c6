//! Routing mode use cases: explicit activation behind the gates, deactivation, status, and
//! the automatic suspend/resume when evidence goes stale or is restored.

use switchyard_core::routing::{QuotaBlocks, Strategy};
use switchyard_core::states::{EvidenceOutcome, EvidenceState};
use switchyard_core::RoutingMode;
use switchyard_store::connections::{self, Routing};
use switchyard_store::quota;

use crate::clock::rfc3339;
use crate::config::quota_aware::{self, blocks_from_rows};
use crate::context::Context;
use crate::error::{EngineError, GateRefusal};
use crate::readiness::evidence::{decode_models, evidence_view, stale_reason};
use crate::readiness::gates::Readiness;
use crate::views::small;
use crate::views::{AffinityView, EvidenceSummary, HealthView, ProfileReadiness, QuotaAwareView, RoutingStatus};

const ACTIVE: &str = "active";
const SUSPENDED: &str = "suspended";

impl Context {
    /// Switches `slug` to balanced or priority routing if the gates hold; otherwise fails
    /// with the full gate report and changes nothing.
    pub async fn routing_activate(
        &self,
        slug: &str,
        strategy: Strategy,
        actor: &str,
    ) -> Result<RoutingStatus, EngineError> {
        let mode = strategy.mode();
        let ready = self.readiness(self.connection_by_slug(slug).await?).await?;
        let report = ready.gates();
        if !report.ok {
            let gates = GateRefusal::of_report(report, ready.labels());
            let shown = gates.view().failures.join("; ");
            return Err(EngineError::GateFailed {
                message: format!("cannot activate {mode} routing for '{slug}': {shown}"),
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
        let revision = connections::update_routing(
            &mut conn,
            &ready.connection.id,
            ready.connection.revision,
            &routing,
            self.now_ms(),
        )
        .await
        .map_err(|e| EngineError::from_store("connection", slug, e))?;
        let mut activated =
            crate::config::audit::change("routing.activate", slug, Some(ready.connection.revision), Some(revision));
        activated.detail = Some(serde_json::json!({"mode": mode.as_str()}));
        self.audit(&mut conn, activated).await?;
        drop(conn);
        let mut ready = ready;
        apply_routing(&mut ready.connection, routing, revision);
        self.status_from(&ready).await
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
        let revision = connections::update_routing(&mut conn, &row.id, row.revision, &routing, self.now_ms())
            .await
            .map_err(|e| EngineError::from_store("connection", slug, e))?;
        self.audit(
            &mut conn,
            crate::config::audit::change("routing.deactivate", slug, Some(row.revision), Some(revision)),
        )
        .await?;
        drop(conn);
        self.routing_status(slug).await
    }

    /// Mode, state, gate report and per-profile readiness and health. Suspends or resumes
    /// the connection first if its evidence changed since the last look.
    pub async fn routing_status(&self, slug: &str) -> Result<RoutingStatus, EngineError> {
        let mut row = self.connection_by_slug(slug).await?;
        if row.routing_mode == RoutingMode::Legacy.as_str() && row.wanted_mode.is_some() {
            // A pending mode may start now (rare: only after an import); the status shows
            // what it became.
            self.restore_pending(row).await?;
            row = self.connection_by_slug(slug).await?;
        }
        let mut ready = self.readiness(row).await?;
        self.reconcile_ready(&mut ready).await?;
        self.status_from(&ready).await
    }

    /// The status of a connection from its readiness (loaded once by the caller).
    async fn status_from(&self, ready: &Readiness) -> Result<RoutingStatus, EngineError> {
        let affinity = self.affinity_setting(&ready.connection.id).await?.view();
        let policy = self.quota_policy(&ready.connection.id).await?;
        let blocks = if policy.enabled {
            let mut conn = self.store.acquire().await?;
            let rows = quota::for_connection(&mut conn, &ready.connection.id).await?;
            blocks_from_rows(&policy, &rows, ready.now_ms)
        } else {
            QuotaBlocks::NONE
        };
        let mut status = self.status_of(ready, affinity, quota_aware::view(policy), &blocks);
        let mut counts = self.counts_by_profile(&ready.connection).await?;
        for p in &mut status.profiles {
            (p.cache, p.traffic) = counts.remove(&p.id).unwrap_or_default();
        }
        Ok(status)
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
        let mut ready = self.readiness(row).await?;
        self.reconcile_ready(&mut ready).await
    }

    /// [`Engine::reconcile_routing`] on a readiness already loaded; a change is applied to
    /// `ready.connection` too, so the caller can go on with it without reading again.
    pub(crate) async fn reconcile_ready(&self, ready: &mut Readiness) -> Result<(), EngineError> {
        if ready.connection.routing_mode == RoutingMode::Legacy.as_str() {
            return Ok(());
        }
        let report = ready.gate_view();
        let row = &ready.connection;
        let slug = row.slug.clone();
        let slug = slug.as_str();
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
            Ok(revision) => {
                tracing::info!(slug, state, "routing state changed");
                apply_routing(&mut ready.connection, routing, revision);
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
            .zip(&ready.routes)
            .map(|(((p, e), cred), route)| {
                let stale = e.as_ref().and_then(|e| stale_reason(p, e, &ready.basis, ready.max_age_ms, ready.now_ms));
                let evidence = match (e, &stale) {
                    (None, _) => EvidenceState::None,
                    (Some(_), Some(_)) => EvidenceState::Stale,
                    (Some(_), None) => EvidenceState::Current,
                };
                ProfileReadiness {
                    id: p.id.clone(),
                    label: p.label.clone(),
                    weight: small(p.weight),
                    priority: small(p.priority),
                    enabled: p.enabled,
                    primary: p.is_primary,
                    credential: *cred,
                    kind: route.credential.kind,
                    credential_health: self.health_view(
                        route.credential_health(ready.now_ms),
                        route.credential.kind,
                        &c.slug,
                        &p.label,
                    ),
                    evidence,
                    evidence_detail: e.as_ref().map(|e| EvidenceSummary {
                        verified_at: rfc3339(e.verified_at),
                        outcome: EvidenceOutcome::from_word(&e.outcome).unwrap_or(EvidenceOutcome::AuthInvalid),
                        models: decode_models(e),
                        stale_reason: stale.clone(),
                    }),
                    health: self.board.health_entries(&p.id, ready.now_ms).iter().map(HealthView::from).collect(),
                    cache: crate::views::CacheView::default(),
                    traffic: crate::views::TrafficView::default(),
                }
            })
            .collect();
        debug_assert!(ready.evidence.iter().flatten().all(|e| evidence_view(e).credential_revision >= 0));
        RoutingStatus {
            slug: c.slug.clone(),
            // Only the engine writes these columns, always with a contract word.
            mode: c.routing_mode.parse().unwrap_or(RoutingMode::Legacy),
            state: c.routing_state.parse().unwrap_or(switchyard_core::RoutingState::Suspended),
            note: c.routing_note.clone(),
            activated_at: c.activated_at.map(rfc3339),
            activated_by: c.activated_by.clone(),
            pending_mode: c.wanted_mode.as_deref().filter(|_| c.routing_mode == "legacy").and_then(|m| m.parse().ok()),
            affinity,
            quota_aware,
            gates: ready.gate_view_under_quota(blocks),
            profiles,
        }
    }
}

/// A routing change just written, applied to the row in hand.
fn apply_routing(row: &mut switchyard_store::connections::ConnectionRow, routing: Routing, revision: i64) {
    row.routing_mode = routing.mode;
    row.routing_state = routing.state;
    row.routing_note = routing.note;
    row.wanted_mode = routing.wanted_mode;
    row.activated_at = routing.activated_at;
    row.activated_by = routing.activated_by;
    row.revision = revision;
}

fn suspension_note(failures: &[String]) -> String {
    format!(
        "suspended (routing as legacy) because the activation gates no longer hold: {}; run `switchyard verify` to restore them",
        failures.join("; ")
    )
}
