//! The shared circuit board: every open circuit of every profile, credential-wide and per
//! model, behind one `std::sync::Mutex`. Admission and probe claims are in `probe.rs`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::circuit::{CircuitHealth, CircuitLookup, CircuitSnapshot, HealthEntry, OpenCircuit, ProfileHealth};
use super::cooldown::CooldownPolicy;
use super::failure::{Failure, FailureKind, Scope};
use super::hasher::FastMap;

/// The open circuits of one profile.
#[derive(Debug, Default)]
pub(crate) struct ProfileCircuits {
    pub credential: Option<OpenCircuit>,
    pub models: FastMap<String, OpenCircuit>,
}

impl ProfileCircuits {
    pub fn slot(&mut self, model: Option<&str>) -> Option<&mut OpenCircuit> {
        match model {
            None => self.credential.as_mut(),
            Some(m) => self.models.get_mut(m),
        }
    }

    pub fn set(&mut self, model: Option<&str>, c: Option<OpenCircuit>) {
        match (model, c) {
            (None, c) => self.credential = c,
            (Some(m), Some(c)) => {
                self.models.insert(m.to_string(), c);
            }
            (Some(m), None) => {
                self.models.remove(m);
            }
        }
    }

    pub fn get(&self, model: Option<&str>) -> Option<&OpenCircuit> {
        match model {
            None => self.credential.as_ref(),
            Some(m) => self.models.get(m),
        }
    }

    fn is_empty(&self) -> bool {
        self.credential.is_none() && self.models.is_empty()
    }
}

pub(crate) type Circuits = FastMap<String, ProfileCircuits>;

/// Why a profile's circuits are reset (all of them close and every claim is released).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetCause {
    CredentialReplaced,
    Disabled,
    Deleted,
    Reverified,
    /// `health reset` by the user.
    Manual,
}

/// The claim mark of a circuit whose probe lease another replica holds (claim ids count up
/// from 1 and never reach it).
const HELD_ELSEWHERE: u64 = u64::MAX;

/// All circuits of all profiles. Share it as `Arc<CircuitBoard>`; it is `Send + Sync`.
#[derive(Debug, Default)]
pub struct CircuitBoard {
    circuits: Mutex<Circuits>,
    next_claim: AtomicU64,
    policy: CooldownPolicy,
}

/// Which circuit a failure of this scope concerns: `Some(None)` credential-wide,
/// `Some(Some(model))` the (profile, model) circuit, `None` no circuit.
pub(crate) fn target_of(scope: Scope, model: &str) -> Option<Option<&str>> {
    match scope {
        Scope::Credential => Some(None),
        Scope::CredentialModel => Some(Some(model)),
        Scope::Provider | Scope::Request | Scope::Ambiguous => None,
    }
}

impl CircuitBoard {
    pub fn new(policy: CooldownPolicy) -> Self {
        CircuitBoard { circuits: Mutex::new(FastMap::default()), next_claim: AtomicU64::new(1), policy }
    }

    /// Rebuilds the board after a restart from persisted rows: cooldowns come back, claims
    /// never do (they were never stored). Closed rows are ignored.
    pub fn restore(policy: CooldownPolicy, snapshots: impl IntoIterator<Item = CircuitSnapshot>) -> Self {
        let board = CircuitBoard::new(policy);
        {
            let mut map = board.lock();
            for s in snapshots {
                if let Some(open) = s.to_open() {
                    let model = (!s.model.is_empty()).then_some(s.model.as_str());
                    map.entry(s.profile_id.clone()).or_default().set(model, Some(open));
                }
            }
        }
        board
    }

    pub fn policy(&self) -> &CooldownPolicy {
        &self.policy
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Circuits> {
        // A panic while holding the lock cannot leave a half-written circuit (every update is
        // one assignment), so a poisoned lock is still consistent.
        self.circuits.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn next_claim_id(&self) -> u64 {
        self.next_claim.fetch_add(1, Ordering::Relaxed)
    }

    /// A locked read view for evaluating many profiles under one lock acquisition.
    pub fn view(&self) -> BoardView<'_> {
        BoardView { map: self.lock() }
    }

    /// Health of the credential-wide and (profile, model) circuits.
    pub fn health(&self, profile: &str, model: &str, now_ms: i64) -> ProfileHealth {
        health_in(&self.lock(), profile, model, now_ms)
    }

    /// Records a classified failure of an ordinary (non-probe) attempt. Credential scope
    /// opens the credential-wide circuit, credential_model the (profile, model) one; other
    /// scopes change nothing. Returns the changed circuit to persist.
    pub fn record_failure(
        &self,
        profile: &str,
        model: &str,
        failure: &Failure,
        now_ms: i64,
    ) -> Option<CircuitSnapshot> {
        let target = target_of(failure.scope, model)?;
        let mut map = self.lock();
        apply_failure(&mut map, &self.policy, profile, target, failure, false, now_ms)
    }

    /// Closes every circuit of the profile and releases its claims (outstanding leases become
    /// no-ops). The caller clears the persisted rows (`circuits::clear_profile`).
    pub fn reset_profile(&self, profile: &str, _cause: ResetCause) {
        self.lock().remove(profile);
    }

    /// Replaces the circuits of `profiles` with `stored`, the rows a shared store holds for them
    /// now (a team relay's replicas, invariant 25): a cooldown another replica opened arrives, a
    /// circuit another replica's probe closed closes here. A claim this board holds on a circuit
    /// that is still open stays (its probe is in flight here); a row whose probe lease another
    /// replica holds (`held_elsewhere`) is marked claimed, so no probe is admitted here until
    /// that lease ends and a later sync clears the mark.
    pub fn sync_profiles<'a>(
        &self,
        profiles: impl IntoIterator<Item = &'a str>,
        stored: impl IntoIterator<Item = (CircuitSnapshot, bool)>,
    ) {
        let mut fresh: FastMap<String, ProfileCircuits> = FastMap::default();
        for (row, held_elsewhere) in stored {
            if let Some(mut open) = row.to_open() {
                if held_elsewhere {
                    open.claim = Some(HELD_ELSEWHERE);
                }
                let model = (!row.model.is_empty()).then_some(row.model.as_str());
                fresh.entry(row.profile_id.clone()).or_default().set(model, Some(open));
            }
        }
        let mut map = self.lock();
        for profile in profiles {
            let mut next = fresh.remove(profile).unwrap_or_default();
            if let Some(old) = map.get(profile) {
                let keep = |old: Option<&OpenCircuit>, new: Option<&mut OpenCircuit>| {
                    if let (Some(o), Some(n)) = (old, new) {
                        if o.claim.is_some_and(|c| c != HELD_ELSEWHERE) && n.claim.is_none() {
                            n.claim = o.claim;
                        }
                    }
                };
                keep(old.credential.as_ref(), next.credential.as_mut());
                for (m, c) in next.models.iter_mut() {
                    keep(old.models.get(m), Some(c));
                }
            }
            if next.is_empty() {
                map.remove(profile);
            } else {
                map.insert(profile.to_string(), next);
            }
        }
    }

    /// Marks (profile, model) (`None`: credential-wide) as probed by another replica, after a
    /// shared store refused this board's probe claim: no probe is admitted here until a sync.
    pub fn mark_held_elsewhere(&self, profile: &str, model: Option<&str>) {
        let mut map = self.lock();
        if let Some(c) = map.get_mut(profile).and_then(|pc| pc.slot(model)) {
            c.claim = Some(HELD_ELSEWHERE);
        }
    }

    /// Closes one circuit (`model: None` = credential-wide) and releases its claim.
    pub fn reset_circuit(&self, profile: &str, model: Option<&str>) {
        let mut map = self.lock();
        if let Some(pc) = map.get_mut(profile) {
            pc.set(model, None);
            if pc.is_empty() {
                map.remove(profile);
            }
        }
    }

    /// The persistable state of one circuit (`model = ""` = credential-wide).
    pub fn snapshot_of(&self, profile: &str, model: &str) -> CircuitSnapshot {
        let map = self.lock();
        let key = (!model.is_empty()).then_some(model);
        CircuitSnapshot::of(profile, model, map.get(profile).and_then(|pc| pc.get(key)))
    }

    /// Every open circuit, sorted by (profile, model).
    pub fn snapshots(&self) -> Vec<CircuitSnapshot> {
        let map = self.lock();
        let mut out = Vec::new();
        for (profile, pc) in map.iter() {
            if let Some(c) = &pc.credential {
                out.push(CircuitSnapshot::of(profile, "", Some(c)));
            }
            for (model, c) in &pc.models {
                out.push(CircuitSnapshot::of(profile, model, Some(c)));
            }
        }
        out.sort_by(|a, b| (&a.profile_id, &a.model).cmp(&(&b.profile_id, &b.model)));
        out
    }

    /// Health lines of one profile for status output: the credential-wide circuit first
    /// (always present), then each model circuit that is not closed, by model name.
    pub fn health_entries(&self, profile: &str, now_ms: i64) -> Vec<HealthEntry> {
        let map = self.lock();
        let pc = map.get(profile);
        let entry = |model: Option<&str>, c: Option<&OpenCircuit>| {
            let h = c.map_or(CircuitHealth::Closed, |c| c.health(now_ms));
            HealthEntry {
                model: model.map(str::to_string),
                state: h.state(),
                kind: c.map(|c| c.kind),
                until_ms: c.and_then(|c| c.until_ms),
            }
        };
        let mut out = vec![entry(None, pc.and_then(|pc| pc.credential.as_ref()))];
        if let Some(pc) = pc {
            let mut models: Vec<(&String, &OpenCircuit)> = pc.models.iter().collect();
            models.sort_by(|a, b| a.0.cmp(b.0));
            out.extend(models.into_iter().map(|(m, c)| entry(Some(m), Some(c))));
        }
        out
    }

    /// The cooldown keeping this profile from this model, if any: the blocking kind and its
    /// end (`None` = until re-verified). For `Retry-After` when nothing is eligible.
    pub fn blocking_cooldown(&self, profile: &str, model: &str, now_ms: i64) -> Option<(FailureKind, Option<i64>)> {
        let h = self.health(profile, model, now_ms);
        let ends = [h.credential, h.model].into_iter().filter_map(|c| match c {
            CircuitHealth::Open { kind, until_ms } => Some((kind, until_ms)),
            _ => None,
        });
        ends.max_by_key(|(_, until)| until.unwrap_or(i64::MAX))
    }
}

/// Applies a failure to one circuit; returns the snapshot when it changed.
pub(crate) fn apply_failure(
    map: &mut Circuits,
    policy: &CooldownPolicy,
    profile: &str,
    target: Option<&str>,
    failure: &Failure,
    escalate: bool,
    now_ms: i64,
) -> Option<CircuitSnapshot> {
    let existing = map.get(profile).and_then(|pc| pc.get(target));
    let next = OpenCircuit::after_failure(existing, failure, escalate, policy, now_ms)?;
    let snap = CircuitSnapshot::of(profile, target.unwrap_or(""), Some(&next));
    match map.get_mut(profile) {
        Some(pc) => pc.set(target, Some(next)),
        None => {
            let mut pc = ProfileCircuits::default();
            pc.set(target, Some(next));
            map.insert(profile.to_string(), pc);
        }
    }
    Some(snap)
}

pub(crate) fn health_in(map: &Circuits, profile: &str, model: &str, now_ms: i64) -> ProfileHealth {
    let Some(pc) = map.get(profile) else {
        return ProfileHealth::CLOSED;
    };
    let of = |c: Option<&OpenCircuit>| c.map_or(CircuitHealth::Closed, |c| c.health(now_ms));
    ProfileHealth { credential: of(pc.credential.as_ref()), model: of(pc.models.get(model)) }
}

/// The board locked for reading; implements `CircuitLookup`. Drop it promptly.
pub struct BoardView<'a> {
    map: MutexGuard<'a, Circuits>,
}

impl CircuitLookup for BoardView<'_> {
    fn health(&self, profile: &str, model: &str, now_ms: i64) -> ProfileHealth {
        if self.map.is_empty() {
            return ProfileHealth::CLOSED;
        }
        health_in(&self.map, profile, model, now_ms)
    }
}
