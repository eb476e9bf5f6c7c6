//! The entry of every `/c/{slug}/…` request: token check, connection snapshot, then the
//! legacy or the routed path.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use bytes::Bytes;
use serde_json::Value;
use switchyard_core::turn::{turn_key, ClientIds};

use crate::forward::is_models_listing;
use crate::state::RelayState;
use crate::{auth, legacy, reply, routed};

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
}

pub async fn handle(
    State(state): State<Arc<RelayState>>,
    Path((slug, rest)): Path<(String, String)>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !auth::is_authorized(&headers, &state.token) {
        return reply::unauthorized();
    }
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
    let model = incoming.model().map(str::to_string);
    let run = match state.router.start_turn(&slug, model.as_deref(), turn, ids.session_key(&slug)).await {
        Ok(run) => run,
        Err(e) => return reply::engine_error(snap.protocol, &e),
    };
    if run.is_legacy() {
        legacy::forward(state, run, incoming).await
    } else {
        routed::forward(state, run, incoming).await
    }
}
