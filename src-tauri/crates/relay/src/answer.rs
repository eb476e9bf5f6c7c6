//! What an upstream answer delivered, read for the routing loop: an error answer kept to deliver
//! as it is ([`Kept`]), or a success ready to stream on ([`Delivered`]: the bytes read so far and
//! the tail). [`read_answer`] reads one: an error answer whole and classified (through its
//! content coding); a legacy success straight through; a routed stream only until its first
//! content event (or clean end), which is when it becomes a success — the watch that read the
//! held bytes goes on reading the tail, so nothing it saw is lost.

use std::time::{Instant, SystemTime};

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use http_body_util::BodyExt;
use switchyard_core::routing::Failure;
use switchyard_core::Protocol;
use switchyard_providers::content_coding::{Coding, Decoder};
use switchyard_providers::dialect;
use switchyard_providers::stream_watch::{Phase, StreamWatch};
use switchyard_providers::usage::{usage_from_body, Usage};

use crate::body::whole::whole;
use crate::upstream::UpstreamBody;
use crate::upstream_request::is_event_stream;

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
    /// Usage read so far (a stream's preamble, a CLI backend's answer).
    pub usage: Usage,
    /// A whole JSON body, decoded, whose usage the ledger's writer reads (`respond::deliver`)
    /// instead of the request path; `None` when `usage` says it (or nothing can).
    pub usage_later: Option<Vec<u8>>,
    /// The OpenAI Responses answer's id (routed only: from the JSON body or the held events).
    pub response_id: Option<String>,
}

/// What one attempt turned out to be, before the engine's bookkeeping.
pub(crate) enum Answer {
    Failed(Failure, Option<Kept>, Option<i64>),
    Success(Delivered, Option<i64>),
}

/// How a successful answer streams, known from the request: server-sent events (read by the
/// answer's `content-type`), or Gemini's `streamGenerateContent` without `alt=sse`, one JSON
/// array whose elements are the chunks (`application/json`, read like a stream all the same);
/// and whether a whole JSON answer may name a response (`resp_…`, the OpenAI Responses API:
/// only then is it looked for, a chat completion never names one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StreamShape {
    pub(crate) array: bool,
    pub(crate) response_ids: bool,
}

impl StreamShape {
    /// Events or one JSON body, any of which may name a response (the stream properties' shape).
    #[cfg(test)]
    pub(crate) const EVENTS_OR_JSON: StreamShape = StreamShape { array: false, response_ids: true };

    pub(crate) fn of(protocol: Protocol, rest: &str, query: Option<&str>) -> Self {
        let dialect = dialect::of(protocol);
        StreamShape { array: dialect.json_array_stream(rest, query), response_ids: dialect.names_responses(rest) }
    }
}

/// The largest decoded routed JSON answer whose usage is read on the ledger's writer from a
/// copy; a bigger one is read on the request path (the copy waits in the ledger's queue, up to
/// 16,384 rows, until the writer's next batch).
const USAGE_LATER_MAX: usize = 64 * 1024;

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
        let body = whole(upstream).await.unwrap_or_default();
        let readable = Decoder::decode_all(coding, &body).unwrap_or_default();
        let c = switchyard_providers::classify(protocol, status.as_u16(), &headers, &readable, now);
        return Answer::Failed(c.failure, Some(Kept { status, headers, body, reason: None }), ttfb);
    }
    let array = shape.array;
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
            usage_later: None,
            response_id: None,
        };
        return Answer::Success(d, ttfb);
    }
    if !sse {
        return match whole(upstream).await {
            Ok(body) => {
                let decoded = Decoder::decode_all(coding, &body);
                let response_id = decoded
                    .as_ref()
                    .filter(|_| shape.response_ids)
                    .and_then(|b| dialect::of(protocol).response_id_from_body(b));
                // The decoded answer (a copy when it came uncompressed) waits in the ledger's
                // queue for the writer to read its usage; a bigger one is read here.
                let (usage, usage_later) = match decoded {
                    Some(b) if b.len() <= USAGE_LATER_MAX => (Usage::default(), Some(b.into_owned())),
                    Some(b) => (usage_from_body(&b), None),
                    None => (Usage::default(), None),
                };
                let d = Delivered { status, headers, held: body, tail: None, coding, usage, usage_later, response_id };
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
                        let usage_later = None;
                        let d = Delivered { status, headers, held, tail, coding, usage, usage_later, response_id };
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
