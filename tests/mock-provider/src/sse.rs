//! Response bodies that arrive in pieces: server-sent event framing, complete event streams,
//! and bodies that break off (the connection drops without a final event or byte).

use std::convert::Infallible;
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::stream::{self, StreamExt};

/// One SSE frame: `event: NAME\n` (if named), `data: DATA\n\n`.
pub(crate) fn frame(event: Option<&str>, data: &str) -> Bytes {
    match event {
        Some(name) => Bytes::from(format!("event: {name}\ndata: {data}\n\n")),
        None => Bytes::from(format!("data: {data}\n\n")),
    }
}

/// How an event stream ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Every frame was sent; the body ends normally.
    Complete,
    /// The connection drops after the frames (no terminating chunk).
    Dies,
}

/// A 200 `text/event-stream` response of these frames.
pub(crate) fn event_stream(frames: Vec<Bytes>, ending: Ending) -> Response {
    let body = match ending {
        Ending::Complete => Body::from_stream(stream::iter(frames.into_iter().map(Ok::<_, Infallible>))),
        Ending::Dies => broken_body(frames),
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

/// A 200 JSON answer; when `dies`, only the first half of its bytes is sent before the
/// connection drops.
pub(crate) fn json_answer(value: &serde_json::Value, dies: bool) -> Response {
    let bytes = Bytes::from(value.to_string());
    let body = if dies { broken_body(vec![bytes.slice(..bytes.len() / 2)]) } else { Body::from(bytes) };
    (StatusCode::OK, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response()
}
