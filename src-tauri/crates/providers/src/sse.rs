//! Server-sent events as the relay sees them: split a byte stream into whole events while
//! keeping each event's raw bytes (passed to the client unchanged), and tell preamble,
//! content, error and terminal events apart per dialect. Pure; no I/O.

use serde_json::Value;
use switchyard_core::Protocol;

/// One complete event: its raw bytes (including the blank line) and its parsed fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEvent {
    pub raw: Vec<u8>,
    pub event: Option<String>,
    pub data: String,
}

/// Incremental splitter: feed chunks, get the events they complete.
#[derive(Debug, Default)]
pub struct SseSplitter {
    buf: Vec<u8>,
}

impl SseSplitter {
    pub fn push(&mut self, chunk: &[u8]) -> Vec<RawEvent> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        while let Some(end) = event_end(&self.buf) {
            let raw: Vec<u8> = self.buf.drain(..end).collect();
            out.push(parse(raw));
        }
        out
    }

    /// Bytes of an event not yet complete.
    pub fn pending(&self) -> &[u8] {
        &self.buf
    }
}

/// Index just past the first blank line (`\n\n` or `\r\n\r\n`).
fn event_end(buf: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i + 1 < buf.len() {
        if buf[i] == b'\n' && buf[i + 1] == b'\n' {
            return Some(i + 2);
        }
        if buf[i] == b'\n' && buf[i + 1] == b'\r' && buf.get(i + 2) == Some(&b'\n') {
            return Some(i + 3);
        }
        i += 1;
    }
    None
}

fn parse(raw: Vec<u8>) -> RawEvent {
    let text = String::from_utf8_lossy(&raw);
    let mut event = None;
    let mut data = Vec::new();
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("event:") {
            event = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push(v.strip_prefix(' ').unwrap_or(v).to_string());
        }
    }
    RawEvent { raw, event, data: data.join("\n") }
}

/// What an event means for failover and stream completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventRole {
    /// May be held back before the first content (message_start, role-only deltas, pings).
    Preamble,
    /// Visible text or a tool call: once sent, the turn is committed.
    Content,
    /// The provider reports an error inside the stream (its data is the error body).
    Error,
    /// The clean end of the stream (`message_stop`, `[DONE]`, `response.completed`).
    Terminal,
    /// Anything else after content (usage chunks, block stops).
    Other,
}

/// Classifies an event of `protocol`'s streams.
pub fn event_role(protocol: Protocol, e: &RawEvent) -> EventRole {
    let name = e.event.as_deref().unwrap_or("");
    match protocol {
        Protocol::Anthropic => match name {
            "message_start" | "ping" | "content_block_start" => EventRole::Preamble,
            "content_block_delta" => EventRole::Content,
            "error" => EventRole::Error,
            "message_stop" => EventRole::Terminal,
            _ => EventRole::Other,
        },
        Protocol::Openai => {
            if e.data.trim() == "[DONE]" {
                return EventRole::Terminal;
            }
            match name {
                "" => openai_chunk_role(&e.data),
                "error" | "response.failed" => EventRole::Error,
                "response.completed" | "response.incomplete" => EventRole::Terminal,
                n if n.ends_with(".delta")
                    && (n.contains("output_text") || n.contains("arguments") || n.contains("refusal")) =>
                {
                    EventRole::Content
                }
                n if n.starts_with("response.output_item.")
                    || n == "response.created"
                    || n == "response.in_progress" =>
                {
                    EventRole::Preamble
                }
                _ => EventRole::Other,
            }
        }
    }
}

/// The role of an event after output started, when only errors and the clean end matter:
/// like [`event_role`] but parses a chat-completions chunk only when it may be an error
/// (the common content chunk costs a substring search, not a JSON parse).
pub fn event_role_after_output(protocol: Protocol, e: &RawEvent) -> EventRole {
    if protocol == Protocol::Openai && e.event.is_none() && e.data.trim() != "[DONE]" && !e.data.contains("\"error\"") {
        return EventRole::Other;
    }
    event_role(protocol, e)
}

/// A chat-completions chunk: content when a delta carries text, a refusal or tool calls.
fn openai_chunk_role(data: &str) -> EventRole {
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

/// The event the relay sends when the upstream stream breaks after output: the dialect's
/// own error shape, so clients never mistake it for a clean end.
pub fn interrupted_event(protocol: Protocol, responses_api: bool) -> Vec<u8> {
    let msg = "the upstream stream ended before the response was complete (switchyard)";
    let text = match (protocol, responses_api) {
        (Protocol::Anthropic, _) => format!(
            "event: error\ndata: {}\n\n",
            serde_json::json!({"type": "error", "error": {"type": "api_error", "message": msg}})
        ),
        (Protocol::Openai, true) => format!(
            "event: error\ndata: {}\n\n",
            serde_json::json!({"type": "error", "code": "server_error", "message": msg, "param": null})
        ),
        (Protocol::Openai, false) => format!(
            "data: {}\n\n",
            serde_json::json!({"error": {"message": msg, "type": "server_error", "param": null, "code": "stream_interrupted"}})
        ),
    };
    text.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_across_chunks_and_keeps_raw_bytes() {
        let mut s = SseSplitter::default();
        assert!(s.push(b"event: ping\nda").is_empty(), "an incomplete event is held");
        let events = s.push(b"ta: {}\n\ndata: [DONE]\n\n");
        assert_eq!(events.len(), 2, "two events completed");
        assert_eq!(events[0].raw, b"event: ping\ndata: {}\n\n".to_vec(), "raw bytes are kept for pass-through");
        assert_eq!(events[0].event.as_deref(), Some("ping"), "event name parsed");
        assert_eq!(event_role(Protocol::Openai, &events[1]), EventRole::Terminal, "[DONE] ends the stream");
    }

    #[test]
    fn openai_role_only_delta_is_preamble_and_text_is_content() {
        let ev = |d: &str| RawEvent { raw: vec![], event: None, data: d.to_string() };
        let role = ev(r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#);
        assert_eq!(event_role(Protocol::Openai, &role), EventRole::Preamble, "role-only deltas may be held");
        let text = ev(r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#);
        assert_eq!(event_role(Protocol::Openai, &text), EventRole::Content, "text is output");
        let tool = ev(r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0}]}}]}"#);
        assert_eq!(event_role(Protocol::Openai, &tool), EventRole::Content, "a tool call is output");
        let err = ev(r#"{"error":{"type":"server_error"}}"#);
        assert_eq!(event_role(Protocol::Openai, &err), EventRole::Error, "an error chunk is an error");
    }

    #[test]
    fn after_output_only_errors_and_the_end_are_told_apart() {
        let ev = |d: &str| RawEvent { raw: vec![], event: None, data: d.to_string() };
        let text = ev(r#"{"choices":[{"delta":{"content":"Hi"}}]}"#);
        assert_eq!(
            event_role_after_output(Protocol::Openai, &text),
            EventRole::Other,
            "content needs no parse after output"
        );
        let err = ev(r#"{"error":{"type":"server_error"}}"#);
        assert_eq!(event_role_after_output(Protocol::Openai, &err), EventRole::Error, "errors are still seen");
        assert_eq!(event_role_after_output(Protocol::Openai, &ev("[DONE]")), EventRole::Terminal, "and the end");
    }

    #[test]
    fn anthropic_roles() {
        let ev = |n: &str| RawEvent { raw: vec![], event: Some(n.to_string()), data: "{}".into() };
        assert_eq!(
            event_role(Protocol::Anthropic, &ev("message_start")),
            EventRole::Preamble,
            "message_start is preamble"
        );
        assert_eq!(
            event_role(Protocol::Anthropic, &ev("content_block_delta")),
            EventRole::Content,
            "deltas are output"
        );
        assert_eq!(event_role(Protocol::Anthropic, &ev("message_stop")), EventRole::Terminal, "message_stop ends");
        assert_eq!(event_role(Protocol::Anthropic, &ev("error")), EventRole::Error, "error events are errors");
    }

    #[test]
    fn interrupted_events_use_each_dialects_error_shape() {
        let a = String::from_utf8(interrupted_event(Protocol::Anthropic, false)).unwrap_or_default();
        assert!(a.starts_with("event: error\n") && a.contains(r#""type":"error""#), "Anthropic error event: {a}");
        let o = String::from_utf8(interrupted_event(Protocol::Openai, false)).unwrap_or_default();
        assert!(o.starts_with("data: {\"error\"") && !o.contains("[DONE]"), "OpenAI error chunk, never [DONE]: {o}");
    }
}
