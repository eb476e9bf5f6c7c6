//! Conversation bindings: (conversation key, model) → the profile the conversation is kept on
//! and when its last call was. A binding expires once its last call is older than the affinity
//! window it was bound with; the table is a bounded LRU over conversations. It holds only
//! `ConversationKey`s (hashes), model names and profile ids — never a client's raw id. Which
//! profile to bind is decided by `affinity.rs`; turn bindings are in `binding.rs`.

use std::time::{Duration, Instant};

use crate::conversation::ConversationKey;
use crate::lru::Lru;

/// Default bound on remembered conversations; the least recently called goes first.
pub const DEFAULT_CONVERSATION_CAPACITY: usize = 10_000;

/// Where one conversation's calls to one model go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationBinding {
    pub profile_id: String,
    /// The conversation's last call to this model.
    pub last_call: Instant,
    /// The affinity window it was bound with: older than this after its last call, it is gone.
    pub window: Duration,
}

impl ConversationBinding {
    /// The last call is at most `window` old.
    pub fn is_warm(&self, window: Duration, now: Instant) -> bool {
        now.saturating_duration_since(self.last_call) <= window
    }
}

/// One conversation: a binding per model (prompt caches are per model, and so are SWRR
/// states and model-scoped exclusions).
#[derive(Debug, Clone, Default)]
struct Entry {
    slots: Vec<(String, ConversationBinding)>,
}

impl Entry {
    fn slot(&self, model: &str) -> Option<&ConversationBinding> {
        self.slots.iter().find(|(m, _)| m == model).map(|(_, b)| b)
    }
}

/// Conversation key → per-model bindings, bounded ([`Lru`] over conversations, the least
/// recently called evicted first); each binding expires by its own window. Time is passed in.
#[derive(Debug, Clone)]
pub struct ConversationBindings {
    conversations: Lru<String, Entry>,
}

impl Default for ConversationBindings {
    fn default() -> Self {
        ConversationBindings::new(DEFAULT_CONVERSATION_CAPACITY)
    }
}

impl ConversationBindings {
    /// At most `capacity` conversations (at least 1).
    pub fn new(capacity: usize) -> Self {
        ConversationBindings { conversations: Lru::new(capacity, None) }
    }

    /// Remembered conversations.
    pub fn len(&self) -> usize {
        self.conversations.len()
    }

    pub fn is_empty(&self) -> bool {
        self.conversations.is_empty()
    }

    /// The live binding of `conversation` for `model`, not refreshed (a call refreshes it:
    /// `touch` or `bind`). An expired binding is removed, and the conversation with its last one.
    pub fn get(&mut self, conversation: &ConversationKey, model: &str, now: Instant) -> Option<&ConversationBinding> {
        let key = conversation.as_str();
        let entry = self.conversations.peek(key, now)?;
        if entry.slot(model).is_some_and(|b| !b.is_warm(b.window, now)) {
            let emptied = match self.conversations.get_mut(key, now) {
                Some(entry) => {
                    entry.slots.retain(|(m, _)| m != model);
                    entry.slots.is_empty()
                }
                None => false,
            };
            if emptied {
                self.remove(conversation);
            }
            return None;
        }
        self.conversations.peek(key, now).and_then(|e| e.slot(model))
    }

    /// The live binding without changing anything.
    pub fn peek(&self, conversation: &ConversationKey, model: &str, now: Instant) -> Option<&ConversationBinding> {
        self.conversations.peek(conversation.as_str(), now)?.slot(model).filter(|b| b.is_warm(b.window, now))
    }

    /// Binds `conversation`'s calls to `model` to `profile` (a new or cold conversation was
    /// assigned, or it moved) and records a call now.
    pub fn bind(&mut self, conversation: &ConversationKey, model: &str, profile: &str, window: Duration, now: Instant) {
        let binding = ConversationBinding { profile_id: profile.to_string(), last_call: now, window };
        let key = conversation.as_str();
        match self.conversations.get_mut(key, now) {
            Some(entry) => match entry.slots.iter_mut().find(|(m, _)| m == model) {
                Some((_, b)) => *b = binding,
                None => entry.slots.push((model.to_string(), binding)),
            },
            None => {
                let entry = Entry { slots: vec![(model.to_string(), binding)] };
                self.conversations.insert(key.to_string(), entry, now);
            }
        }
    }

    /// Records a call of `conversation` to `model` now, on its current binding. False when it
    /// has none (nothing to refresh).
    pub fn touch(&mut self, conversation: &ConversationKey, model: &str, now: Instant) -> bool {
        let Some(entry) = self.conversations.get_mut(conversation.as_str(), now) else {
            return false;
        };
        let Some((_, b)) = entry.slots.iter_mut().find(|(m, _)| m == model) else {
            return false;
        };
        b.last_call = now;
        true
    }

    /// Forgets a conversation (all its models).
    pub fn remove(&mut self, conversation: &ConversationKey) -> bool {
        self.conversations.remove(conversation.as_str()).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::Protocol;
    use crate::conversation::conversation_key;
    use crate::turn::ClientIds;

    fn conv(name: &str) -> ConversationKey {
        let ids = ClientIds { explicit_conversation: Some(name.to_string()), ..ClientIds::default() };
        conversation_key(Protocol::Openai, "c", &ids, &serde_json::Value::Null).0
    }

    const WINDOW: Duration = Duration::from_secs(600);

    #[test]
    fn a_binding_lives_for_the_window_after_its_last_call() {
        let t0 = Instant::now();
        let mut b = ConversationBindings::default();
        let c = conv("c1");
        b.bind(&c, "m", "p1", WINDOW, t0);
        let t1 = t0 + Duration::from_secs(9 * 60);
        assert!(b.touch(&c, "m", t1), "a call refreshes the binding");
        let t2 = t1 + WINDOW;
        assert_eq!(
            b.get(&c, "m", t2).map(|x| x.profile_id.as_str()),
            Some("p1"),
            "exactly the window after the last call: warm"
        );
        assert!(b.get(&c, "m", t2 + Duration::from_millis(1)).is_none(), "older than the window: gone");
        assert!(b.is_empty(), "the conversation goes with its last binding");
    }

    #[test]
    fn models_are_bound_separately() {
        let t0 = Instant::now();
        let mut b = ConversationBindings::default();
        let c = conv("c1");
        b.bind(&c, "big", "p1", WINDOW, t0);
        b.bind(&c, "small", "p2", Duration::from_secs(60), t0);
        assert_eq!(b.peek(&c, "big", t0).map(|x| x.profile_id.as_str()), Some("p1"), "one binding per model");
        assert_eq!(b.peek(&c, "small", t0).map(|x| x.profile_id.as_str()), Some("p2"), "one binding per model");
        let later = t0 + Duration::from_secs(61);
        assert!(b.get(&c, "small", later).is_none(), "each binding keeps its own window");
        assert!(b.get(&c, "big", later).is_some(), "the other model's binding stays");
        assert_eq!(b.len(), 1, "still one conversation");
        assert!(!b.touch(&c, "small", later), "no binding, nothing to refresh");
    }

    #[test]
    fn the_least_recently_called_conversation_is_evicted_first() {
        let t0 = Instant::now();
        let mut b = ConversationBindings::new(2);
        let (x, y, z) = (conv("x"), conv("y"), conv("z"));
        b.bind(&x, "m", "p1", WINDOW, t0);
        b.bind(&y, "m", "p1", WINDOW, t0);
        assert!(b.touch(&x, "m", t0), "x is called again");
        b.bind(&z, "m", "p2", WINDOW, t0);
        assert_eq!(b.len(), 2, "capacity bounds the table");
        assert!(b.peek(&y, "m", t0).is_none(), "y was least recently called");
        assert!(b.peek(&x, "m", t0).is_some(), "x was refreshed by its call");
    }
}
