//! Activation gates (invariant 3): per enabled model, which profiles count and why each other
//! one does not; `ok` only when every model has ≥1 eligible profile and some model has ≥2.

use serde::{Deserialize, Serialize};

use super::circuit::CircuitLookup;
use super::eligibility::{Criteria, Eligibility, Exclusion, ProfileView};
use super::quota_reserve::QuotaBlocks;

/// An excluded profile and its one reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExcludedProfile {
    pub profile: String,
    pub reason: Exclusion,
}

/// The gate line of one model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelGate {
    pub model: String,
    pub eligible: Vec<String>,
    pub excluded: Vec<ExcludedProfile>,
}

/// What a failing gate report says: no enabled model at all.
pub const GATE_NO_MODEL: &str = "the connection has no enabled model";
/// What a failing gate report says for a model no profile can serve (`{model}` and `{why}`,
/// the excluded profiles and their reasons, filled in).
pub const GATE_MODEL_UNSERVED: &str = "model {model} has no eligible profile ({why})";
/// What a failing gate report says when no model has two eligible profiles.
pub const GATE_NO_PAIR: &str = "no model has two eligible profiles";

/// The activation report, shaped like `gates` in `routing status --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateReport {
    pub ok: bool,
    pub models: Vec<ModelGate>,
}

impl GateReport {
    /// Human reasons the gates fail (empty when `ok`), e.g. for a `GateFailed` error message.
    pub fn failures(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.models.is_empty() {
            out.push(GATE_NO_MODEL.to_string());
        }
        for m in self.models.iter().filter(|m| m.eligible.is_empty()) {
            let why: Vec<String> = m.excluded.iter().map(|e| format!("{}: {}", e.profile, e.reason)).collect();
            out.push(GATE_MODEL_UNSERVED.replace("{model}", &m.model).replace("{why}", &why.join(", ")));
        }
        if !self.models.is_empty() && self.models.iter().all(|m| m.eligible.len() < 2) {
            out.push(GATE_NO_PAIR.to_string());
        }
        out
    }
}

/// Evaluates the gates for `models` (the connection's enabled models). Pass `NoCircuits` to
/// judge evidence alone, or the live board to also count current health.
pub fn evaluate_gates<C: CircuitLookup + ?Sized>(
    profiles: &[ProfileView],
    models: &[String],
    criteria: &Criteria<'_>,
    circuits: &C,
) -> GateReport {
    evaluate_gates_under_quota(profiles, models, criteria, circuits, &QuotaBlocks::NONE)
}

/// [`evaluate_gates`] with quota blocks: blocked profiles are listed as `quota_reserve`. Like
/// cooldowns, quota blocks end by themselves; callers judge activation without them.
pub fn evaluate_gates_under_quota<C: CircuitLookup + ?Sized>(
    profiles: &[ProfileView],
    models: &[String],
    criteria: &Criteria<'_>,
    circuits: &C,
    quota: &QuotaBlocks,
) -> GateReport {
    let mut e = Eligibility::default();
    let lines: Vec<ModelGate> = models
        .iter()
        .map(|model| {
            e.evaluate_under_quota(profiles, model, criteria, circuits, quota);
            ModelGate {
                model: model.clone(),
                eligible: e.eligible().iter().map(|&i| profiles[i].id.clone()).collect(),
                excluded: e
                    .excluded()
                    .iter()
                    .map(|&(i, reason)| ExcludedProfile { profile: profiles[i].id.clone(), reason })
                    .collect(),
            }
        })
        .collect();
    let every_model_served = lines.iter().all(|m| !m.eligible.is_empty());
    let some_model_pooled = lines.iter().any(|m| m.eligible.len() >= 2);
    GateReport { ok: every_model_served && some_model_pooled, models: lines }
}
