//! Requests the mock is answering at once (until each answer's body is done or dropped), and
//! the most at any moment: what a concurrency limit's tests read.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use bytes::Bytes;
use http_body::{Frame, SizeHint};

use crate::server::Shared;

#[derive(Debug, Default)]
pub(crate) struct InFlight {
    now: AtomicU64,
    max: AtomicU64,
}

impl InFlight {
    pub(crate) fn now(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }

    pub(crate) fn max(&self) -> u64 {
        self.max.load(Ordering::SeqCst)
    }

    pub(crate) fn reset(&self) {
        self.max.store(self.now.load(Ordering::SeqCst), Ordering::SeqCst);
    }
}

/// One request in flight; counted out when dropped (with its answer's body).
struct Held(Arc<Shared>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.in_flight.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// An answer's body, holding its request in the count until it ends.
struct Counted {
    inner: Body,
    _held: Held,
}

impl http_body::Body for Counted {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The middleware: counts the request in, and out when its answer's body ends.
pub(crate) async fn count(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let now = shared.in_flight.now.fetch_add(1, Ordering::SeqCst) + 1;
    shared.in_flight.max.fetch_max(now, Ordering::SeqCst);
    let held = Held(shared.clone());
    let response = next.run(request).await;
    let (parts, body) = response.into_parts();
    Response::from_parts(parts, Body::new(Counted { inner: body, _held: held }))
}
