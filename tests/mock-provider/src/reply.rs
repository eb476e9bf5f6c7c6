//! The successful answer's content, shared by every dialect: the reply text (or the tool
//! call's arguments) cut into content chunks, token counts, ids and timestamps.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::playbook::Plan;
use crate::script::ToolCall;
use crate::tool;
use crate::wire::Dialect;

static SERIAL: AtomicU64 = AtomicU64::new(1);

/// A process-wide increasing number for response and request ids.
pub(crate) fn next_serial() -> u64 {
    SERIAL.fetch_add(1, Ordering::Relaxed)
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// One answer to a model call.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub serial: u64,
    pub created: i64,
    pub model: String,
    /// Content chunks, one word each (trailing space kept); joined they are the text. For
    /// a tool call: the pieces of its arguments JSON.
    pub chunks: Vec<String>,
    /// The tool call this answer makes instead of text.
    pub call: Option<ToolCall>,
    /// A deterministic estimate: a quarter of the request body's bytes, at least 1.
    pub input_tokens: u64,
    /// One per content chunk.
    pub output_tokens: u64,
}

impl Reply {
    pub fn new(model: &str, text: &str, request_len: usize) -> Self {
        let chunks: Vec<String> = text.split_inclusive(' ').map(str::to_owned).collect();
        Self::of_chunks(model, chunks, None, request_len)
    }

    /// The plan's answer to a request: its tool call when the request is due it
    /// ([`tool::due`]), else its reply text.
    pub fn answer(model: &str, plan: &Plan, request: Option<&Value>, dialect: Dialect, request_len: usize) -> Self {
        match plan.tool.as_ref().filter(|call| tool::due(call, request, dialect)) {
            Some(call) => Self::of_chunks(model, tool::argument_pieces(call), Some(call.clone()), request_len),
            None => Self::new(model, &plan.reply, request_len),
        }
    }

    fn of_chunks(model: &str, chunks: Vec<String>, call: Option<ToolCall>, request_len: usize) -> Self {
        Reply {
            serial: next_serial(),
            created: unix_now(),
            model: model.to_owned(),
            output_tokens: chunks.len() as u64,
            chunks,
            call,
            input_tokens: (request_len as u64).div_ceil(4).max(1),
        }
    }

    pub fn text(&self) -> String {
        self.chunks.concat()
    }

    /// The chunks to stream: all of them, or the first `n` when the stream dies (or errs)
    /// after `n`.
    pub fn streamed_chunks(&self, cut_after: Option<usize>) -> &[String] {
        let n = cut_after.unwrap_or(usize::MAX).min(self.chunks.len());
        &self.chunks[..n]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_join_to_the_text_and_count_tokens() {
        let reply = Reply::new("m", "Hello from the mock.", 10);
        assert_eq!(reply.chunks, ["Hello ", "from ", "the ", "mock."], "one word per chunk");
        assert_eq!(reply.text(), "Hello from the mock.", "chunks join back to the text");
        assert_eq!((reply.input_tokens, reply.output_tokens), (3, 4), "usage is deterministic");
        assert_eq!(reply.streamed_chunks(Some(2)).len(), 2, "a dying stream sends n chunks");
    }
}
