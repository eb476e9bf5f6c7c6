//! Evidence of test/discovery as the engine stores and reads it: per-model proofs in the
//! row's JSON, the core view used by eligibility, and why evidence is stale.

pub use crate::views::ModelProof;
use switchyard_core::routing::{EvidenceView, ModelSet};
use switchyard_core::BasisFingerprint;
use switchyard_store::evidence::EvidenceRow;
use switchyard_store::profiles::ProfileRow;

/// Evidence outcome: the key answered and its models are recorded.
pub(crate) const OUTCOME_OK: &str = "ok";
/// Evidence outcome: the provider refused the key as invalid.
pub(crate) const OUTCOME_AUTH_INVALID: &str = "auth_invalid";

pub use crate::settings::values::DEFAULT_MAX_EVIDENCE_AGE_MS;

pub(crate) fn decode_models(row: &EvidenceRow) -> Vec<ModelProof> {
    serde_json::from_str(&row.models_json).unwrap_or_default()
}

/// The core's view of a stored evidence row.
pub(crate) fn evidence_view(row: &EvidenceRow) -> EvidenceView {
    let models: ModelSet = decode_models(row).into_iter().filter(|m| m.supported).map(|m| m.model).collect();
    EvidenceView {
        credential_revision: row.credential_revision,
        basis: BasisFingerprint(row.basis_fingerprint.clone()),
        verified_at_ms: row.verified_at,
        auth_invalid: row.outcome == OUTCOME_AUTH_INVALID,
        models,
    }
}

/// Why evidence no longer counts, in words for people; `None` when it is current.
pub(crate) fn stale_reason(
    profile: &ProfileRow,
    row: &EvidenceRow,
    basis: &BasisFingerprint,
    max_age_ms: i64,
    now_ms: i64,
) -> Option<String> {
    if row.credential_revision != profile.credential_revision {
        return Some("the credential was replaced after this verification".into());
    }
    if row.basis_fingerprint != basis.0 {
        return Some("the endpoint, headers or protocol changed after this verification".into());
    }
    if now_ms.saturating_sub(row.verified_at) > max_age_ms {
        let days = max_age_ms / (24 * 3600 * 1000);
        return Some(format!("older than the maximum evidence age ({days} days)"));
    }
    None
}
