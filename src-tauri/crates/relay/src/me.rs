//! `GET /v1/switchyard/me`: any valid token (a user's, or the install's own from loopback)
//! reads its own name, role, scope, usage today and this month and the limits that apply to
//! it (engine `report/me.rs`) — never another user's figures. No token: 401.

use std::sync::Arc;

use http::{HeaderMap, Method, StatusCode};

use crate::body::client_body::{bare, json, Response};
use crate::conn::Peer;
use crate::reply;
use crate::state::{Caller, RelayState};

pub(crate) async fn me(state: &Arc<RelayState>, method: &Method, headers: &HeaderMap, peer: Peer) -> Response {
    if method != Method::GET {
        return reply::method_not_allowed("GET");
    }
    let Some((_, caller)) = state.caller(headers, peer.loopback) else {
        return reply::unauthorized();
    };
    let grant = match &caller {
        Caller::Local => None,
        Caller::User(grant) => Some(grant.as_ref()),
    };
    match state.router.engine().me(grant).await {
        Ok(view) => match serde_json::to_value(&view) {
            Ok(value) => json(StatusCode::OK, &value),
            Err(_) => bare(StatusCode::INTERNAL_SERVER_ERROR),
        },
        Err(e) => reply::neutral_engine_error(&e),
    }
}
