//! Which profile produced each recent OpenAI Responses answer: (connection, response id) →
//! profile id, so a request continuing it (`previous_response_id`) goes back to that account
//! (invariant 16). Memory only, bounded ([`MAX_RESPONSE_ORIGINS`], least recently used
//! forgotten first); after a restart or eviction an id is unknown and routes normally (a team
//! store keeps them too: `shared.rs`). Response ids are not secrets; nothing else is kept. The
//! caller passes the engine clock's instant (only the order of use matters).

use std::time::Instant;

use switchyard_core::lru::Lru;

/// How many response ids are remembered.
pub const MAX_RESPONSE_ORIGINS: usize = 10_000;

/// A bounded LRU map of response origins: (connection id, response id) → profile id.
#[derive(Debug)]
pub struct ResponseOrigins {
    origins: Lru<(String, String), String>,
}

impl Default for ResponseOrigins {
    fn default() -> Self {
        Self::with_capacity(MAX_RESPONSE_ORIGINS)
    }
}

impl ResponseOrigins {
    /// An empty map holding at most `cap` ids (at least one).
    pub fn with_capacity(cap: usize) -> Self {
        ResponseOrigins { origins: Lru::new(cap, None) }
    }

    /// Remembers that `profile_id` of `connection_id` produced `response_id`.
    pub fn remember(&mut self, connection_id: &str, response_id: &str, profile_id: &str, now: Instant) {
        let key = (connection_id.to_string(), response_id.to_string());
        self.origins.insert(key, profile_id.to_string(), now);
    }

    /// The profile that produced `response_id` on `connection_id`, if remembered (and marks
    /// it recently used).
    pub fn origin(&mut self, connection_id: &str, response_id: &str, now: Instant) -> Option<String> {
        let key = (connection_id.to_string(), response_id.to_string());
        self.origins.get(&key, now).cloned()
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.origins.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The origins' clock (no idle expiry: any instant orders them).
    fn now() -> Instant {
        Instant::now()
    }

    #[test]
    fn remembers_per_connection_and_forgets_the_least_recently_used() {
        let mut o = ResponseOrigins::with_capacity(2);
        o.remember("c1", "resp_1", "p1", now());
        o.remember("c1", "resp_2", "p2", now());
        assert_eq!(o.origin("c1", "resp_1", now()).as_deref(), Some("p1"), "a remembered id names its profile");
        assert_eq!(o.origin("c2", "resp_1", now()), None, "ids are per connection");
        o.remember("c1", "resp_3", "p3", now());
        assert_eq!(o.len(), 2, "the map stays bounded");
        assert_eq!(o.origin("c1", "resp_2", now()), None, "the least recently used id was forgotten");
        assert_eq!(o.origin("c1", "resp_1", now()).as_deref(), Some("p1"), "a looked-up id counts as used");
        o.remember("c1", "resp_1", "p9", now());
        assert_eq!(o.origin("c1", "resp_1", now()).as_deref(), Some("p9"), "a re-learned id takes the new profile");
        assert_eq!(o.len(), 2, "re-learning does not grow the map");
    }

    #[test]
    fn the_default_bound_holds() {
        let mut o = ResponseOrigins::default();
        for i in 0..(MAX_RESPONSE_ORIGINS + 50) {
            o.remember("c", &format!("resp_{i}"), "p", now());
        }
        assert_eq!(o.len(), MAX_RESPONSE_ORIGINS, "never more than the bound");
        assert_eq!(o.origin("c", "resp_0", now()), None, "the oldest went first");
    }
}
