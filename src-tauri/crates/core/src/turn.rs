//! Turn keys (DESIGN.md §5): an explicit `x-switchyard-turn` header wins; else a session id
//! the client already sends (Anthropic `metadata.user_id`, header `x-session-id`) combined
//! with the conversation anchor; else the anchor alone. The anchor hashes the connection,
//! the system prompt and the messages up to and including the last user message that
//! carries human content, so a tool loop (assistant tool calls + tool results appended)
//! keeps its turn and a new human message starts a new one.

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
    let mut parts: Vec<Vec<u8>> = vec![slug.as_bytes().to_vec()];
    parts.push(system.map(canonical).unwrap_or_default());
    parts.extend(prefix.iter().map(|m| canonical(m)));
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    short_hash(&refs)
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

/// serde_json's default map is ordered, so the same value always serializes the same way.
fn canonical(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
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
