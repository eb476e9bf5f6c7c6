//! Turn bindings: turn key → the profile the turn is pinned to, whether the turn is
//! committed, and when it was last used. Idle entries expire; the table is a bounded LRU.

use std::time::{Duration, Instant};

use crate::lru::Lru;

/// Bindings expire after this long without use (docs/design.md ("Turn and session keys")).
pub const BINDING_IDLE_TTL: Duration = Duration::from_secs(30 * 60);
/// Default bound on remembered turns; the least recently used goes first.
pub const DEFAULT_BINDING_CAPACITY: usize = 10_000;

/// The profile a turn is pinned to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub profile_id: String,
    /// Some output of this turn reached the client: no more credential failover.
    pub committed: bool,
}

/// Why a failover rebind was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RebindError {
    #[error("the turn is committed: no credential failover after output")]
    Committed,
    #[error("the turn has no binding")]
    Unbound,
}

/// Turn key → binding, bounded and idle-expiring ([`Lru`]). Time is passed in (`now: Instant`).
#[derive(Debug, Clone)]
pub struct TurnBindings {
    turns: Lru<String, Binding>,
}

impl Default for TurnBindings {
    fn default() -> Self {
        TurnBindings::new(DEFAULT_BINDING_CAPACITY, BINDING_IDLE_TTL)
    }
}

impl TurnBindings {
    pub fn new(capacity: usize, ttl: Duration) -> Self {
        TurnBindings { turns: Lru::new(capacity, Some(ttl)) }
    }

    pub fn len(&self) -> usize {
        self.turns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    /// The live binding of `turn`, refreshed as used now; an expired one is removed.
    pub fn get(&mut self, turn: &str, now: Instant) -> Option<&Binding> {
        self.turns.get(turn, now)
    }

    /// The live binding of `turn` without refreshing it.
    pub fn peek(&self, turn: &str, now: Instant) -> Option<&Binding> {
        self.turns.peek(turn, now)
    }

    /// Pins `turn` to `profile` (a new turn, or a new selection because the bound profile
    /// left the eligible set). An existing committed flag is kept.
    pub fn bind(&mut self, turn: &str, profile: &str, now: Instant) {
        if let Some(b) = self.turns.get_mut(turn, now) {
            if b.profile_id != profile {
                b.profile_id = profile.to_string();
            }
            return;
        }
        self.turns.insert(turn.to_string(), Binding { profile_id: profile.to_string(), committed: false }, now);
    }

    /// Moves an uncommitted turn to another profile after a credential-scoped failure.
    pub fn rebind(&mut self, turn: &str, profile: &str, now: Instant) -> Result<(), RebindError> {
        match self.peek(turn, now) {
            None => Err(RebindError::Unbound),
            Some(b) if b.committed => Err(RebindError::Committed),
            Some(_) => {
                self.bind(turn, profile, now);
                Ok(())
            }
        }
    }

    /// Marks the turn committed (first content byte reached the client). False when unbound.
    pub fn commit(&mut self, turn: &str, now: Instant) -> bool {
        match self.turns.get_mut(turn, now) {
            Some(b) => {
                b.committed = true;
                true
            }
            None => false,
        }
    }

    pub fn remove(&mut self, turn: &str) -> Option<Binding> {
        self.turns.remove(turn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_expire_after_30_idle_minutes() {
        let t0 = Instant::now();
        let mut b = TurnBindings::default();
        b.bind("turn", "p1", t0);
        let later = t0 + Duration::from_secs(29 * 60);
        assert_eq!(
            b.get("turn", later).map(|x| x.profile_id.as_str()),
            Some("p1"),
            "29 idle minutes keep the binding (and refresh it)"
        );
        let much_later = later + Duration::from_secs(30 * 60 + 1);
        assert!(b.get("turn", much_later).is_none(), "more than 30 idle minutes drop the binding");
        assert!(b.is_empty(), "an expired binding is removed, not kept around");
    }

    #[test]
    fn the_least_recently_used_turn_is_evicted_first() {
        let t0 = Instant::now();
        let mut b = TurnBindings::new(2, BINDING_IDLE_TTL);
        b.bind("a", "p1", t0);
        b.bind("b", "p1", t0);
        let _ = b.get("a", t0);
        b.bind("c", "p2", t0);
        assert_eq!(b.len(), 2, "capacity bounds the table");
        assert!(b.peek("b", t0).is_none(), "b was least recently used");
        assert!(b.peek("a", t0).is_some(), "a was refreshed by get");
    }

    #[test]
    fn committed_turns_refuse_failover_rebind() {
        let t0 = Instant::now();
        let mut b = TurnBindings::default();
        assert_eq!(b.rebind("t", "p2", t0), Err(RebindError::Unbound), "nothing to rebind");
        b.bind("t", "p1", t0);
        assert_eq!(b.rebind("t", "p2", t0), Ok(()), "before output a failover may rebind");
        assert!(b.commit("t", t0), "bound turns can commit");
        assert_eq!(
            b.rebind("t", "p3", t0),
            Err(RebindError::Committed),
            "after output the turn must stay on its profile"
        );
        assert_eq!(b.peek("t", t0).map(|x| x.profile_id.as_str()), Some("p2"), "unchanged");
    }
}
