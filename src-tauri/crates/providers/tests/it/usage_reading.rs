//! The typed usage reader against the reading it replaced (a `serde_json::Value` of the usage
//! object, read with `as_i64`), over arbitrary usage-shaped documents: odd counts (floats,
//! strings, huge integers, nested values), details that are not objects, repeated keys,
//! usage that is not an object, and the carriers of stream events.

use proptest::prelude::*;
use serde_json::Value;
use switchyard_providers::usage::{usage_from_body, usage_from_event, Usage};

/// The reference: what a reader of the whole document as a `Value` finds.
fn usage_of(usage: Option<&Value>) -> Usage {
    let Some(u) = usage.filter(|u| u.is_object()) else {
        return Usage::default();
    };
    let num = |k: &str| u.get(k).and_then(Value::as_i64);
    let cached = |details: &str| u.get(details).and_then(|d| d.get("cached_tokens")).and_then(Value::as_i64);
    Usage {
        input_tokens: num("input_tokens").or_else(|| num("prompt_tokens")),
        output_tokens: num("output_tokens").or_else(|| num("completion_tokens")),
        cache_read_tokens: num("cache_read_input_tokens")
            .or_else(|| cached("prompt_tokens_details"))
            .or_else(|| cached("input_tokens_details")),
        cache_write_tokens: num("cache_creation_input_tokens"),
    }
}

fn reference_event(data: &str) -> Usage {
    let Ok(v) = serde_json::from_str::<Value>(data) else { return Usage::default() };
    // The event reader takes `message` and `response` only when they are objects (or null).
    let inner_ok = |k: &str| v.get(k).is_none_or(|m| m.is_object() || m.is_null());
    if !v.is_object() || !inner_ok("message") || !inner_ok("response") {
        return Usage::default();
    }
    let mut u = usage_of(v.get("usage"));
    for k in ["message", "response"] {
        u.merge(usage_of(v.get(k).and_then(|m| m.get("usage"))));
    }
    u
}

const FIELDS: [&str; 9] = [
    "input_tokens",
    "prompt_tokens",
    "output_tokens",
    "completion_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "prompt_tokens_details",
    "input_tokens_details",
    "total_tokens",
];

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0i64..5000).prop_map(|n| n.to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => Just("18446744073709551616".to_string()),
        1 => Just("12.0".to_string()),
        1 => Just("1e3".to_string()),
        1 => Just("-0".to_string()),
        1 => Just("\"7\"".to_string()),
        1 => Just("null".to_string()),
        1 => Just("true".to_string()),
        1 => Just("[1,{\"cached_tokens\":2}]".to_string()),
    ]
}

/// A `*_details` value: mostly an object with `cached_tokens` (which may repeat).
fn details() -> impl Strategy<Value = String> {
    let object =
        proptest::collection::vec((prop_oneof![3 => Just("cached_tokens"), 1 => Just("audio_tokens")], scalar()), 0..3)
            .prop_map(|kv| object(kv.iter().map(|(k, v)| (k.to_string(), v.clone()))));
    prop_oneof![3 => object, 1 => scalar()]
}

fn object(kv: impl Iterator<Item = (String, String)>) -> String {
    let inner: Vec<String> = kv.map(|(k, v)| format!("\"{k}\":{v}")).collect();
    format!("{{{}}}", inner.join(","))
}

/// A usage object — each field present or not, some repeated, in any order — or another
/// value in its place.
fn usage() -> impl Strategy<Value = String> {
    let field = |name: &'static str| {
        let value = if name.ends_with("_details") { details().boxed() } else { scalar().boxed() };
        proptest::option::weighted(0.6, value).prop_map(move |v| v.map(|v| (name.to_string(), v)))
    };
    let fields: Vec<_> = FIELDS.iter().map(|&n| field(n)).collect();
    let repeats = proptest::collection::vec((proptest::sample::select(FIELDS.to_vec()), scalar()), 0..2);
    let object = (fields, repeats, any::<proptest::sample::Index>()).prop_map(|(fields, repeats, at)| {
        let mut kv: Vec<(String, String)> = fields.into_iter().flatten().collect();
        let n = kv.len().max(1);
        kv.rotate_left(at.index(n) % n);
        kv.extend(repeats.into_iter().map(|(k, v)| (k.to_string(), v)));
        object(kv.into_iter())
    });
    prop_oneof![6 => object, 1 => scalar()]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_whole_answer_reads_as_its_value_does(u in usage(), before in any::<bool>()) {
        let choices = r#""choices":[{"message":{"content":"usage: {\"prompt_tokens\": 9}"}}]"#;
        let body = if before { format!("{{\"usage\":{u},{choices}}}") } else { format!("{{{choices},\"usage\":{u}}}") };
        let reference = serde_json::from_str::<Value>(&body).map(|v| usage_of(v.get("usage"))).unwrap_or_default();
        prop_assert_eq!(usage_from_body(body.as_bytes()), reference, "{}", body);
    }

    #[test]
    fn an_event_reads_as_its_value_does(top in proptest::option::of(usage()), inner in proptest::option::of(usage()), carrier in prop_oneof![Just("message"), Just("response")], odd in any::<bool>()) {
        let mut parts = vec!["\"type\":\"x\"".to_string()];
        if let Some(u) = top {
            parts.push(format!("\"usage\":{u}"));
        }
        match (inner, odd) {
            (Some(u), false) => parts.push(format!("\"{carrier}\":{{\"id\":\"r\",\"usage\":{u}}}")),
            (Some(_), true) => parts.push(format!("\"{carrier}\":\"text\"")),
            (None, _) => {}
        }
        let data = format!("{{{}}}", parts.join(","));
        prop_assert_eq!(usage_from_event(&data), reference_event(&data), "{}", data);
    }
}

#[test]
fn the_reader_finds_counts_at_all() {
    // Guards the properties above against both sides reading nothing.
    let u = usage_from_body(
        br#"{"usage":{"prompt_tokens":3,"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":2}}}"#,
    );
    assert_eq!(u.input_tokens, Some(5), "a repeated key counts as its last value, as in a Value");
    assert_eq!(u.cache_read_tokens, Some(2), "details are read");
    let u = usage_from_body(br#"{"usage":{"input_tokens":1.5,"prompt_tokens":4,"completion_tokens":"6"}}"#);
    assert_eq!((u.input_tokens, u.output_tokens), (Some(4), None), "a count that is not an integer is unknown");
}
