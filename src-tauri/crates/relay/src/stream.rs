//! The body sent to the client after the routing decision: bytes already held back (the
//! preamble and first content), then the upstream stream as it arrives. On the side it
//! reads usage, notices a clean end, and — when allowed — ends an interrupted stream with
//! the dialect's error event. The attempt is recorded when the body is finished or dropped
//! (client gone), so every attempt reaches the ledger.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::HttpBody;
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use switchyard_core::routing::Failure;
use switchyard_core::Protocol;
use switchyard_engine::{Attempt, AttemptReport, Router, TurnRun};
use switchyard_providers::sse::{event_role_after_output, interrupted_event, EventRole, SseSplitter};
use switchyard_providers::usage::{usage_from_body, usage_from_event, Usage};

use crate::upstream::UpstreamBody;

/// Largest JSON body copied aside to read usage from.
const USAGE_COPY_CAP: usize = 1024 * 1024;

/// How the body is read on the side.
pub enum Sniff {
    /// Server-sent events; `inject`: end an interrupted stream with an error event.
    Sse { splitter: SseSplitter, protocol: Protocol, responses_api: bool, inject: bool },
    /// A JSON body, copied (up to a cap) to read usage at the end.
    Json(Vec<u8>),
}

/// Records the attempt once, when the body ends or is dropped.
pub struct Recorder {
    pub router: Arc<Router>,
    pub run: TurnRun,
    pub attempt: Attempt,
    pub report: AttemptReport,
}

impl Recorder {
    /// The tokens the answer reported, for the ledger row.
    pub fn set_usage(&mut self, usage: Usage) {
        self.report.input_tokens = usage.input_tokens;
        self.report.output_tokens = usage.output_tokens;
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.report.duration_ms = i64::try_from(self.attempt.started.elapsed().as_millis()).unwrap_or(i64::MAX);
        self.router.record(&self.run, &self.attempt, &self.report);
    }
}

pub struct Tail {
    held: Option<Bytes>,
    upstream: UpstreamBody,
    sniff: Sniff,
    usage: Usage,
    clean_end: bool,
    done: bool,
    recorder: Recorder,
}

impl Tail {
    pub fn new(held: Option<Bytes>, upstream: UpstreamBody, sniff: Sniff, usage: Usage, recorder: Recorder) -> Self {
        Tail { held, upstream, sniff, usage, clean_end: false, done: false, recorder }
    }

    fn observe(&mut self, chunk: &[u8]) {
        match &mut self.sniff {
            Sniff::Sse { splitter, protocol, .. } => {
                for ev in splitter.push(chunk) {
                    match event_role_after_output(*protocol, &ev) {
                        EventRole::Terminal => self.clean_end = true,
                        EventRole::Error => {
                            let c = switchyard_providers::classify(
                                *protocol,
                                200,
                                &(),
                                ev.data.as_bytes(),
                                std::time::SystemTime::now(),
                            );
                            self.recorder.report.failure = Some(c.failure);
                        }
                        _ => {}
                    }
                    self.usage.merge(usage_from_event(&ev.data));
                }
            }
            Sniff::Json(copy) => {
                if copy.len() + chunk.len() <= USAGE_COPY_CAP {
                    copy.extend_from_slice(chunk);
                }
            }
        }
    }

    /// The upstream ended (cleanly or not): settle usage and, if needed, the error event.
    fn finish(&mut self, broken: bool) -> Option<Bytes> {
        self.done = true;
        if let Sniff::Json(copy) = &self.sniff {
            self.usage.merge(usage_from_body(copy));
        }
        self.recorder.set_usage(self.usage);
        let interrupted = match &self.sniff {
            Sniff::Sse { .. } => broken || !self.clean_end,
            Sniff::Json(_) => broken,
        };
        if !interrupted {
            return None;
        }
        if self.recorder.report.failure.is_none() {
            self.recorder.report.failure = Some(Failure::network());
        }
        match &self.sniff {
            Sniff::Sse { protocol, responses_api, inject: true, .. } => {
                Some(Bytes::from(interrupted_event(*protocol, *responses_api)))
            }
            _ => None,
        }
    }
}

impl HttpBody for Tail {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(held) = self.held.take() {
            return Poll::Ready(Some(Ok(Frame::data(held))));
        }
        loop {
            if self.done {
                return Poll::Ready(None);
            }
            return match Pin::new(&mut self.upstream).poll_frame(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(chunk) => {
                        self.observe(&chunk);
                        Poll::Ready(Some(Ok(Frame::data(chunk))))
                    }
                    // Trailers are not passed on (the protocols do not use them).
                    Err(_) => continue,
                },
                Poll::Ready(Some(Err(_))) => match self.finish(true) {
                    Some(event) => Poll::Ready(Some(Ok(Frame::data(event)))),
                    // Legacy: pass the break on as a broken body, like the provider's.
                    None => Poll::Ready(Some(Err(std::io::Error::other("upstream stream broke")))),
                },
                Poll::Ready(None) => Poll::Ready(self.finish(false).map(|event| Ok(Frame::data(event)))),
            };
        }
    }

    /// A JSON body passes unchanged, so its length is the upstream's (sent as
    /// `content-length` when the provider sent one); an event stream may gain an error event.
    fn size_hint(&self) -> SizeHint {
        match (&self.sniff, self.done) {
            (Sniff::Json(_), false) => {
                let held = self.held.as_ref().map_or(0, |h| h.len() as u64);
                let up = self.upstream.size_hint();
                let mut hint = SizeHint::new();
                hint.set_lower(up.lower() + held);
                if let Some(upper) = up.upper() {
                    hint.set_upper(upper + held);
                }
                hint
            }
            _ => SizeHint::default(),
        }
    }
}
