//! One `/c/{name}/…` request, in the order it is answered: checks (host and method, the token
//! on the headers alone, the path, the declared length) → resolve the name once (a connection
//! or a pool, `Router::resolve`) → intake (`intake.rs`: the request as one value, its body read
//! as the target needs — only for a client that presented the token) → route (the engine's one
//! loop, with the HTTP transport) → respond (`respond.rs`). The relay asks the router nothing
//! else on this path but a models listing.

use std::sync::Arc;

use http::{Method, Request};
use hyper::body::Incoming as IncomingBody;

use switchyard_providers::dialect;

use crate::auth::{QueryKey, TokenPlace};
use crate::body::client_body::Response;
use crate::conn::{ConnMark, Peer};
use crate::intake::{Intake, Readers, Received};
use crate::respond::respond;
use crate::state::RelayState;
use crate::transport::HttpTransport;
use crate::upstream_request::is_models_listing;
use crate::{guard, reply, MAX_BODY_BYTES};

/// A `/c/{name}/{rest}` request (`routes.rs` matched the path's shape). `peer`: whether the peer
/// is on loopback (only there does the install's own token count) and the connection TLS (any
/// `Host` then).
pub(crate) async fn handle(
    state: &Arc<RelayState>,
    mark: &ConnMark,
    peer: Peer,
    req: Request<IncomingBody>,
) -> Response {
    let (parts, body) = req.into_parts();
    let (method, uri, mut headers) = (parts.method, parts.uri, parts.headers);
    if let Err(refused) = guard::before_auth(&method, &headers, peer.tls) {
        return refused.response();
    }
    // A Gemini client's `?key=` is the relay token: checked as its header, never forwarded
    // (every route strips every `key` pair here, a pool's too).
    let QueryKey { query, credential: key_in_query } = crate::auth::key_from_query(uri.query(), &mut headers);
    let Some((place, caller)) = state.caller(&headers, peer.loopback) else {
        return reply::unauthorized();
    };
    mark.authenticated();
    let (name, rest) = match guard::relay_path(uri.path()) {
        Ok((name, rest)) => (name, rest.to_string()),
        Err(refused) => return refused.response(),
    };
    let declared_length = guard::declared_length(&headers);
    if declared_length.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return guard::too_large();
    }
    let target = match state.router.resolve(name).await {
        Ok(target) => target,
        Err(e) => return reply::engine_error(reply::guess_protocol(&rest, &headers), &e),
    };
    let protocol = target.protocol();
    // A user token reaches its scope only (invariant 31): nothing is read or sent otherwise.
    let scope = caller.scope();
    if scope.is_some_and(|s| !s.allows_target(target.name())) {
        return reply::not_in_scope(protocol, &format!("'{}'", target.name()));
    }
    // Only Gemini's clients put a key in the URL: elsewhere a query key is no credential.
    if key_in_query && !dialect::of(protocol).key_in_query() {
        return reply::unauthorized();
    }
    let received = Received { method, rest, query, headers, declared_length };
    // A request naming its profile (an official CLI run by `switchyard exec`) forwards the
    // client's own credential: only to a connection, and only with the relay token in its own
    // header, so what is forwarded is never the relay token.
    let pinned = received.is_pinned();
    if pinned && (!target.may_pin() || place != TokenPlace::Own) {
        return reply::pin_refused(protocol);
    }
    if received.method == Method::GET && !pinned && is_models_listing(&received.rest) {
        if let Some(models) = state.router.models(&target).await {
            return reply::models(protocol, &models);
        }
    }
    let tags = match received.tags() {
        Ok(tags) => tags,
        Err(invalid) => return reply::invalid_tag(protocol, &invalid),
    };
    let user = caller.user();
    // Admission reserves a worst case from a token or USD limit, and a scope of models needs
    // the model: the body is read first for either.
    let scoped_models = scope.is_some_and(|s| !s.models.is_empty());
    let read_first = scoped_models || state.router.limits_read_body(&target, user.as_deref()).await;
    let readers = Readers { memo: &state.memo, copies: &state.copies };
    let Ok((intake, keys)) = Intake::read(received, body, &target, readers, read_first).await else {
        return guard::too_large();
    };
    if scoped_models && !scope.is_some_and(|s| s.allows_model(intake.model())) {
        return reply::not_in_scope(protocol, "this model");
    }
    let estimate = if read_first { intake.estimate() } else { Default::default() };
    let request = intake.route_request(target, keys, tags, user, estimate);
    let transport = HttpTransport { http: &state.http, intake: &intake, cli: &state.cli };
    match state.router.route(request, &transport).await {
        Ok(routed) => respond(protocol, intake.received.is_responses_api(), routed),
        Err(e) => reply::engine_error(protocol, &e),
    }
}
