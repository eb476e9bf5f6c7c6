//! Test/discovery of a connection's profiles: list each key's models (or infer them), with
//! `deep` one 1-token request per enabled model, record evidence bound to the credential
//! revision and basis, feed the results to the circuits, then suspend or resume routing.
//! A subscription credential (`token`, `external`) is never sent by verification: it serves
//! only the official client it was issued for (invariant 20), so its models are inferred
//! from the connection once the credential is there, and its first answer through the relay
//! is the proof (a refusal opens its circuit like any key's).

use std::collections::BTreeMap;
use switchyard_core::states::{CredentialPresence, ProfileKind, VerifyOutcome};
use switchyard_core::RoutingMode;

use futures_util::stream::{self, StreamExt};
use switchyard_core::routing::{Failure, FailureKind, ResetCause, Scope};
use switchyard_providers::discovery::{list_models, probe_model, CallError, Listing};
use switchyard_providers::endpoint::Endpoint;
use switchyard_store::evidence::{self, EvidenceRow};
use switchyard_store::profiles::ProfileRow;

use crate::config::rows::{credential_facts, locator_of, Definition};
use crate::context::Context;
use crate::error::EngineError;
use crate::readiness::evidence::{ModelProof, OUTCOME_AUTH_INVALID, OUTCOME_OK};
use crate::views::{VerifyEvent, VerifyReport, VerifyResult};

/// Profiles verified at once.
const CONCURRENCY: usize = 4;

const VERIFIED: VerifyOutcome = VerifyOutcome::Verified;

/// Why a subscription credential's evidence is inferred.
const NOT_SENT: &str = "a subscription credential is not sent by verification (only its official client uses it)";
const UNVERIFIED: VerifyOutcome = VerifyOutcome::Unverified;

impl Context {
    /// Verifies every profile of `slug` (or only `profile`), reporting progress through
    /// `progress`. Never changes the routing mode; it may resume a suspended connection.
    pub async fn verify(
        &self,
        slug: &str,
        profile: Option<&str>,
        deep: bool,
        progress: &(dyn Fn(VerifyEvent) + Send + Sync),
    ) -> Result<VerifyReport, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let def = Definition::decode(&connection)?;
        let targets: Vec<ProfileRow> = match profile {
            Some(p) => vec![self.profile_by_ref(&connection, p).await?],
            None => {
                let mut conn = self.store.acquire().await?;
                switchyard_store::profiles::for_connection(&mut conn, &connection.id).await?
            }
        };
        let total = i32::try_from(targets.len()).unwrap_or(i32::MAX);
        let done = std::sync::atomic::AtomicI32::new(0);
        let def = &def;
        let done = &done;
        let mut results: Vec<VerifyResult> = stream::iter(targets.into_iter().enumerate())
            .map(|(i, row)| async move {
                let index = i32::try_from(i).unwrap_or(i32::MAX) + 1;
                progress(VerifyEvent::Started { profile_id: row.id.clone(), label: row.label.clone(), index, total });
                let result = self.verify_one(def, &row, deep).await;
                let result = result.unwrap_or_else(|e| VerifyResult {
                    profile_id: row.id.clone(),
                    label: row.label.clone(),
                    outcome: UNVERIFIED,
                    models: vec![],
                    failure_kind: None,
                    detail: e.to_string(),
                });
                let finished = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress(VerifyEvent::Finished { result: result.clone(), done: finished, total });
                result
            })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        results.sort_by(|a, b| a.label.cmp(&b.label));
        self.restore_pending_chains().await?;
        let routing = self.routing_status(slug).await?;
        let was_pending = connection.routing_mode == "legacy" && connection.wanted_mode.is_some();
        let routing_restored = (was_pending && routing.mode != RoutingMode::Legacy).then(|| {
            format!(
                "{} routing restored for '{slug}' as the imported configuration wanted: the gates hold",
                routing.mode
            )
        });
        Ok(VerifyReport { slug: slug.to_string(), results, routing, routing_restored })
    }

    async fn verify_one(&self, def: &Definition, row: &ProfileRow, deep: bool) -> Result<VerifyResult, EngineError> {
        let result =
            |outcome: VerifyOutcome, models: Vec<ModelProof>, kind: Option<FailureKind>, detail: String| VerifyResult {
                profile_id: row.id.clone(),
                label: row.label.clone(),
                outcome,
                models,
                failure_kind: kind.map(|k| k.as_str().to_string()),
                detail,
            };
        if credential_facts(row).kind != ProfileKind::ApiKey {
            if self.credential_state(row).await != CredentialPresence::Present {
                let how = if credential_facts(row).kind.has_secret() {
                    "no token in the keychain for this profile"
                } else {
                    "the official CLI is not signed in for this profile (switchyard profile login)"
                };
                return Ok(result(UNVERIFIED, vec![], None, how.into()));
            }
            let models = inferred_models(def);
            self.write_evidence(row, def, OUTCOME_OK, "inferred", &models, Some(NOT_SENT.into())).await?;
            let detail = format!("{} model(s) inferred from the connection; {NOT_SENT}", models.len());
            return Ok(result(VERIFIED, models, None, detail));
        }
        let secret = match locator_of(row) {
            Some(loc) => {
                let secret = self.vault_get(loc.clone()).await?;
                // What the keychain just said is what views show next.
                let presence = if secret.is_some() { CredentialPresence::Present } else { CredentialPresence::Missing };
                self.presence.put(loc, row.credential_revision, presence);
                secret
            }
            None => None,
        };
        let Some(secret) = secret else {
            return Ok(result(UNVERIFIED, vec![], None, "no secret in the keychain for this profile".into()));
        };
        let ep = Endpoint { protocol: def.protocol, base_url: &def.base_url, headers: &def.headers };

        let (mut models, source) = match list_models(&self.http, &ep, &secret).await {
            Ok(Listing::Listed(ids)) => (listed_models(def, &ids), "listed"),
            Ok(Listing::Unsupported) => (inferred_models(def), "inferred"),
            Err(CallError::Rejected { status, classified }) => {
                let f = classified.failure;
                self.record_failure(&row.id, "", &credential_scoped(f)).await?;
                if f.kind == FailureKind::AuthInvalid {
                    self.write_evidence(row, def, OUTCOME_AUTH_INVALID, "listed", &[], Some(format!("HTTP {status}")))
                        .await?;
                    return Ok(result(
                        VerifyOutcome::AuthInvalid,
                        vec![],
                        Some(f.kind),
                        format!("the provider refused the key (HTTP {status})"),
                    ));
                }
                let detail =
                    format!("models listing failed with HTTP {status} ({}); no evidence recorded", f.kind.as_str());
                return Ok(result(UNVERIFIED, vec![], Some(f.kind), detail));
            }
            Err(e @ CallError::Transport(_)) => {
                return Ok(result(
                    UNVERIFIED,
                    vec![],
                    Some(FailureKind::Network),
                    format!("{e}; no evidence recorded"),
                ));
            }
        };
        // The key answered: earlier cooldowns and refusals no longer hold.
        self.reset_circuits(&row.id, ResetCause::Reverified).await?;

        if deep {
            for proof in models.iter_mut() {
                let upstream = def.mapping.get(&proof.model).cloned().unwrap_or_else(|| proof.model.clone());
                match probe_model(&self.http, &ep, &secret, &upstream).await {
                    Ok(()) => {
                        proof.supported = true;
                        proof.source = "probed".into();
                        proof.failure_kind = None;
                    }
                    Err(CallError::Rejected { classified, .. }) => {
                        let f = classified.failure;
                        proof.failure_kind = Some(f.kind.as_str().to_string());
                        match f.kind {
                            FailureKind::AuthInvalid => {
                                self.record_failure(&row.id, "", &f).await?;
                                self.write_evidence(
                                    row,
                                    def,
                                    OUTCOME_AUTH_INVALID,
                                    source,
                                    &[],
                                    Some("deep check refused the key".into()),
                                )
                                .await?;
                                return Ok(result(
                                    VerifyOutcome::AuthInvalid,
                                    vec![],
                                    Some(f.kind),
                                    "the provider refused the key in the deep check".into(),
                                ));
                            }
                            FailureKind::ModelForbidden => {
                                proof.supported = false;
                                self.record_failure(&row.id, &proof.model, &f).await?;
                            }
                            _ => self.record_failure(&row.id, &proof.model, &f).await?,
                        }
                    }
                    Err(CallError::Transport(_)) => proof.failure_kind = Some(FailureKind::Network.as_str().into()),
                }
            }
        }
        self.write_evidence(row, def, OUTCOME_OK, source, &models, None).await?;
        let served = models.iter().filter(|m| m.supported).count();
        let detail = format!("{served} of {} model(s) supported ({source})", models.len());
        Ok(result(VERIFIED, models, None, detail))
    }

    async fn write_evidence(
        &self,
        row: &ProfileRow,
        def: &Definition,
        outcome: &str,
        source: &str,
        models: &[ModelProof],
        detail: Option<String>,
    ) -> Result<(), EngineError> {
        let record = EvidenceRow {
            profile_id: row.id.clone(),
            credential_revision: row.credential_revision,
            basis_fingerprint: def.fingerprint().0,
            verified_at: self.now_ms(),
            outcome: outcome.to_string(),
            source: source.to_string(),
            models_json: serde_json::to_string(models).map_err(|e| EngineError::Internal(e.to_string()))?,
            detail,
            revision: 0,
        };
        let mut conn = self.store.acquire().await?;
        match evidence::upsert(&mut conn, &record).await {
            Ok(_) => Ok(()),
            // The profile was removed while it was being verified: nothing to record.
            Err(switchyard_store::StoreError::Db(e)) if e.to_string().contains("FOREIGN KEY") => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// Listing failures that are about the key as a whole cool the credential down; other
/// scopes (provider trouble, ambiguous answers) are recorded by the board as no-ops.
fn credential_scoped(f: Failure) -> Failure {
    match f.scope {
        Scope::CredentialModel => Failure { scope: Scope::Credential, ..f },
        _ => f,
    }
}

/// Enabled models (client-facing names) with whether the listing has their upstream name.
/// Without configured models, every listed model counts.
fn listed_models(def: &Definition, ids: &[String]) -> Vec<ModelProof> {
    if def.models.is_empty() {
        return ids.iter().map(|m| proof(m, "listed", true)).collect();
    }
    def.models
        .iter()
        .map(|m| {
            let upstream = def.mapping.get(m).unwrap_or(m);
            proof(m, "listed", ids.binary_search(upstream).is_ok())
        })
        .collect()
}

/// No listing: the connection's configured models (and mapping sources) are taken as supported.
fn inferred_models(def: &Definition) -> Vec<ModelProof> {
    let mut names: BTreeMap<&str, ()> = def.models.iter().map(|m| (m.as_str(), ())).collect();
    names.extend(def.mapping.keys().map(|m| (m.as_str(), ())));
    names.keys().map(|m| proof(m, "inferred", true)).collect()
}

fn proof(model: &str, source: &str, supported: bool) -> ModelProof {
    ModelProof { model: model.to_string(), source: source.to_string(), supported, failure_kind: None }
}
