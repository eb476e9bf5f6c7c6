//! The entry of every `/c/{slug}/…` request: host and method checks and the token check on
//! the headers alone, then the path, the connection snapshot (looked up once per request)
//! and the body (only for a client that presented the token): forwarded as it streams in
//! (legacy without a fallback chain), or buffered and skimmed for the turn and conversation
//! keys and a Responses request's `previous_response_id` (continuity); a routed Responses
//! answer's id is remembered with the profile that produced it.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Method, Request};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming as IncomingBody;
use switchyard_core::body_skim::{BodySkim, DigestMemo, Wants};
use switchyard_core::conversation::ConversationKey;
use switchyard_core::routing::{identify_client, ClientFacts};
use switchyard_core::states::OfficialClient;
use switchyard_core::tag::{read_tags, tags_json};
use switchyard_core::turn::ClientIds;
use switchyard_core::Protocol;
use switchyard_engine::{KeysLater, LaterKeys, RequestKeys, RouteRequest};
use switchyard_providers::gemini::path::ModelCall;

use crate::auth::TokenPlace;
use crate::body::client_body::Response;
use crate::body::outgoing::{BodyCopy, Outgoing, StreamedBody, SMALL_BODY};
use crate::connections::ConnMark;
use crate::respond::respond;
use crate::state::RelayState;
use crate::transport::HttpTransport;
use crate::upstream_request::{is_models_listing, upstream_url};
use crate::{guard, header_names, reply, MAX_BODY_BYTES};

/// A client request, as received.
#[derive(Debug)]
pub struct Incoming {
    pub method: Method,
    pub rest: String,
    pub query: Option<String>,
    pub headers: HeaderMap,
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

/// A `/c/{slug}/{rest}` request (`routes.rs` matched the path's shape).
/// `peer`: whether the peer is on loopback (only there does the install's own token count) and
/// the connection TLS (any `Host` then).
pub(crate) async fn handle(
    state: &Arc<RelayState>,
    mark: &ConnMark,
    peer: crate::handler::Peer,
    req: Request<IncomingBody>,
) -> Response {
    let (parts, body) = req.into_parts();
    let (method, uri, mut headers) = (parts.method, parts.uri, parts.headers);
    if let Err(refused) = guard::before_auth(&method, &headers, peer.tls) {
        return refused.response();
    }
    // A Gemini client's `?key=` is the relay token: checked as its header, never forwarded.
    let query = crate::auth::key_from_query(uri.query(), &mut headers);
    let Some((place, caller)) = state.caller(&headers, peer.loopback) else {
        return reply::unauthorized();
    };
    mark.authenticated();
    let (slug, rest) = match guard::relay_path(uri.path()) {
        Ok((slug, rest)) => (slug, rest.to_string()),
        Err(refused) => return refused.response(),
    };
    if guard::declared_length(&headers).is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return guard::too_large();
    }
    // A pool (`/c/POOL/…`, or `/c/POOL@MEMBER/…` naming its member): `pool_request.rs`.
    let pinned_member = slug.split_once('@');
    let snap = match pinned_member {
        Some(_) => Err(None),
        None => state.router.snapshot(slug).await.map_err(Some),
    };
    let snap = match snap {
        Ok(s) => s,
        Err(e) if e.as_ref().is_none_or(|e| e.code() == switchyard_core::ErrorCode::NotFound) => {
            let (name, member) = pinned_member.map_or((slug, None), |(p, m)| (p, Some(m)));
            let pool = match state.router.pool_snapshot(name).await {
                Ok(Some(pool)) => pool,
                Ok(None) => {
                    let e = e.unwrap_or_else(|| switchyard_engine::EngineError::not_found_pool(name));
                    return reply::engine_error(reply::guess_protocol(&rest, &headers), &e);
                }
                Err(e) => return reply::engine_error(reply::guess_protocol(&rest, &headers), &e),
            };
            let from_headers = ClientIds::read_headers(|name| header_names::text(&headers, name));
            let received =
                Received { method, rest, query: uri.query().map(str::to_string), headers, protocol: pool.protocol };
            let caller = PoolCaller { user: caller.user() };
            return crate::pool_request::handle(state, &pool, member, received, body, from_headers, caller).await;
        }
        Err(e) => {
            let e = e.unwrap_or_else(|| switchyard_engine::EngineError::not_found_pool(slug));
            return reply::engine_error(reply::guess_protocol(&rest, &headers), &e);
        }
    };
    // A request naming its profile (an official CLI run by `switchyard exec`) forwards the
    // client's own credential: only with the relay token in its own header, so what is
    // forwarded is never the relay token.
    let pinned = pinned_profile(&headers);
    if pinned.is_some() && place != TokenPlace::Own {
        return reply::pin_refused(snap.protocol);
    }
    if method == Method::GET && pinned.is_none() && snap.lists_models() && is_models_listing(&rest) {
        return reply::models(snap.protocol, &state.router.served_models(&snap));
    }
    let tags = match read_tags(headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes()))) {
        Ok(tags) => tags_json(&tags),
        Err(invalid) => return reply::invalid_tag(snap.protocol, &invalid),
    };
    let from_headers = ClientIds::read_headers(|name| header_names::text(&headers, name));
    let received = Received { method, rest, query, headers, protocol: snap.protocol };
    // Forwarding routes by nothing in the body; routed requests are buffered (an attempt may
    // be retried) and read once.
    let read = if snap.forwards() {
        forwarded(received, body, slug, from_headers, state).await
    } else {
        buffered(received, body, slug, from_headers, &state.memo).await
    };
    let Ok(prepared) = read else { return guard::too_large() };
    let request = |keys, incoming: &Incoming| RouteRequest {
        snapshot: snap.clone(),
        model: incoming.model.clone(),
        keys,
        tags,
        previous_response_id: incoming.previous_response_id().map(str::to_string),
        pinned,
        client: client_of(&incoming.headers),
        user: caller.user(),
        pool: None,
    };
    route_prepared(state, snap.protocol, &snap.connection_id, prepared, request).await
}

/// The tail a connection's request and a pool's share: the router takes the request `request`
/// builds from the prepared body's keys, with the transport that sends its attempts
/// (`connection_id`: the request's own connection, `""` for a pool — each attempt names its
/// member), and the answer or refusal comes back in `protocol`'s shape.
pub(crate) async fn route_prepared(
    state: &RelayState,
    protocol: Protocol,
    connection_id: &str,
    prepared: Prepared,
    request: impl FnOnce(RequestKeys, &Incoming) -> RouteRequest,
) -> Response {
    let Prepared { incoming, outgoing, keys, copy } = prepared;
    let request = request(keys, &incoming);
    let transport = HttpTransport {
        http: &state.http,
        incoming: &incoming,
        connection_id,
        url: upstream_url(&request.snapshot, &incoming.rest, incoming.query.as_deref()),
        body: outgoing,
        copy,
        cli: &state.cli,
    };
    let routed = match state.router.route(request, &transport).await {
        Ok(r) => r,
        Err(e) => return reply::engine_error(protocol, &e),
    };
    if transport.copy.as_ref().is_some_and(|copy| copy.too_large()) {
        return guard::too_large();
    }
    respond(protocol, incoming.is_responses_api(), routed)
}

/// Who sent a pool request: the relay user.
pub(crate) struct PoolCaller {
    pub user: Option<String>,
}

/// The profile a request names (`x-switchyard-profile`, trimmed; empty is none).
pub(crate) fn pinned_profile(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header_names::X_SWITCHYARD_PROFILE)?.to_str().ok()?.trim();
    (!value.is_empty()).then(|| value.to_string())
}

/// The official client a request identifies as, from what it sends (core `identify_client`).
pub(crate) fn client_of(headers: &HeaderMap) -> Option<OfficialClient> {
    let text = |name| headers.get(name).and_then(|v: &http::HeaderValue| v.to_str().ok());
    identify_client(&ClientFacts {
        user_agent: text(http::header::USER_AGENT),
        x_app: text(header_names::X_APP),
        originator: text(header_names::ORIGINATOR),
    })
}

/// The parts of a request read before its body.
pub(crate) struct Received {
    pub(crate) method: Method,
    pub(crate) rest: String,
    pub(crate) query: Option<String>,
    pub(crate) headers: HeaderMap,
    pub(crate) protocol: Protocol,
}

impl Received {
    fn responses_api(&self) -> bool {
        self.rest.trim_end_matches('/').ends_with("responses")
    }
}

/// A request ready to route: as received, what its attempts send, its keys, and (forwarded)
/// the copy of its body the model and the keys are read from later.
pub(crate) struct Prepared {
    pub(crate) incoming: Incoming,
    pub(crate) outgoing: Outgoing,
    pub(crate) keys: RequestKeys,
    pub(crate) copy: Option<Arc<BodyCopy>>,
}

/// The body over the relay's limit.
pub(crate) struct TooLarge;

/// Forwarding: nothing in the body is read before it goes upstream. A body declared at most
/// `SMALL_BODY` long is taken whole (it comes with the head); a larger one streams
/// (`body/outgoing.rs`). The model and the ledger's keys come from the copy later.
async fn forwarded(
    r: Received,
    body: IncomingBody,
    slug: &str,
    ids: ClientIds,
    state: &RelayState,
) -> Result<Prepared, TooLarge> {
    let memo = &state.memo;
    let (outgoing, copy) = if guard::declared_length(&r.headers).is_some_and(|n| n <= SMALL_BODY) {
        let body = whole(body).await?;
        let copy = Arc::new(BodyCopy::whole(&body, &state.copies));
        (Outgoing::Buffered(body), copy)
    } else {
        let (streamed, copy) = StreamedBody::new(body, MAX_BODY_BYTES, &state.copies);
        (Outgoing::streamed(streamed), copy)
    };
    let keys = RequestKeys::Later(keys_later(r.protocol, slug, ids, copy.clone(), r.responses_api(), memo.clone()));
    let model = path_model(r.protocol, &r.rest);
    let Received { method, rest, query, headers, .. } = r;
    let incoming = Incoming { method, rest, query, headers, model, previous_response_id: None };
    Ok(Prepared { incoming, outgoing, keys, copy: Some(copy) })
}

/// Routed: the whole body, skimmed once with no JSON tree (core `body_skim/`) for what the
/// headers leave open, the messages seen before taken from the memo.
pub(crate) async fn buffered(
    r: Received,
    body: IncomingBody,
    slug: &str,
    ids: ClientIds,
    memo: &DigestMemo,
) -> Result<Prepared, TooLarge> {
    let body = whole(body).await?;
    let skim = skim(r.protocol, &body, &ids, r.responses_api(), memo);
    let (turn, conversation, session) = keys_from(&skim, slug, ids);
    let keys = RequestKeys::Now { turn, conversation: Some(conversation), session };
    let model = path_model(r.protocol, &r.rest).or_else(|| skim.model().map(|m| m.into_owned()));
    let previous_response_id = skim.previous_response_id().map(|p| p.into_owned());
    drop(skim);
    let Received { method, rest, query, headers, .. } = r;
    let incoming = Incoming { method, rest, query, headers, model, previous_response_id };
    Ok(Prepared { incoming, outgoing: Outgoing::Buffered(body), keys, copy: None })
}

/// The model a request names in its path: Gemini's `models/{model}:method` (its body names
/// none). Read here, where every request is prepared, so a connection's request and a pool's
/// route by the same model.
fn path_model(protocol: Protocol, rest: &str) -> Option<String> {
    (protocol == Protocol::Gemini).then(|| ModelCall::parse(rest).map(|call| call.model.to_string())).flatten()
}

/// The whole body, refused past [`MAX_BODY_BYTES`] (or when the client's body breaks: the
/// same 413 as before).
async fn whole(body: IncomingBody) -> Result<Bytes, TooLarge> {
    Ok(Limited::new(body, MAX_BODY_BYTES).collect().await.map_err(|_| TooLarge)?.to_bytes())
}

/// The request body sent upstream: the client's bytes (`body`, naming `asked`), with the
/// model renamed only where the engine's target names another (`upstream`: a mapping, or a
/// fallback hop's own model).
/// A Gemini body names no model (the path does): it is never rewritten.
pub(crate) fn upstream_body(protocol: Protocol, body: &Bytes, asked: Option<&str>, upstream: Option<&str>) -> Bytes {
    if protocol == Protocol::Gemini {
        return body.clone();
    }
    match (asked, upstream) {
        (Some(asked), Some(upstream)) if asked != upstream => BodySkim::read_for(protocol, body, Wants::MODEL)
            .ok()
            .and_then(|skim| skim.with_model(upstream))
            .map(Bytes::from)
            .unwrap_or_else(|| body.clone()),
        _ => body.clone(),
    }
}

/// The request's turn, conversation and session keys, computed by the ledger's writer from
/// the copy of its streamed body once the attempt is recorded: the same keys a routed
/// request gets, off the request path.
fn keys_later(
    protocol: Protocol,
    slug: &str,
    from_headers: ClientIds,
    copy: Arc<BodyCopy>,
    responses: bool,
    memo: Arc<DigestMemo>,
) -> KeysLater {
    let slug = slug.to_string();
    KeysLater(Box::new(move || {
        let (turn, conversation, session) =
            copy.read(|body| keys_of(protocol, &slug, from_headers, body, responses, &memo));
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
    memo: &DigestMemo,
) -> (String, ConversationKey, Option<String>) {
    keys_from(&skim(protocol, body, &from_headers, responses, memo), slug, from_headers)
}

/// The skim of what the headers leave open (`Wants::for_ids`), messages seen before taken
/// from the memo; a body that is not JSON skims as empty.
fn skim<'b>(
    protocol: Protocol,
    body: &'b [u8],
    from_headers: &ClientIds,
    responses: bool,
    memo: &'b DigestMemo,
) -> BodySkim<'b> {
    let wants = Wants::for_ids(from_headers, responses);
    BodySkim::read_for_remembered(protocol, body, wants, memo).unwrap_or_else(|_| BodySkim::empty(protocol))
}

/// Turn, conversation and session keys from a skim and the ids the headers carried.
fn keys_from(skim: &BodySkim<'_>, slug: &str, from_headers: ClientIds) -> (String, ConversationKey, Option<String>) {
    let ids = skim.client_ids(from_headers);
    let (turn, _) = skim.turn_key(slug, &ids);
    let (conversation, _) = skim.conversation_key(slug, &ids);
    (turn, conversation, ids.session_key(slug))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Claude-Code-like body: a system prompt and `rounds` tool rounds after one human message.
    fn conversation(rounds: usize) -> Vec<u8> {
        let mut messages =
            vec![serde_json::json!({"role": "user", "content": [{"type": "text", "text": "fix the test"}]})];
        for i in 0..rounds {
            messages.push(serde_json::json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": format!("toolu_{i:024}"), "name": "Read", "input": {"file_path": format!("/src/f{i}.rs")}}]}));
            messages.push(serde_json::json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("toolu_{i:024}"), "content": "\tfn x() {}\n".repeat(40)}]}));
        }
        serde_json::to_vec(
            &serde_json::json!({"model": "m", "system": "You are a coding agent. ".repeat(20), "messages": messages}),
        )
        .unwrap_or_default()
    }

    #[test]
    fn keys_read_with_the_relay_s_memo_are_the_keys_read_without() {
        let memo = DigestMemo::default();
        let headers = ClientIds::default();
        for rounds in [1, 2, 3] {
            let body = conversation(rounds);
            let without = {
                let skim =
                    BodySkim::read(Protocol::Anthropic, &body).unwrap_or_else(|_| BodySkim::empty(Protocol::Anthropic));
                let ids = skim.client_ids(headers.clone());
                (skim.turn_key("c", &ids).0, skim.conversation_key("c", &ids).0)
            };
            for sight in ["first", "again"] {
                let (turn, conversation, _) = keys_of(Protocol::Anthropic, "c", headers.clone(), &body, false, &memo);
                assert_eq!(
                    (turn, conversation),
                    without.clone(),
                    "{rounds} rounds, {sight} sight: the memo changes no key"
                );
            }
        }
        assert!(memo.len() >= 4, "the tool results and the system prompt were remembered: {}", memo.len());
    }
}
