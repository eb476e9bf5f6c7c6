//! The role of one Gemini stream chunk (an SSE event's data with `alt=sse`, or one element of
//! the JSON array without it): a chunk with a candidate part (text, thought, function call) is
//! output and commits the turn; a candidate's `finishReason` or a `promptFeedback.blockReason`
//! is the end of the answer (Gemini streams have no closing event); `error` is an error.
//! Usage-only chunks and unreadable ones are neither.

use serde::Deserialize;

use crate::sse::EventRole;

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    candidates: Vec<Candidate>,
    #[serde(default, rename = "promptFeedback")]
    prompt_feedback: Option<Feedback>,
}

#[derive(Deserialize)]
struct Candidate {
    #[serde(default)]
    content: Option<Content>,
    #[serde(default, rename = "finishReason")]
    finish_reason: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    parts: Vec<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct Feedback {
    #[serde(default, rename = "blockReason")]
    block_reason: Option<serde::de::IgnoredAny>,
}

/// Classifies one chunk's JSON.
pub fn chunk_role(data: &str) -> EventRole {
    let Ok(c) = serde_json::from_str::<Chunk>(data) else {
        return EventRole::Other;
    };
    if c.error.is_some() {
        return EventRole::Error;
    }
    let finished = c.candidates.iter().any(|k| k.finish_reason.is_some())
        || c.prompt_feedback.is_some_and(|f| f.block_reason.is_some());
    if finished {
        return EventRole::Terminal;
    }
    if c.candidates.iter().any(|k| k.content.as_ref().is_some_and(|c| !c.parts.is_empty())) {
        return EventRole::Content;
    }
    EventRole::Preamble
}

/// [`chunk_role`] after output started, when only errors and the end matter: a chunk that
/// cannot spell either is not parsed.
pub fn chunk_role_after_output(data: &str) -> EventRole {
    let may = |t: &[u8]| crate::lenient::may_spell(data.as_bytes(), t);
    if !may(b"\"error\"") && !may(b"finishReason") && !may(b"blockReason") {
        return EventRole::Other;
    }
    chunk_role(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_commit_finish_ends_errors_are_errors() {
        let text = r#"{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":3}}"#;
        assert_eq!(chunk_role(text), EventRole::Content, "a text part is output");
        let call = r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"ls","args":{}},"thoughtSignature":"c2ln"}],"role":"model"}}]}"#;
        assert_eq!(chunk_role(call), EventRole::Content, "a function call is output");
        let last = r#"{"candidates":[{"content":{"parts":[{"text":"."}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5}}"#;
        assert_eq!(chunk_role(last), EventRole::Terminal, "finishReason ends the answer");
        let blocked = r#"{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":3}}"#;
        assert_eq!(chunk_role(blocked), EventRole::Terminal, "a blocked prompt is a complete answer");
        let empty = r#"{"candidates":[{"content":{"role":"model"}}],"usageMetadata":{"promptTokenCount":3}}"#;
        assert_eq!(chunk_role(empty), EventRole::Preamble, "no part yet");
        let err = r#"{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}"#;
        assert_eq!(chunk_role(err), EventRole::Error, "an error chunk");
        assert_eq!(chunk_role("not json"), EventRole::Other, "unreadable");
        assert_eq!(chunk_role_after_output(text), EventRole::Other, "after output, content is not parsed");
        assert_eq!(chunk_role_after_output(last), EventRole::Terminal, "but the end is seen");
        assert_eq!(chunk_role_after_output(err), EventRole::Error, "and errors");
    }
}
