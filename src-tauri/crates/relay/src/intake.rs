//! A client request parsed into one value ([`Intake`]) before it is routed: as received (method,
//! path after the name, query without any `key`, headers), what the routing reads of it (the
//! model, the turn, conversation and session keys, a Responses `previous_response_id`, the tags,
//! the official client it identifies as, the profile it names) and what its attempts send. The
//! body is read as the target needs: forwarded as it streams in (a legacy connection with no
//! chain: nothing in the body is read first, its keys are computed later on the ledger's thread
//! from a copy), or read whole and skimmed once with no JSON tree (core `body_skim/`), the
//! messages seen before taken from the memo. The routing then takes [`Intake::route_request`].

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Method};
use http_body_util::Limited;
use hyper::body::Incoming as IncomingBody;
use switchyard_core::body_skim::{BodySkim, DigestMemo, Wants};
use switchyard_core::conversation::ConversationKey;
use switchyard_core::limit::Estimate;
use switchyard_core::routing::{identify_client, ClientFacts};
use switchyard_core::states::OfficialClient;
use switchyard_core::tag::{read_tags, tags_json};
use switchyard_core::turn::ClientIds;
use switchyard_core::{InvalidInput, Protocol};
use switchyard_engine::{DeferredKeys, LedgerKeys, Pin, RequestKeys, Resolved, RouteRequest};
use switchyard_providers::dialect;
use switchyard_vault::Secret;

use crate::body::copy_buffers::CopyBuffers;
use crate::body::outgoing::{BodyCopy, Outgoing, StreamedBody, SMALL_BODY};
use crate::{header_names, MAX_BODY_BYTES};

/// A client request as received, before its body is read.
pub(crate) struct Received {
    pub(crate) method: Method,
    /// The path after `/c/{name}/`.
    pub(crate) rest: String,
    /// The query, without any `key` pair (`auth::key_from_query`).
    pub(crate) query: Option<String>,
    pub(crate) headers: HeaderMap,
    /// The body's declared length (`Content-Length`), read once by the handler's size check.
    pub(crate) declared_length: Option<u64>,
}

impl Received {
    /// The OpenAI Responses API (its stream events differ from chat completions).
    pub(crate) fn is_responses_api(&self) -> bool {
        self.rest.trim_end_matches('/').ends_with("responses")
    }

    /// The caller's tags (`x-switchyard-tag-*`) as a JSON object, or the limit one breaks.
    pub(crate) fn tags(&self) -> Result<Option<String>, InvalidInput> {
        read_tags(self.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes()))).map(|tags| tags_json(&tags))
    }

    /// The profile the request names (`x-switchyard-profile`, trimmed; empty is none).
    pub(crate) fn pinned_profile(&self) -> Option<String> {
        self.pinned_name().map(str::to_string)
    }

    /// Whether the request names its profile ([`Received::pinned_profile`] without a copy).
    pub(crate) fn is_pinned(&self) -> bool {
        self.pinned_name().is_some()
    }

    fn pinned_name(&self) -> Option<&str> {
        let value = self.headers.get(header_names::X_SWITCHYARD_PROFILE)?.to_str().ok()?.trim();
        (!value.is_empty()).then_some(value)
    }

    /// A request naming its profile, with the credential the client carries (its own: the
    /// relay token is in `x-switchyard-token` on such a request, `request.rs` checks it).
    pub(crate) fn pin(&self) -> Option<Pin> {
        let profile = self.pinned_profile()?;
        let credential = crate::auth::presented(&self.headers).unwrap_or_else(|| Secret::new(""));
        Some(Pin { profile, credential: std::sync::Arc::new(credential) })
    }

    /// The official client the request identifies as, from what it sends (core `identify_client`).
    pub(crate) fn client(&self) -> Option<OfficialClient> {
        let text = |name| self.headers.get(name).and_then(|v: &http::HeaderValue| v.to_str().ok());
        identify_client(&ClientFacts {
            user_agent: text(http::header::USER_AGENT),
            x_app: text(header_names::X_APP),
            originator: text(header_names::ORIGINATOR),
        })
    }
}

/// A request ready to route: as received, what routing reads of it, and what its attempts send.
pub(crate) struct Intake {
    pub(crate) received: Received,
    /// The model the request names (its body's top-level `model`, or Gemini's path); `None` when
    /// the body was not read first or names none.
    pub(crate) model: Option<String>,
    /// A Responses request's non-empty `previous_response_id`.
    pub(crate) previous_response_id: Option<String>,
    /// What the attempts send.
    pub(crate) body: Outgoing,
    /// A forwarded body's copy (the model is read from it after the answer).
    pub(crate) copy: Option<Arc<BodyCopy>>,
}

/// The body over the relay's limit.
pub(crate) struct TooLarge;

/// What reading a body needs of the relay.
#[derive(Clone, Copy)]
pub(crate) struct Readers<'a> {
    pub(crate) memo: &'a Arc<DigestMemo>,
    pub(crate) copies: &'a Arc<CopyBuffers>,
}

impl Intake {
    /// Reads `body` as `target` needs it (see the module), with the keys the request is routed
    /// and recorded by. `read_first`: the body is read whole before routing even where the
    /// target would forward it (a limit counts tokens or USD, or the caller's scope names
    /// models: admission and the scope need the model and the estimate first).
    pub(crate) async fn read(
        received: Received,
        body: IncomingBody,
        target: &Resolved,
        readers: Readers<'_>,
        read_first: bool,
    ) -> Result<(Intake, RequestKeys), TooLarge> {
        let headers = header_names::HeaderText::of(&received.headers);
        let ids = ClientIds::read_headers(|name| headers.text(name));
        if target.forwards() && !read_first {
            forwarded(received, body, target, ids, readers).await
        } else {
            buffered(received, body, target, ids, readers.memo).await
        }
    }

    pub(crate) fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// A Responses request's `previous_response_id`: state held by the account that made it.
    pub(crate) fn previous_response_id(&self) -> Option<&str> {
        if !self.received.is_responses_api() {
            return None;
        }
        self.previous_response_id.as_deref()
    }

    /// The request's worst case for a token or USD limit: input from the body's length, the
    /// output cap it names (`max_tokens` and its dialects' spellings); none for a body not read.
    pub(crate) fn estimate(&self) -> Estimate {
        match &self.body {
            Outgoing::Buffered(body) => Estimate::of(body.len() as u64, output_cap(body)),
            _ => Estimate::default(),
        }
    }

    /// The request the router takes, to `target` with `keys`, from `user` with `tags`, reserving
    /// `estimate` from the limits it meets.
    pub(crate) fn route_request(
        &self,
        target: Resolved,
        keys: RequestKeys,
        tags: Option<String>,
        user: Option<String>,
        estimate: Estimate,
    ) -> RouteRequest {
        let pinned = self.received.pin();
        // The client rule's question, asked only where the target can need its answer.
        let client = if pinned.is_some() || target.reads_client() { self.received.client() } else { None };
        RouteRequest {
            target,
            model: self.model.clone(),
            keys,
            tags,
            previous_response_id: self.previous_response_id().map(str::to_string),
            pinned,
            client,
            user,
            estimate,
        }
    }
}

/// The output cap a body names: Anthropic's and Chat Completions' `max_tokens`, Chat
/// Completions' `max_completion_tokens`, Responses' `max_output_tokens`, Gemini's
/// `generationConfig.maxOutputTokens` (read only when a limit needs the estimate).
fn output_cap(body: &[u8]) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct Caps {
        max_tokens: Option<u64>,
        max_completion_tokens: Option<u64>,
        max_output_tokens: Option<u64>,
        #[serde(rename = "generationConfig")]
        generation: Option<Generation>,
    }
    #[derive(serde::Deserialize)]
    struct Generation {
        #[serde(rename = "maxOutputTokens")]
        max_output_tokens: Option<u64>,
    }
    let caps: Caps = serde_json::from_slice(body).ok()?;
    caps.max_tokens
        .or(caps.max_completion_tokens)
        .or(caps.max_output_tokens)
        .or(caps.generation.and_then(|g| g.max_output_tokens))
}

/// Forwarding: nothing in the body is read before it goes upstream. A body declared at most
/// `SMALL_BODY` long is taken whole (it comes with the head); a larger one streams
/// (`body/outgoing.rs`). The model and the ledger's keys come from the copy later.
async fn forwarded(
    r: Received,
    body: IncomingBody,
    target: &Resolved,
    ids: ClientIds,
    readers: Readers<'_>,
) -> Result<(Intake, RequestKeys), TooLarge> {
    let protocol = target.protocol();
    let (outgoing, copy) = if r.declared_length.is_some_and(|n| n <= SMALL_BODY) {
        let body = whole(body).await?;
        let copy = Arc::new(BodyCopy::whole(&body, readers.copies));
        (Outgoing::Buffered(body), copy)
    } else {
        let (streamed, copy) = StreamedBody::new(body, MAX_BODY_BYTES, readers.copies);
        (Outgoing::streamed(streamed), copy)
    };
    let later = deferred_keys(protocol, target.name(), ids, copy.clone(), r.is_responses_api(), readers.memo.clone());
    let model = path_model(protocol, &r.rest);
    let intake = Intake { received: r, model, previous_response_id: None, body: outgoing, copy: Some(copy) };
    Ok((intake, RequestKeys::Later(later)))
}

/// Routed: the whole body, skimmed once with no JSON tree (core `body_skim/`) for what the
/// headers leave open, the messages seen before taken from the memo.
async fn buffered(
    r: Received,
    body: IncomingBody,
    target: &Resolved,
    ids: ClientIds,
    memo: &DigestMemo,
) -> Result<(Intake, RequestKeys), TooLarge> {
    let protocol = target.protocol();
    let body = whole(body).await?;
    let skim = skim(protocol, &body, &ids, r.is_responses_api(), memo);
    let (turn, conversation, session) = keys_from(&skim, target.name(), ids);
    let keys = RequestKeys::Now { turn, conversation: Some(conversation), session };
    let model = path_model(protocol, &r.rest).or_else(|| skim.model().map(|m| m.into_owned()));
    let previous_response_id = skim.previous_response_id().map(|p| p.into_owned());
    drop(skim);
    Ok((Intake { received: r, model, previous_response_id, body: Outgoing::Buffered(body), copy: None }, keys))
}

/// The model a request names in its path (Gemini's `models/{model}:method`; its body names
/// none). Read here, where every request is prepared, so a connection's request and a pool's
/// route by the same model.
fn path_model(protocol: Protocol, rest: &str) -> Option<String> {
    dialect::of(protocol).path_model(rest).map(str::to_string)
}

/// The whole body, refused past [`MAX_BODY_BYTES`] (or when the client's body breaks: the
/// same 413 as before).
async fn whole(body: IncomingBody) -> Result<Bytes, TooLarge> {
    crate::body::whole::whole(Limited::new(body, MAX_BODY_BYTES)).await.map_err(|_| TooLarge)
}

/// The request's turn, conversation and session keys, computed by the ledger's writer from
/// the copy of its streamed body once the attempt is recorded: the same keys a routed
/// request gets, off the request path.
fn deferred_keys(
    protocol: Protocol,
    name: &str,
    from_headers: ClientIds,
    copy: Arc<BodyCopy>,
    responses: bool,
    memo: Arc<DigestMemo>,
) -> DeferredKeys {
    let name = name.to_string();
    DeferredKeys(Box::new(move || {
        let (turn, conversation, session) =
            copy.read(|body| keys_of(protocol, &name, from_headers, body, responses, &memo));
        LedgerKeys { turn, conversation: Some(conversation.as_str().to_string()), session }
    }))
}

/// Turn, conversation and session keys of a request, as routing computes them.
fn keys_of(
    protocol: Protocol,
    name: &str,
    from_headers: ClientIds,
    body: &[u8],
    responses: bool,
    memo: &DigestMemo,
) -> (String, ConversationKey, Option<String>) {
    keys_from(&skim(protocol, body, &from_headers, responses, memo), name, from_headers)
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
fn keys_from(skim: &BodySkim<'_>, name: &str, from_headers: ClientIds) -> (String, ConversationKey, Option<String>) {
    let ids = skim.client_ids(from_headers);
    let ((turn, _), (conversation, _)) = skim.keys(name, &ids);
    (turn, conversation, ids.session_key(name))
}

/// The request body sent upstream: the client's bytes (`body`, naming `asked`), with the
/// model renamed only where the engine's target names another (`upstream`: a mapping, or a
/// fallback hop's own model). A body of a dialect that names the model in the path (Gemini)
/// is never rewritten.
pub(crate) fn upstream_body(protocol: Protocol, body: &Bytes, asked: Option<&str>, upstream: Option<&str>) -> Bytes {
    if !dialect::of(protocol).body_names_model() {
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
