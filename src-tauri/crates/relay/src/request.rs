//! The entry of every `/c/{slug}/…` request: host and method checks and the token check on
//! the headers alone, then the path and the body (only for a client that presented the
//! token), the connection snapshot, the turn and conversation keys, a Responses request's
//! `previous_response_id` (continuity), and the legacy or the routed path; a routed
//! Responses answer's id is remembered with the profile that produced it.

use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, Method};
use axum::response::Response;
use axum::Extension;
use bytes::Bytes;
use serde_json::Value;
use switchyard_core::conversation::conversation_key;
use switchyard_core::tag::{read_tags, tags_json};
use switchyard_core::turn::{turn_key, ClientIds};
use switchyard_engine::Routed;

use std::sync::atomic::{AtomicBool, Ordering};

use crate::respond::respond;
use crate::server::ConnMark;
use crate::state::RelayState;
use crate::transport::{Delivered, HttpTransport};
use crate::upstream_request::{is_models_listing, upstream_url};
use crate::{guard, reply, MAX_BODY_BYTES};

/// A client request, as received.
#[derive(Debug)]
pub struct Incoming {
    pub method: Method,
    pub rest: String,
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// The body parsed as JSON (`Null` when it is not JSON).
    pub json: Value,
}

impl Incoming {
    pub fn model(&self) -> Option<&str> {
        self.json.get("model").and_then(Value::as_str)
    }

    /// The OpenAI Responses API (its stream events differ from chat completions).
    pub fn is_responses_api(&self) -> bool {
        self.rest.trim_end_matches('/').ends_with("responses")
    }

    /// A Responses request's `previous_response_id`: state held by the account that made it.
    pub fn previous_response_id(&self) -> Option<&str> {
        if !self.is_responses_api() {
            return None;
        }
        self.json.get("previous_response_id").and_then(Value::as_str).filter(|id| !id.is_empty())
    }
}

pub async fn handle(
    State(state): State<Arc<RelayState>>,
    Path((slug, _)): Path<(String, String)>,
    mark: Option<Extension<ConnMark>>,
    req: Request,
) -> Response {
    let (parts, body) = req.into_parts();
    let (method, uri, headers) = (parts.method, parts.uri, parts.headers);
    if let Err(refused) = guard::before_auth(&method, &headers) {
        return refused.response();
    }
    if !state.is_authorized(&headers) {
        return reply::unauthorized();
    }
    if let Some(Extension(mark)) = mark {
        mark.authenticated();
    }
    let rest = match guard::relay_path(uri.path()) {
        Ok(rest) => rest.to_string(),
        Err(refused) => return refused.response(),
    };
    if guard::declared_length(&headers).is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return guard::too_large();
    }
    let body = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(_) => return guard::too_large(),
    };
    let snap = match state.router.snapshot(&slug).await {
        Ok(s) => s,
        Err(e) => return reply::engine_error(reply::guess_protocol(&rest, &headers), &e),
    };
    if method == Method::GET && snap.strategy.is_some() && is_models_listing(&rest) {
        return reply::models(snap.protocol, &snap.served_models(state.router.engine().now_ms()));
    }
    let looks_json = body.first().is_some_and(|b| *b == b'{');
    let json = if looks_json { serde_json::from_slice(&body).unwrap_or(Value::Null) } else { Value::Null };
    let incoming = Incoming { method, rest, query: uri.query().map(str::to_string), headers, body, json };
    let ids = ClientIds::read(|name| incoming.headers.get(name).and_then(|v| v.to_str().ok()), &incoming.json);
    let (turn, _) = turn_key(snap.protocol, &slug, &ids, &incoming.json);
    let (conversation, _) = conversation_key(snap.protocol, &slug, &ids, &incoming.json);
    let model = incoming.model().map(str::to_string);
    let session = ids.session_key(&slug);
    let tags = match read_tags(incoming.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes()))) {
        Ok(tags) => tags_json(&tags),
        Err(invalid) => return reply::invalid_tag(snap.protocol, &invalid),
    };
    let mut run = match state.router.start_turn(&slug, model.as_deref(), turn, Some(conversation), session).await {
        Ok(run) => run,
        Err(e) => return reply::engine_error(snap.protocol, &e),
    };
    run.tags = tags;
    if let Some(previous) = incoming.previous_response_id() {
        state.router.continue_response(&mut run, previous);
    }
    let legacy = run.is_legacy();
    let body = if legacy {
        incoming.body.clone()
    } else {
        upstream_body(&incoming, run.model.as_deref().map(|m| snap.upstream_model(m)))
    };
    let transport = HttpTransport {
        state: &state,
        incoming: &incoming,
        snap: snap.clone(),
        method: incoming.method.clone(),
        url: upstream_url(&snap, &incoming.rest, incoming.query.as_deref()),
        client_headers: &incoming.headers,
        body,
        timed_out: AtomicBool::new(false),
        dropped: AtomicBool::new(false),
    };
    let routed = match state.router.route(run, &transport).await {
        Ok(r) => r,
        Err(e) => return reply::engine_error(snap.protocol, &e),
    };
    if let Routed::Delivered { body: Delivered { response_id: Some(id), .. }, route, .. } = &routed {
        state.router.remember_response(&route.connection_id, id, &route.profile_id);
    }
    let timed_out = transport.timed_out.load(Ordering::Relaxed);
    respond(snap.protocol, incoming.is_responses_api(), timed_out, legacy, routed)
}

/// The request body sent upstream: the client's bytes, with the model renamed only where
/// the connection's mapping says so.
pub(crate) fn upstream_body(incoming: &Incoming, upstream_model: Option<&str>) -> Bytes {
    match (incoming.model(), upstream_model) {
        (Some(asked), Some(mapped)) if asked != mapped => {
            let mut json = incoming.json.clone();
            json["model"] = serde_json::Value::String(mapped.to_string());
            serde_json::to_vec(&json).map(Bytes::from).unwrap_or_else(|_| incoming.body.clone())
        }
        _ => incoming.body.clone(),
    }
}
