//! What a streamed answer turned out to be, read on the side while its bytes pass through:
//! whether output (visible text or a tool call) started, whether the provider sent an error
//! event (before or after output), whether the stream ended cleanly, and its usage. One watch
//! reads one answer from its first byte to its last, however the bytes are cut — so an event
//! that arrives in the same read as the first content (a closing `message_stop`, `[DONE]` or
//! `response.completed` of a short answer) is seen exactly like one that arrives alone. Pure.

use std::ops::ControlFlow;
use std::time::SystemTime;

use switchyard_core::routing::Failure;
use switchyard_core::Protocol;

use crate::content_coding::{Coding, Decoder};
use crate::dialect::{self, Dialect};
use crate::gemini::array_stream::ArraySplitter;
use crate::sse::{EventRole, SseSplitter};
use crate::usage::{usage_from_event, Usage};

/// Where the answer stands for the routing decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Only preamble so far: nothing that commits the turn.
    Held,
    /// Output started (or the stream ended cleanly, or it cannot be read): deliver it.
    Output,
    /// The provider reported an error before any output: the attempt failed.
    FailedBeforeOutput(Failure),
}

/// How the stream ended, for the ledger and the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ending {
    /// `None` for a complete answer; the error event's failure; or `network` for a stream
    /// that stopped without its closing event.
    pub failure: Option<Failure>,
    /// The client has not been told the stream is incomplete (no closing event, no error
    /// event from the provider): the relay should end it with the dialect's error event.
    pub needs_error_event: bool,
}

pub struct StreamWatch {
    dialect: &'static dyn Dialect,
    decoder: Decoder,
    splitter: SseSplitter,
    /// Gemini without `alt=sse`: the answer is a JSON array, not events.
    array: Option<ArraySplitter>,
    usage: Usage,
    output: bool,
    clean_end: bool,
    error: Option<Failure>,
    error_before_output: bool,
    response_id: Option<String>,
}

impl std::fmt::Debug for StreamWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamWatch").field("protocol", &self.dialect.protocol()).finish_non_exhaustive()
    }
}

impl StreamWatch {
    /// A watch over a `protocol` event stream sent with `content-encoding: coding`.
    pub fn new(protocol: Protocol, coding: Coding) -> Self {
        StreamWatch {
            dialect: dialect::of(protocol),
            decoder: Decoder::new(coding),
            splitter: SseSplitter::default(),
            array: None,
            usage: Usage::default(),
            output: false,
            clean_end: false,
            error: None,
            error_before_output: false,
            response_id: None,
        }
    }

    /// A watch over a Gemini `streamGenerateContent` answer asked for without `alt=sse` (one
    /// JSON array whose elements are the chunks).
    pub fn gemini_json_array(coding: Coding) -> Self {
        StreamWatch { array: Some(ArraySplitter::default()), ..StreamWatch::new(Protocol::Gemini, coding) }
    }

    /// Reads the next bytes of the answer, as they came from the provider. `now` dates
    /// cooldown hints in error events.
    pub fn push(&mut self, chunk: &[u8], now: SystemTime) {
        self.push_dated(chunk, || now);
    }

    /// [`StreamWatch::push`], asking `now` for the time only when an error event needs dating
    /// (the relay's clock is read through the engine: not on every chunk of a stream).
    pub fn push_dated(&mut self, chunk: &[u8], now: impl Fn() -> SystemTime) {
        if self.error_before_output {
            return;
        }
        let decoded = self.decoder.push(chunk);
        let dialect = self.dialect;
        let (splitter, array, usage) = (&mut self.splitter, &mut self.array, &mut self.usage);
        let (response_id, output, clean_end) = (&mut self.response_id, &mut self.output, &mut self.clean_end);
        let (error, error_before_output) = (&mut self.error, &mut self.error_before_output);
        let mut seen = |event: Option<&str>, data: &str| {
            usage.merge(usage_from_event(data));
            if response_id.is_none() {
                *response_id = dialect.response_id_from_event(data);
            }
            let ev = crate::sse::SseEvent { event, data };
            let role = if *output { dialect.event_role_after_output(&ev) } else { dialect.event_role(&ev) };
            match role {
                EventRole::Content => *output = true,
                EventRole::Terminal => {
                    *output = true;
                    *clean_end = true;
                }
                EventRole::Error if error.is_none() => {
                    let c = crate::classify(dialect.protocol(), 200, &(), data.as_bytes(), now());
                    *error = Some(c.failure);
                    if !*output {
                        *error_before_output = true;
                        return ControlFlow::Break(());
                    }
                }
                EventRole::Error | EventRole::Preamble | EventRole::Other => {}
            }
            ControlFlow::Continue(())
        };
        match array {
            Some(array) => array.push(&decoded, |data| seen(None, data)),
            None => splitter.push(&decoded, |ev| seen(ev.event, ev.data)),
        }
    }

    /// Whether this watch reads a Gemini JSON-array stream (its interrupted end is
    /// `gemini::array_stream::interrupted_tail`, not an event).
    pub fn is_json_array(&self) -> bool {
        self.array.is_some()
    }

    pub fn phase(&self) -> Phase {
        match self.error {
            Some(f) if self.error_before_output => Phase::FailedBeforeOutput(f),
            // An answer the relay cannot decode is passed through as it is, never held.
            _ if self.output || self.decoder.is_failed() => Phase::Output,
            _ => Phase::Held,
        }
    }

    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// The Responses answer's id, once a `response.created` (or later lifecycle) event was read.
    pub fn response_id(&self) -> Option<&str> {
        self.response_id.as_deref()
    }

    /// The provider sent an error event.
    pub fn saw_error_event(&self) -> bool {
        self.error.is_some()
    }

    /// How the stream ended; `broken`: the upstream body failed instead of ending.
    pub fn ending(&self, broken: bool) -> Ending {
        if let Some(f) = self.error {
            return Ending { failure: Some(f), needs_error_event: false };
        }
        if self.decoder.is_failed() {
            // Unreadable: only a broken connection is known to be a failure.
            return Ending { failure: broken.then(Failure::network), needs_error_event: false };
        }
        if self.clean_end {
            return Ending { failure: None, needs_error_event: false };
        }
        Ending { failure: Some(Failure::network()), needs_error_event: true }
    }
}
