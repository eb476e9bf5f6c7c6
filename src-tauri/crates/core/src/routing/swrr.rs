//! Smooth weighted round robin (the nginx algorithm) over an eligible set, per
//! (connection, model), plus priority-mode selection. Deterministic: ties go to the lower
//! priority number, then the smaller id. No allocation while the eligible set is steady.

use std::cmp::Ordering;
use std::sync::Arc;

use super::eligibility::ProfileView;
use super::hasher::FastMap;

/// What SWRR and priority selection read from a profile.
pub trait Candidate {
    fn id(&self) -> &str;
    fn weight(&self) -> u32;
    /// Lower number = preferred.
    fn priority(&self) -> i64;
}

impl Candidate for ProfileView {
    fn id(&self) -> &str {
        &self.id
    }
    fn weight(&self) -> u32 {
        self.weight
    }
    fn priority(&self) -> i64 {
        self.priority
    }
}

/// `Less` when `a` wins a tie against `b`: lower priority number, then smaller id.
fn tie_order<C: Candidate>(a: &C, b: &C) -> Ordering {
    a.priority().cmp(&b.priority()).then_with(|| a.id().cmp(b.id()))
}

/// The preferred profile in priority mode: lowest priority number, then smallest id.
pub fn select_priority<C: Candidate>(candidates: &[C], eligible: &[usize]) -> Option<usize> {
    eligible
        .iter()
        .copied()
        .filter(|&i| i < candidates.len())
        .min_by(|&a, &b| tie_order(&candidates[a], &candidates[b]))
}

/// A profile's current weight. The id is shared (`Arc<str>`): a copy of a state — the one a
/// routing decision runs on — costs no string allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    id: Arc<str>,
    current: i64,
}

/// SWRR state of one (connection, model), keyed by profile id. When the eligible set changes,
/// profiles that left lose their state and profiles that (re-)enter start at current weight
/// 0, so a returning profile gets no burst; the survivors keep theirs.
#[derive(Debug, Default)]
pub struct Swrr {
    entries: Vec<Entry>,
    /// Selections and reconciliations made on this state (not part of its value): a copy that
    /// moved since it was taken says so without a second copy to compare with.
    moves: u64,
}

impl Clone for Swrr {
    fn clone(&self) -> Self {
        Swrr { entries: self.entries.clone(), moves: self.moves }
    }

    /// Reuses this state's buffer: a state written back over its previous copy allocates
    /// nothing while the eligible set is steady.
    fn clone_from(&mut self, source: &Self) {
        self.entries.clone_from(&source.entries);
        self.moves = source.moves;
    }
}

/// Two states are equal when they hold the same current weights in the same order.
impl PartialEq for Swrr {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl Eq for Swrr {}

impl Swrr {
    /// Picks from `candidates[eligible]` and returns the chosen index into `candidates`.
    /// Out-of-range indices are ignored. `None` when nothing is eligible.
    pub fn select<C: Candidate>(&mut self, candidates: &[C], eligible: &[usize]) -> Option<usize> {
        if !self.is_steady(candidates, eligible) {
            self.reconcile(candidates, eligible);
        }
        let mut total: i64 = 0;
        let mut best: Option<(usize, usize)> = None; // (entry position, candidate index)
        let mut pos = 0;
        for &i in eligible {
            let Some(c) = candidates.get(i) else {
                continue;
            };
            let w = i64::from(c.weight());
            total += w;
            let Some(e) = self.entries.get_mut(pos) else {
                break;
            };
            e.current += w;
            let current = e.current;
            best = match best {
                None => Some((pos, i)),
                Some((bp, bi)) => {
                    let bc = self.entries.get(bp).map_or(i64::MIN, |b| b.current);
                    let wins = current > bc || (current == bc && tie_order(c, &candidates[bi]) == Ordering::Less);
                    Some(if wins { (pos, i) } else { (bp, bi) })
                }
            };
            pos += 1;
        }
        let (bp, bi) = best?;
        if let Some(e) = self.entries.get_mut(bp) {
            e.current -= total;
        }
        self.moves += 1;
        Some(bi)
    }

    /// A state holding these current weights by profile id, in eligible order: a position
    /// kept between processes (`switchyard exec` picks one account per launch).
    pub fn from_current(weights: impl IntoIterator<Item = (String, i64)>) -> Self {
        Swrr {
            entries: weights.into_iter().map(|(id, current)| Entry { id: Arc::from(id), current }).collect(),
            moves: 0,
        }
    }

    /// How many times this state moved (a selection, or a change of the eligible set): a decision
    /// made on a copy advanced it when the count changed.
    pub fn moves(&self) -> u64 {
        self.moves
    }

    /// Current weights by profile id, in eligible order (for tests and status output).
    pub fn current_weights(&self) -> impl Iterator<Item = (&str, i64)> {
        self.entries.iter().map(|e| (&*e.id, e.current))
    }

    /// True when the state tracks exactly these candidates in this order.
    fn is_steady<C: Candidate>(&self, candidates: &[C], eligible: &[usize]) -> bool {
        let mut valid = eligible.iter().filter_map(|&i| candidates.get(i));
        let mut pos = 0;
        for c in valid.by_ref() {
            match self.entries.get(pos) {
                Some(e) if &*e.id == c.id() => pos += 1,
                _ => return false,
            }
        }
        pos == self.entries.len()
    }

    fn reconcile<C: Candidate>(&mut self, candidates: &[C], eligible: &[usize]) {
        let next: Vec<Entry> = eligible
            .iter()
            .filter_map(|&i| candidates.get(i))
            .map(|c| match self.entries.iter().find(|e| &*e.id == c.id()) {
                Some(kept) => kept.clone(),
                None => Entry { id: Arc::from(c.id()), current: 0 },
            })
            .collect();
        self.entries = next;
        self.moves += 1;
    }
}

/// SWRR states of every (connection, model). Lookups by `&str` do not allocate; a new
/// (connection, model) allocates its state once.
#[derive(Debug, Clone, Default)]
pub struct SwrrTable {
    states: FastMap<String, FastMap<String, Swrr>>,
}

impl SwrrTable {
    /// Runs `f` on the SWRR state of (connection, model), e.g.
    /// `table.with_state(conn, model, |s| select_for_turn(strategy, bound, ps, eligible, s))`.
    pub fn with_state<R>(&mut self, connection: &str, model: &str, f: impl FnOnce(&mut Swrr) -> R) -> R {
        if let Some(s) = self.states.get_mut(connection).and_then(|m| m.get_mut(model)) {
            return f(s);
        }
        let mut s = Swrr::default();
        let out = f(&mut s);
        self.states.entry(connection.to_string()).or_default().insert(model.to_string(), s);
        out
    }

    /// SWRR selection with the state of (connection, model); see `Swrr::select`.
    pub fn select<C: Candidate>(
        &mut self,
        connection: &str,
        model: &str,
        candidates: &[C],
        eligible: &[usize],
    ) -> Option<usize> {
        self.with_state(connection, model, |s| s.select(candidates, eligible))
    }

    pub fn state(&self, connection: &str, model: &str) -> Option<&Swrr> {
        self.states.get(connection).and_then(|m| m.get(model))
    }

    /// Forgets a connection's states (connection removed or routing mode changed).
    pub fn forget_connection(&mut self, connection: &str) {
        self.states.remove(connection);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct C(&'static str, u32, i64);
    impl Candidate for C {
        fn id(&self) -> &str {
            self.0
        }
        fn weight(&self) -> u32 {
            self.1
        }
        fn priority(&self) -> i64 {
            self.2
        }
    }

    #[test]
    fn nginx_sequence_for_5_1_1() {
        let cs = [C("a", 5, 0), C("b", 1, 0), C("c", 1, 0)];
        let mut s = Swrr::default();
        let got: Vec<&str> = (0..7).filter_map(|_| s.select(&cs, &[0, 1, 2])).map(|i| cs[i].0).collect();
        assert_eq!(got, ["a", "a", "b", "a", "c", "a", "a"], "the smooth interleaving nginx documents for 5:1:1");
        assert!(s.current_weights().all(|(_, w)| w == 0), "after one full cycle every current weight is back to 0");
    }

    #[test]
    fn a_position_carried_between_processes_continues_the_sequence() {
        let cs = [C("a", 2, 0), C("b", 1, 0)];
        let mut whole = Swrr::default();
        let want: Vec<&str> = (0..9).filter_map(|_| whole.select(&cs, &[0, 1])).map(|i| cs[i].0).collect();
        let mut got = Vec::new();
        let mut kept: Vec<(String, i64)> = Vec::new();
        for _ in 0..9 {
            // Each pick starts from what the previous one left, as `exec` launches do.
            let mut s = Swrr::from_current(kept.clone());
            got.extend(s.select(&cs, &[0, 1]).map(|i| cs[i].0));
            kept = s.current_weights().map(|(id, w)| (id.to_string(), w)).collect();
        }
        assert_eq!(got, want, "one state per pick, carried over, picks what one long-lived state picks");
        assert_eq!(got.iter().filter(|&&p| p == "a").count(), 6, "2:1 over 9 picks is 6:3 exactly");
    }

    #[test]
    fn ties_go_to_lower_priority_number_then_id() {
        let cs = [C("b", 1, 1), C("c", 1, 0), C("a", 1, 1)];
        let mut s = Swrr::default();
        let first = s.select(&cs, &[0, 1, 2]).map(|i| cs[i].0);
        assert_eq!(first, Some("c"), "equal weights: priority 0 beats priority 1");
        let second = s.select(&cs, &[0, 1, 2]).map(|i| cs[i].0);
        assert_eq!(second, Some("a"), "equal weight and priority: smaller id first");
        assert_eq!(select_priority(&cs, &[0, 2]).map(|i| cs[i].0), Some("a"), "priority mode");
    }
}
