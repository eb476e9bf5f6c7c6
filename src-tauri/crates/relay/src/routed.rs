//! Balanced and priority routing of one request: attempts on the turn's profile, failover to
//! another profile on credential-scoped failures before any output, one retry of transient
//! provider trouble, and streams held only until their first content event.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use http_body_util::BodyExt;
use switchyard_core::routing::{Failure, Plan};
use switchyard_core::Protocol;
use switchyard_engine::{Attempt, AttemptReport, NextAttempt, TurnRun};
use switchyard_providers::content_coding::{Coding, Decoder};
use switchyard_providers::stream_watch::{Phase, StreamWatch};
use switchyard_providers::usage::{usage_from_body, Usage};

use crate::forward::{client_headers, upstream_headers, upstream_url};
use crate::reply;
use crate::request::Incoming;
use crate::state::RelayState;
use crate::stream::{Recorder, Sniff, Tail};
use crate::upstream::{self, NoAnswer, UpstreamBody};

/// An upstream error answer kept to deliver as is if no other attempt succeeds.
pub(crate) struct Kept {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

/// How an attempt ended, when it did not produce the response.
pub(crate) enum Failed {
    /// An HTTP error answer (kept for delivery).
    Answer(Kept, Failure),
    /// No answer, or a stream that failed before its first content.
    Broken(Failure),
}

/// What an upstream answer turned out to be.
pub(crate) enum Answer {
    Failed(Failed, Option<i64>),
    /// A success: `held` goes to the client first, then `tail` (a stream after its first
    /// content event), if any.
    Success {
        status: StatusCode,
        headers: HeaderMap,
        held: Bytes,
        tail: Option<(UpstreamBody, Box<StreamWatch>)>,
        coding: Coding,
        usage: Usage,
        ttfb: Option<i64>,
    },
}

pub async fn forward(state: Arc<RelayState>, mut run: TurnRun, incoming: Incoming) -> Response {
    let snap = run.snapshot.clone();
    let body = upstream_body(&incoming, run.model.as_deref().map(|m| snap.upstream_model(m)));
    let url = upstream_url(&snap, &incoming.rest, incoming.query.as_deref());
    let mut kept: Option<(Kept, String, String)> = None;
    loop {
        let mut attempt = match state.router.next_attempt(&mut run).await {
            Ok(NextAttempt::Go(a)) => a,
            Ok(NextAttempt::Unavailable { status, retry_after_secs, message }) => {
                return match kept {
                    Some((k, profile, reason)) => deliver_kept(k, &profile, run.attempts(), &reason),
                    None => reply::with_reason(
                        reply::error(snap.protocol, status, &message, retry_after_secs),
                        "no_eligible_profile",
                    ),
                };
            }
            Err(e) => return reply::engine_error(snap.protocol, &e),
        };
        let headers = upstream_headers(&incoming.headers, &snap, &attempt.secret);
        let sent =
            state.http.send_within(snap.first_byte_timeout, incoming.method.clone(), &url, headers, body.clone()).await;
        let timed_out = matches!(sent, Err(NoAnswer::TimedOut));
        let answer = match sent {
            Err(_) => Answer::Failed(Failed::Broken(Failure::network()), None),
            Ok(resp) => read_answer(snap.protocol, attempt.started, resp).await,
        };
        let (failed, ttfb) = match answer {
            Answer::Success { status, headers, held, tail, coding, usage, ttfb } => {
                state.router.attempt_succeeded(&mut attempt).await;
                state.router.commit(&mut run);
                let (profile, reason, attempts) =
                    (attempt.profile_id.clone(), attempt.reason.to_string(), run.attempts());
                let report = AttemptReport { status: Some(status.as_u16()), ttfb_ms: ttfb, ..Default::default() };
                let mut recorder = Recorder::new(state.router.clone(), run, attempt, report);
                let body = match tail {
                    Some((upstream, watch)) => {
                        let sniff = Sniff::Sse {
                            watch,
                            protocol: snap.protocol,
                            responses_api: incoming.is_responses_api(),
                            inject: true,
                            coding,
                        };
                        Body::new(Tail::new(Some(held), upstream, sniff, recorder))
                    }
                    // A JSON answer was read whole: record it now, send it with its length.
                    None => {
                        recorder.set_usage(usage);
                        drop(recorder);
                        Body::from(held)
                    }
                };
                let mut resp = Response::new(body);
                *resp.status_mut() = status;
                *resp.headers_mut() = client_headers(&headers);
                return with_route(resp, &profile, attempts, &reason);
            }
            Answer::Failed(failed, ttfb) => (failed, ttfb),
        };
        let (failure, status) = match &failed {
            Failed::Answer(k, f) => (*f, Some(k.status.as_u16())),
            Failed::Broken(f) => (*f, None),
        };
        let plan = state.router.attempt_failed(&mut run, &mut attempt, failure).await;
        let report = AttemptReport {
            status,
            failure: Some(failure),
            ttfb_ms: ttfb,
            duration_ms: elapsed(&attempt),
            ..Default::default()
        };
        state.router.record(&run, &attempt, &report);
        if let Failed::Answer(k, _) = failed {
            kept = Some((k, attempt.profile_id.clone(), attempt.reason.to_string()));
        }
        if matches!(plan, Plan::FailoverTo(..) | Plan::RetrySame) {
            continue;
        }
        return match kept {
            Some((k, profile, reason)) => deliver_kept(k, &profile, run.attempts(), &reason),
            None => with_route(
                reply::no_answer(snap.protocol, timed_out),
                &attempt.profile_id,
                run.attempts(),
                &attempt.reason.to_string(),
            ),
        };
    }
}

/// Reads an upstream answer: errors are classified for the planner; a stream is read only
/// until its first content event (or clean end), which is when it becomes a success. The
/// watch that read the held bytes goes on reading the tail, so nothing it saw is lost.
pub(crate) async fn read_answer(protocol: Protocol, started: Instant, resp: Response<UpstreamBody>) -> Answer {
    let status = resp.status();
    let ttfb = Some(ms_since(started));
    let (parts, mut upstream) = resp.into_parts();
    let headers = parts.headers;
    let coding = Coding::from_header(headers.get("content-encoding").and_then(|v| v.to_str().ok()));
    if !status.is_success() {
        let body = upstream::collect(upstream).await.unwrap_or_default();
        let readable = Decoder::decode_all(coding, &body).unwrap_or_default();
        let c = switchyard_providers::classify(protocol, status.as_u16(), &headers, &readable, SystemTime::now());
        return Answer::Failed(Failed::Answer(Kept { status, headers, body }, c.failure), ttfb);
    }
    if !crate::forward::is_event_stream(&headers) {
        return match upstream::collect(upstream).await {
            Ok(body) => {
                let usage = Decoder::decode_all(coding, &body).map(|b| usage_from_body(&b)).unwrap_or_default();
                Answer::Success { status, headers, held: body, tail: None, coding, usage, ttfb }
            }
            Err(_) => Answer::Failed(Failed::Broken(Failure::network()), ttfb),
        };
    }
    let mut watch = Box::new(StreamWatch::new(protocol, coding));
    let mut held: Vec<u8> = Vec::new();
    loop {
        match upstream.frame().await {
            // Trailers are not passed on (the protocols do not use them).
            Some(Ok(frame)) if !frame.is_data() => {}
            Some(Ok(frame)) => {
                let chunk = frame.into_data().unwrap_or_default();
                held.extend_from_slice(&chunk);
                watch.push(&chunk, SystemTime::now());
                match watch.phase() {
                    Phase::Held => {}
                    // Kept like an error answer: delivered as the provider sent it if no other
                    // attempt succeeds.
                    Phase::FailedBeforeOutput(f) => {
                        let kept = Kept { status, headers, body: Bytes::from(held) };
                        return Answer::Failed(Failed::Answer(kept, f), ttfb);
                    }
                    Phase::Output => {
                        let usage = watch.usage();
                        return Answer::Success {
                            status,
                            headers,
                            held: Bytes::from(held),
                            tail: Some((upstream, watch)),
                            coding,
                            usage,
                            ttfb,
                        };
                    }
                }
            }
            // The stream broke or ended before any content: nothing reached the client yet.
            Some(Err(_)) | None => return Answer::Failed(Failed::Broken(Failure::network()), ttfb),
        }
    }
}

/// The request body sent upstream: the client's bytes, with the model renamed only where
/// the connection's mapping says so.
fn upstream_body(incoming: &Incoming, upstream_model: Option<&str>) -> Bytes {
    match (incoming.model(), upstream_model) {
        (Some(asked), Some(mapped)) if asked != mapped => {
            let mut json = incoming.json.clone();
            json["model"] = serde_json::Value::String(mapped.to_string());
            serde_json::to_vec(&json).map(Bytes::from).unwrap_or_else(|_| incoming.body.clone())
        }
        _ => incoming.body.clone(),
    }
}

fn deliver_kept(k: Kept, profile: &str, attempts: u32, reason: &str) -> Response {
    let mut resp = Response::new(Body::from(k.body));
    *resp.status_mut() = k.status;
    *resp.headers_mut() = client_headers(&k.headers);
    with_route(resp, profile, attempts, reason)
}

/// Adds `x-switchyard-profile`, `x-switchyard-attempts` and `x-switchyard-reason`.
fn with_route(mut resp: Response, profile: &str, attempts: u32, reason: &str) -> Response {
    let h = resp.headers_mut();
    for (name, value) in [
        ("x-switchyard-profile", profile.to_string()),
        ("x-switchyard-attempts", attempts.to_string()),
        ("x-switchyard-reason", reason.to_string()),
    ] {
        if let Ok(v) = HeaderValue::from_str(&value) {
            h.insert(name, v);
        }
    }
    resp
}

fn elapsed(a: &Attempt) -> i64 {
    ms_since(a.started)
}

fn ms_since(started: Instant) -> i64 {
    i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX)
}
