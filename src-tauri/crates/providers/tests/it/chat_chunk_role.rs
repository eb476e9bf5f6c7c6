//! The chat-chunk reader against the reading it replaced (the chunk parsed into a
//! `serde_json::Value`), over arbitrary chunk-shaped documents: deltas with empty, odd or
//! repeated fields, choices that are not arrays or not objects, error keys, non-JSON data.

use proptest::prelude::*;
use serde_json::Value;
use switchyard_providers::chat_chunk::chunk_role;
use switchyard_providers::sse::EventRole;

/// The reference: the chunk as a `Value`.
fn reference(data: &str) -> EventRole {
    let Ok(v) = serde_json::from_str::<Value>(data) else {
        return EventRole::Other;
    };
    if v.get("error").is_some() {
        return EventRole::Error;
    }
    let Some(choices) = v.get("choices").and_then(Value::as_array) else {
        return EventRole::Other;
    };
    if choices.is_empty() {
        return EventRole::Other;
    }
    let has = |d: &Value, k: &str| match d.get(k) {
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        _ => false,
    };
    let content = choices.iter().any(|c| {
        c.get("delta").is_some_and(|d| {
            has(d, "content") || has(d, "tool_calls") || has(d, "refusal") || d.get("function_call").is_some()
        })
    });
    if content {
        EventRole::Content
    } else {
        EventRole::Preamble
    }
}

fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\"\"".to_string()),
        Just("\"hi\"".to_string()),
        Just("\"\\u00e9\\n\"".to_string()),
        Just("[]".to_string()),
        Just("[{\"index\":0,\"id\":\"call_1\"}]".to_string()),
        Just("null".to_string()),
        Just("0".to_string()),
        Just("true".to_string()),
        Just("{}".to_string()),
        Just("{\"content\":\"x\"}".to_string()),
    ]
}

fn object(kv: Vec<(String, String)>) -> String {
    let inner: Vec<String> = kv.into_iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    format!("{{{}}}", inner.join(","))
}

fn delta() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("content"),
        Just("tool_calls"),
        Just("refusal"),
        Just("function_call"),
        Just("role"),
        Just("reasoning_content"),
        Just("cont\\u0065nt"),
    ];
    let fields = proptest::collection::vec((key, leaf()), 0..4)
        .prop_map(|kv| object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()));
    prop_oneof![6 => fields, 1 => leaf()]
}

fn choice() -> impl Strategy<Value = String> {
    let key = prop_oneof![3 => Just("delta"), 1 => Just("index"), 1 => Just("finish_reason"), 1 => Just("logprobs")];
    let fields = proptest::collection::vec((key, prop_oneof![3 => delta(), 1 => leaf()]), 0..3)
        .prop_map(|kv| object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()));
    prop_oneof![6 => fields, 1 => leaf()]
}

fn chunk() -> impl Strategy<Value = String> {
    let choices = prop_oneof![
        5 => proptest::collection::vec(choice(), 0..3).prop_map(|c| format!("[{}]", c.join(","))),
        1 => leaf(),
    ];
    let key_value = prop_oneof![
        4 => choices.prop_map(|v| ("choices".to_string(), v)),
        1 => leaf().prop_map(|v| ("error".to_string(), v)),
        2 => leaf().prop_map(|v| ("id".to_string(), v)),
        1 => leaf().prop_map(|v| ("usage".to_string(), v)),
    ];
    let fields = proptest::collection::vec(key_value, 0..4).prop_map(object);
    prop_oneof![
        12 => fields,
        1 => leaf(),
        1 => Just("{\"choices\":[".to_string()),
        1 => Just("{\"choices\":[]} x".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_chunk_reads_as_its_value_does(data in chunk()) {
        prop_assert_eq!(chunk_role(&data), reference(&data), "{}", data);
    }
}

#[test]
fn the_roles_of_real_chunks() {
    // Guards the property above against both sides reading everything as one role.
    let role_only = r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#;
    assert_eq!(chunk_role(role_only), EventRole::Preamble, "a role-only delta is held");
    let text = r#"{"id":"c","choices":[{"index":0,"delta":{"content":"Hel"}}]}"#;
    assert_eq!(chunk_role(text), EventRole::Content, "text is content");
    let tool = r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":""}}]}}]}"#;
    assert_eq!(chunk_role(tool), EventRole::Content, "a tool call is content");
    assert_eq!(chunk_role(r#"{"choices":[],"usage":{"prompt_tokens":3}}"#), EventRole::Other, "a usage chunk");
    assert_eq!(chunk_role(r#"{"error":{"message":"overloaded"}}"#), EventRole::Error, "an error chunk");
}
