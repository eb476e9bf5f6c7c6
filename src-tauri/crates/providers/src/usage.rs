//! Token usage from provider answers: a JSON body (chat completions, responses, messages)
//! or the usage-bearing stream events (`usage` chunks, `message_start`/`message_delta`,
//! `response.completed`). Pure.

use serde::Deserialize;
use serde_json::Value;

/// Tokens of one attempt; `None` when the provider did not say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
}

impl Usage {
    /// Keeps known values, letting later reports override earlier ones.
    pub fn merge(&mut self, other: Usage) {
        if other.input_tokens.is_some() {
            self.input_tokens = other.input_tokens;
        }
        if other.output_tokens.is_some() {
            self.output_tokens = other.output_tokens;
        }
    }
}

/// The parts of an answer or event that can carry usage. Everything else (choices, content)
/// is skipped by the parser instead of being built into a `Value` — an answer is parsed
/// once per relayed request.
#[derive(Deserialize)]
struct Carriers {
    #[serde(default)]
    usage: Option<Value>,
    /// Anthropic `message_start`: `{"message": {"usage": {...}}}`.
    #[serde(default)]
    message: Option<Inner>,
    /// Responses API `response.completed`: `{"response": {"usage": {...}}}`.
    #[serde(default)]
    response: Option<Inner>,
}

#[derive(Deserialize)]
struct Inner {
    #[serde(default)]
    usage: Option<Value>,
}

/// Usage in a whole JSON answer (any dialect).
pub fn usage_from_body(body: &[u8]) -> Usage {
    serde_json::from_slice::<Carriers>(body).map(|c| usage_of(c.usage.as_ref())).unwrap_or_default()
}

/// Usage carried by one stream event's data (any dialect).
pub fn usage_from_event(data: &str) -> Usage {
    if !data.contains("usage") {
        return Usage::default();
    }
    let Ok(c) = serde_json::from_str::<Carriers>(data) else {
        return Usage::default();
    };
    let mut u = usage_of(c.usage.as_ref());
    for inner in [c.message, c.response].into_iter().flatten() {
        u.merge(usage_of(inner.usage.as_ref()));
    }
    u
}

fn usage_of(usage: Option<&Value>) -> Usage {
    let Some(u) = usage.filter(|u| u.is_object()) else {
        return Usage::default();
    };
    let num = |k: &str| u.get(k).and_then(Value::as_i64);
    Usage {
        input_tokens: num("input_tokens").or_else(|| num("prompt_tokens")),
        output_tokens: num("output_tokens").or_else(|| num("completion_tokens")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_dialects_usage() {
        let chat = usage_from_body(br#"{"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}"#);
        assert_eq!(chat, Usage { input_tokens: Some(12), output_tokens: Some(5) }, "chat completions usage");
        let msg = usage_from_body(br#"{"usage":{"input_tokens":7,"output_tokens":3}}"#);
        assert_eq!(msg, Usage { input_tokens: Some(7), output_tokens: Some(3) }, "messages usage");
        let mut streamed =
            usage_from_event(r#"{"type":"message_start","message":{"usage":{"input_tokens":9,"output_tokens":1}}}"#);
        streamed.merge(usage_from_event(r#"{"type":"message_delta","usage":{"output_tokens":4}}"#));
        assert_eq!(
            streamed,
            Usage { input_tokens: Some(9), output_tokens: Some(4) },
            "message_delta carries the final output count"
        );
        assert_eq!(usage_from_body(b"not json"), Usage::default(), "unreadable bodies have no usage");
        let odd = usage_from_event(r#"{"usage":null,"message":"text","response":{"usage":{"input_tokens":2}}}"#);
        assert_eq!(odd, Usage::default(), "a carrier of the wrong shape makes the event unreadable, not a panic");
        let nested = usage_from_event(r#"{"usage":7,"response":{"usage":{"input_tokens":2,"output_tokens":1}}}"#);
        assert_eq!(nested, Usage { input_tokens: Some(2), output_tokens: Some(1) }, "a non-object usage is ignored");
        let skipped = usage_from_body(
            br#"{"choices":[{"message":{"content":"usage \"x\"","tool_calls":[{"f":{"a":[1,{"b":null}]}}]}}],"usage":{"prompt_tokens":1,"completion_tokens":2}}"#,
        );
        assert_eq!(skipped, Usage { input_tokens: Some(1), output_tokens: Some(2) }, "nested content is skipped");
    }
}
