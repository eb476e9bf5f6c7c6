//! A finished CLI answer as an Anthropic Messages answer: the JSON body, or — when the client
//! asked for a stream — the event sequence of that same finished answer (`message_start`,
//! `content_block_start`, one `content_block_delta` with the whole text, `content_block_stop`,
//! `message_delta` with the stop reason and usage, `message_stop`). The events arrive at once,
//! when the run is done: a faithful stream of a finished answer, not a live one.

use serde_json::{json, Value};

use crate::claude_cli::result::CliAnswer;

fn usage_json(a: &CliAnswer) -> Value {
    json!({
        "input_tokens": a.usage.input_tokens.unwrap_or(0),
        "cache_creation_input_tokens": a.usage.cache_write_tokens.unwrap_or(0),
        "cache_read_input_tokens": a.usage.cache_read_tokens.unwrap_or(0),
        "output_tokens": a.usage.output_tokens.unwrap_or(0),
    })
}

/// The Messages JSON answer.
pub fn message_json(a: &CliAnswer) -> Vec<u8> {
    let body = json!({
        "id": a.id,
        "type": "message",
        "role": "assistant",
        "model": a.model,
        "content": [{"type": "text", "text": a.text}],
        "stop_reason": a.stop_reason,
        "stop_sequence": null,
        "usage": usage_json(a),
    });
    body.to_string().into_bytes()
}

/// The Messages event stream of the finished answer.
pub fn message_events(a: &CliAnswer) -> Vec<u8> {
    let mut start_usage = usage_json(a);
    start_usage["output_tokens"] = json!(0);
    let mut events = vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {
                "id": a.id, "type": "message", "role": "assistant", "model": a.model, "content": [],
                "stop_reason": null, "stop_sequence": null, "usage": start_usage,
            }}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
    ];
    if !a.text.is_empty() {
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": a.text}}),
        ));
    }
    events.push(("content_block_stop", json!({"type": "content_block_stop", "index": 0})));
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": a.stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": a.usage.output_tokens.unwrap_or(0)}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    let mut out = String::new();
    for (name, data) in events {
        out.push_str("event: ");
        out.push_str(name);
        out.push_str("\ndata: ");
        out.push_str(&data.to_string());
        out.push_str("\n\n");
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sse::SseSplitter;
    use crate::usage::{usage_from_body, Usage};

    fn answer(text: &str) -> CliAnswer {
        CliAnswer {
            id: "msg_1".into(),
            model: "claude-haiku-4-5".into(),
            text: text.into(),
            stop_reason: "end_turn".into(),
            usage: Usage {
                input_tokens: Some(408),
                output_tokens: Some(7),
                cache_read_tokens: Some(3),
                cache_write_tokens: Some(2),
            },
            reference_cost_usd: Some(0.001),
        }
    }

    #[test]
    fn the_json_answer_is_a_message_whose_usage_reads_back() {
        let body = message_json(&answer("Bonjour \"toi\"\n"));
        let v: Value = serde_json::from_slice(&body).unwrap_or_default();
        assert_eq!(v["type"], "message");
        assert_eq!(v["content"][0]["text"], "Bonjour \"toi\"\n", "the text, escaped and intact");
        assert_eq!(v["stop_reason"], "end_turn");
        let u = usage_from_body(&body);
        assert_eq!(u, answer("").usage, "the usage the relay's own reader finds is the CLI's");
    }

    #[test]
    fn the_stream_is_the_messages_event_sequence_of_the_same_answer() {
        let body = message_events(&answer("Bonjour\n\ndeux lignes"));
        let mut splitter = SseSplitter::default();
        let mut names = Vec::new();
        let mut text = String::new();
        splitter.push(&body, |event| {
            names.push(event.event.unwrap_or_default().to_string());
            let data: Value = serde_json::from_str(event.data).unwrap_or_default();
            assert_eq!(data["type"].as_str(), event.event, "event name = data type");
            if let Some(t) = data["delta"]["text"].as_str() {
                text.push_str(t);
            }
            std::ops::ControlFlow::Continue(())
        });
        let want = [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ];
        assert_eq!(names, want, "the Messages event order");
        assert_eq!(text, "Bonjour\n\ndeux lignes", "blank lines in the text do not split events (JSON-escaped)");
        let empty = String::from_utf8(message_events(&answer(""))).unwrap_or_default();
        assert!(!empty.contains("content_block_delta"), "an empty answer has no delta");
    }
}
