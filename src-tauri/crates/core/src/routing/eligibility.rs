//! Eligibility: which profiles of a connection may serve a model now, and for every other
//! profile the one reason it may not (`Exclusion`). Pure: evidence, circuits and time are inputs.

use serde::{Deserialize, Serialize};
use std::fmt;

use super::circuit::{CircuitHealth, CircuitLookup, ProfileHealth};
use super::failure::FailureKind;
use super::quota_reserve::QuotaBlocks;
use crate::basis::BasisFingerprint;
use crate::credential_health::{credential_health, CredentialFacts, CredentialHealth};
use crate::states::CredentialHealthState;

/// The models a verification proved a profile can use: sorted and deduplicated, so lookups
/// are a binary search without allocation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Vec<String>", into = "Vec<String>")]
pub struct ModelSet(Vec<String>);

impl ModelSet {
    pub fn contains(&self, model: &str) -> bool {
        self.0.binary_search_by(|m| m.as_str().cmp(model)).is_ok()
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<Vec<String>> for ModelSet {
    fn from(mut v: Vec<String>) -> Self {
        v.sort();
        v.dedup();
        ModelSet(v)
    }
}

impl From<ModelSet> for Vec<String> {
    fn from(s: ModelSet) -> Self {
        s.0
    }
}

impl<S: Into<String>> FromIterator<S> for ModelSet {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        ModelSet::from(iter.into_iter().map(Into::into).collect::<Vec<String>>())
    }
}

/// The latest verification of a profile, with what it was taken under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceView {
    pub credential_revision: i64,
    pub basis: BasisFingerprint,
    pub verified_at_ms: i64,
    /// The verification was refused as an invalid credential.
    pub auth_invalid: bool,
    pub models: ModelSet,
}

/// What routing needs to know about one profile (never the label, never the secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileView {
    pub id: String,
    pub weight: u32,
    /// Lower number = tried first.
    pub priority: i64,
    pub enabled: bool,
    /// The credential is there: the keychain holds the secret for the profile's locator, or
    /// (`external`) the official CLI's credential file exists in its config directory.
    pub credential_present: bool,
    pub credential_revision: i64,
    pub evidence: Option<EvidenceView>,
    /// Kind and expiry: with `credential_present` and the decision's clock they give the
    /// credential's health (an expired token is excluded from the moment it expires).
    pub credential: CredentialFacts,
}

impl ProfileView {
    /// The credential's health at `now_ms` (docs/design.md, invariant 21).
    pub fn credential_health(&self, now_ms: i64) -> CredentialHealth {
        credential_health(&self.credential, self.credential_present, now_ms)
    }
}

/// What evidence must match to count as current.
#[derive(Debug, Clone, Copy)]
pub struct Criteria<'a> {
    /// The connection's basis fingerprint now.
    pub basis: &'a BasisFingerprint,
    pub max_evidence_age_ms: i64,
    pub now_ms: i64,
}

/// Why a profile is not eligible. When several hold, the first in this order is reported:
/// configuration (`disabled`, then the credential's health: `secret_missing` for a key or
/// token not in the keychain, `missing` for a sign-in that is not there, `expired`), then
/// evidence (`no_evidence`,
/// `stale_evidence`, `auth_invalid`, `model_unsupported`), then health, credential-wide
/// before per-model (`circuit_open` or `auth_invalid` for the credential circuit,
/// `model_circuit_open`), then `quota_reserve` (quota-aware selection: a reading says the
/// key's window is exhausted or under the reserve, until its reset), and last
/// `probe_in_flight`. Static causes come first because they are the ones the user must fix;
/// a health or quota reason would hide them and clear by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Exclusion {
    Disabled,
    SecretMissing,
    /// An `external` (or `oauth`) profile is not signed in.
    Missing,
    /// A token (or login) is past its expiry.
    Expired,
    NoEvidence,
    StaleEvidence,
    AuthInvalid,
    ModelUnsupported,
    CircuitOpen,
    ModelCircuitOpen,
    QuotaReserve,
    ProbeInFlight,
}

impl Exclusion {
    pub const ALL: [Exclusion; 12] = [
        Exclusion::Disabled,
        Exclusion::SecretMissing,
        Exclusion::Missing,
        Exclusion::Expired,
        Exclusion::NoEvidence,
        Exclusion::StaleEvidence,
        Exclusion::AuthInvalid,
        Exclusion::ModelUnsupported,
        Exclusion::CircuitOpen,
        Exclusion::ModelCircuitOpen,
        Exclusion::QuotaReserve,
        Exclusion::ProbeInFlight,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Exclusion::Disabled => "disabled",
            Exclusion::SecretMissing => "secret_missing",
            Exclusion::Missing => "missing",
            Exclusion::Expired => "expired",
            Exclusion::NoEvidence => "no_evidence",
            Exclusion::StaleEvidence => "stale_evidence",
            Exclusion::AuthInvalid => "auth_invalid",
            Exclusion::ModelUnsupported => "model_unsupported",
            Exclusion::CircuitOpen => "circuit_open",
            Exclusion::ModelCircuitOpen => "model_circuit_open",
            Exclusion::QuotaReserve => "quota_reserve",
            Exclusion::ProbeInFlight => "probe_in_flight",
        }
    }
}

impl fmt::Display for Exclusion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether evidence is current for the profile under `criteria`.
pub fn evidence_is_current(p: &ProfileView, e: &EvidenceView, criteria: &Criteria<'_>) -> bool {
    e.credential_revision == p.credential_revision
        && e.basis == *criteria.basis
        && criteria.now_ms.saturating_sub(e.verified_at_ms) <= criteria.max_evidence_age_ms
}

/// The reason `p` may not serve `model`, or `None` when it is eligible. `health` is only
/// asked when every static check passed.
pub fn exclusion_of(
    p: &ProfileView,
    model: &str,
    criteria: &Criteria<'_>,
    health: impl FnOnce() -> ProfileHealth,
) -> Option<Exclusion> {
    exclusion_under_quota(p, model, criteria, health, || false)
}

/// [`exclusion_of`] under quota-aware selection: `quota_blocked` says whether a quota reading
/// keeps `p` out for `model` now; it is only asked when the circuits let the profile serve.
pub fn exclusion_under_quota(
    p: &ProfileView,
    model: &str,
    criteria: &Criteria<'_>,
    health: impl FnOnce() -> ProfileHealth,
    quota_blocked: impl FnOnce() -> bool,
) -> Option<Exclusion> {
    if !p.enabled {
        return Some(Exclusion::Disabled);
    }
    match p.credential_health(criteria.now_ms).state {
        CredentialHealthState::Missing if p.credential.kind.signs_in() => return Some(Exclusion::Missing),
        CredentialHealthState::Missing => return Some(Exclusion::SecretMissing),
        CredentialHealthState::Expired => return Some(Exclusion::Expired),
        CredentialHealthState::Static | CredentialHealthState::Ok | CredentialHealthState::Expiring => {}
    }
    let Some(e) = &p.evidence else {
        return Some(Exclusion::NoEvidence);
    };
    if !evidence_is_current(p, e, criteria) {
        return Some(Exclusion::StaleEvidence);
    }
    if e.auth_invalid {
        return Some(Exclusion::AuthInvalid);
    }
    if !e.models.contains(model) {
        return Some(Exclusion::ModelUnsupported);
    }
    let h = health();
    match h.credential {
        CircuitHealth::Open { kind: FailureKind::AuthInvalid, .. } => return Some(Exclusion::AuthInvalid),
        CircuitHealth::Open { .. } => return Some(Exclusion::CircuitOpen),
        CircuitHealth::Closed | CircuitHealth::HalfOpen { .. } => {}
    }
    if let CircuitHealth::Open { .. } = h.model {
        return Some(Exclusion::ModelCircuitOpen);
    }
    if quota_blocked() {
        return Some(Exclusion::QuotaReserve);
    }
    let claimed = |c| matches!(c, CircuitHealth::HalfOpen { claimed: true, .. });
    if claimed(h.credential) || claimed(h.model) {
        return Some(Exclusion::ProbeInFlight);
    }
    None
}

/// The eligible set for one model, as indices into the profile slice (in slice order), and
/// each excluded index with its reason. Reuse one value across calls: `evaluate` clears and
/// refills it without allocating once its buffers have grown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Eligibility {
    eligible: Vec<usize>,
    excluded: Vec<(usize, Exclusion)>,
}

impl Eligibility {
    pub fn evaluate<C: CircuitLookup + ?Sized>(
        &mut self,
        profiles: &[ProfileView],
        model: &str,
        criteria: &Criteria<'_>,
        circuits: &C,
    ) {
        self.evaluate_under_quota(profiles, model, criteria, circuits, &QuotaBlocks::NONE);
    }

    /// [`Eligibility::evaluate`] with the quota blocks of quota-aware selection (a blocked
    /// profile is excluded as `quota_reserve` until its window's reset).
    pub fn evaluate_under_quota<C: CircuitLookup + ?Sized>(
        &mut self,
        profiles: &[ProfileView],
        model: &str,
        criteria: &Criteria<'_>,
        circuits: &C,
        quota: &QuotaBlocks,
    ) {
        self.eligible.clear();
        self.excluded.clear();
        for (i, p) in profiles.iter().enumerate() {
            let health = || circuits.health(&p.id, model, criteria.now_ms);
            let blocked = || quota.until(&p.id, model, criteria.now_ms).is_some();
            match exclusion_under_quota(p, model, criteria, health, blocked) {
                None => self.eligible.push(i),
                Some(reason) => self.excluded.push((i, reason)),
            }
        }
    }

    /// Indices of eligible profiles, in input order.
    pub fn eligible(&self) -> &[usize] {
        &self.eligible
    }

    /// (index, reason) of every other profile, in input order.
    pub fn excluded(&self) -> &[(usize, Exclusion)] {
        &self.excluded
    }

    pub fn is_eligible(&self, index: usize) -> bool {
        self.eligible.contains(&index)
    }
}

/// One-shot form of `Eligibility::evaluate`.
pub fn evaluate<C: CircuitLookup + ?Sized>(
    profiles: &[ProfileView],
    model: &str,
    criteria: &Criteria<'_>,
    circuits: &C,
) -> Eligibility {
    let mut e = Eligibility::default();
    e.evaluate(profiles, model, criteria, circuits);
    e
}
