//! The relay's routes, matched by hand: `GET`/`HEAD /healthz` (live) and `/readyz` (ready to
//! serve: `healthz.rs`), `GET /v1/switchyard/me` (the caller's own figures: `me.rs`), `GET /metrics` (`metrics.rs`), and `/c/{slug}/{rest}` (any method, a non-empty slug and rest) for the
//! provider calls; anything else is a bare 404, and another method on `/healthz` or `/readyz`
//! a 405 naming the allowed ones.
//!
//! Why not a router framework: axum's router boxed every request's handler future — the
//! whole request path's state, upstream call included — and moved it twice, which with its
//! path-parameter map and matched-path extension cost 12 % of the relay's instructions per
//! one-line request (callgrind, relay-bench's legacy cell shape); two routes need no
//! framework. The slug is taken as it is written: a valid slug is `a-z 0-9 -`
//! (core `validate_slug`), so a percent-encoded one can never name a connection.

use std::sync::Arc;

use http::{Method, Request, StatusCode};
use hyper::body::Incoming;

use crate::body::client_body::{bare, Response};
use crate::conn::ConnMark;
use crate::conn::Peer;
use crate::state::RelayState;

/// Where a request goes.
#[derive(Debug, PartialEq, Eq)]
enum Route {
    Healthz,
    Readyz,
    /// `/v1/switchyard/me`: the caller's own figures.
    Me,
    /// `/metrics`: Prometheus text for admins (`metrics.rs`).
    Metrics,
    /// `/console` and below: the web console (`console/`; 404 without `--console`).
    Console,
    /// A provider call for the connection in the path.
    Relay,
    WrongMethod,
    NotFound,
}

fn route_of(method: &Method, path: &str) -> Route {
    if crate::console::is_console(path) {
        return Route::Console;
    }
    if path == "/v1/switchyard/me" {
        return Route::Me;
    }
    if path == "/metrics" {
        return Route::Metrics;
    }
    if path == "/healthz" || path == "/readyz" {
        if method != Method::GET && method != Method::HEAD {
            return Route::WrongMethod;
        }
        return if path == "/healthz" { Route::Healthz } else { Route::Readyz };
    }
    match path.strip_prefix("/c/").and_then(|tail| tail.split_once('/')) {
        Some((slug, rest)) if !slug.is_empty() && !rest.is_empty() => Route::Relay,
        _ => Route::NotFound,
    }
}

/// Answers one request of a connection (`mark` notes when it carried the token; `peer` says
/// the port it came in on, which the `/healthz` proof names, and whether it is on loopback).
///
/// Every route but the provider calls is boxed: their futures (the console's is 15 KB) would
/// otherwise size this one, which hyper keeps in a box of its size for every connection.
pub(crate) async fn dispatch(state: Arc<RelayState>, mark: &ConnMark, peer: Peer, req: Request<Incoming>) -> Response {
    match route_of(req.method(), req.uri().path()) {
        Route::Relay => crate::request::handle(&state, mark, peer, req).await,
        Route::Healthz => {
            let (parts, _) = req.into_parts();
            Box::pin(crate::healthz::healthz(&state, &parts.method, &parts.headers, peer)).await
        }
        Route::Readyz => {
            let (parts, _) = req.into_parts();
            Box::pin(crate::healthz::readyz(&state, &parts.method, &parts.headers, peer)).await
        }
        Route::Me => {
            let (parts, _) = req.into_parts();
            Box::pin(crate::me::me(&state, &parts.method, &parts.headers, peer)).await
        }
        Route::Console => Box::pin(crate::console::handle(&state, peer, req)).await,
        Route::Metrics => {
            let (parts, _) = req.into_parts();
            Box::pin(crate::metrics::metrics(&state, &parts.method, &parts.headers, peer)).await
        }
        Route::WrongMethod => crate::reply::method_not_allowed("GET,HEAD"),
        Route::NotFound => bare(StatusCode::NOT_FOUND),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_two_routes_match() {
        let post = Method::POST;
        assert_eq!(route_of(&post, "/c/work/v1/messages"), Route::Relay, "a provider call");
        assert_eq!(route_of(&post, "/c/work/x"), Route::Relay, "any rest after the slug");
        assert_eq!(route_of(&Method::GET, "/healthz"), Route::Healthz);
        assert_eq!(route_of(&Method::HEAD, "/healthz"), Route::Healthz, "HEAD as for any GET route");
        assert_eq!(route_of(&post, "/healthz"), Route::WrongMethod, "healthz is read-only");
        assert_eq!(route_of(&Method::GET, "/readyz"), Route::Readyz, "readiness for load balancers");
        assert_eq!(route_of(&post, "/readyz"), Route::WrongMethod, "readyz is read-only");
        assert_eq!(route_of(&Method::GET, "/v1/switchyard/me"), Route::Me, "a token holder's own figures");
        assert_eq!(route_of(&Method::GET, "/metrics"), Route::Metrics, "Prometheus text for admins");
        assert_eq!(route_of(&Method::GET, "/console/"), Route::Console, "the web console");
        assert_eq!(route_of(&post, "/console/api/call/list_connections"), Route::Console, "its API");
        for path in ["/", "/c/", "/c/work", "/c/work/", "/c//v1/messages", "/healthz/", "/v1/messages", "/cc/w/x"] {
            assert_eq!(route_of(&post, path), Route::NotFound, "{path}: an empty slug or rest matches nothing");
        }
    }
}
