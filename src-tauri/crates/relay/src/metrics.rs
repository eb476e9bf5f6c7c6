//! `GET /metrics` (Prometheus text, engine `telemetry/`): on the relay's port for an `admin`
//! user's token, or the install's own token from loopback — a `user` token gets 403, no token
//! 401 (invariant 31: a user token never reaches an admin surface); on `--metrics-listen`
//! without a token (that listener serves nothing else, and only on loopback unless TLS).

use std::sync::Arc;

use http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use switchyard_engine::{Role, METRICS_CONTENT_TYPE};

use crate::body::client_body::{ClientBody, Response};
use crate::conn::Peer;
use crate::reply;
use crate::state::{Caller, RelayState};

/// Who may read `/metrics` on the relay's own port.
pub(crate) async fn metrics(state: &Arc<RelayState>, method: &Method, headers: &HeaderMap, peer: Peer) -> Response {
    let Some((_, caller)) = state.caller(headers, peer.loopback) else {
        return reply::unauthorized();
    };
    if let Caller::User(grant) = &caller {
        if grant.role != Role::Admin {
            let resp = reply::neutral_error(StatusCode::FORBIDDEN, "permission_error", "/metrics needs an admin token");
            return reply::with_reason(resp, "not_admin");
        }
    }
    serve(state, method).await
}

/// The text itself (after the caller was let in, or on the metrics listener).
pub(crate) async fn serve(state: &Arc<RelayState>, method: &Method) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return reply::method_not_allowed("GET,HEAD");
    }
    match state.router.metrics().await {
        Ok(text) => {
            let body = if method == Method::HEAD { ClientBody::Empty } else { ClientBody::full(text) };
            let mut resp = Response::new(body);
            resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(METRICS_CONTENT_TYPE));
            resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            resp
        }
        Err(e) => reply::neutral_engine_error(&e),
    }
}
