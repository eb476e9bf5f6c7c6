//! Account-bound items in a request body, dropped for an attempt that goes to another
//! account than the one that produced them (invariant 16; the engine asks through
//! `Target::strip_account_state`): OpenAI Responses `input` items of type `reasoning` that
//! carry `encrypted_content` (reasoning items are optional context; stateless `store: false`
//! clients resend them every call), and Anthropic `thinking` blocks with a `signature` and
//! `redacted_thinking` blocks in assistant messages (thinking from earlier turns may be
//! omitted; Anthropic leaves it out of the context anyway). An assistant message left
//! without content is dropped too (an empty one would be refused; consecutive user turns
//! are combined). Nothing else changes; when nothing is dropped the caller keeps the
//! client's bytes as they are. Pure.

use bytes::Bytes;
use serde_json::Value;
use switchyard_core::Protocol;
use switchyard_providers::lenient::may_spell;

/// The body without its account-bound items, or `None` when it has none (or is not JSON):
/// then the original bytes go unchanged.
pub(crate) fn strip_account_state(protocol: Protocol, body: &[u8]) -> Option<Bytes> {
    if body.first() != Some(&b'{') || !may_hold_account_state(protocol, body) {
        return None;
    }
    let mut json: Value = serde_json::from_slice(body).ok()?;
    let dropped = match protocol {
        Protocol::Openai => drop_encrypted_reasoning(&mut json),
        Protocol::Anthropic => drop_signed_thinking(&mut json),
        Protocol::Gemini => drop_thought_signatures(&mut json),
    };
    if dropped == 0 {
        return None;
    }
    serde_json::to_vec(&json).ok().map(Bytes::from)
}

/// Whether `body` can hold an account-bound item at all, from its bytes: every such item
/// spells `encrypted_content` (Responses) or `thinking` (Anthropic: `thinking` and
/// `redacted_thinking` blocks), unless a `\u` escape spells it another way. A body with
/// neither is not parsed: after a conversation moves every attempt asks, and parsing a
/// 200 KB body into a `Value` to find nothing cost 107k instructions per request.
fn may_hold_account_state(protocol: Protocol, body: &[u8]) -> bool {
    let needle: &[u8] = match protocol {
        Protocol::Openai => b"encrypted_content",
        Protocol::Anthropic => b"thinking",
        Protocol::Gemini => b"thoughtSignature",
    };
    may_spell(body, needle)
}

/// The value Gemini documents for a function call whose signature is not at hand (history
/// from another key or model): the API then skips the check a Gemini 3 model makes on the
/// current turn's function calls.
const GEMINI_UNSIGNED: &str = "skip_thought_signature_validator";

/// Gemini: drops `thoughtSignature` from the parts of `model` turns (signatures are bound to
/// the key's project); a `functionCall` part that carried one gets the documented
/// placeholder instead, since Gemini 3 refuses a current-turn call without any. Returns how
/// many signatures went.
fn drop_thought_signatures(json: &mut Value) -> usize {
    let Some(contents) = json.get_mut("contents").and_then(Value::as_array_mut) else { return 0 };
    let mut dropped = 0;
    for content in contents.iter_mut().filter(|c| c.get("role").and_then(Value::as_str) == Some("model")) {
        let Some(parts) = content.get_mut("parts").and_then(Value::as_array_mut) else { continue };
        for part in parts.iter_mut().filter_map(Value::as_object_mut) {
            let Some(sig) = part.remove("thoughtSignature") else { continue };
            if sig.as_str() == Some(GEMINI_UNSIGNED) {
                part.insert("thoughtSignature".into(), sig);
                continue;
            }
            dropped += 1;
            if part.contains_key("functionCall") {
                part.insert("thoughtSignature".into(), Value::String(GEMINI_UNSIGNED.into()));
            }
        }
    }
    dropped
}

fn kind(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

/// Drops Responses `reasoning` input items that carry `encrypted_content`; returns how many.
fn drop_encrypted_reasoning(json: &mut Value) -> usize {
    let Some(input) = json.get_mut("input").and_then(Value::as_array_mut) else { return 0 };
    let before = input.len();
    input.retain(|item| {
        !(kind(item) == Some("reasoning") && item.get("encrypted_content").is_some_and(|c| !c.is_null()))
    });
    before - input.len()
}

fn is_account_bound_thinking(block: &Value) -> bool {
    match kind(block) {
        Some("thinking") => block.get("signature").is_some_and(|s| !s.is_null()),
        Some("redacted_thinking") => true,
        _ => false,
    }
}

/// Drops signed `thinking` and `redacted_thinking` blocks of assistant messages (and the
/// assistant messages that held nothing else); returns how many blocks.
fn drop_signed_thinking(json: &mut Value) -> usize {
    let Some(messages) = json.get_mut("messages").and_then(Value::as_array_mut) else { return 0 };
    let mut dropped = 0;
    let mut emptied = Vec::new();
    for (i, message) in messages.iter_mut().enumerate() {
        if message.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        let Some(content) = message.get_mut("content").and_then(Value::as_array_mut) else { continue };
        let before = content.len();
        content.retain(|block| !is_account_bound_thinking(block));
        if content.len() < before {
            dropped += before - content.len();
            if content.is_empty() {
                emptied.push(i);
            }
        }
    }
    for i in emptied.into_iter().rev() {
        messages.remove(i);
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stripped(protocol: Protocol, body: &Value) -> Option<Value> {
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        strip_account_state(protocol, &bytes).and_then(|b| serde_json::from_slice(&b).ok())
    }

    #[test]
    fn responses_lose_only_encrypted_reasoning_items() {
        let body = json!({"model": "m", "store": false, "include": ["reasoning.encrypted_content"], "input": [
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB"},
            {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
            {"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": "plain"}]},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        ]});
        let got = stripped(Protocol::Openai, &body);
        let mut want = body.clone();
        if let Some(input) = want["input"].as_array_mut() {
            input.remove(1);
        }
        assert_eq!(got, Some(want), "the encrypted item goes; a plain reasoning item and all else stay");
    }

    #[test]
    fn anthropic_loses_signed_thinking_and_emptied_assistant_messages() {
        let body = json!({"model": "m", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "t", "signature": "sig"},
                {"type": "text", "text": "hello"}]},
            {"role": "user", "content": "more"},
            {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "x"}]},
            {"role": "user", "content": [{"type": "thinking", "thinking": "user text", "signature": "s"}]},
        ]});
        let want = json!({"model": "m", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
            {"role": "user", "content": "more"},
            {"role": "user", "content": [{"type": "thinking", "thinking": "user text", "signature": "s"}]},
        ]});
        assert_eq!(stripped(Protocol::Anthropic, &body), Some(want), "only assistant thinking goes");
    }

    #[test]
    fn nothing_to_drop_keeps_the_bytes() {
        let spaced = br#"{ "model":"m",  "input":[{"type":"message","role":"user","content":"hi"}] }"#;
        assert_eq!(strip_account_state(Protocol::Openai, spaced), None, "no reasoning: the bytes stay as sent");
        let anthropic = br#"{"model":"m","messages":[{"role":"assistant","content":"plain"}]}"#;
        assert_eq!(strip_account_state(Protocol::Anthropic, anthropic), None, "string content has no thinking");
        let wrong_dialect = br#"{"messages":[{"role":"assistant","content":[{"type":"thinking","signature":"s"}]}]}"#;
        assert_eq!(strip_account_state(Protocol::Openai, wrong_dialect), None, "each dialect drops its own items");
        assert_eq!(strip_account_state(Protocol::Openai, b"not json"), None, "non-JSON passes");
        assert_eq!(strip_account_state(Protocol::Anthropic, b"{broken"), None, "broken JSON passes");
    }

    #[test]
    fn items_spelled_with_escapes_are_still_found() {
        let responses = br#"{"input":[{"type":"reasoning","encrypted\u005fcontent":"gAAA"},{"type":"message"}]}"#;
        let kept = strip_account_state(Protocol::Openai, responses).map(|b| String::from_utf8_lossy(&b).into_owned());
        assert_eq!(kept.as_deref(), Some(r#"{"input":[{"type":"message"}]}"#), "an escaped key names the same item");
        let anthropic =
            br#"{"messages":[{"role":"assistant","content":[{"type":"redacted_thi\u006eking"},{"type":"text"}]}]}"#;
        assert!(strip_account_state(Protocol::Anthropic, anthropic).is_some(), "an escaped type names the same block");
        assert!(!may_hold_account_state(Protocol::Openai, br#"{"input":[{"type":"message","content":"hi"}]}"#));
        assert!(may_hold_account_state(Protocol::Anthropic, br#"{"x":"thinking"}"#), "the needle anywhere");
        let gemini = br#"{"contents":[{"role":"user","parts":[{"text":"hi","thoughtSignature":"u"}]},{"role":"model","parts":[{"text":"t","thoughtSignature":"s1"},{"functionCall":{"name":"ls","args":{}},"thoughtSignature":"s2"}]},{"role":"user","parts":[{"functionResponse":{"name":"ls","response":{}}}]}]}"#;
        let want = serde_json::json!({"contents":[{"role":"user","parts":[{"text":"hi","thoughtSignature":"u"}]},{"role":"model","parts":[{"text":"t"},{"functionCall":{"name":"ls","args":{}},"thoughtSignature":GEMINI_UNSIGNED}]},{"role":"user","parts":[{"functionResponse":{"name":"ls","response":{}}}]}]});
        assert_eq!(
            strip_account_state(Protocol::Gemini, gemini).and_then(|b| serde_json::from_slice::<Value>(&b).ok()),
            Some(want),
            "model-turn signatures go; a signed function call keeps the documented placeholder"
        );
        let placeholder_only = serde_json::json!({"contents":[{"role":"model","parts":[{"functionCall":{"name":"ls"},"thoughtSignature":GEMINI_UNSIGNED}]}]}).to_string();
        assert_eq!(
            strip_account_state(Protocol::Gemini, placeholder_only.as_bytes()),
            None,
            "nothing bound: unchanged bytes"
        );
    }
}
