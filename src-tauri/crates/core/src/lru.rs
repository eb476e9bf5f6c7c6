//! One bounded map for everything the router remembers in memory (turn and conversation
//! bindings, response origins, turns that fell back): at most `capacity` entries, the least
//! recently used evicted first, and optionally an idle expiry (an entry unused for longer than
//! `idle` is gone). Every operation is O(1) and a use is one hash lookup: the entries live in a
//! slab threaded by a doubly linked use order (most recent at the head), so a use relinks two
//! indices and eviction pops the tail — no scan, and no second ordered map to keep in step
//! (a `BTreeMap` of use stamps cost a balanced request ~1.7k instructions, issue 40). The index
//! is a `hashbrown::HashTable` of slab positions hashed by their node's key, so a key is stored
//! once, in its node (a `HashMap<K, usize>` held a second copy: one more allocation and copy per
//! new entry, one more free per eviction). Time is passed in (`now: Instant`).

use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};
use std::time::{Duration, Instant};

use hashbrown::HashTable;

/// No neighbour.
const NIL: usize = usize::MAX;

#[derive(Debug, Clone)]
struct Node<K, V> {
    key: K,
    value: V,
    used: Instant,
    /// Towards the most recently used.
    prev: usize,
    /// Towards the least recently used.
    next: usize,
}

/// A bounded LRU map with optional idle expiry.
#[derive(Debug, Clone)]
pub struct Lru<K, V> {
    /// Key → index in `nodes`: the positions, each hashed by its node's key (the key itself
    /// lives only in the node).
    map: HashTable<usize>,
    /// foldhash (per-process random seed): the keys are the relay's own (turn and conversation
    /// digests, slugs, response ids), looked up several times per routed request, and SipHash
    /// was ~2k instructions of a balanced one (issue 40).
    hasher: foldhash::fast::RandomState,
    nodes: Vec<Option<Node<K, V>>>,
    /// Indices of empty slots in `nodes`.
    free: Vec<usize>,
    /// Most recently used.
    head: usize,
    /// Least recently used.
    tail: usize,
    capacity: usize,
    idle: Option<Duration>,
}

impl<K: Hash + Eq, V> Lru<K, V> {
    /// At most `capacity` entries (at least 1); `idle`: entries unused for longer are gone.
    pub fn new(capacity: usize, idle: Option<Duration>) -> Self {
        Lru {
            map: HashTable::new(),
            hasher: foldhash::fast::RandomState::default(),
            nodes: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            capacity: capacity.max(1),
            idle,
        }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    fn node(&self, i: usize) -> &Node<K, V> {
        self.nodes[i].as_ref().unwrap_or_else(|| unreachable!("a linked index holds a node"))
    }

    fn node_mut(&mut self, i: usize) -> &mut Node<K, V> {
        self.nodes[i].as_mut().unwrap_or_else(|| unreachable!("a linked index holds a node"))
    }

    /// The slab position of `key`'s node.
    fn position<Q>(&self, key: &Q) -> Option<usize>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.position_hashed(self.hasher.hash_one(key), key)
    }

    fn position_hashed<Q>(&self, hash: u64, key: &Q) -> Option<usize>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let nodes = &self.nodes;
        self.map.find(hash, |&i| nodes[i].as_ref().is_some_and(|n| n.key.borrow() == key)).copied()
    }

    fn live_at(idle: Option<Duration>, used: Instant, now: Instant) -> bool {
        idle.is_none_or(|ttl| now.saturating_duration_since(used) <= ttl)
    }

    /// The live value of `key`, without counting a use.
    pub fn peek<Q>(&self, key: &Q, now: Instant) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let node = self.node(self.position(key)?);
        Self::live_at(self.idle, node.used, now).then_some(&node.value)
    }

    /// [`Lru::peek`], mutable: the live value of `key`, without counting a use.
    pub fn peek_mut<Q>(&mut self, key: &Q, now: Instant) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let i = self.position(key)?;
        let idle = self.idle;
        let node = self.node_mut(i);
        Self::live_at(idle, node.used, now).then_some(&mut node.value)
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
        let i = self.position(key)?;
        if !Self::live_at(self.idle, self.node(i).used, now) {
            self.remove_at(i);
            return None;
        }
        self.move_to_front(i);
        let node = self.node_mut(i);
        node.used = now;
        Some(&mut node.value)
    }

    /// Sets `key` to `value`, used now; returns the value it replaces (live or not). The
    /// oldest entries go while over capacity or idle-expired.
    pub fn insert(&mut self, key: K, value: V, now: Instant) -> Option<V> {
        let hash = self.hasher.hash_one(&key);
        if let Some(i) = self.position_hashed(hash, &key) {
            self.move_to_front(i);
            let node = self.node_mut(i);
            node.used = now;
            let old = std::mem::replace(&mut node.value, value);
            self.evict(now);
            return Some(old);
        }
        let node = Node { key, value, used: now, prev: NIL, next: NIL };
        let i = match self.free.pop() {
            Some(i) => {
                self.nodes[i] = Some(node);
                i
            }
            None => {
                self.nodes.push(Some(node));
                self.nodes.len() - 1
            }
        };
        self.link_front(i);
        let (nodes, hasher) = (&self.nodes, &self.hasher);
        // The table rehashes a position by its node's key when it grows (every listed position
        // holds a node).
        self.map.insert_unique(hash, i, |&j| nodes[j].as_ref().map_or(0, |n| hasher.hash_one(&n.key)));
        self.evict(now);
        None
    }

    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let i = self.position(key)?;
        Some(self.remove_at(i))
    }

    /// Every entry, live or idle, in no particular order (not counted as a use).
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.nodes.iter().flatten().map(|n| (&n.key, &n.value))
    }

    /// [`Lru::iter`], mutable.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&K, &mut V)> {
        self.nodes.iter_mut().flatten().map(|n| (&n.key, &mut n.value))
    }

    /// Keeps only the entries `keep` says yes to.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        for i in 0..self.nodes.len() {
            let kept = match self.nodes[i].as_mut() {
                Some(n) => keep(&n.key, &mut n.value),
                None => continue,
            };
            if !kept {
                self.remove_at(i);
            }
        }
    }

    /// Unlinks and frees slot `i`, returning its value.
    fn remove_at(&mut self, i: usize) -> V {
        self.unlink(i);
        let node = self.nodes[i].take().unwrap_or_else(|| unreachable!("a linked index holds a node"));
        if let Ok(listed) = self.map.find_entry(self.hasher.hash_one(&node.key), |&j| j == i) {
            listed.remove();
        }
        self.free.push(i);
        node.value
    }

    fn unlink(&mut self, i: usize) {
        let (prev, next) = {
            let n = self.node(i);
            (n.prev, n.next)
        };
        match prev {
            NIL => self.head = next,
            p => self.node_mut(p).next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.node_mut(n).prev = prev,
        }
    }

    fn link_front(&mut self, i: usize) {
        let head = self.head;
        {
            let n = self.node_mut(i);
            n.prev = NIL;
            n.next = head;
        }
        match head {
            NIL => self.tail = i,
            h => self.node_mut(h).prev = i,
        }
        self.head = i;
    }

    fn move_to_front(&mut self, i: usize) {
        if self.head != i {
            self.unlink(i);
            self.link_front(i);
        }
    }

    /// Drops idle-expired entries from the old end, then the least recently used over capacity.
    fn evict(&mut self, now: Instant) {
        while self.tail != NIL {
            let over = self.map.len() > self.capacity;
            if !over && Self::live_at(self.idle, self.node(self.tail).used, now) {
                break;
            }
            self.remove_at(self.tail);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The obvious LRU: a vector, most recently used last, scanned for everything.
    struct Model {
        entries: Vec<(u8, u32, Instant)>,
        capacity: usize,
        idle: Duration,
    }

    impl Model {
        fn live(&self, used: Instant, now: Instant) -> bool {
            now.saturating_duration_since(used) <= self.idle
        }
        fn get(&mut self, k: u8, now: Instant) -> Option<u32> {
            let i = self.entries.iter().position(|e| e.0 == k)?;
            let (_, v, used) = self.entries.remove(i);
            if !self.live(used, now) {
                return None;
            }
            self.entries.push((k, v, now));
            Some(v)
        }
        fn insert(&mut self, k: u8, v: u32, now: Instant) -> Option<u32> {
            let old = self.entries.iter().position(|e| e.0 == k).map(|i| self.entries.remove(i).1);
            self.entries.push((k, v, now));
            while let Some(&(_, _, used)) = self.entries.first() {
                if self.entries.len() <= self.capacity && self.live(used, now) {
                    break;
                }
                self.entries.remove(0);
            }
            old
        }
    }

    proptest! {
        #[test]
        fn it_behaves_as_the_obvious_lru(ops in proptest::collection::vec((0u8..4, 0u8..12, 0u32..1000, 0u64..40), 1..200)) {
            let t0 = Instant::now();
            let idle = Duration::from_secs(60);
            let mut lru = Lru::new(5, Some(idle));
            let mut model = Model { entries: Vec::new(), capacity: 5, idle };
            let mut now = t0;
            for (op, k, v, dt) in ops {
                now += Duration::from_secs(dt);
                match op {
                    0 => prop_assert_eq!(lru.insert(k, v, now), model.insert(k, v, now), "insert {}", k),
                    1 => prop_assert_eq!(lru.get(&k, now).copied(), model.get(k, now), "get {}", k),
                    2 => {
                        let expected = model.entries.iter().position(|e| e.0 == k).map(|i| model.entries.remove(i).1);
                        prop_assert_eq!(lru.remove(&k), expected, "remove {}", k);
                    }
                    _ => {
                        let expected = model.entries.iter().find(|e| e.0 == k).filter(|e| model.live(e.2, now)).map(|e| e.1);
                        prop_assert_eq!(lru.peek(&k, now).copied(), expected, "peek {}", k);
                    }
                }
                prop_assert_eq!(lru.len(), model.entries.len(), "same entries after every step");
            }
        }
    }

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
    fn the_use_order_survives_removals_from_its_middle_and_ends() {
        let t = Instant::now();
        let mut lru = Lru::new(4, None);
        for k in 0..4 {
            lru.insert(k, k, t);
        }
        // Order now (newest first): 3 2 1 0. Take the middle, the head and the tail out.
        assert_eq!(lru.remove(&2), Some(2), "middle");
        assert_eq!(lru.remove(&3), Some(3), "head");
        assert_eq!(lru.remove(&0), Some(0), "tail");
        assert_eq!(lru.get(&1, t), Some(&1), "the one left is still reachable");
        for k in 10..14 {
            lru.insert(k, k, t);
        }
        // Slots were reused; capacity 4 keeps 10..14 and the oldest (1) went first.
        assert_eq!(lru.len(), 4, "bounded after reusing freed slots");
        assert!(lru.peek(&1, t).is_none(), "1 was the least recently used");
        let mut kept: Vec<i32> = lru.iter().map(|(k, _)| *k).collect();
        kept.sort_unstable();
        assert_eq!(kept, vec![10, 11, 12, 13], "iter sees exactly the live slots");
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
