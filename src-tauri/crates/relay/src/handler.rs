//! What serves one admitted connection's requests: each request of the connection goes to
//! `routes::dispatch` over the relay's shared state, with the connection's [`ConnMark`] (set
//! once a request carried the token, which protects the connection from eviction) and the
//! local port it came in on (the `/healthz` proof names it) and whether the peer is on loopback. Kept apart from the
//! [`Listener`](crate::listener::Listener), which decides which connections are served and
//! for how long; the handler knows nothing of sockets, limits or shutdown.

use std::convert::Infallible;
use std::sync::Arc;

use http::Request;
use hyper::body::Incoming;
use hyper::service::Service;

use crate::body::client_body::Response;
use crate::conn::{ConnMark, Peer};
use crate::state::RelayState;

/// Serves the relay's routes over `state`.
pub(crate) struct Handler {
    state: Arc<RelayState>,
    /// `--metrics-listen`: `GET /metrics` without a token, nothing else.
    metrics_only: bool,
}

impl Handler {
    pub(crate) fn new(state: Arc<RelayState>) -> Self {
        Handler { state, metrics_only: false }
    }

    /// The metrics listener's handler: `/metrics` only, no token (a bare 404 for anything else).
    pub(crate) fn metrics_only(state: Arc<RelayState>) -> Self {
        Handler { state, metrics_only: true }
    }

    /// The service for one connection.
    pub(crate) fn connection(
        &self,
        mark: ConnMark,
        local_port: u16,
        loopback: bool,
        tls: bool,
    ) -> impl Service<Request<Incoming>, Response = Response, Error = Infallible, Future: Send> + Send + 'static {
        let state = self.state.clone();
        let metrics_only = self.metrics_only;
        hyper::service::service_fn(move |req: Request<Incoming>| {
            let (state, mark) = (state.clone(), mark.clone());
            answer(state, mark, Peer { local_port, loopback, tls }, req, metrics_only)
        })
    }
}

async fn answer(
    state: Arc<RelayState>,
    mark: ConnMark,
    peer: Peer,
    req: Request<Incoming>,
    metrics_only: bool,
) -> Result<Response, Infallible> {
    if metrics_only {
        return Ok(if req.uri().path() == "/metrics" {
            Box::pin(crate::metrics::serve(&state, req.method())).await
        } else {
            crate::body::client_body::bare(http::StatusCode::NOT_FOUND)
        });
    }
    Ok(crate::routes::dispatch(state, &mark, peer, req).await)
}
