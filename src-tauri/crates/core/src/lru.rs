//! One bounded map for everything the router remembers in memory (turn and conversation
//! bindings, response origins, turns that fell back): at most `capacity` entries, the least
//! recently used evicted first, and optionally an idle expiry (an entry unused for longer than
//! `idle` is gone). Every operation is O(log n): the use order is a `BTreeMap` of stamps, so
//! eviction never scans the map. Time is passed in (`now: Instant`).

use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
struct Slot<V> {
    value: V,
    stamp: u64,
    used: Instant,
}

/// A bounded LRU map with optional idle expiry.
#[derive(Debug, Clone)]
pub struct Lru<K, V> {
    map: HashMap<K, Slot<V>>,
    /// stamp → key, least recently used first.
    order: BTreeMap<u64, K>,
    next_stamp: u64,
    capacity: usize,
    idle: Option<Duration>,
}

impl<K: Hash + Eq + Clone, V> Lru<K, V> {
    /// At most `capacity` entries (at least 1); `idle`: entries unused for longer are gone.
    pub fn new(capacity: usize, idle: Option<Duration>) -> Self {
        Lru { map: HashMap::new(), order: BTreeMap::new(), next_stamp: 0, capacity: capacity.max(1), idle }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    fn live(&self, slot: &Slot<V>, now: Instant) -> bool {
        self.idle.is_none_or(|ttl| now.saturating_duration_since(slot.used) <= ttl)
    }

    /// The live value of `key`, without counting a use.
    pub fn peek<Q>(&self, key: &Q, now: Instant) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.get(key).filter(|s| self.live(s, now)).map(|s| &s.value)
    }

    /// [`Lru::peek`], mutable: the live value of `key`, without counting a use.
    pub fn peek_mut<Q>(&mut self, key: &Q, now: Instant) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let ttl = self.idle;
        let slot = self.map.get_mut(key)?;
        let live = ttl.is_none_or(|ttl| now.saturating_duration_since(slot.used) <= ttl);
        live.then_some(&mut slot.value)
    }

    /// The live value of `key`, counted as used now; an expired entry is removed.
    pub fn get<Q>(&mut self, key: &Q, now: Instant) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.get_mut(key, now).map(|v| &*v)
    }

    /// [`Lru::get`], mutable.
    pub fn get_mut<Q>(&mut self, key: &Q, now: Instant) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let live = self.live(self.map.get(key)?, now);
        if !live {
            self.remove(key);
            return None;
        }
        let stamp = self.bump();
        let slot = self.map.get_mut(key)?;
        if let Some(k) = self.order.remove(&slot.stamp) {
            self.order.insert(stamp, k);
        }
        slot.stamp = stamp;
        slot.used = now;
        Some(&mut slot.value)
    }

    /// Sets `key` to `value`, used now; returns the value it replaces (live or not). The
    /// oldest entries go while over capacity or idle-expired.
    pub fn insert(&mut self, key: K, value: V, now: Instant) -> Option<V> {
        let stamp = self.bump();
        let old = self.map.insert(key.clone(), Slot { value, stamp, used: now });
        if let Some(old) = &old {
            self.order.remove(&old.stamp);
        }
        self.order.insert(stamp, key);
        self.evict(now);
        old.map(|s| s.value)
    }

    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let slot = self.map.remove(key)?;
        self.order.remove(&slot.stamp);
        Some(slot.value)
    }

    /// Every entry, live or idle, in no particular order (not counted as a use).
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.map.iter().map(|(k, s)| (k, &s.value))
    }

    /// [`Lru::iter`], mutable.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&K, &mut V)> {
        self.map.iter_mut().map(|(k, s)| (k, &mut s.value))
    }

    /// Keeps only the entries `keep` says yes to.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        let order = &mut self.order;
        self.map.retain(|k, slot| {
            let kept = keep(k, &mut slot.value);
            if !kept {
                order.remove(&slot.stamp);
            }
            kept
        });
    }

    fn bump(&mut self) -> u64 {
        self.next_stamp += 1;
        self.next_stamp
    }

    /// Drops idle-expired entries from the old end, then the least recently used over capacity.
    fn evict(&mut self, now: Instant) {
        while let Some((_, key)) = self.order.first_key_value() {
            let over = self.map.len() > self.capacity;
            if !over && self.map.get(key).is_some_and(|s| self.live(s, now)) {
                break;
            }
            if let Some((_, key)) = self.order.pop_first() {
                self.map.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_goes_first_and_a_get_counts_as_use() {
        let t = Instant::now();
        let mut lru = Lru::new(2, None);
        lru.insert("a", 1, t);
        lru.insert("b", 2, t);
        assert_eq!(lru.get("a", t), Some(&1), "a is used again");
        lru.insert("c", 3, t);
        assert_eq!(lru.len(), 2, "capacity bounds the map");
        assert_eq!(lru.peek("b", t), None, "b was least recently used");
        assert_eq!(lru.peek("a", t), Some(&1), "a was refreshed by get");
        assert_eq!(lru.insert("a", 9, t), Some(1), "re-inserting replaces");
        assert_eq!(lru.len(), 2, "and does not grow the map");
    }

    #[test]
    fn idle_entries_expire_and_peek_does_not_refresh() {
        let t0 = Instant::now();
        let ttl = Duration::from_secs(60);
        let mut lru = Lru::new(10, Some(ttl));
        lru.insert("a", 1, t0);
        let t1 = t0 + ttl;
        assert_eq!(lru.peek("a", t1), Some(&1), "exactly the idle time: still live");
        assert_eq!(lru.peek("a", t1 + Duration::from_millis(1)), None, "peek sees it expire");
        assert_eq!(lru.get("a", t1), Some(&1), "get refreshes");
        assert_eq!(lru.get("a", t1 + ttl + Duration::from_millis(1)), None, "unused for longer than idle: gone");
        assert!(lru.is_empty(), "an expired entry is removed, not kept around");
    }

    #[test]
    fn inserting_drops_expired_entries_from_the_old_end() {
        let t0 = Instant::now();
        let ttl = Duration::from_secs(60);
        let mut lru = Lru::new(10, Some(ttl));
        for k in 0..5 {
            lru.insert(k, k, t0);
        }
        lru.insert(99, 99, t0 + ttl * 2);
        assert_eq!(lru.len(), 1, "the five idle entries went when the next one came");
    }

    #[test]
    fn eviction_at_capacity_is_not_a_scan() {
        // O(n) eviction (a min-by-key over the map per insert) makes this quadratic: 200k
        // inserts over a full 100k map would be 2e10 comparisons.
        let t = Instant::now();
        let mut lru = Lru::new(100_000, None);
        for k in 0..300_000u32 {
            lru.insert(k, (), t);
        }
        assert_eq!(lru.len(), 100_000, "bounded");
        assert!(lru.peek(&199_999, t).is_none() && lru.peek(&200_000, t).is_some(), "the newest 100k kept");
    }

    #[test]
    fn retain_and_remove_keep_the_order_in_step() {
        let t = Instant::now();
        let mut lru = Lru::new(3, None);
        for k in 0..3 {
            lru.insert(k, k * 10, t);
        }
        lru.retain(|_, v| *v != 10);
        assert_eq!(lru.remove(&0), Some(0), "removed");
        lru.insert(3, 30, t);
        lru.insert(4, 40, t);
        assert_eq!(lru.len(), 3, "2, 3 and 4: nothing evicted early by stale order entries");
        assert_eq!(lru.peek(&2, t), Some(&20), "2 kept");
    }
}
