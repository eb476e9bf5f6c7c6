//! Legacy routing (DESIGN.md invariant 1): the primary profile only, one attempt, no
//! retries; the body and every header go upstream unchanged except the injected credential
//! (client credentials and relay controls are removed), and the provider's answer comes
//! back unchanged, streamed as it arrives.

use std::sync::Arc;

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::Response;
use switchyard_core::routing::Failure;
use switchyard_engine::{AttemptReport, NextAttempt, TurnRun};
use switchyard_providers::content_coding::{Coding, Decoder};
use switchyard_providers::stream_watch::StreamWatch;

use crate::forward::{client_headers, is_event_stream, upstream_headers, upstream_url};
use crate::reply;
use crate::request::Incoming;
use crate::state::RelayState;
use crate::stream::{Recorder, Sniff, Tail};
use crate::upstream::{self, NoAnswer};

pub async fn forward(state: Arc<RelayState>, mut run: TurnRun, incoming: Incoming) -> Response {
    let snap = run.snapshot.clone();
    let mut attempt = match state.router.next_attempt(&mut run).await {
        Ok(NextAttempt::Go(a)) => a,
        Ok(NextAttempt::Unavailable { status, retry_after_secs, message }) => {
            let resp = reply::error(snap.protocol, status, &message, retry_after_secs);
            return reply::with_reason(resp, "primary_unavailable");
        }
        Err(e) => return reply::engine_error(snap.protocol, &e),
    };
    let url = upstream_url(&snap, &incoming.rest, incoming.query.as_deref());
    let headers = upstream_headers(&incoming.headers, &snap, &attempt.secret);
    let sent = state
        .http
        .send_within(snap.first_byte_timeout, incoming.method.clone(), &url, headers, incoming.body.clone())
        .await;
    let resp = match sent {
        Ok(r) => r,
        Err(why) => {
            let failure = Failure::network();
            let _ = state.router.attempt_failed(&mut run, &mut attempt, failure).await;
            let report = AttemptReport { failure: Some(failure), duration_ms: elapsed(&attempt), ..Default::default() };
            state.router.record(&run, &attempt, &report);
            return reply::no_answer(snap.protocol, matches!(why, NoAnswer::TimedOut));
        }
    };
    let status = resp.status();
    let ttfb = elapsed(&attempt);
    let mut report = AttemptReport { status: Some(status.as_u16()), ttfb_ms: Some(ttfb), ..Default::default() };
    let (parts, body) = resp.into_parts();
    let upstream_headers = parts.headers;
    let coding = Coding::from_header(upstream_headers.get("content-encoding").and_then(|v| v.to_str().ok()));
    if !status.is_success() {
        // Recorded for health; legacy never retries or fails over.
        let body = upstream::collect(body).await.unwrap_or_default();
        let readable = Decoder::decode_all(coding, &body).unwrap_or_default();
        let c = switchyard_providers::classify(
            snap.protocol,
            status.as_u16(),
            &upstream_headers,
            &readable,
            std::time::SystemTime::now(),
        );
        let _ = state.router.attempt_failed(&mut run, &mut attempt, c.failure).await;
        report.failure = Some(c.failure);
        report.duration_ms = elapsed(&attempt);
        state.router.record(&run, &attempt, &report);
        return build(status, &upstream_headers, Body::from(body));
    }
    state.router.attempt_succeeded(&mut attempt).await;
    let sniff = if is_event_stream(&upstream_headers) {
        Sniff::Sse {
            watch: Box::new(StreamWatch::new(snap.protocol, coding)),
            protocol: snap.protocol,
            responses_api: incoming.is_responses_api(),
            inject: false,
            coding,
        }
    } else {
        Sniff::Json { copy: Vec::new(), coding }
    };
    let recorder = Recorder::new(state.router.clone(), run, attempt, report);
    let tail = Tail::new(None, body, sniff, recorder);
    build(status, &upstream_headers, Body::new(tail))
}

fn build(status: StatusCode, upstream: &axum::http::HeaderMap, body: Body) -> Response {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    *resp.headers_mut() = client_headers(upstream);
    resp
}

fn elapsed(a: &switchyard_engine::Attempt) -> i64 {
    i64::try_from(a.started.elapsed().as_millis()).unwrap_or(i64::MAX)
}
