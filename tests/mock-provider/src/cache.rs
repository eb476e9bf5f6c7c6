//! Prompt caches as Anthropic bills them, for keys whose script sets `prompt_cache`: each
//! account remembers the request prefixes it has seen and when, and a `/v1/messages` request
//! is charged as cache reads (the longest fresh prefix), cache writes (the rest of the
//! request before its last message) and uncached input (the rest).
//!
//! A request's prefixes: the head (model, tools and system), then the head with each message
//! before the last one appended, each hashed as canonical JSON (keys sorted, compact, every
//! `cache_control` field left out, since clients move their cache marks). A request stores
//! its head (shared by every conversation with the same system prompt and tools) and its whole
//! prefix, and renews the prefix it read. Tokens are estimated as elsewhere in the mock, a
//! token per 4 bytes (times the script's `scale`).

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::Hasher;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Stored prefixes per account above which expired ones are dropped.
const PRUNE_ABOVE: usize = 50_000;

/// Whose cache a key uses and how it counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CacheScope {
    pub account: String,
    pub ttl: Duration,
    /// Tokens per 4 bytes.
    pub scale: u64,
}

/// How one request's input tokens split, as Anthropic's usage reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CacheUsage {
    /// Uncached input (`input_tokens`).
    pub input: u64,
    /// Newly cached (`cache_creation_input_tokens`).
    pub write: u64,
    /// Read from the cache (`cache_read_input_tokens`).
    pub read: u64,
}

/// Every account's cached prefixes: prefix hash → when it was last read or written.
#[derive(Debug, Default)]
pub(crate) struct PromptCaches {
    seen: Mutex<HashMap<String, HashMap<u64, Instant>>>,
}

impl PromptCaches {
    /// Charges a request of `body_len` bytes (`request` its JSON, if it parsed) to `scope`'s
    /// cache, and remembers its prefixes.
    pub fn charge(&self, scope: &CacheScope, request: Option<&Value>, body_len: usize) -> CacheUsage {
        let tokens = |bytes: usize| (bytes as u64).saturating_mul(scope.scale).div_ceil(4);
        let total = tokens(body_len).max(1);
        let Some(request) = request else {
            return CacheUsage { input: total, ..CacheUsage::default() };
        };
        let prefixes = prefixes(request);
        let now = Instant::now();
        let mut accounts = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let seen = accounts.entry(scope.account.clone()).or_default();
        if seen.len() > PRUNE_ABOVE {
            seen.retain(|_, at| now.duration_since(*at) <= scope.ttl);
        }
        let fresh = |hash: &u64| seen.get(hash).is_some_and(|at| now.duration_since(*at) <= scope.ttl);
        let hit = prefixes.iter().rposition(|(hash, _)| fresh(hash));
        let whole = prefixes.last().map_or(0, |(_, bytes)| tokens(*bytes)).min(total);
        let read = hit.map_or(0, |i| tokens(prefixes[i].1)).min(whole);
        let stored = [hit, Some(0), prefixes.len().checked_sub(1)];
        for i in stored.into_iter().flatten() {
            if let Some((hash, _)) = prefixes.get(i) {
                seen.insert(*hash, now);
            }
        }
        CacheUsage { input: total - whole, write: whole - read, read }
    }
}

/// The request's prefixes, shortest first: (hash, canonical bytes) of the head, then of the
/// head plus each message before the last.
fn prefixes(request: &Value) -> Vec<(u64, usize)> {
    let mut head = serde_json::Map::new();
    for field in ["model", "tools", "system"] {
        if let Some(v) = request.get(field) {
            head.insert(field.to_owned(), v.clone());
        }
    }
    let messages = request.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let earlier = &messages[..messages.len().saturating_sub(1)];
    let mut hasher = DefaultHasher::new();
    let mut bytes = 0usize;
    let mut out = Vec::with_capacity(earlier.len() + 1);
    let mut text = String::new();
    for part in std::iter::once(&Value::Object(head)).chain(earlier) {
        text.clear();
        canonical(part, &mut text);
        hasher.write(text.as_bytes());
        // A separator, so that moving bytes between messages changes the hash.
        hasher.write_u8(0xff);
        bytes += text.len();
        out.push((hasher.finish(), bytes));
    }
    out
}

/// Canonical JSON of `value` (object keys sorted, compact) without `cache_control` fields.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().filter(|k| *k != "cache_control").collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(v) = map.get(key) {
                    canonical(v, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scope() -> CacheScope {
        CacheScope { account: "a".to_owned(), ttl: Duration::from_secs(300), scale: 1 }
    }

    #[test]
    fn canonical_form_ignores_key_order_and_cache_marks() {
        let (mut a, mut b) = (String::new(), String::new());
        canonical(
            &json!({"b": 1, "a": [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}]}),
            &mut a,
        );
        canonical(&json!({"a": [{"text": "x", "type": "text"}], "b": 1}), &mut b);
        assert_eq!(a, b, "same content, same canonical text");
        assert_eq!(a, r#"{"a":[{"text":"x","type":"text"}],"b":1}"#, "sorted and compact");
    }

    #[test]
    fn a_grown_conversation_reads_what_it_wrote() {
        let caches = PromptCaches::default();
        let first = json!({"model": "m", "system": "s", "messages": [{"role": "user", "content": "hi"}]});
        let len = first.to_string().len();
        let one = caches.charge(&scope(), Some(&first), len);
        assert_eq!(one.read, 0, "nothing cached yet");
        assert!(one.write > 0 && one.input > 0, "the head is written, the message is input: {one:?}");
        let second = json!({"model": "m", "system": "s", "messages": [
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "more"}]});
        let two = caches.charge(&scope(), Some(&second), second.to_string().len());
        assert_eq!(two.read, one.write, "the head, stored by the first call, is read");
        let other = CacheScope { account: "b".to_owned(), ..scope() };
        let three = caches.charge(&other, Some(&second), second.to_string().len());
        assert_eq!((three.read, three.write), (0, two.read + two.write), "another account starts cold");
    }
}
