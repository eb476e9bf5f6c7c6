//! A request to a pool (`/c/POOL/…`, or `/c/POOL@MEMBER/…` naming the member, what
//! `switchyard exec POOL` points a tool at): the body is read whole and skimmed (a pool always
//! routes by the model and the conversation), the engine chooses the member
//! (`Router::pool_start`: continuity, the warm conversation's member, SWRR or the order) and
//! the one routing loop runs on it with the other members as hand-off hops. Every attempt
//! builds its URL and headers from the member it goes to. A pool that cannot take the request
//! answers 503 `pool_unavailable` (or `continuity`); answers carry `x-switchyard-connection`
//! (the member's connection that served).

use std::sync::Arc;

use http::Method;
use hyper::body::Incoming as IncomingBody;
use switchyard_core::tag::{read_tags, tags_json};
use switchyard_core::turn::ClientIds;
use switchyard_engine::{PoolRefusal, PoolSnapshot, RequestKeys, RouteRequest};

use crate::body::client_body::Response;
use crate::request::{buffered, client_of, pinned_profile, route_prepared, Incoming, PoolCaller, Received};
use crate::state::RelayState;
use crate::upstream_request::is_models_listing;
use crate::{guard, reply};

/// The `x-switchyard-reason` of a pool that cannot take a request.
pub(crate) const POOL_UNAVAILABLE: &str = "pool_unavailable";

pub(crate) async fn handle(
    state: &Arc<RelayState>,
    pool: &PoolSnapshot,
    member: Option<&str>,
    received: Received,
    body: IncomingBody,
    ids: ClientIds,
    caller: PoolCaller,
) -> Response {
    let protocol = pool.protocol;
    // A pool routes on the relay token: a request forwarding the client's own login names a
    // connection's profile, never a pool.
    if pinned_profile(&received.headers).is_some() {
        return reply::pin_refused(protocol);
    }
    if received.method == Method::GET && is_models_listing(&received.rest) {
        return reply::models(protocol, &state.router.pool_models(pool).await);
    }
    let tags = match read_tags(received.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes()))) {
        Ok(tags) => tags_json(&tags),
        Err(invalid) => return reply::invalid_tag(protocol, &invalid),
    };
    let name = pool.name.clone();
    let Ok(prepared) = buffered(received, body, &name, ids, &state.memo).await else {
        return guard::too_large();
    };
    let conversation = match &prepared.keys {
        RequestKeys::Now { conversation, .. } => conversation.clone(),
        RequestKeys::Later(_) => None,
    };
    let incoming = &prepared.incoming;
    let start = state
        .router
        .pool_start(pool, member, incoming.model(), conversation.as_ref(), incoming.previous_response_id())
        .await;
    let start = match start {
        Ok(Ok(start)) => start,
        Ok(Err(PoolRefusal::Unavailable(message))) => {
            return reply::with_reason(reply::error(protocol, 503, &message, None), POOL_UNAVAILABLE);
        }
        Ok(Err(PoolRefusal::Continuity(message))) => {
            return reply::with_reason(reply::continuity(protocol, 503, &message, None), "continuity");
        }
        Err(e) => return reply::engine_error(protocol, &e),
    };
    let request = |keys, incoming: &Incoming| RouteRequest {
        snapshot: start.snapshot,
        model: start.model,
        keys,
        tags,
        previous_response_id: incoming.previous_response_id().map(str::to_string),
        pinned: None,
        client: client_of(&incoming.headers),
        user: caller.user,
        pool: Some(start.route),
    };
    // No connection is the request's own: every attempt goes to the member it names.
    route_prepared(state, protocol, "", prepared, request).await
}
