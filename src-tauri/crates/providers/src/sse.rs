//! Server-sent events as the relay sees them: split a byte stream (cut anywhere) into whole
//! events — the relay passes the bytes themselves on unchanged — and the roles an event can
//! play ([`EventRole`]; which one an event plays is its dialect's answer, `dialect/`). Pure; no
//! I/O.

use std::ops::ControlFlow;

/// One complete event, borrowed from the splitter: its `event:` name (if any) and its
/// `data:` lines joined with `\n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    pub event: Option<&'a str>,
    pub data: &'a str,
}

/// Incremental splitter: feed chunks split anywhere, get the events they complete. Lines end
/// in LF, CRLF or a lone CR (the SSE spec allows all three, and a CRLF may be split across
/// chunks); comment lines (`:`) and fields other than `event`/`data` are skipped; a blank line
/// dispatches the event when it had data (as browsers do). An event not ended by a blank line
/// when the stream stops is incomplete and never dispatched. Events are handed out borrowed
/// from buffers the splitter reuses, so a stream allocates nothing per event once they have
/// grown to its largest event.
#[derive(Debug, Default)]
pub struct SseSplitter {
    /// The current line when it spans chunks.
    line: Vec<u8>,
    name: String,
    has_name: bool,
    data: String,
    has_data: bool,
    /// The previous chunk ended in CR: a LF starting the next one belongs to it.
    after_cr: bool,
}

impl SseSplitter {
    /// Feeds `chunk`, calling `each` with every event it completes, in order, until `each`
    /// says stop.
    pub fn push(&mut self, chunk: &[u8], mut each: impl FnMut(SseEvent<'_>) -> ControlFlow<()>) {
        let mut rest = chunk;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while let Some(i) = memchr::memchr2(b'\n', b'\r', rest) {
            let flow = if self.line.is_empty() {
                self.end_line(&rest[..i], &mut each)
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&rest[..i]);
                let flow = self.end_line(&line, &mut each);
                line.clear();
                self.line = line;
                flow
            };
            let cr = rest[i] == b'\r';
            rest = &rest[i + 1..];
            if cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            if flow.is_break() {
                return;
            }
        }
        self.line.extend_from_slice(rest);
    }

    fn end_line(&mut self, line: &[u8], each: &mut impl FnMut(SseEvent<'_>) -> ControlFlow<()>) -> ControlFlow<()> {
        if line.is_empty() {
            let flow = if self.has_data {
                each(SseEvent { event: self.has_name.then_some(self.name.as_str()), data: &self.data })
            } else {
                ControlFlow::Continue(())
            };
            self.name.clear();
            self.data.clear();
            self.has_name = false;
            self.has_data = false;
            return flow;
        }
        if line[0] == b':' {
            return ControlFlow::Continue(());
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(c) => (&line[..c], line[c + 1..].strip_prefix(b" ").unwrap_or(&line[c + 1..])),
            None => (line, &[][..]),
        };
        match name {
            b"event" => {
                self.name.clear();
                push_text(&mut self.name, value);
                self.has_name = true;
            }
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                push_text(&mut self.data, value);
                self.has_data = true;
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

/// Appends `bytes` as text, invalid UTF-8 replaced. A valid line (every line a provider sends)
/// is checked in one pass and copied; `from_utf8_lossy` walks it in chunks first (1.4k
/// instructions for a 200-byte line).
fn push_text(out: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => out.push_str(text),
        Err(_) => out.push_str(&String::from_utf8_lossy(bytes)),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect;
    use switchyard_core::Protocol;

    fn event_role(protocol: Protocol, e: &SseEvent<'_>) -> EventRole {
        dialect::of(protocol).event_role(e)
    }

    fn event_role_after_output(protocol: Protocol, e: &SseEvent<'_>) -> EventRole {
        dialect::of(protocol).event_role_after_output(e)
    }

    fn interrupted_event(protocol: Protocol, responses_api: bool) -> Vec<u8> {
        dialect::of(protocol).interrupted_event(responses_api)
    }

    /// The events `chunk` completes, owned.
    fn events(s: &mut SseSplitter, chunk: &[u8]) -> Vec<(Option<String>, String)> {
        let mut out = Vec::new();
        s.push(chunk, |e| {
            out.push((e.event.map(str::to_string), e.data.to_string()));
            ControlFlow::Continue(())
        });
        out
    }

    #[test]
    fn splits_across_chunks_and_line_ends() {
        let mut s = SseSplitter::default();
        assert!(events(&mut s, b"event: ping\nda").is_empty(), "an incomplete event is held");
        let got = events(&mut s, b"ta: {}\n\ndata: [DONE]\n\n");
        assert_eq!(got.len(), 2, "two events completed");
        assert_eq!(got[0].0.as_deref(), Some("ping"), "event name parsed");
        assert_eq!(got[0].1, "{}", "data parsed");
        assert_eq!(got[1].0, None, "the name of one event does not carry over to the next");
        let done = SseEvent { event: None, data: &got[1].1 };
        assert_eq!(event_role(Protocol::Openai, &done), EventRole::Terminal, "[DONE] ends the stream");
        let mut crlf = SseSplitter::default();
        assert!(
            events(&mut crlf, b": keep-alive\r\n\r\nevent: a\r\ndata: 1\r\ndata: 2\r").is_empty(),
            "CR at the end waits"
        );
        let got = events(&mut crlf, b"\n\r\n");
        assert_eq!(got, vec![(Some("a".to_string()), "1\n2".to_string())], "CRLF split across chunks");
        let mut cr = SseSplitter::default();
        let got = events(&mut cr, b"data:x\r\rdata: y\n\n");
        assert_eq!(got.len(), 2, "lone CR line ends count too: {got:?}");
        assert_eq!(got[0].1, "x", "no space after the colon is fine");
        let mut comment = SseSplitter::default();
        assert!(
            events(&mut comment, b": ping\n\nevent: only-a-name\n\n").is_empty(),
            "comments and data-less blocks dispatch nothing"
        );
        let mut stop = SseSplitter::default();
        let mut seen = 0;
        stop.push(b"data: 1\n\ndata: 2\n\n", |_| {
            seen += 1;
            ControlFlow::Break(())
        });
        assert_eq!(seen, 1, "a stop is obeyed at once");
    }

    #[test]
    fn openai_role_only_delta_is_preamble_and_text_is_content() {
        let ev = |d| SseEvent { event: None, data: d };
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
        let ev = |d| SseEvent { event: None, data: d };
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
        let ev = |n| SseEvent { event: Some(n), data: "{}" };
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
