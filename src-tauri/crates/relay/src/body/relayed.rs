//! The body sent to the client after the routing decision: bytes already held back (the
//! preamble and first content), then the upstream stream as it arrives, unchanged. On the
//! side a [`StreamWatch`] (the same one that read the held bytes) reads usage, errors and the
//! clean end — through the content coding when the answer is compressed — and, when allowed,
//! an interrupted stream is ended with the dialect's error event. The engine's recording of
//! the attempt rides along and writes its row when the body is finished or dropped (client
//! gone), so every attempt reaches the ledger exactly once.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use switchyard_core::routing::Failure;
use switchyard_core::Protocol;
use switchyard_engine::{DeferredUsage, Recording};
use switchyard_providers::content_coding::{Coding, Decoder};
use switchyard_providers::dialect;
use switchyard_providers::gemini::array_stream::interrupted_tail;
use switchyard_providers::stream_watch::StreamWatch;
use switchyard_providers::usage::{usage_from_body, Usage};

use crate::upstream::UpstreamBody;

/// Largest JSON body copied aside to read usage from.
const USAGE_COPY_CAP: usize = 1024 * 1024;

/// How the body is read on the side.
pub enum Sniff {
    /// Server-sent events; `inject`: end an interrupted stream with an error event.
    Sse { watch: Box<StreamWatch>, protocol: Protocol, responses_api: bool, inject: bool, coding: Coding },
    /// A JSON body, copied (up to a cap) to read usage at the end.
    Json { copy: Vec<u8>, coding: Coding },
}

/// Where the tail reports what it read: the engine's [`Recording`] (which writes the ledger
/// row once, when the tail is dropped), or a capture in tests.
pub trait Ledgered: Send + 'static {
    fn set_usage(&mut self, usage: Usage);
    /// The usage `read` takes from the answer's copy, read where the recorder says (the
    /// ledger's writer for a legacy attempt).
    fn set_usage_later(&mut self, read: DeferredUsage);
    fn set_failure(&mut self, failure: Failure);
    /// Wall time of the clock the circuits use (dates cooldown hints in error events).
    fn now(&self) -> std::time::SystemTime;
}

impl Ledgered for Recording {
    fn set_usage(&mut self, usage: Usage) {
        Recording::set_usage(self, usage);
    }

    fn set_usage_later(&mut self, read: DeferredUsage) {
        Recording::set_usage_later(self, read);
    }

    fn set_failure(&mut self, failure: Failure) {
        Recording::set_failure(self, failure);
    }

    fn now(&self) -> std::time::SystemTime {
        Recording::now(self)
    }
}

/// What the end of the upstream body becomes for the client.
enum End {
    Done,
    Send(Bytes),
    /// End the client's body as broken (the provider's broke, or an error event cannot be
    /// appended in this content coding).
    Break,
}

pub struct Tail<R: Ledgered> {
    held: Option<Bytes>,
    upstream: UpstreamBody,
    sniff: Sniff,
    done: bool,
    recorder: R,
}

impl<R: Ledgered> Tail<R> {
    pub fn new(held: Option<Bytes>, upstream: UpstreamBody, sniff: Sniff, recorder: R) -> Self {
        Tail { held, upstream, sniff, done: false, recorder }
    }

    fn observe(&mut self, chunk: &[u8]) {
        let recorder = &self.recorder;
        match &mut self.sniff {
            Sniff::Sse { watch, .. } => watch.push_dated(chunk, || recorder.now()),
            Sniff::Json { copy, .. } => {
                if copy.len() + chunk.len() <= USAGE_COPY_CAP {
                    copy.extend_from_slice(chunk);
                }
            }
        }
    }

    /// The upstream ended (cleanly or, when `broken`, not): settle the ledger row and what
    /// the client gets last.
    fn finish(&mut self, broken: bool) -> End {
        self.done = true;
        match &self.sniff {
            Sniff::Json { copy, coding } => {
                self.recorder.set_usage(usage_of(*coding, copy));
                if broken {
                    self.recorder.set_failure(Failure::network());
                    return End::Break;
                }
                End::Done
            }
            Sniff::Sse { watch, protocol, responses_api, inject, coding } => {
                let ending = watch.ending(broken);
                self.recorder.set_usage(watch.usage());
                if let Some(f) = ending.failure {
                    self.recorder.set_failure(f);
                }
                if !(ending.needs_error_event && *inject) {
                    // Legacy passes the provider's ending on as it was.
                    return if broken { End::Break } else { End::Done };
                }
                let interrupted = if watch.is_json_array() {
                    interrupted_tail()
                } else {
                    dialect::of(*protocol).interrupted_event(*responses_api)
                };
                match coding.continuation(&interrupted) {
                    Some(event) => End::Send(Bytes::from(event)),
                    None => End::Break,
                }
            }
        }
    }
}

/// The client went away before the upstream body ended (Codex closes its connection right
/// after `response.completed`): what was read still counts — usage, and an error event the
/// provider sent — but a stream cut short by the client is not the provider's failure.
impl<R: Ledgered> Drop for Tail<R> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        match &mut self.sniff {
            Sniff::Json { copy, coding } => {
                self.recorder.set_usage_later(usage_later(*coding, std::mem::take(copy)));
            }
            Sniff::Sse { watch, .. } => {
                self.recorder.set_usage(watch.usage());
                if let Some(f) = watch.ending(false).failure.filter(|_| watch.saw_error_event()) {
                    self.recorder.set_failure(f);
                }
            }
        }
    }
}

impl<R: Ledgered + Unpin> HttpBody for Tail<R> {
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
            let end = match Pin::new(&mut self.upstream).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(chunk) => {
                        self.observe(&chunk);
                        return Poll::Ready(Some(Ok(Frame::data(chunk))));
                    }
                    // Trailers are not passed on (the protocols do not use them).
                    Err(_) => continue,
                },
                Poll::Ready(Some(Err(_))) => self.finish(true),
                Poll::Ready(None) => self.finish(false),
            };
            return Poll::Ready(match end {
                End::Done => None,
                End::Send(event) => Some(Ok(Frame::data(event))),
                End::Break => Some(Err(std::io::Error::other("upstream stream broke"))),
            });
        }
    }

    /// A JSON body passes unchanged, so its length is the upstream's (sent as
    /// `content-length` when the provider sent one); an event stream may gain an error event.
    fn size_hint(&self) -> SizeHint {
        match (&self.sniff, self.done) {
            (Sniff::Json { .. }, false) => {
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

/// Reads a JSON answer's usage from `copy` (as sent, in `coding`) on the ledger's writer.
pub(crate) fn usage_later(coding: Coding, copy: Vec<u8>) -> DeferredUsage {
    DeferredUsage(Box::new(move || usage_of(coding, &copy)))
}

/// A JSON answer's usage, read from its bytes as sent (in `coding`).
fn usage_of(coding: Coding, sent: &[u8]) -> Usage {
    Decoder::decode_all(coding, sent).map(|b| usage_from_body(&b)).unwrap_or_default()
}
