//! A forwarded (legacy, no fallback chain) request's body on its way upstream: each frame is
//! sent on as it arrives from the client — no retry can happen, so nothing waits for the
//! whole body — and kept in a [`BodyCopy`]. The model is read from the copy once the
//! provider has answered (the provider has read the body by then), and the ledger's turn,
//! conversation and session keys on the ledger's task (`request::keys_later`).
//!
//! A body the client declares at most [`SMALL_BODY`] long is taken whole instead (it comes
//! with the head, or within one 64 KB upload) and sent like a routed one: hyper then writes
//! the head and the body together, where a streamed body costs a second write and a second
//! wake-up upstream (measured: at 256 concurrent one-line streams the relay served 5,725
//! req/s streaming small bodies against 7,319 before).
//!
//! The body limit ([`crate::MAX_BODY_BYTES`]) is kept as the bytes pass: past it the upstream
//! request is cut off with an error and the client is answered 413.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{ready, Context, Poll};

use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use http_body_util::{Either, Full};
use switchyard_core::body_skim::{BodySkim, Wants};
use switchyard_core::Protocol;

use crate::upstream::BoxError;

/// The first bytes of a copy, up to this many, are copied into its own buffer: the frames
/// are slices of the connection's read buffer, which the ledger's queue would otherwise keep
/// alive until the answer ends (measured: 66.2 MB of relay RSS at 256 streams against 50.4
/// MB when small bodies are copied). Past it, frames are kept as they came (a large body's
/// frames fill their buffers).
const OWN_BUFFER_BELOW: usize = 64 * 1024;

/// Bodies declared at most this long are taken whole before forwarding (module docs).
pub(crate) const SMALL_BODY: u64 = 64 * 1024;

/// The body an upstream request carries: the client's buffered bytes (routed requests,
/// which may be sent more than once) or the client's body as it streams in.
pub(crate) type UpstreamRequestBody = Either<Full<Bytes>, StreamedBody>;

/// What the attempts of a request send: the buffered body (routed: any number of attempts)
/// or the client's body streaming in (forwarding: one attempt, which takes it).
pub(crate) enum Outgoing {
    Buffered(Bytes),
    Streamed(Mutex<Option<StreamedBody>>),
}

impl Outgoing {
    pub(crate) fn streamed(body: StreamedBody) -> Self {
        Outgoing::Streamed(Mutex::new(Some(body)))
    }
}

/// The client's body, passed on frame by frame and copied into a [`BodyCopy`].
pub(crate) struct StreamedBody {
    inner: axum::body::Body,
    copy: Arc<BodyCopy>,
    seen: usize,
    limit: usize,
}

impl StreamedBody {
    pub(crate) fn new(inner: axum::body::Body, limit: usize) -> (Self, Arc<BodyCopy>) {
        let copy = Arc::new(BodyCopy::default());
        (StreamedBody { inner, copy: copy.clone(), seen: 0, limit }, copy)
    }
}

impl Body for StreamedBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    this.seen += data.len();
                    if this.seen > this.limit {
                        this.copy.lock().too_large = true;
                        return Poll::Ready(Some(Err("the request body is over the relay's limit".into())));
                    }
                    this.copy.push(data.clone());
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Some(Err(e)) => Poll::Ready(Some(Err(Box::new(e)))),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        // Exact when the client declared a length: the upstream request then carries the
        // same `content-length` instead of chunked coding.
        self.inner.size_hint()
    }
}

/// What a streamed body has carried so far.
#[derive(Debug, Default)]
pub(crate) struct BodyCopy {
    state: Mutex<CopyState>,
}

#[derive(Debug, Default)]
struct CopyState {
    /// The first bytes, copied (up to [`OWN_BUFFER_BELOW`]).
    own: BytesMut,
    /// Later frames, as they came.
    frames: Vec<Bytes>,
    len: usize,
    too_large: bool,
    /// The model, once read (`Some(None)`: read, and the body names none).
    model: Option<Option<String>>,
}

impl BodyCopy {
    fn lock(&self) -> std::sync::MutexGuard<'_, CopyState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A copy of a body taken whole (`SMALL_BODY`): its bytes, copied.
    pub(crate) fn whole(body: &[u8]) -> Self {
        let copy = BodyCopy::default();
        copy.push_slice(body);
        copy
    }

    fn push(&self, data: Bytes) {
        let mut s = self.lock();
        s.len += data.len();
        if s.frames.is_empty() && s.own.len() + data.len() <= OWN_BUFFER_BELOW {
            s.own.extend_from_slice(&data);
        } else {
            s.frames.push(data);
        }
    }

    fn push_slice(&self, data: &[u8]) {
        let mut s = self.lock();
        s.len += data.len();
        s.own.extend_from_slice(data);
    }

    /// The body went past the relay's limit (the upstream request was cut off).
    pub(crate) fn too_large(&self) -> bool {
        self.lock().too_large
    }

    /// The bytes carried so far (the whole body once it has ended), in one buffer.
    pub(crate) fn bytes(&self) -> Bytes {
        let mut s = self.lock();
        if s.frames.is_empty() {
            // Frozen once and kept as the copy's only frame: later calls clone it.
            let own = std::mem::take(&mut s.own).freeze();
            if !own.is_empty() {
                s.frames.push(own.clone());
            }
            return own;
        }
        if s.own.is_empty() && s.frames.len() == 1 {
            return s.frames[0].clone();
        }
        let mut all = BytesMut::with_capacity(s.len);
        all.extend_from_slice(&s.own);
        for f in &s.frames {
            all.extend_from_slice(f);
        }
        all.freeze()
    }

    /// The body's top-level `model` (a lazy skim that stops at it; the first frame alone
    /// when it holds it, as an agent's `{"model":…` opening does), read once.
    pub(crate) fn model(&self, protocol: Protocol) -> Option<String> {
        if let Some(model) = &self.lock().model {
            return model.clone();
        }
        let first = self.lock().frames.first().cloned().unwrap_or_default();
        let read =
            |b: &[u8]| BodySkim::read_for(protocol, b, Wants::MODEL).ok().map(|s| s.model().map(|m| m.into_owned()));
        let model = match read(&first) {
            Some(Some(model)) => Some(model),
            _ => read(&self.bytes()).flatten(),
        };
        self.lock().model = Some(model.clone());
        model
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    fn chunked(parts: &[&'static [u8]]) -> axum::body::Body {
        let frames: Vec<Result<Bytes, std::io::Error>> = parts.iter().map(|p| Ok(Bytes::from_static(p))).collect();
        axum::body::Body::from_stream(futures_util::stream::iter(frames))
    }

    #[tokio::test]
    async fn frames_pass_unchanged_and_the_copy_holds_the_whole_body() {
        let parts: &[&'static [u8]] = &[b"{\"mess", b"ages\":[],\"mo", b"del\":\"m-late\"}"];
        let (body, copy) = StreamedBody::new(chunked(parts), 1024);
        let sent = body.collect().await.unwrap_or_else(|e| panic!("{e}")).to_bytes();
        assert_eq!(&sent[..], &parts.concat()[..], "what goes upstream is the client's bytes, in order");
        assert_eq!(copy.bytes(), sent, "the copy is the whole body once it ended");
        assert_eq!(copy.model(Protocol::Openai).as_deref(), Some("m-late"), "a model past the first frame is found");
        assert!(!copy.too_large());
    }

    #[tokio::test]
    async fn a_large_body_keeps_its_later_frames_and_a_small_one_is_copied_off_the_read_buffer() {
        let opening = format!(r#"{{"model":"m-big","messages":[{{"role":"user","content":"{}"#, "x".repeat(60_000));
        let parts: Vec<Bytes> =
            vec![Bytes::from(opening), Bytes::from("y".repeat(10_000)), Bytes::from_static(b"\"}]}")];
        let frames: Vec<Result<Bytes, std::io::Error>> = parts.iter().cloned().map(Ok).collect();
        let (body, copy) =
            StreamedBody::new(axum::body::Body::from_stream(futures_util::stream::iter(frames)), 1 << 20);
        let sent = body.collect().await.unwrap_or_else(|e| panic!("{e}")).to_bytes();
        assert_eq!(copy.bytes(), sent, "the copy joins the copied opening and the kept frames, in order");
        assert_eq!(copy.model(Protocol::Anthropic).as_deref(), Some("m-big"), "the model from the opening");
        assert!(BodySkim::read(Protocol::Anthropic, &copy.bytes()).is_ok(), "the joined copy is the whole JSON body");

        let read_buffer = Bytes::from(vec![b' '; 8192]);
        let small = read_buffer.slice(0..2);
        let copy = BodyCopy::default();
        copy.push(small);
        let kept = copy.bytes();
        let buffer = read_buffer.as_ptr_range();
        assert!(!buffer.contains(&kept.as_ptr()), "a small copy must not keep the connection's read buffer alive");
    }

    #[tokio::test]
    async fn a_body_past_the_limit_is_cut_off() {
        let (body, copy) = StreamedBody::new(chunked(&[b"0123456789", b"0123456789"]), 15);
        assert!(body.collect().await.is_err(), "the upstream request must not complete past the limit");
        assert!(copy.too_large(), "the relay answers 413 from this");
    }

    #[tokio::test]
    async fn a_body_that_is_not_json_has_no_model() {
        let (body, copy) = StreamedBody::new(chunked(&[b"not json"]), 1024);
        body.collect().await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(copy.model(Protocol::Anthropic), None);
    }
}
