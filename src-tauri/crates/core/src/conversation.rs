//! Conversation keys (docs/design.md, "Turn and session keys"): which conversation a request
//! belongs to, for conversation affinity (`routing/affinity.rs`). Precedence: the
//! `x-switchyard-conversation` header; else the client's own session id (Codex `session-id`,
//! Claude Code `x-claude-code-session-id` or the session in `metadata.user_id`); else the
//! body's `prompt_cache_key`; else `x-session-id`; else the conversation's **opening** — the
//! connection, the system prompt and the messages through the first human message, hashed as
//! the turn anchor is (canonical JSON, `cache_control` left out). Keys are always hashes; a
//! raw client id never leaves this module. Turn keys live in `turn.rs`.

use std::fmt;

use serde_json::Value;

use crate::connection::Protocol;
use crate::hex_text::prefixed;
use crate::turn::{anchor_through, short_key, ClientIds, Cut, SessionOrigin};

/// Where a conversation key came from (for the ledger and diagnostics).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConversationSource {
    /// `x-switchyard-conversation`.
    Explicit,
    /// The client's session id (any of the session headers or `metadata.user_id`).
    Session,
    /// The body's `prompt_cache_key`.
    PromptCacheKey,
    /// The opening of the conversation (system prompt and first human message).
    Opening,
}

impl ConversationSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ConversationSource::Explicit => "explicit",
            ConversationSource::Session => "session",
            ConversationSource::PromptCacheKey => "prompt_cache_key",
            ConversationSource::Opening => "opening",
        }
    }
}

impl fmt::Display for ConversationSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A conversation's key: a prefix naming its kind (`x:` explicit, `s:` a client id, `a:` the
/// opening) and 32 hex chars of SHA-256 over the connection and the id. Only
/// `conversation_key` makes one, so whatever holds these holds hashes, never raw ids.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConversationKey(String);

impl ConversationKey {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ConversationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Computes the conversation key of a request to connection `slug`. Session ids, the
/// `prompt_cache_key` and `x-session-id` share one namespace (`s:`): Codex sends the same id
/// as `session-id` and `prompt_cache_key`, and either one names the same conversation.
pub fn conversation_key(
    protocol: Protocol,
    slug: &str,
    ids: &ClientIds,
    body: &Value,
) -> (ConversationKey, ConversationSource) {
    conversation_key_with(slug, ids, || opening_anchor(protocol, slug, body))
}

/// `conversation_key` with the opening computed by `opening` (only called when no id decides).
pub(crate) fn conversation_key_with(
    slug: &str,
    ids: &ClientIds,
    opening: impl FnOnce() -> String,
) -> (ConversationKey, ConversationSource) {
    let id_key =
        |tag: &[u8], id: &str, prefix: &str| ConversationKey(short_key(prefix, &[tag, slug.as_bytes(), id.as_bytes()]));
    if let Some(c) = &ids.explicit_conversation {
        return (id_key(b"conversation-explicit", c, "x:"), ConversationSource::Explicit);
    }
    let agent_session = ids.session.as_deref().filter(|_| ids.session_origin != Some(SessionOrigin::SessionHeader));
    if let Some(s) = agent_session {
        return (id_key(b"conversation", s, "s:"), ConversationSource::Session);
    }
    if let Some(k) = &ids.prompt_cache_key {
        return (id_key(b"conversation", k, "s:"), ConversationSource::PromptCacheKey);
    }
    if let Some(s) = &ids.session {
        return (id_key(b"conversation", s, "s:"), ConversationSource::Session);
    }
    (ConversationKey(prefixed("a:", &opening())), ConversationSource::Opening)
}

/// Hash of the connection, the system prompt and the messages through the first human
/// message (all of them when none is human). Later turns append messages after it, so it
/// stays the same for the whole conversation.
pub fn opening_anchor(protocol: Protocol, slug: &str, body: &Value) -> String {
    anchor_through(protocol, slug, body, Cut::FirstHuman)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ids(headers: &[(&str, &str)], body: &Value) -> ClientIds {
        ClientIds::read(|name| headers.iter().find(|(n, _)| *n == name).map(|(_, v)| *v), body)
    }

    fn key(headers: &[(&str, &str)], body: &Value) -> (String, ConversationSource) {
        let (k, src) = conversation_key(Protocol::Anthropic, "c", &ids(headers, body), body);
        (k.as_str().to_string(), src)
    }

    #[test]
    fn the_precedence_is_explicit_session_prompt_cache_key_generic_session_opening() {
        let cc_body = json!({"prompt_cache_key": "pck",
            "metadata": {"user_id": r#"{"session_id":"meta-sess"}"#},
            "messages": [{"role": "user", "content": "hi"}]});
        let all = [
            ("x-switchyard-conversation", "conv-1"),
            ("session-id", "codex-sess"),
            ("x-claude-code-session-id", "cc-sess"),
            ("x-session-id", "generic"),
        ];
        assert_eq!(key(&all, &cc_body).1, ConversationSource::Explicit, "the header wins over every client id");
        assert_eq!(key(&all[1..], &cc_body).1, ConversationSource::Session, "an agent's session id comes next");
        assert_eq!(
            key(&all[1..], &cc_body).0,
            key(&[("session-id", "codex-sess")], &json!({})).0,
            "the Codex header ranks first among sessions, and the body does not matter then"
        );
        assert_eq!(key(&all[3..], &cc_body).1, ConversationSource::Session, "metadata.user_id is a session id");
        let pck_body = json!({"prompt_cache_key": "pck", "input": "hi"});
        assert_eq!(
            key(&all[3..], &pck_body).1,
            ConversationSource::PromptCacheKey,
            "prompt_cache_key ranks before the generic x-session-id"
        );
        let (generic, src) = key(&all[3..], &json!({"input": "hi"}));
        assert_eq!(src, ConversationSource::Session, "x-session-id when nothing better is sent");
        assert!(generic.starts_with("s:"), "a client id key: {generic}");
        let (opening, src) = key(&[], &json!({"input": "hi"}));
        assert_eq!(src, ConversationSource::Opening, "no id at all: the opening");
        assert!(opening.starts_with("a:"), "an opening key: {opening}");
    }

    #[test]
    fn codex_session_and_prompt_cache_key_name_the_same_conversation() {
        let body = json!({"prompt_cache_key": "0199-sess", "input": "hi"});
        let with_header = key(&[("session-id", "0199-sess")], &body);
        let body_only = key(&[], &body);
        assert_eq!(with_header.0, body_only.0, "the same id in either place is the same conversation");
        assert_ne!(with_header.1, body_only.1, "the source still says where it came from");
        let explicit = key(&[("x-switchyard-conversation", "0199-sess")], &json!({}));
        assert_ne!(explicit.0, with_header.0, "an explicit conversation has its own namespace");
    }

    #[test]
    fn keys_are_hashes_per_connection_never_raw_ids() {
        let raw = "raw-session-0123456789";
        for headers in
            [[("x-switchyard-conversation", raw)], [("x-claude-code-session-id", raw)], [("x-session-id", raw)]]
        {
            let (k, _) = key(&headers, &json!({}));
            let (prefix, hash) = k.split_at(2);
            assert!(["x:", "s:"].contains(&prefix), "a known prefix: {k}");
            assert!(hash.len() == 32 && hash.chars().all(|c| c.is_ascii_hexdigit()), "32 hex chars: {k}");
            assert!(!k.contains(raw), "never the raw id: {k}");
        }
        let i = ids(&[("x-session-id", raw)], &json!({}));
        let (c, _) = conversation_key(Protocol::Openai, "c", &i, &json!({}));
        let (d, _) = conversation_key(Protocol::Openai, "d", &i, &json!({}));
        assert_ne!(c, d, "conversations are per connection");
    }

    #[test]
    fn the_opening_stays_across_turns_and_tool_loops_but_not_across_openings() {
        let first = json!({"system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "fix it", "cache_control": {"type": "ephemeral"}}]}]});
        let later = json!({"system": [{"type": "text", "text": "s"}],
            "messages": [
                {"role": "user", "content": [{"text": "fix it", "type": "text"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]},
                {"role": "assistant", "content": "done"},
                {"role": "user", "content": [{"type": "text", "text": "thanks, next", "cache_control": {"type": "ephemeral"}}]}]});
        assert_eq!(key(&[], &first), key(&[], &later), "later turns and moved cache marks keep the conversation");
        let other_opening = json!({"system": "s", "messages": [{"role": "user", "content": "something else"}]});
        assert_ne!(key(&[], &first).0, key(&[], &other_opening).0, "another first message, another conversation");
        let other_system =
            json!({"system": "t", "messages": [{"role": "user", "content": [{"type": "text", "text": "fix it"}]}]});
        assert_ne!(key(&[], &first).0, key(&[], &other_system).0, "the system prompt is part of the opening");

        // Chat completions: system messages before the first human one are part of the opening.
        let chat = |extra: bool| {
            let mut m =
                vec![json!({"role": "system", "content": "be brief"}), json!({"role": "user", "content": "q1"})];
            if extra {
                m.push(json!({"role": "assistant", "content": "a1"}));
                m.push(json!({"role": "user", "content": "q2"}));
            }
            json!({"messages": m})
        };
        let open = |b: &Value| opening_anchor(Protocol::Openai, "c", b);
        assert_eq!(open(&chat(false)), open(&chat(true)), "a chat conversation keeps its opening");
        // Responses API: instructions + the first human input item.
        let resp = |input: Value| json!({"instructions": "i", "input": input});
        assert_eq!(
            open(&resp(json!("hi"))),
            open(&resp(json!(["hi", {"type": "function_call_output", "output": "x"}, "more"]))),
            "a Responses conversation keeps its opening"
        );
    }

    #[test]
    fn reading_conversation_ids_leaves_turn_keys_alone() {
        let body = json!({"prompt_cache_key": "pck", "messages": [{"role": "user", "content": "hi"}]});
        let with = ids(&[("x-switchyard-conversation", "c1"), ("x-session-id", "s")], &body);
        let without = ClientIds { explicit_conversation: None, prompt_cache_key: None, ..with.clone() };
        assert_eq!(
            crate::turn::turn_key(Protocol::Openai, "c", &with, &body),
            crate::turn::turn_key(Protocol::Openai, "c", &without, &body),
            "conversation ids never change the turn key"
        );
        assert_eq!(with.session_origin, Some(SessionOrigin::SessionHeader), "the origin of the session is kept");
        assert_eq!(
            ids(&[("x-switchyard-conversation", "  ")], &json!({})).explicit_conversation,
            None,
            "blank is absent"
        );
    }
}
