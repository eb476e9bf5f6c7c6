//! Turn keys (DESIGN.md §5): an explicit `x-switchyard-turn` header wins; else a session id
//! the client already sends (Anthropic `metadata.user_id`, header `x-session-id`) combined
//! with the conversation anchor; else the anchor alone. The anchor hashes the connection,
//! the system prompt and the messages up to and including the last user message that
//! carries human content, so a tool loop (assistant tool calls + tool results appended)
//! keeps its turn and a new human message starts a new one. Prompt-caching marks
//! (`cache_control`) are not part of the conversation: clients such as Claude Code move them
//! to the newest message on every call, which must not start a new turn.

use std::io::Write;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::connection::Protocol;

/// Where a turn key came from (recorded for diagnostics, never routing-relevant).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnSource {
    Explicit,
    Session,
    Anchor,
}

/// Computes the turn key of a request to connection `slug`.
pub fn turn_key(
    protocol: Protocol,
    slug: &str,
    explicit: Option<&str>,
    session_header: Option<&str>,
    body: &Value,
) -> (String, TurnSource) {
    if let Some(t) = explicit.filter(|t| !t.is_empty()) {
        return (format!("x:{}", short_hash(&[slug.as_bytes(), t.as_bytes()])), TurnSource::Explicit);
    }
    let anchor = conversation_anchor(protocol, slug, body);
    let session = session_header
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .or_else(|| body.pointer("/metadata/user_id").and_then(Value::as_str).map(str::to_string));
    match session {
        Some(s) => (format!("s:{}", short_hash(&[s.as_bytes(), anchor.as_bytes()])), TurnSource::Session),
        None => (format!("a:{anchor}"), TurnSource::Anchor),
    }
}

/// Hash of the connection, the system prompt and the conversation up to the last human
/// user message.
pub fn conversation_anchor(protocol: Protocol, slug: &str, body: &Value) -> String {
    let (system, items): (Option<&Value>, Vec<&Value>) = match protocol {
        Protocol::Anthropic => (body.get("system"), array(body.get("messages"))),
        Protocol::Openai => match body.get("messages") {
            Some(m) => (None, array(Some(m))),
            // Responses API: `instructions` + `input` (a string or a list of items).
            None => (body.get("instructions"), array_or_single(body.get("input"))),
        },
    };
    let last_human = items.iter().rposition(|m| is_human(protocol, m));
    let prefix = match last_human {
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
    hex::encode(&sink.0.finalize()[..16])
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
            }
        }),
        _ => false,
    }
}

fn short_hash(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p);
    }
    hex::encode(&h.finalize()[..16])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(p: Protocol, body: &Value) -> String {
        turn_key(p, "c", None, None, body).0
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
        let (explicit, src) = turn_key(Protocol::Anthropic, "c", Some("T1"), None, &body);
        assert_eq!(src, TurnSource::Explicit, "the header wins");
        assert_eq!(
            explicit,
            turn_key(Protocol::Anthropic, "c", Some("T1"), None, &json!({})).0,
            "explicit ignores the body"
        );
        let (_, src) = turn_key(Protocol::Anthropic, "c", None, None, &body);
        assert_eq!(src, TurnSource::Session, "metadata.user_id is a session id");
        let (a, _) = turn_key(Protocol::Openai, "c", None, Some("sess"), &body);
        let (b, _) = turn_key(Protocol::Openai, "d", None, Some("sess"), &body);
        assert_ne!(a, b, "the connection is part of every anchor");
    }
}
