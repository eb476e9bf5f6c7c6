//! Turn and session keys (docs/design.md, "Turn and session keys"): an explicit `x-switchyard-turn`
//! header wins; else the turn id a client sends (Codex `x-codex-turn-metadata.turn_id`);
//! else the client's session id (Codex `session-id`, Claude Code `x-claude-code-session-id`
//! or the `session_id` inside `metadata.user_id`, `x-session-id`) combined with the
//! conversation anchor; else the anchor alone. The anchor hashes the connection,
//! the system prompt and the messages up to and including the last user message that
//! carries human content, so a tool loop (assistant tool calls + tool results appended)
//! keeps its turn and a new human message starts a new one. Prompt-caching marks
//! (`cache_control`) are not part of the conversation: clients such as Claude Code move them
//! to the newest message on every call, which must not start a new turn. Conversation keys
//! (`conversation.rs`) are computed from the same `ClientIds` and the same hashing.

use std::io::Write;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::connection::Protocol;
use crate::hex_text::{hex_text, prefixed};

/// Where a turn key came from (recorded for diagnostics, never routing-relevant).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnSource {
    Explicit,
    ClientTurn,
    Session,
    Anchor,
}

/// What a client says about its own turn and session, read from its headers and body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientIds {
    /// `x-switchyard-turn`.
    pub explicit_turn: Option<String>,
    /// A turn id the client keeps for every call of one user turn (Codex).
    pub client_turn: Option<String>,
    /// The client's session (one conversation of the agent), raw — only ever stored hashed.
    pub session: Option<String>,
    /// Which header or field `session` was read from.
    pub session_origin: Option<SessionOrigin>,
    /// `x-switchyard-conversation`: the caller names the conversation (`conversation.rs`).
    pub explicit_conversation: Option<String>,
    /// The body's `prompt_cache_key` (OpenAI; Codex sends its session id there).
    pub prompt_cache_key: Option<String>,
}

/// Where `ClientIds::session` came from: an agent's own session id, or the generic
/// `x-session-id` header (the conversation key ranks `prompt_cache_key` between the two).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionOrigin {
    /// Codex `session-id`.
    CodexHeader,
    /// Claude Code `x-claude-code-session-id`.
    ClaudeCodeHeader,
    /// The `session_id` in Claude Code's `metadata.user_id` (or the whole `user_id`).
    ClaudeCodeMetadata,
    /// `x-session-id`.
    SessionHeader,
}

impl ClientIds {
    /// Reads the ids from a request: `header(name)` gives a header's value (lowercase name).
    /// Precedence of sessions: Codex `session-id`, Claude Code `x-claude-code-session-id`,
    /// the `session_id` inside Claude Code's `metadata.user_id` JSON string (or the whole
    /// `user_id` when it is not JSON), then `x-session-id`.
    pub fn read<'h>(header: impl Fn(&str) -> Option<&'h str>, body: &Value) -> Self {
        Self::read_headers(header).with_body_ids(
            body.pointer("/metadata/user_id").and_then(Value::as_str),
            body.get("prompt_cache_key").and_then(Value::as_str),
        )
    }

    /// What the headers alone say (no body): `read` is this plus `with_body_ids`. The relay
    /// reads these first to know how much of the body it must read (`body_skim/`).
    pub fn read_headers<'h>(header: impl Fn(&str) -> Option<&'h str>) -> Self {
        let client_turn = header("x-codex-turn-metadata")
            .and_then(|m| serde_json::from_str::<Value>(m).ok())
            .and_then(|m| nonempty(m.get("turn_id").and_then(Value::as_str)));
        let tagged = |origin: SessionOrigin, v: Option<String>| v.map(|v| (origin, v));
        let session = tagged(SessionOrigin::CodexHeader, nonempty(header("session-id")))
            .or_else(|| tagged(SessionOrigin::ClaudeCodeHeader, nonempty(header("x-claude-code-session-id"))))
            .or_else(|| tagged(SessionOrigin::SessionHeader, nonempty(header("x-session-id"))));
        let (session_origin, session) = session.map_or((None, None), |(o, s)| (Some(o), Some(s)));
        ClientIds {
            explicit_turn: nonempty(header("x-switchyard-turn")),
            client_turn,
            session,
            session_origin,
            explicit_conversation: nonempty(header("x-switchyard-conversation")),
            prompt_cache_key: None,
        }
    }

    /// Adds what the body says to the ids read from headers: the body's `metadata.user_id`
    /// (ranked after the agents' session headers, before `x-session-id`) and its
    /// `prompt_cache_key`.
    pub fn with_body_ids(mut self, user_id: Option<&str>, prompt_cache_key: Option<&str>) -> Self {
        if !self.has_agent_session_header() {
            if let Some(s) = user_id.and_then(user_id_session) {
                self.session = Some(s);
                self.session_origin = Some(SessionOrigin::ClaudeCodeMetadata);
            }
        }
        self.prompt_cache_key = nonempty(prompt_cache_key);
        self
    }

    /// The session came from Codex's or Claude Code's own header: nothing in the body can
    /// change it.
    pub fn has_agent_session_header(&self) -> bool {
        matches!(self.session_origin, Some(SessionOrigin::CodexHeader | SessionOrigin::ClaudeCodeHeader))
    }

    /// The session as the ledger keeps it: hashed with the connection, never the raw id.
    pub fn session_key(&self, slug: &str) -> Option<String> {
        self.session.as_deref().map(|s| short_key("", &[b"session", slug.as_bytes(), s.as_bytes()]))
    }
}

fn nonempty(v: Option<&str>) -> Option<String> {
    v.map(str::trim).filter(|v| !v.is_empty()).map(str::to_string)
}

/// Claude Code's `metadata.user_id` is a JSON string holding `session_id` (older versions
/// send `user_…_account_…_session_<uuid>` as plain text: used whole).
fn user_id_session(raw: &str) -> Option<String> {
    let raw = Some(raw).filter(|s| !s.is_empty())?;
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(m)) => {
            m.get("session_id").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string)
        }
        _ => Some(raw.to_string()),
    }
}

/// Computes the turn key of a request to connection `slug`.
pub fn turn_key(protocol: Protocol, slug: &str, ids: &ClientIds, body: &Value) -> (String, TurnSource) {
    turn_key_with(slug, ids, || conversation_anchor(protocol, slug, body))
}

/// `turn_key` with the anchor computed by `anchor` (only called when no turn id decides).
pub(crate) fn turn_key_with(slug: &str, ids: &ClientIds, anchor: impl FnOnce() -> String) -> (String, TurnSource) {
    if let Some(t) = &ids.explicit_turn {
        return (short_key("x:", &[slug.as_bytes(), t.as_bytes()]), TurnSource::Explicit);
    }
    if let Some(t) = &ids.client_turn {
        return (short_key("t:", &[b"turn", slug.as_bytes(), t.as_bytes()]), TurnSource::ClientTurn);
    }
    let anchor = anchor();
    match &ids.session {
        Some(s) => (short_key("s:", &[s.as_bytes(), anchor.as_bytes()]), TurnSource::Session),
        None => (prefixed("a:", &anchor), TurnSource::Anchor),
    }
}

/// Hash of the connection, the system prompt and the conversation up to the last human
/// user message.
pub fn conversation_anchor(protocol: Protocol, slug: &str, body: &Value) -> String {
    anchor_through(protocol, slug, body, Cut::LastHuman)
}

/// Where an anchor stops reading the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// Through the first human message: the conversation's opening (`conversation.rs`).
    FirstHuman,
    /// Through the last human message: the turn.
    LastHuman,
}

/// Hash of the connection, the system prompt and the messages through the `cut` human
/// message (all of them when none is human).
pub(crate) fn anchor_through(protocol: Protocol, slug: &str, body: &Value, cut: Cut) -> String {
    let (system, items): (Option<&Value>, Vec<&Value>) = match protocol {
        Protocol::Anthropic => (body.get("system"), array(body.get("messages"))),
        Protocol::Openai => match body.get("messages") {
            Some(m) => (None, array(Some(m))),
            // Responses API: `instructions` + `input` (a string or a list of items).
            None => (body.get("instructions"), array_or_single(body.get("input"))),
        },
        Protocol::Gemini => (body.get("systemInstruction"), array(body.get("contents"))),
    };
    let human = match cut {
        Cut::FirstHuman => items.iter().position(|m| is_human(protocol, m)),
        Cut::LastHuman => items.iter().rposition(|m| is_human(protocol, m)),
    };
    let prefix = match human {
        Some(i) => &items[..=i],
        None => &items[..],
    };
    // Streamed into the hash, one part per line: canonical JSON has no raw newline. (A
    // BufWriter in front measured no faster: Sha256 buffers its 64-byte blocks itself.)
    let mut sink = HashSink(Sha256::new());
    let _ = sink.write_all(slug.as_bytes());
    let _ = sink.write_all(b"\n");
    if let Some(system) = system {
        let _ = write_canonical(&mut sink, system);
    }
    for m in prefix {
        let _ = sink.write_all(b"\n");
        let _ = write_canonical(&mut sink, m);
    }
    hex_text("", &sink.0.finalize()[..16])
}

/// Hashes what is written into it.
struct HashSink(Sha256);

impl Write for HashSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Compact JSON with object keys sorted and `cache_control` left out, so the same
/// conversation always hashes the same way. Written straight into the hash (no copy of a
/// conversation that can be hundreds of KB).
fn write_canonical(w: &mut impl Write, v: &Value) -> std::io::Result<()> {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().filter(|k| k.as_str() != "cache_control").collect();
            keys.sort_unstable();
            w.write_all(b"{")?;
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                serde_json::to_writer(&mut *w, k)?;
                w.write_all(b":")?;
                if let Some(value) = map.get(k) {
                    write_canonical(w, value)?;
                }
            }
            w.write_all(b"}")
        }
        Value::Array(items) => {
            w.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                write_canonical(w, item)?;
            }
            w.write_all(b"]")
        }
        scalar => Ok(serde_json::to_writer(w, scalar)?),
    }
}

fn array(v: Option<&Value>) -> Vec<&Value> {
    v.and_then(Value::as_array).map(|a| a.iter().collect()).unwrap_or_default()
}

fn array_or_single(v: Option<&Value>) -> Vec<&Value> {
    match v {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(other) => vec![other],
        None => vec![],
    }
}

/// A user message with content a person wrote (not only tool results).
fn is_human(protocol: Protocol, m: &Value) -> bool {
    if let Value::String(_) = m {
        return true; // Responses API `input: "text"`.
    }
    if protocol == Protocol::Gemini {
        return is_human_gemini(m);
    }
    if m.get("role").and_then(Value::as_str) != Some("user") {
        return false;
    }
    match m.get("content") {
        Some(Value::String(_)) => true,
        Some(Value::Array(blocks)) => blocks.iter().any(|b| {
            let t = b.get("type").and_then(Value::as_str).unwrap_or("");
            match protocol {
                Protocol::Anthropic => t != "tool_result",
                Protocol::Openai => t != "function_call_output" && t != "tool_result",
                Protocol::Gemini => true,
            }
        }),
        _ => false,
    }
}

/// A Gemini `contents` item a person wrote: role `user` (or no role, which the API reads as
/// the user) with a part that is not a `functionResponse`. A function-call round (model
/// `functionCall`, user `functionResponse`) stays in the turn that asked for it.
fn is_human_gemini(m: &Value) -> bool {
    let user = match m.get("role") {
        None => true,
        Some(r) => r.as_str() == Some("user"),
    };
    user && m
        .get("parts")
        .and_then(Value::as_array)
        .is_some_and(|parts| parts.iter().any(|p| p.get("functionResponse").is_none()))
}

/// `prefix` and the hex of the first 16 bytes of the SHA-256 of `parts`, each framed by its
/// length: the id-derived keys.
pub(crate) fn short_key(prefix: &str, parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p);
    }
    hex_text(prefix, &h.finalize()[..16])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(p: Protocol, body: &Value) -> String {
        turn_key(p, "c", &ClientIds::default(), body).0
    }

    fn ids(headers: &[(&str, &str)], body: &Value) -> ClientIds {
        ClientIds::read(|name| headers.iter().find(|(n, _)| *n == name).map(|(_, v)| *v), body)
    }

    #[test]
    fn openai_tool_loop_keeps_the_turn_and_a_new_human_message_moves_it() {
        let first = json!({"model": "m", "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "list files"}]});
        let mut looped = first.clone();
        if let Some(msgs) = looped["messages"].as_array_mut() {
            msgs.push(json!({"role": "assistant", "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}));
            msgs.push(json!({"role": "tool", "tool_call_id": "t1", "content": "a.txt"}));
        }
        assert_eq!(key(Protocol::Openai, &first), key(Protocol::Openai, &looped), "a tool loop stays in its turn");
        let mut next = looped.clone();
        if let Some(msgs) = next["messages"].as_array_mut() {
            msgs.push(json!({"role": "assistant", "content": "a.txt"}));
            msgs.push(json!({"role": "user", "content": "thanks, now delete it"}));
        }
        assert_ne!(key(Protocol::Openai, &looped), key(Protocol::Openai, &next), "a new human message is a new turn");
    }

    #[test]
    fn a_moved_cache_mark_or_reordered_keys_keep_the_turn_but_content_does_not() {
        // Claude Code marks the newest block for prompt caching; in a tool loop the mark moves
        // from the human message to the tool result.
        let first = json!({"system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "fix it", "cache_control": {"type": "ephemeral"}}]}]});
        let looped = json!({"system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": [{"text": "fix it", "type": "text"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t", "content": "ok", "cache_control": {"type": "ephemeral"}}]}]});
        assert_eq!(
            key(Protocol::Anthropic, &first),
            key(Protocol::Anthropic, &looped),
            "a moved cache_control mark and a different key order are the same conversation"
        );
        let edited = json!({"system": [{"type": "text", "text": "s"}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "fix it now"}]}]});
        assert_ne!(key(Protocol::Anthropic, &first), key(Protocol::Anthropic, &edited), "different words, new turn");
        // The system prompt and the first message are separate parts of the anchor.
        let as_system = json!({"system": "hi", "messages": []});
        let as_message = json!({"messages": [{"role": "user", "content": "hi"}]});
        assert_ne!(key(Protocol::Anthropic, &as_system), key(Protocol::Anthropic, &as_message), "parts are framed");
    }

    #[test]
    fn gemini_function_rounds_keep_the_turn_and_a_new_user_text_moves_it() {
        let first = json!({"systemInstruction": {"parts": [{"text": "be brief"}]},
            "contents": [{"role": "user", "parts": [{"text": "list files"}]}]});
        let mut looped = first.clone();
        if let Some(c) = looped["contents"].as_array_mut() {
            c.push(json!({"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}, "thoughtSignature": "c2ln"}]}));
            c.push(
                json!({"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"out": "a.txt"}}}]}),
            );
        }
        assert_eq!(key(Protocol::Gemini, &first), key(Protocol::Gemini, &looped), "a function round stays in its turn");
        let mut next = looped.clone();
        if let Some(c) = next["contents"].as_array_mut() {
            c.push(json!({"role": "model", "parts": [{"text": "a.txt"}]}));
            c.push(json!({"parts": [{"text": "delete it"}]}));
        }
        assert_ne!(
            key(Protocol::Gemini, &looped),
            key(Protocol::Gemini, &next),
            "user text (role omitted) is a new turn"
        );
        let other = json!({"systemInstruction": {"parts": [{"text": "be long"}]},
            "contents": [{"role": "user", "parts": [{"text": "list files"}]}]});
        assert_ne!(key(Protocol::Gemini, &first), key(Protocol::Gemini, &other), "systemInstruction is in the anchor");
    }

    #[test]
    fn anthropic_tool_results_are_not_human() {
        let first = json!({"system": "s", "messages": [{"role": "user", "content": "hi"}]});
        let looped = json!({"system": "s", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}]});
        assert_eq!(key(Protocol::Anthropic, &first), key(Protocol::Anthropic, &looped), "tool results keep the turn");
        let other_system = json!({"system": "t", "messages": [{"role": "user", "content": "hi"}]});
        assert_ne!(
            key(Protocol::Anthropic, &first),
            key(Protocol::Anthropic, &other_system),
            "the system prompt is part of the anchor"
        );
    }

    #[test]
    fn explicit_and_session_keys_take_precedence() {
        let body = json!({"messages": [{"role": "user", "content": "hi"}], "metadata": {"user_id": "u1"}});
        let explicit_ids = ids(&[("x-switchyard-turn", "T1"), ("x-codex-turn-metadata", r#"{"turn_id":"k"}"#)], &body);
        let (explicit, src) = turn_key(Protocol::Anthropic, "c", &explicit_ids, &body);
        assert_eq!(src, TurnSource::Explicit, "the header wins over every client id");
        assert_eq!(
            explicit,
            turn_key(Protocol::Anthropic, "c", &ids(&[("x-switchyard-turn", "T1")], &json!({})), &json!({})).0,
            "explicit ignores the body"
        );
        let (_, src) = turn_key(Protocol::Anthropic, "c", &ids(&[], &body), &body);
        assert_eq!(src, TurnSource::Session, "metadata.user_id is a session id");
        let sess = ids(&[("x-session-id", "sess")], &json!({}));
        let (a, _) = turn_key(Protocol::Openai, "c", &sess, &body);
        let (b, _) = turn_key(Protocol::Openai, "d", &sess, &body);
        assert_ne!(a, b, "the connection is part of every anchor");
    }

    #[test]
    fn codex_and_claude_code_ids_are_read_in_order() {
        let codex = ids(
            &[
                ("session-id", "0199-sess"),
                ("x-codex-turn-metadata", r#"{"turn_id":"turn-7","sandbox":"none"}"#),
                ("x-session-id", "other"),
            ],
            &json!({"input": "hi"}),
        );
        assert_eq!(codex.client_turn.as_deref(), Some("turn-7"), "Codex turn metadata carries the turn id");
        assert_eq!(codex.session.as_deref(), Some("0199-sess"), "Codex session-id before x-session-id");
        let body = json!({"input": "hi"});
        let (t1, src) = turn_key(Protocol::Openai, "c", &codex, &body);
        assert_eq!(src, TurnSource::ClientTurn, "a client turn id keys the turn");
        let grown = json!({"input": ["hi", {"type": "function_call_output", "output": "x"}, "and more"]});
        assert_eq!(t1, turn_key(Protocol::Openai, "c", &codex, &grown).0, "whatever the body holds");
        let bad_meta = ids(&[("x-codex-turn-metadata", "not json")], &body);
        assert_eq!(bad_meta.client_turn, None, "unreadable metadata is ignored, not an error");

        let cc_body = json!({"metadata": {"user_id": r#"{"device_id":"d","account_uuid":"","session_id":"cc-sess"}"#}});
        assert_eq!(ids(&[], &cc_body).session.as_deref(), Some("cc-sess"), "the session inside user_id's JSON");
        let both = ids(&[("x-claude-code-session-id", "hdr-sess")], &cc_body);
        assert_eq!(both.session.as_deref(), Some("hdr-sess"), "the header before the body");
        let key = both.session_key("c").unwrap_or_default();
        assert!(!key.contains("hdr-sess") && key.len() == 32, "the ledger gets a hash, never the raw id: {key}");
        assert_ne!(both.session_key("c"), both.session_key("d"), "sessions are per connection");
        assert_eq!(ids(&[], &json!({})).session_key("c"), None, "no session, no key");
    }
}
