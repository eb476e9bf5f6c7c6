//! One circuit's state and its transitions (closed → open → half-open), the read-only
//! `CircuitLookup` view eligibility uses, and the persisted `CircuitSnapshot` (claims excluded).
//! The shared, locked board lives in `board.rs`; the probe lease in `probe.rs`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use super::cooldown::{CooldownEnd, CooldownPolicy};
use super::failure::{Failure, FailureKind};
use crate::validate::InvalidInput;

/// An open circuit. A closed circuit is simply absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OpenCircuit {
    pub kind: FailureKind,
    /// Half-open from this unix ms on; `None` = only re-verification closes it.
    pub until_ms: Option<i64>,
    pub backoff_level: u32,
    /// The probe claim currently held (in memory only, never persisted).
    pub claim: Option<u64>,
}

impl OpenCircuit {
    pub fn health(&self, now_ms: i64) -> CircuitHealth {
        match self.until_ms {
            Some(until) if until <= now_ms => {
                CircuitHealth::HalfOpen { kind: self.kind, claimed: self.claim.is_some() }
            }
            until_ms => CircuitHealth::Open { kind: self.kind, until_ms },
        }
    }

    /// The circuit after `failure`: opened fresh (level 0), extended (same level, the later
    /// end wins) or, when `escalate` (a failed probe), re-opened one backoff level higher.
    /// `None` when the kind never opens a circuit.
    pub fn after_failure(
        existing: Option<&OpenCircuit>,
        failure: &Failure,
        escalate: bool,
        policy: &CooldownPolicy,
        now_ms: i64,
    ) -> Option<OpenCircuit> {
        let level = match existing {
            None => 0,
            Some(c) if escalate => c.backoff_level.saturating_add(1),
            Some(c) => c.backoff_level,
        };
        let until_ms = match policy.open_until(failure.kind, level, failure.retry_at_ms, now_ms)? {
            CooldownEnd::At(t) => Some(t),
            CooldownEnd::UntilReverified => None,
        };
        let fresh = OpenCircuit { kind: failure.kind, until_ms, backoff_level: level, claim: None };
        match existing {
            Some(old) if !escalate => {
                // Concurrent failures of one episode extend, never shorten, and keep the claim.
                let old_is_later = match (old.until_ms, until_ms) {
                    (None, _) => true,
                    (Some(_), None) => false,
                    (Some(a), Some(b)) => a > b,
                };
                let base = if old_is_later { old.clone() } else { fresh };
                Some(OpenCircuit { claim: old.claim, ..base })
            }
            _ => Some(fresh),
        }
    }
}

/// What a circuit means for routing right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CircuitHealth {
    Closed,
    /// Cooling down; `until_ms: None` = until re-verified.
    Open {
        kind: FailureKind,
        until_ms: Option<i64>,
    },
    /// Cooldown over: one probe may go; `claimed` when someone holds it.
    HalfOpen {
        kind: FailureKind,
        claimed: bool,
    },
}

impl CircuitHealth {
    pub fn state(self) -> HealthState {
        match self {
            CircuitHealth::Closed => HealthState::Closed,
            CircuitHealth::Open { .. } => HealthState::Open,
            CircuitHealth::HalfOpen { .. } => HealthState::HalfOpen,
        }
    }
}

/// The two circuits that gate one profile for one model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileHealth {
    /// Credential-wide circuit.
    pub credential: CircuitHealth,
    /// (profile, model) circuit.
    pub model: CircuitHealth,
}

impl ProfileHealth {
    pub const CLOSED: ProfileHealth = ProfileHealth { credential: CircuitHealth::Closed, model: CircuitHealth::Closed };
}

/// Read access to circuit health, implemented by the live board, persisted snapshots and
/// `NoCircuits` (evidence-only evaluation).
pub trait CircuitLookup {
    fn health(&self, profile: &str, model: &str, now_ms: i64) -> ProfileHealth;
}

/// Every circuit closed.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCircuits;

impl CircuitLookup for NoCircuits {
    fn health(&self, _profile: &str, _model: &str, _now_ms: i64) -> ProfileHealth {
        ProfileHealth::CLOSED
    }
}

impl CircuitLookup for [CircuitSnapshot] {
    fn health(&self, profile: &str, model: &str, now_ms: i64) -> ProfileHealth {
        let find = |m: &str| {
            self.iter()
                .find(|s| s.profile_id == profile && s.model == m)
                .and_then(CircuitSnapshot::to_open)
                .map_or(CircuitHealth::Closed, |c| c.health(now_ms))
        };
        ProfileHealth { credential: find(""), model: find(model) }
    }
}

/// Status-output state of a circuit (`routing status --json` health entries).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HealthState {
    Closed,
    Open,
    HalfOpen,
}

/// One health line of a profile: `model: None` is the credential-wide circuit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthEntry {
    pub model: Option<String>,
    pub state: HealthState,
    pub kind: Option<FailureKind>,
    pub until_ms: Option<i64>,
}

/// Persisted state: half-open is derived from `until_ms` and the clock, never stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PersistedState {
    Closed,
    Open,
}

impl PersistedState {
    pub fn as_str(self) -> &'static str {
        match self {
            PersistedState::Closed => "closed",
            PersistedState::Open => "open",
        }
    }
}

impl fmt::Display for PersistedState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PersistedState {
    type Err = InvalidInput;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "closed" => Ok(PersistedState::Closed),
            "open" => Ok(PersistedState::Open),
            other => Err(InvalidInput::new("circuit_state", format!("unknown circuit state '{other}'"))),
        }
    }
}

/// The persistable part of one circuit, shaped like the store's `CircuitRow`
/// (`model = ""` is the credential-wide circuit). Probe claims are deliberately absent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CircuitSnapshot {
    pub profile_id: String,
    pub model: String,
    pub state: PersistedState,
    pub kind: Option<FailureKind>,
    pub until_ms: Option<i64>,
    pub backoff_level: u32,
}

impl CircuitSnapshot {
    pub fn closed(profile_id: &str, model: &str) -> Self {
        CircuitSnapshot {
            profile_id: profile_id.to_string(),
            model: model.to_string(),
            state: PersistedState::Closed,
            kind: None,
            until_ms: None,
            backoff_level: 0,
        }
    }

    pub(crate) fn of(profile_id: &str, model: &str, c: Option<&OpenCircuit>) -> Self {
        match c {
            None => CircuitSnapshot::closed(profile_id, model),
            Some(c) => CircuitSnapshot {
                profile_id: profile_id.to_string(),
                model: model.to_string(),
                state: PersistedState::Open,
                kind: Some(c.kind),
                until_ms: c.until_ms,
                backoff_level: c.backoff_level,
            },
        }
    }

    /// The open circuit this row describes; closed rows and rows without a kind give `None`.
    pub(crate) fn to_open(&self) -> Option<OpenCircuit> {
        match (self.state, self.kind) {
            (PersistedState::Open, Some(kind)) => {
                Some(OpenCircuit { kind, until_ms: self.until_ms, backoff_level: self.backoff_level, claim: None })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::failure::Scope;

    const NOW: i64 = 1_000_000;

    fn rate(hint: Option<i64>) -> Failure {
        Failure::new(FailureKind::RateLimited, Scope::Credential).with_retry_at(hint)
    }

    #[test]
    fn open_then_half_open_when_the_cooldown_ends() {
        let p = CooldownPolicy::default();
        let c = OpenCircuit::after_failure(None, &rate(None), false, &p, NOW);
        let c = c.expect("a rate limit opens a circuit");
        assert_eq!(c.health(NOW + 29_999).state(), HealthState::Open, "still cooling");
        assert_eq!(
            c.health(NOW + 30_000),
            CircuitHealth::HalfOpen { kind: FailureKind::RateLimited, claimed: false },
            "half-open exactly when the 30 s cooldown ends"
        );
    }

    #[test]
    fn concurrent_failures_extend_but_probes_escalate() {
        let p = CooldownPolicy::default();
        let first = OpenCircuit::after_failure(None, &rate(Some(NOW + 90_000)), false, &p, NOW);
        let again = OpenCircuit::after_failure(first.as_ref(), &rate(None), false, &p, NOW + 1);
        assert_eq!(
            again.as_ref().map(|c| (c.until_ms, c.backoff_level)),
            Some((Some(NOW + 90_000), 0)),
            "a second failure of the same episode must not shorten the cooldown or raise the level"
        );
        let probe = OpenCircuit::after_failure(again.as_ref(), &rate(None), true, &p, NOW + 2);
        assert_eq!(
            probe.map(|c| (c.until_ms, c.backoff_level)),
            Some((Some(NOW + 2 + 60_000), 1)),
            "a failed probe re-opens with doubled backoff"
        );
    }

    #[test]
    fn snapshots_round_trip_without_claims() {
        let c =
            OpenCircuit { kind: FailureKind::QuotaExhausted, until_ms: Some(NOW), backoff_level: 2, claim: Some(7) };
        let snap = CircuitSnapshot::of("p1", "", Some(&c));
        let back = snap.to_open();
        assert_eq!(back, Some(OpenCircuit { claim: None, ..c }), "everything but the claim survives persistence");
        let json = serde_json::to_value(&snap).unwrap_or_default();
        assert_eq!(json["state"], "open", "state is stored as 'open'");
        assert_eq!(json["kind"], "quota_exhausted", "kind is snake_case");
    }
}
