//! The relay's side of the engine's routing loop: one physical HTTP attempt with the
//! profile's credential, returned as a classified [`Reply`]. Error answers are classified
//! (through their content coding) and kept for delivery; a legacy success passes straight
//! through; a routed stream is read only until its first content event (or clean end),
//! which is when it becomes a success — the watch that read the held bytes goes on reading
//! the tail, so nothing it saw is lost. An attempt the engine marks `strip_account_state`
//! sends the body without its account-bound items (`account_state.rs`). Everything else the
//! attempt learned — the answer's quota readings, its Responses id, a streamed body's model,
//! whether account state was dropped, a first-byte timeout — goes back in the [`Reply`]'s
//! facts; the transport holds no router and no shared flags. An attempt the engine gives to
//! the official CLI (`Target::cli`) runs it instead (`cli_backend/`).

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use http_body_util::{BodyExt, Either, Full};
use switchyard_core::routing::Failure;
use switchyard_core::Protocol;
use switchyard_engine::{AttemptFacts, Reply, Target, Transport};
use switchyard_providers::content_coding::{Coding, Decoder};
use switchyard_providers::gemini::learned::learned_windows;
use switchyard_providers::gemini::path::{wants_sse, ModelCall};
use switchyard_providers::read_quota;
use switchyard_providers::response_id::response_id_from_body;
use switchyard_providers::stream_watch::{Phase, StreamWatch};
use switchyard_providers::usage::{usage_from_body, Usage};

use crate::account_state::strip_account_state;
use crate::body::outgoing::{BodyCopy, Outgoing};
use crate::cli_backend::CliSlots;
use crate::request::{upstream_body, Incoming};
use crate::upstream::{self, NoAnswer, Upstream, UpstreamBody};
use crate::upstream_request::{is_event_stream, upstream_headers, upstream_url, url_on};

/// An upstream error answer kept to deliver as is if no other attempt succeeds.
pub(crate) struct Kept {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// An answer the relay made itself keeps this `x-switchyard-reason` in routed mode too
    /// (`None`: the provider's answer).
    pub reason: Option<&'static str>,
}

/// A successful answer, ready to stream to the client.
pub(crate) struct Delivered {
    pub status: StatusCode,
    pub headers: HeaderMap,
    /// Bytes already read (routed: the preamble up to the first content, or a whole JSON body).
    pub held: Bytes,
    /// The rest of an event stream or a legacy body, with the watch that read `held`.
    pub tail: Option<(UpstreamBody, Option<Box<StreamWatch>>)>,
    pub coding: Coding,
    /// Usage read so far (a whole JSON body's).
    pub usage: Usage,
    /// The OpenAI Responses answer's id (routed only: from the JSON body or the held events).
    pub response_id: Option<String>,
}

/// What one attempt turned out to be, before the engine's bookkeeping.
pub(crate) enum Answer {
    Failed(Failure, Option<Kept>, Option<i64>),
    Success(Delivered, Option<i64>),
}

pub(crate) struct HttpTransport<'a> {
    pub http: &'a Upstream,
    /// The request as received (a fallback hop builds its own URL and body from it).
    pub incoming: &'a Incoming,
    /// The request's own connection (an attempt to another one is a fallback hop).
    pub connection_id: &'a str,
    /// The request's own connection's upstream URL.
    pub url: String,
    pub body: Outgoing,
    /// A forwarded body's copy (the model is read from it after the answer).
    pub copy: Option<Arc<BodyCopy>>,
    /// The CLI backend's run permits per profile.
    pub cli: &'a CliSlots,
}

impl Transport for HttpTransport<'_> {
    type Delivered = Delivered;
    type Kept = Kept;

    async fn attempt(&self, target: Target<'_>) -> Reply<Delivered, Kept> {
        if let Some(cli) = target.cli {
            return crate::cli_backend::attempt(self, target, cli).await;
        }
        // A fallback hop: that connection's base URL, headers, mapping and timeout.
        let snap = target.snapshot;
        let hop = snap.connection_id != self.connection_id;
        // Gemini names the model in the path: a mapped model rewrites the path, not the body.
        let mapped_rest = gemini_mapped_path(snap.protocol, &self.incoming.rest, target.upstream_model);
        let rest = mapped_rest.as_deref().unwrap_or(&self.incoming.rest);
        let url = match target.base_url {
            // An upstream the engine names for this attempt (an external Codex login's backend).
            Some(base) => std::borrow::Cow::Owned(url_on(base, snap.protocol, rest, self.incoming.query.as_deref())),
            None if hop || mapped_rest.is_some() => {
                std::borrow::Cow::Owned(upstream_url(snap, rest, self.incoming.query.as_deref()))
            }
            None => std::borrow::Cow::Borrowed(self.url.as_str()),
        };
        let headers =
            upstream_headers(&self.incoming.headers, snap, target.secret, target.credential, target.account_id);
        let mut facts = AttemptFacts::default();
        // A hop gets the same bytes, with the model the target names: only forwarding streams,
        // and a forwarded request has no chain to fall back along.
        let body = match &self.body {
            Outgoing::Buffered(own) => {
                let body = upstream_body(snap.protocol, own, self.incoming.model(), target.upstream_model);
                Either::Left(Full::new(account_bound(body, target, &mut facts)))
            }
            Outgoing::Streamed(body) => {
                let taken = body.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
                debug_assert!(taken.is_some(), "a streamed body is sent by one attempt");
                match taken {
                    Some(streamed) => Either::Right(streamed),
                    None => Either::Left(Full::new(Bytes::new())),
                }
            }
        };
        let started = Instant::now();
        let method = self.incoming.method.clone();
        let sent = self.http.send_within(snap.first_byte_timeout, method, &url, headers, body).await;
        facts.timed_out = matches!(sent, Err(NoAnswer::TimedOut));
        // A streamed body's model, read from its copy once the attempt was answered.
        if target.model.is_none() {
            facts.late_model = self.copy.as_ref().and_then(|copy| copy.model(snap.protocol));
        }
        let answer = match sent {
            Err(_) => Answer::Failed(Failure::network(), None, None),
            Ok(resp) => {
                // Every answer's limit headers, before anything is read: the bytes stay as they are.
                facts.quota = read_quota(snap.protocol, resp.headers(), target.now);
                let shape = StreamShape::of(snap.protocol, &self.incoming.rest, self.incoming.query.as_deref());
                read_answer(snap.protocol, shape, started, target.now, resp, !target.pass_through).await
            }
        };
        // Gemini sends no limit headers: a structured quota refusal is the reading.
        if let (Protocol::Gemini, Answer::Failed(_, Some(kept), _)) = (snap.protocol, &answer) {
            facts.quota.extend(learned_from(kept, target.now));
        }
        let reply = match answer {
            Answer::Success(mut d, ttfb_ms) => {
                facts.response_id = d.response_id.take();
                Reply::deliver(d.status.as_u16(), ttfb_ms, d)
            }
            Answer::Failed(failure, kept, ttfb_ms) => {
                Reply::failed(failure, kept.as_ref().map(|k| k.status.as_u16()), ttfb_ms, kept)
            }
        };
        reply.with(facts)
    }
}

/// A Gemini call's path for the model this attempt sends upstream, when that differs from the
/// one in the client's path (`None`: the path as it came).
fn gemini_mapped_path(protocol: Protocol, rest: &str, upstream_model: Option<&str>) -> Option<String> {
    if protocol != Protocol::Gemini {
        return None;
    }
    let call = ModelCall::parse(rest)?;
    let upstream = upstream_model?;
    (call.model != upstream).then(|| call.with_model(upstream))
}

/// How a successful answer streams, known from the request: server-sent events (read by the
/// answer's `content-type`), or Gemini's `streamGenerateContent` without `alt=sse`, one JSON
/// array whose elements are the chunks (`application/json`, read like a stream all the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamShape {
    EventsOrJson,
    GeminiArray,
}

impl StreamShape {
    pub(crate) fn of(protocol: Protocol, rest: &str, query: Option<&str>) -> Self {
        let array = protocol == Protocol::Gemini
            && ModelCall::parse(rest).is_some_and(|call| call.is_stream())
            && !query.is_some_and(wants_sse);
        if array {
            StreamShape::GeminiArray
        } else {
            StreamShape::EventsOrJson
        }
    }
}

/// The quota states a kept Gemini refusal teaches (`gemini/learned.rs`), read through its coding.
fn learned_from(kept: &Kept, now: SystemTime) -> Vec<switchyard_providers::QuotaWindow> {
    let coding = Coding::from_header(kept.headers.get(http::header::CONTENT_ENCODING).and_then(|v| v.to_str().ok()));
    let body = Decoder::decode_all(coding, &kept.body).unwrap_or_default();
    learned_windows(kept.status.as_u16(), &body, now)
}

/// `body` without its account-bound items when the attempt asks for that (noted in `facts`
/// when any were dropped).
fn account_bound(body: Bytes, target: Target<'_>, facts: &mut AttemptFacts) -> Bytes {
    let stripped = if target.strip_account_state { strip_account_state(target.snapshot.protocol, &body) } else { None };
    facts.dropped_account_state = stripped.is_some();
    stripped.unwrap_or(body)
}

/// Reads an upstream answer. `hold`: a stream is read until its first content (routed);
/// otherwise a success is handed on at once (legacy pass-through). `now`: the engine clock's
/// wall time when the answer arrived (cooldown hints are dated with the clock circuits use).
pub(crate) async fn read_answer(
    protocol: Protocol,
    shape: StreamShape,
    started: Instant,
    now: SystemTime,
    resp: Response<UpstreamBody>,
    hold: bool,
) -> Answer {
    let status = resp.status();
    let ttfb = Some(ms_since(started));
    let (parts, mut upstream) = resp.into_parts();
    let headers = parts.headers;
    let coding = Coding::from_header(headers.get(http::header::CONTENT_ENCODING).and_then(|v| v.to_str().ok()));
    if !status.is_success() {
        let body = upstream::collect(upstream).await.unwrap_or_default();
        let readable = Decoder::decode_all(coding, &body).unwrap_or_default();
        let c = switchyard_providers::classify(protocol, status.as_u16(), &headers, &readable, now);
        return Answer::Failed(c.failure, Some(Kept { status, headers, body, reason: None }), ttfb);
    }
    let array = shape == StreamShape::GeminiArray;
    let sse = is_event_stream(&headers) || array;
    let new_watch =
        || Box::new(if array { StreamWatch::gemini_json_array(coding) } else { StreamWatch::new(protocol, coding) });
    if !hold {
        let watch = sse.then(new_watch);
        let d = Delivered {
            status,
            headers,
            held: Bytes::new(),
            tail: Some((upstream, watch)),
            coding,
            usage: Usage::default(),
            response_id: None,
        };
        return Answer::Success(d, ttfb);
    }
    if !sse {
        return match upstream::collect(upstream).await {
            Ok(body) => {
                let decoded = Decoder::decode_all(coding, &body);
                let usage = decoded.as_ref().map(|b| usage_from_body(b)).unwrap_or_default();
                let response_id = match (protocol, &decoded) {
                    (Protocol::Openai, Some(b)) => response_id_from_body(b),
                    _ => None,
                };
                let d = Delivered { status, headers, held: body, tail: None, coding, usage, response_id };
                Answer::Success(d, ttfb)
            }
            Err(_) => Answer::Failed(Failure::network(), None, ttfb),
        };
    }
    let mut watch = new_watch();
    let mut held: Vec<u8> = Vec::new();
    loop {
        match upstream.frame().await {
            // Trailers are not passed on (the protocols do not use them).
            Some(Ok(frame)) if !frame.is_data() => {}
            Some(Ok(frame)) => {
                let chunk = frame.into_data().unwrap_or_default();
                held.extend_from_slice(&chunk);
                watch.push(&chunk, now);
                match watch.phase() {
                    Phase::Held => {}
                    // Kept like an error answer: delivered as the provider sent it if no other
                    // attempt succeeds.
                    Phase::FailedBeforeOutput(f) => {
                        return Answer::Failed(
                            f,
                            Some(Kept { status, headers, body: Bytes::from(held), reason: None }),
                            ttfb,
                        );
                    }
                    Phase::Output => {
                        let usage = watch.usage();
                        let response_id = watch.response_id().map(str::to_string);
                        let held = Bytes::from(held);
                        let tail = Some((upstream, Some(watch)));
                        let d = Delivered { status, headers, held, tail, coding, usage, response_id };
                        return Answer::Success(d, ttfb);
                    }
                }
            }
            // The stream broke or ended before any content: nothing reached the client yet.
            Some(Err(_)) | None => return Answer::Failed(Failure::network(), None, ttfb),
        }
    }
}

fn ms_since(started: Instant) -> i64 {
    i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX)
}
