//! Response bodies that arrive in pieces: server-sent event framing, event streams, and
//! bodies that break off (the connection drops without a final event or byte). How the
//! pieces are shaped and cut is the wire's business (`wire.rs`).

use std::convert::Infallible;
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::stream::{self, StreamExt};

/// One SSE frame, and whether it carries content (the wire's pings go before those).
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub bytes: Bytes,
    pub content: bool,
}

impl Frame {
    /// Marks the frame as content.
    pub fn content(self) -> Self {
        Frame { content: true, ..self }
    }
}

/// One SSE frame: `event: NAME\n` (if named), `data: DATA\n\n`.
pub(crate) fn frame(event: Option<&str>, data: &str) -> Frame {
    let bytes = match event {
        Some(name) => Bytes::from(format!("event: {name}\ndata: {data}\n\n")),
        None => Bytes::from(format!("data: {data}\n\n")),
    };
    Frame { bytes, content: false }
}

/// How an event stream ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Every frame was sent; the body ends normally.
    Complete,
    /// The connection drops after the frames (no terminating chunk).
    Dies,
}

/// A 200 `text/event-stream` response writing `pieces`, one body frame each; `yielding`
/// lets the task yield between pieces so that each tends to reach the socket on its own.
pub(crate) fn event_stream(pieces: Vec<Bytes>, ending: Ending, yielding: bool) -> Response {
    let body = match (ending, yielding) {
        (Ending::Complete, false) => Body::from_stream(stream::iter(pieces.into_iter().map(Ok::<_, Infallible>))),
        (Ending::Complete, true) => Body::from_stream(stream::iter(pieces).then(|piece| async move {
            tokio::task::yield_now().await;
            Ok::<_, Infallible>(piece)
        })),
        (Ending::Dies, _) => broken_body(pieces),
    };
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream")),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response()
}

/// A body that sends `parts`, pauses so they are flushed to the socket, then fails, which
/// makes the server abort the connection: the client sees an incomplete body.
pub(crate) fn broken_body(parts: Vec<Bytes>) -> Body {
    let sent = stream::iter(parts.into_iter().map(Ok::<_, std::io::Error>));
    let death = stream::once(async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "mock provider: scripted connection drop"))
    });
    Body::from_stream(sent.chain(death))
}
