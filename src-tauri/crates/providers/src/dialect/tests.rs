//! The dialects' answers, checked per protocol: account-bound items each drops (and nothing
//! else), the credential header, the relay's own error bodies, and that [`of`] gives each
//! protocol its own dialect.

use serde_json::{json, Value};
use switchyard_core::Protocol;
use switchyard_vault::Secret;

use super::*;

const ALL: [Protocol; 3] = [Protocol::Openai, Protocol::Anthropic, Protocol::Gemini];

fn strip(protocol: Protocol, body: &[u8]) -> Option<Vec<u8>> {
    strip_account_state(of(protocol), body)
}

#[test]
fn each_protocol_has_its_own_dialect() {
    for p in ALL {
        assert_eq!(of(p).protocol(), p, "the dialect of {p} speaks {p}");
    }
}

#[test]
fn credentials_go_in_each_dialect_s_header_and_never_print() {
    let secret = Secret::new("k-secret");
    let names: Vec<String> = ALL.iter().map(|&p| credential_header(of(p), &secret).0.to_string()).collect();
    assert_eq!(names, ["authorization", "x-api-key", "x-goog-api-key"], "a header each, never the URL");
    for p in ALL {
        let (_, value) = credential_header(of(p), &secret);
        assert!(value.is_sensitive(), "{p}: the value is hidden from Debug output");
        assert!(!format!("{value:?}").contains("k-secret"), "{p}: sensitive values never print");
    }
}

#[test]
fn the_relay_s_own_errors_are_in_each_dialect_s_shape() {
    let anthropic = of(Protocol::Anthropic).error_body(429, "wait");
    assert_eq!(anthropic["error"]["type"], "rate_limit_error", "{anthropic}");
    let openai = of(Protocol::Openai).error_body(429, "wait");
    assert_eq!(openai["error"]["code"], "rate_limit_exceeded", "{openai}");
    let gemini = of(Protocol::Gemini).error_body(429, "wait");
    assert_eq!(gemini["error"]["status"], "RESOURCE_EXHAUSTED", "{gemini}");
    let continuity = of(Protocol::Openai).continuity_body(503, "gone");
    assert_eq!(continuity["error"]["param"], "previous_response_id", "{continuity}");
    assert_eq!(of(Protocol::Anthropic).continuity_body(503, "gone"), of(Protocol::Anthropic).error_body(503, "gone"));
}

#[test]
fn only_gemini_names_the_model_in_its_path() {
    let rest = "v1beta/models/gemini-2.5-flash:streamGenerateContent";
    assert_eq!(of(Protocol::Gemini).path_model(rest), Some("gemini-2.5-flash"));
    assert_eq!(
        of(Protocol::Gemini).path_for_model(rest, "gemini-2.5-pro").as_deref(),
        Some("v1beta/models/gemini-2.5-pro:streamGenerateContent")
    );
    assert_eq!(
        of(Protocol::Gemini).path_for_model(rest, "gemini-2.5-flash"),
        None,
        "the same model: the path as it is"
    );
    assert!(of(Protocol::Gemini).json_array_stream(rest, None), "a stream without alt=sse is one JSON array");
    assert!(!of(Protocol::Gemini).json_array_stream(rest, Some("alt=sse")), "with alt=sse it is events");
    for p in [Protocol::Openai, Protocol::Anthropic] {
        assert_eq!(of(p).path_model("v1/messages"), None, "{p}: the body names the model");
        assert!(of(p).body_names_model());
    }
    assert_eq!(of(Protocol::Openai).upstream_path("v1/chat/completions"), "chat/completions", "OpenAI bases carry /v1");
    assert_eq!(of(Protocol::Anthropic).upstream_path("v1/messages"), "v1/messages");
}

fn stripped(protocol: Protocol, body: &Value) -> Option<Value> {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    strip(protocol, &bytes).and_then(|b| serde_json::from_slice(&b).ok())
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
    assert_eq!(strip(Protocol::Openai, spaced), None, "no reasoning: the bytes stay as sent");
    let anthropic = br#"{"model":"m","messages":[{"role":"assistant","content":"plain"}]}"#;
    assert_eq!(strip(Protocol::Anthropic, anthropic), None, "string content has no thinking");
    let wrong_dialect = br#"{"messages":[{"role":"assistant","content":[{"type":"thinking","signature":"s"}]}]}"#;
    assert_eq!(strip(Protocol::Openai, wrong_dialect), None, "each dialect drops its own items");
    assert_eq!(strip(Protocol::Openai, b"not json"), None, "non-JSON passes");
    assert_eq!(strip(Protocol::Anthropic, b"{broken"), None, "broken JSON passes");
}

#[test]
fn items_spelled_with_escapes_are_still_found() {
    let responses = br#"{"input":[{"type":"reasoning","encrypted\u005fcontent":"gAAA"},{"type":"message"}]}"#;
    let kept = strip(Protocol::Openai, responses).map(|b| String::from_utf8_lossy(&b).into_owned());
    assert_eq!(kept.as_deref(), Some(r#"{"input":[{"type":"message"}]}"#), "an escaped key names the same item");
    let anthropic =
        br#"{"messages":[{"role":"assistant","content":[{"type":"redacted_thi\u006eking"},{"type":"text"}]}]}"#;
    assert!(strip(Protocol::Anthropic, anthropic).is_some(), "an escaped type names the same block");
    assert!(!crate::lenient::may_spell(
        br#"{"input":[{"type":"message","content":"hi"}]}"#,
        of(Protocol::Openai).account_state_needle()
    ));
    assert!(
        crate::lenient::may_spell(br#"{"x":"thinking"}"#, of(Protocol::Anthropic).account_state_needle()),
        "the needle anywhere"
    );
    let gemini = br#"{"contents":[{"role":"user","parts":[{"text":"hi","thoughtSignature":"u"}]},{"role":"model","parts":[{"text":"t","thoughtSignature":"s1"},{"functionCall":{"name":"ls","args":{}},"thoughtSignature":"s2"}]},{"role":"user","parts":[{"functionResponse":{"name":"ls","response":{}}}]}]}"#;
    let want = serde_json::json!({"contents":[{"role":"user","parts":[{"text":"hi","thoughtSignature":"u"}]},{"role":"model","parts":[{"text":"t"},{"functionCall":{"name":"ls","args":{}},"thoughtSignature":"skip_thought_signature_validator"}]},{"role":"user","parts":[{"functionResponse":{"name":"ls","response":{}}}]}]});
    assert_eq!(
        strip(Protocol::Gemini, gemini).and_then(|b| serde_json::from_slice::<Value>(&b).ok()),
        Some(want),
        "model-turn signatures go; a signed function call keeps the documented placeholder"
    );
    let placeholder_only = serde_json::json!({"contents":[{"role":"model","parts":[{"functionCall":{"name":"ls"},"thoughtSignature":"skip_thought_signature_validator"}]}]}).to_string();
    assert_eq!(strip(Protocol::Gemini, placeholder_only.as_bytes()), None, "nothing bound: unchanged bytes");
}
