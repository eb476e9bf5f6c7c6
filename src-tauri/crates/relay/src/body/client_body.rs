//! The body of every response the relay sends its client, as one concrete type: nothing, bytes
//! held whole (an answer the relay made, a kept error answer, a JSON answer read whole), or an
//! upstream answer relayed as it arrives (`relayed.rs`'s [`Tail`]). An enum rather than a boxed
//! body (axum's `Body`): the request path's instruction count matters
//! (`scripts/relay-instructions`), and a boxed body costs an allocation and dynamic calls per
//! frame for every answer; only the relayed arm keeps a box (see there). Also the JSON
//! answer helper ([`json`]), serialised and labelled as axum's `Json` did.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, StatusCode};
use http_body::{Body, Frame, SizeHint};
use switchyard_engine::Recording;

use crate::body::relayed::Tail;

/// A response of the relay.
pub(crate) type Response = http::Response<ClientBody>;

/// What a response carries to the client.
pub(crate) enum ClientBody {
    /// No bytes (`content-length: 0`).
    Empty,
    /// Bytes held whole, sent with their length; `None` once sent.
    Full(Option<Bytes>),
    /// An upstream answer as it arrives, watched on the side. Boxed: the tail with its
    /// ledger recording is some 650 bytes, which every response would otherwise carry.
    Relayed(Box<Tail<Recording>>),
}

impl ClientBody {
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        if bytes.is_empty() {
            ClientBody::Empty
        } else {
            ClientBody::Full(Some(bytes))
        }
    }
}

impl Body for ClientBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.get_mut() {
            ClientBody::Empty => Poll::Ready(None),
            ClientBody::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            ClientBody::Relayed(tail) => Pin::new(&mut **tail).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ClientBody::Empty | ClientBody::Full(None) => true,
            ClientBody::Full(Some(_)) => false,
            ClientBody::Relayed(tail) => tail.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ClientBody::Empty | ClientBody::Full(None) => SizeHint::with_exact(0),
            ClientBody::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            ClientBody::Relayed(tail) => tail.size_hint(),
        }
    }
}

/// A response with `status` and no body.
pub(crate) fn bare(status: StatusCode) -> Response {
    let mut resp = Response::new(ClientBody::Empty);
    *resp.status_mut() = status;
    resp
}

/// `value` as a JSON answer with `status` and `content-type: application/json` (what axum's
/// `(status, Json(value))` answered; a `serde_json::Value` always serialises).
pub(crate) fn json(status: StatusCode, value: &serde_json::Value) -> Response {
    let mut resp = Response::new(ClientBody::full(value.to_string()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn held_bytes_go_once_with_their_length() {
        let body = ClientBody::full(Bytes::from_static(b"{\"ok\":true}"));
        assert_eq!(body.size_hint().exact(), Some(11), "sent with content-length");
        assert!(!body.is_end_stream());
        let sent = body.collect().await.unwrap().to_bytes();
        assert_eq!(&sent[..], b"{\"ok\":true}");
        let empty = ClientBody::full(Bytes::new());
        assert!(empty.is_end_stream(), "empty bytes are an empty body");
        assert_eq!(empty.size_hint().exact(), Some(0), "content-length: 0");
    }

    #[tokio::test]
    async fn a_json_answer_is_labelled_and_compact() {
        let resp = json(StatusCode::BAD_REQUEST, &serde_json::json!({"error": {"message": "no"}}));
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        assert_eq!(resp.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()), Some("application/json"));
        let sent = resp.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&sent[..], br#"{"error":{"message":"no"}}"#, "serialised as serde_json writes it");
    }
}
