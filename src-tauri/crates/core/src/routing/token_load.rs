//! Token load per key (docs/design.md section 6, "Token balance"): the prompt tokens each
//! profile of one (connection, model) was sent, as an exponentially decayed sum (half-life
//! [`TOKEN_HALF_LIFE`]), learned from each attempt's usage when it is recorded; and
//! [`TokenLoad::balance_target`], the one token-aware decision conversation affinity makes:
//! at a turn boundary, a warm conversation whose key is more than [`BALANCE_TOLERANCE`] over
//! its weight's share of the load moves to the key furthest under its share (move cause
//! `balance`). New conversations are still assigned by SWRR alone, so the counts of new
//! conversations stay exactly the weights (invariant 15).
//!
//! Why moves and not a token-aware choice among the SWRR cycle's open slots: when a
//! conversation is assigned nothing says how many tokens it will send, so any rule that
//! only permutes which newcomer fills which slot leaves each key's total a sum of its (fixed)
//! count of independent conversation sizes — the same spread as plain SWRR. The load of a
//! conversation only becomes known while it runs; moving one at a turn boundary is the only
//! lever that acts on it, and it costs one uncached re-send of that conversation's context,
//! so moves are rare: only past the tolerance, with enough evidence ([`BALANCE_MIN_TOKENS`]),
//! and at most one per [`BALANCE_SPACING`] of the load routed since the previous move.
//!
//! Pure: time is passed in; floating point is only used on recorded counts, so the same
//! calls give the same decisions. No allocation once a profile has been recorded.

use std::time::{Duration, Instant};

use super::hasher::FastMap;
use super::swrr::Candidate;

/// The load's half-life: tokens sent an hour ago count half.
pub const TOKEN_HALF_LIFE: Duration = Duration::from_secs(60 * 60);
/// A key may carry up to this fraction more than its weight's share before a conversation is
/// moved off it (to the key furthest under its share).
pub const BALANCE_TOLERANCE: f64 = 0.10;
/// No balance move before the eligible keys' load reaches this many tokens.
pub const BALANCE_MIN_TOKENS: f64 = 2_000_000.0;
/// After a balance move, the next one waits until this fraction of the current load has been
/// routed (so the moved conversation's tokens show before another is moved; shorter spacings
/// over-correct: more moves, a wider spread).
pub const BALANCE_SPACING: f64 = 0.10;

/// The decayed prompt tokens of the profiles of one (connection, model).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TokenLoad {
    /// (profile id, decayed tokens as of `at`).
    keys: Vec<(String, f64)>,
    /// When the decayed sums were last brought forward.
    at: Option<Instant>,
    /// Tokens routed in all, not decayed.
    routed: f64,
    /// `routed` when the last balance move was made.
    last_move: Option<f64>,
}

fn decay(elapsed: Duration) -> f64 {
    (-(elapsed.as_secs_f64() / TOKEN_HALF_LIFE.as_secs_f64())).exp2()
}

impl TokenLoad {
    /// Records `tokens` prompt tokens sent to `profile_id` at `now`.
    pub fn record(&mut self, profile_id: &str, tokens: u64, now: Instant) {
        let factor = self.at.map_or(1.0, |at| decay(now.saturating_duration_since(at)));
        if factor < 1.0 {
            for (_, t) in &mut self.keys {
                *t *= factor;
            }
        }
        if self.at.is_none_or(|at| now > at) {
            self.at = Some(now);
        }
        let tokens = tokens as f64;
        self.routed += tokens;
        match self.keys.iter_mut().find(|(id, _)| id == profile_id) {
            Some((_, t)) => *t += tokens,
            None => self.keys.push((profile_id.to_string(), tokens)),
        }
    }

    /// `profile_id`'s decayed tokens as of `now`.
    pub fn tokens(&self, profile_id: &str, now: Instant) -> f64 {
        let factor = self.at.map_or(1.0, |at| decay(now.saturating_duration_since(at)));
        self.keys.iter().find(|(id, _)| id == profile_id).map_or(0.0, |(_, t)| t * factor)
    }

    /// Tokens routed in all (not decayed).
    pub fn routed(&self) -> f64 {
        self.routed
    }

    /// Notes that a balance move was made (spacing counts from here).
    pub fn note_move(&mut self) {
        self.last_move = Some(self.routed);
    }

    /// Where a warm conversation on `from` (an index into `candidates`, eligible) should move
    /// for balance, if anywhere: `from` carries more than `BALANCE_TOLERANCE` over its weight's
    /// share of the eligible keys' load, and the target is the eligible key furthest under its
    /// share (ties: lower priority number, then smaller id). `None` below `BALANCE_MIN_TOKENS`, within the spacing after the last move, or when
    /// nothing is that far off.
    pub fn balance_target<C: Candidate>(
        &self,
        from: usize,
        candidates: &[C],
        eligible: &[usize],
        now: Instant,
    ) -> Option<usize> {
        let valid = || eligible.iter().copied().filter(|&i| i < candidates.len());
        let weights: f64 = valid().map(|i| f64::from(candidates[i].weight())).sum();
        let total: f64 = valid().map(|i| self.tokens(candidates[i].id(), now)).sum();
        if weights <= 0.0 || total < BALANCE_MIN_TOKENS {
            return None;
        }
        if self.last_move.is_some_and(|m| self.routed - m < BALANCE_SPACING * total) {
            return None;
        }
        // Load over (positive) or under (negative) the weight's share, as a fraction of it.
        let off = |i: usize| {
            let want = f64::from(candidates[i].weight()) / weights;
            (want > 0.0).then(|| self.tokens(candidates[i].id(), now) / total / want - 1.0)
        };
        if !valid().any(|i| i == from) || off(from).is_none_or(|o| o <= BALANCE_TOLERANCE) {
            return None;
        }
        let mut best: Option<(usize, f64)> = None;
        for i in valid().filter(|&i| i != from) {
            let Some(o) = off(i).filter(|&o| o < 0.0) else { continue };
            let wins = match best {
                None => true,
                Some((b, bo)) => {
                    o < bo
                        || (o == bo
                            && (candidates[i].priority(), candidates[i].id())
                                < (candidates[b].priority(), candidates[b].id()))
                }
            };
            if wins {
                best = Some((i, o));
            }
        }
        best.map(|(i, _)| i)
    }
}

/// Token loads of every (connection, model). Lookups by `&str` do not allocate.
#[derive(Debug, Clone, Default)]
pub struct TokenLoadTable {
    loads: FastMap<String, FastMap<String, TokenLoad>>,
}

impl TokenLoadTable {
    pub fn get(&self, connection: &str, model: &str) -> Option<&TokenLoad> {
        self.loads.get(connection).and_then(|m| m.get(model))
    }

    /// The load of (connection, model), made on first use.
    pub fn load_mut(&mut self, connection: &str, model: &str) -> &mut TokenLoad {
        if !self.loads.get(connection).is_some_and(|m| m.contains_key(model)) {
            self.loads.entry(connection.to_string()).or_default().insert(model.to_string(), TokenLoad::default());
        }
        self.loads.get_mut(connection).and_then(|m| m.get_mut(model)).unwrap_or_else(|| unreachable!("inserted above"))
    }

    /// Forgets a connection's loads.
    pub fn forget_connection(&mut self, connection: &str) {
        self.loads.remove(connection);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct C(&'static str, u32);
    impl Candidate for C {
        fn id(&self) -> &str {
            self.0
        }
        fn weight(&self) -> u32 {
            self.1
        }
        fn priority(&self) -> i64 {
            0
        }
    }

    const KEYS: [C; 3] = [C("a", 2), C("b", 1), C("c", 1)];

    #[test]
    fn load_halves_per_half_life() {
        let t0 = Instant::now();
        let mut l = TokenLoad::default();
        l.record("a", 1000, t0);
        let later = t0 + TOKEN_HALF_LIFE;
        assert!((l.tokens("a", later) - 500.0).abs() < 1e-6, "one half-life later it counts half");
        l.record("a", 500, later);
        assert!((l.tokens("a", later) - 1000.0).abs() < 1e-6, "new tokens add at full weight");
        assert!((l.routed() - 1500.0).abs() < 1e-9, "the routed total is not decayed");
    }

    #[test]
    fn a_key_over_its_share_gives_to_the_key_furthest_under() {
        let t0 = Instant::now();
        let mut l = TokenLoad::default();
        // Want 50/25/25 %; have a 50 %, b 15 %, c 35 % (c is +40 %, b is -40 %).
        l.record("a", 5_000_000, t0);
        l.record("b", 1_500_000, t0);
        l.record("c", 3_500_000, t0);
        assert_eq!(l.balance_target(2, &KEYS, &[0, 1, 2], t0), Some(1), "c is over, b furthest under");
        assert_eq!(l.balance_target(0, &KEYS, &[0, 1, 2], t0), None, "a is at its share: it keeps its conversations");
        assert_eq!(l.balance_target(2, &KEYS, &[0, 2], t0), Some(0), "among a and c alone, a is under its share");
        assert_eq!(l.balance_target(2, &KEYS, &[2], t0), None, "no other eligible key: nowhere to go");
        l.note_move();
        assert_eq!(l.balance_target(2, &KEYS, &[0, 1, 2], t0), None, "the next move waits for the spacing");
        l.record("a", 1_500_000, t0);
        assert_eq!(l.balance_target(2, &KEYS, &[0, 1, 2], t0), Some(1), "after 10 % more load, still off: move again");
    }

    #[test]
    fn no_move_on_little_evidence_or_within_tolerance() {
        let t0 = Instant::now();
        let mut l = TokenLoad::default();
        l.record("c", 1_000_000, t0);
        assert_eq!(l.balance_target(2, &KEYS, &[0, 1, 2], t0), None, "below the minimum load nothing moves");
        let mut l = TokenLoad::default();
        l.record("a", 5_000_000, t0);
        l.record("b", 2_300_000, t0);
        l.record("c", 2_700_000, t0);
        assert_eq!(l.balance_target(2, &KEYS, &[0, 1, 2], t0), None, "+8 % is within the tolerance");
    }
}
