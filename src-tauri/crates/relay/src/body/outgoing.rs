//! A forwarded (legacy, no fallback chain) request's body on its way upstream: each frame is
//! sent on as it arrives from the client — no retry can happen, so nothing waits for the
//! whole body — and kept in a [`BodyCopy`]. The model is read from the copy once the
//! provider has answered (the provider has read the body by then), and the ledger's turn,
//! conversation and session keys on the ledger's writer thread (`intake.rs`, `deferred_keys`).
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

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::{Either, Full};
use switchyard_core::body_skim::{BodySkim, Wants};
use switchyard_core::Protocol;

use crate::body::copy_buffers::CopyBuffers;
pub(crate) use crate::body::SMALL_BODY;
use crate::upstream::BoxError;

// A copy's bytes are copied into one buffer (taken from the relay's `CopyBuffers` and given
// back when the copy is dropped), never kept as the frames that came: the frames are slices
// of the connection's read buffer, which a kept frame pins until the ledger's writer is done with
// the copy (at 256 streams of small bodies that held 66.2 MB of relay RSS against 50.4 MB). One
// buffer also spares the join before the skim, and a reused one its page faults.

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

/// The client's body (hyper's; any body in unit tests), passed on frame by frame and copied
/// into a [`BodyCopy`].
pub(crate) struct StreamedBody<B = hyper::body::Incoming> {
    inner: B,
    copy: Arc<BodyCopy>,
    seen: usize,
    limit: usize,
}

impl<B: Body> StreamedBody<B> {
    pub(crate) fn new(inner: B, limit: usize, buffers: &Arc<CopyBuffers>) -> (Self, Arc<BodyCopy>) {
        let declared = inner.size_hint().exact().map_or(0, |n| usize::try_from(n).unwrap_or(0).min(limit));
        let copy = Arc::new(BodyCopy::with_buffer(buffers, declared));
        (StreamedBody { inner, copy: copy.clone(), seen: 0, limit }, copy)
    }
}

impl<B> Body for StreamedBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
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
                    this.copy.push(data);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Some(Err(e)) => Poll::Ready(Some(Err(e.into()))),
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
#[derive(Debug)]
pub(crate) struct BodyCopy {
    state: Mutex<CopyState>,
    /// Where the buffer goes back to.
    buffers: Arc<CopyBuffers>,
}

impl Drop for BodyCopy {
    fn drop(&mut self) {
        let s = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        self.buffers.give(std::mem::take(&mut s.own));
    }
}

#[derive(Debug, Default)]
struct CopyState {
    /// The bytes so far, copied (see above).
    own: Vec<u8>,
    too_large: bool,
    /// The model, once read (`Some(None)`: read, and the body names none).
    model: Option<Option<String>>,
}

impl BodyCopy {
    fn lock(&self) -> std::sync::MutexGuard<'_, CopyState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A copy of a body taken whole (`SMALL_BODY`): its bytes, copied.
    pub(crate) fn whole(body: &[u8], buffers: &Arc<CopyBuffers>) -> Self {
        let copy = BodyCopy::with_buffer(buffers, body.len());
        copy.push(body);
        copy
    }

    /// An empty copy with room for `declared` bytes.
    fn with_buffer(buffers: &Arc<CopyBuffers>, declared: usize) -> Self {
        let own = buffers.take(declared);
        BodyCopy { state: Mutex::new(CopyState { own, ..CopyState::default() }), buffers: buffers.clone() }
    }

    fn push(&self, data: &[u8]) {
        self.lock().own.extend_from_slice(data);
    }

    /// The body went past the relay's limit (the upstream request was cut off).
    pub(crate) fn too_large(&self) -> bool {
        self.lock().too_large
    }

    /// `read` of the bytes carried so far (the whole body once it has ended).
    pub(crate) fn read<R>(&self, read: impl FnOnce(&[u8]) -> R) -> R {
        read(&self.lock().own)
    }

    #[cfg(test)]
    fn bytes(&self) -> Bytes {
        self.read(Bytes::copy_from_slice)
    }

    /// The body's top-level `model` (a lazy skim that stops at it), read once.
    pub(crate) fn model(&self, protocol: Protocol) -> Option<String> {
        let mut s = self.lock();
        if let Some(model) = &s.model {
            return model.clone();
        }
        let model = BodySkim::read_for(protocol, &s.own, Wants::MODEL)
            .ok()
            .and_then(|skim| skim.model().map(|m| m.into_owned()));
        s.model = Some(model.clone());
        model
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt, StreamBody};

    type Frames = StreamBody<futures_util::stream::Iter<std::vec::IntoIter<Result<Frame<Bytes>, std::io::Error>>>>;

    /// A body of `parts`, one frame each, with no declared length (as a chunked upload).
    fn frames(parts: impl IntoIterator<Item = Bytes>) -> Frames {
        let frames: Vec<Result<Frame<Bytes>, std::io::Error>> = parts.into_iter().map(|p| Ok(Frame::data(p))).collect();
        StreamBody::new(futures_util::stream::iter(frames))
    }

    fn chunked(parts: &[&'static [u8]]) -> Frames {
        frames(parts.iter().map(|p| Bytes::from_static(p)))
    }

    #[tokio::test]
    async fn frames_pass_unchanged_and_the_copy_holds_the_whole_body() {
        let parts: &[&'static [u8]] = &[b"{\"mess", b"ages\":[],\"mo", b"del\":\"m-late\"}"];
        let (body, copy) = StreamedBody::new(chunked(parts), 1024, &Arc::default());
        let sent = body.collect().await.unwrap().to_bytes();
        assert_eq!(&sent[..], &parts.concat()[..], "what goes upstream is the client's bytes, in order");
        assert_eq!(copy.bytes(), sent, "the copy is the whole body once it ended");
        assert_eq!(copy.model(Protocol::Openai).as_deref(), Some("m-late"), "a model past the first frame is found");
        assert!(!copy.too_large());
    }

    #[tokio::test]
    async fn copies_are_off_the_read_buffer_and_their_buffers_are_reused() {
        let opening = format!(r#"{{"model":"m-big","messages":[{{"role":"user","content":"{}"#, "x".repeat(60_000));
        let parts: Vec<Bytes> =
            vec![Bytes::from(opening), Bytes::from("y".repeat(10_000)), Bytes::from_static(b"\"}]}")];
        let (body, copy) = StreamedBody::new(frames(parts.iter().cloned()), 1 << 20, &Arc::default());
        let sent = body.collect().await.unwrap().to_bytes();
        assert_eq!(copy.bytes(), sent, "the copy holds every frame, in order");
        assert_eq!(copy.model(Protocol::Anthropic).as_deref(), Some("m-big"), "the model from the opening");
        assert!(BodySkim::read(Protocol::Anthropic, &copy.bytes()).is_ok(), "the joined copy is the whole JSON body");

        let buffers = Arc::new(CopyBuffers::default());
        for size in [2, 100_000] {
            let read_buffer = Bytes::from(vec![b' '; 200_000]);
            let frame = read_buffer.slice(0..size);
            let (body, copy) = StreamedBody::new(Full::new(frame), 1 << 20, &buffers);
            body.collect().await.unwrap();
            let (len, at) = copy.read(|b| (b.len(), b.as_ptr()));
            assert_eq!(len, size, "the copy holds the frame");
            assert!(!read_buffer.as_ptr_range().contains(&at), "a copy must not pin the read buffer ({size} bytes)");
            drop(copy);
            let kept = buffers.kept_bytes();
            if size as u64 > SMALL_BODY {
                assert!(kept >= size, "a large copy's buffer is kept for the next: {kept}");
            } else {
                assert_eq!(kept, 0, "a small copy's buffer goes back to the allocator");
            }
        }
    }

    #[tokio::test]
    async fn a_body_past_the_limit_is_cut_off() {
        let (body, copy) = StreamedBody::new(chunked(&[b"0123456789", b"0123456789"]), 15, &Arc::default());
        assert!(body.collect().await.is_err(), "the upstream request must not complete past the limit");
        assert!(copy.too_large(), "the relay answers 413 from this");
    }

    #[tokio::test]
    async fn a_body_that_is_not_json_has_no_model() {
        let (body, copy) = StreamedBody::new(chunked(&[b"not json"]), 1024, &Arc::default());
        body.collect().await.unwrap();
        assert_eq!(copy.model(Protocol::Anthropic), None);
    }
}
