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
use switchyard_core::body_skim::{BodySkim, Wants};
use switchyard_core::tag::{read_tags, tags_json};
use switchyard_core::turn::ClientIds;
use switchyard_core::Protocol;
use switchyard_engine::{KeysLater, LaterKeys, Routed};

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
    /// The connection's dialect (how the body is read).
    pub protocol: Protocol,
    /// The body's top-level `model` string, read by the skim (`None` when not JSON).
    pub model: Option<String>,
    /// A Responses request's non-empty `previous_response_id`.
    pub previous_response_id: Option<String>,
}

impl Incoming {
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
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
        self.previous_response_id.as_deref()
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
    // What routing needs from the body, in one pass and no JSON tree (core `body_skim/`).
    // Legacy forwarding without a fallback chain routes by nothing in the body: it reads only
    // the model and leaves the ledger's keys to the ledger's task (`keys_later`).
    let protocol = snap.protocol;
    let from_headers = ClientIds::read_headers(|name| headers.get(name).and_then(|v| v.to_str().ok()));
    let responses = rest.trim_end_matches('/').ends_with("responses");
    let forward_only = snap.strategy.is_none() && snap.fallback.is_empty();
    let wants = if forward_only { Wants::MODEL } else { Wants::for_ids(&from_headers, responses) };
    let skim = BodySkim::read_for(protocol, &body, wants).unwrap_or_else(|_| BodySkim::empty(protocol));
    let model = skim.model().map(|m| m.into_owned());
    let previous_response_id = skim.previous_response_id().map(|p| p.into_owned());
    let (turn, conversation, session, later) = if forward_only && model.is_some() {
        // A small body is copied: the `Bytes` may be a slice of the connection's read buffer,
        // which the ledger's queue would otherwise keep alive (measured: +20 MB of relay RSS
        // at 256 streams). A large body was collected from several frames into its own buffer.
        let copy = if body.len() <= 64 * 1024 { Bytes::copy_from_slice(&body) } else { body.clone() };
        let later = keys_later(protocol, &slug, from_headers.clone(), copy, responses);
        (LEGACY_TURN.to_string(), None, None, Some(later))
    } else if forward_only {
        // No model (not JSON, or a body without one): the skim read only the model, so the
        // keys need their own read.
        let (turn, conversation, session) = keys_of(protocol, &slug, from_headers.clone(), &body, responses);
        (turn, Some(conversation), session, None)
    } else {
        let ids = skim.client_ids(from_headers.clone());
        let (turn, _) = skim.turn_key(&slug, &ids);
        let (conversation, _) = skim.conversation_key(&slug, &ids);
        (turn, Some(conversation), ids.session_key(&slug), None)
    };
    drop(skim);
    let incoming = Incoming {
        method,
        rest,
        query: uri.query().map(str::to_string),
        headers,
        body,
        protocol,
        model,
        previous_response_id,
    };
    let model = incoming.model.clone();
    let tags = match read_tags(incoming.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes()))) {
        Ok(tags) => tags_json(&tags),
        Err(invalid) => return reply::invalid_tag(snap.protocol, &invalid),
    };
    let mut run = match state.router.start_turn(&slug, model.as_deref(), turn, conversation, session).await {
        Ok(run) => run,
        Err(e) => return reply::engine_error(snap.protocol, &e),
    };
    run.tags = tags;
    match later {
        // A chain became usable between the two snapshot reads: this request may fall back
        // (and a turn that falls back is kept by its key), so it gets its real keys now.
        Some(_) if !run.snapshot.fallback.is_empty() => {
            let (turn, conversation, session) = keys_of(protocol, &slug, from_headers, &incoming.body, responses);
            (run.turn, run.conversation, run.session) = (turn, Some(conversation), session);
        }
        Some(later) => *run.keys_later.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(later),
        None => {}
    }
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
            BodySkim::read_for(incoming.protocol, &incoming.body, Wants::MODEL)
                .ok()
                .and_then(|skim| skim.with_model(mapped))
                .map(Bytes::from)
                .unwrap_or_else(|| incoming.body.clone())
        }
        _ => incoming.body.clone(),
    }
}

/// The turn key legacy forwarding routes with (by nothing: one key, one attempt); the ledger
/// gets the real keys from [`keys_later`].
const LEGACY_TURN: &str = "legacy";

/// The request's turn, conversation and session keys, computed from a copy of its body (a
/// reference-counted `Bytes`, no copy of the bytes) by the ledger's task once the attempt is
/// recorded: the same keys a routed request gets, off the request path.
fn keys_later(protocol: Protocol, slug: &str, from_headers: ClientIds, body: Bytes, responses: bool) -> KeysLater {
    let slug = slug.to_string();
    KeysLater(Box::new(move || {
        let (turn, conversation, session) = keys_of(protocol, &slug, from_headers, &body, responses);
        LaterKeys { turn, conversation: Some(conversation.as_str().to_string()), session }
    }))
}

/// Turn, conversation and session keys of a request, as routing computes them.
fn keys_of(
    protocol: Protocol,
    slug: &str,
    from_headers: ClientIds,
    body: &[u8],
    responses: bool,
) -> (String, switchyard_core::conversation::ConversationKey, Option<String>) {
    let wants = Wants::for_ids(&from_headers, responses);
    let skim = BodySkim::read_for(protocol, body, wants).unwrap_or_else(|_| BodySkim::empty(protocol));
    let ids = skim.client_ids(from_headers);
    let (turn, _) = skim.turn_key(slug, &ids);
    let (conversation, _) = skim.conversation_key(slug, &ids);
    (turn, conversation, ids.session_key(slug))
}
