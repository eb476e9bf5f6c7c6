//! Turns what the engine's routing loop decided ([`Routed`]) into the client's response:
//! a delivered answer (held bytes, then the tail as it arrives), a kept error answer as the
//! provider sent it, or an answer the relay makes itself. Outside legacy mode the response
//! says which profile served, after how many attempts, and why.

use http::HeaderValue;
use switchyard_core::Protocol;
use switchyard_engine::{Recording, Refusal, Route, Routed};
use switchyard_providers::content_coding::Coding;

use crate::answer::{Delivered, Kept};
use crate::body::client_body::{ClientBody, Response};
use crate::body::relayed::{usage_later, Sniff, Tail};
use crate::header_names::{X_SWITCHYARD_ATTEMPTS, X_SWITCHYARD_CONNECTION, X_SWITCHYARD_PROFILE, X_SWITCHYARD_REASON};
use crate::reply;
use crate::upstream_request::client_headers;

pub(crate) fn respond(protocol: Protocol, responses_api: bool, routed: Routed<Delivered, Kept>) -> Response {
    match routed {
        Routed::Delivered { body, recording, route } => {
            let resp = deliver(protocol, responses_api, !route.legacy, body, recording);
            with_route(resp, route)
        }
        Routed::Kept { kept, route } => {
            let mut resp = Response::new(ClientBody::full(kept.body));
            *resp.status_mut() = kept.status;
            *resp.headers_mut() = client_headers(&kept.headers);
            let resp = with_route(resp, route);
            match kept.reason {
                Some(reason) => reply::with_reason(resp, reason),
                None => resp,
            }
        }
        // An answer the relay makes itself keeps its own reason after the route headers.
        Routed::NoAnswer { route, timed_out, .. } => {
            let resp = reply::no_answer(protocol, timed_out);
            let reason = resp.headers().get(X_SWITCHYARD_REASON).cloned();
            let mut resp = with_route(resp, route);
            if let Some(r) = reason {
                resp.headers_mut().insert(X_SWITCHYARD_REASON, r);
            }
            resp
        }
        Routed::Unavailable { status, retry_after_secs, message, why: Refusal::Continuity, .. } => reply::with_reason(
            reply::continuity(protocol, status, &message, retry_after_secs),
            Refusal::Continuity.as_str(),
        ),
        Routed::Unavailable { why: Refusal::BodyTooLarge, .. } => crate::guard::too_large(),
        Routed::Unavailable { retry_after_secs, message, why: Refusal::Limit, limit: Some(limit), .. } => {
            reply::limit_refused(protocol, &message, &limit, retry_after_secs)
        }
        Routed::Unavailable { status, retry_after_secs, message, why, .. } => {
            reply::with_reason(reply::error(protocol, status, &message, retry_after_secs), why.as_str())
        }
    }
}

fn deliver(protocol: Protocol, responses_api: bool, inject: bool, d: Delivered, mut recording: Recording) -> Response {
    let Delivered { status, headers, held, tail, coding, usage, usage_later: decoded, .. } = d;
    let body = match tail {
        Some((upstream, watch)) => {
            let sniff = match watch {
                Some(watch) => Sniff::Sse { watch, protocol, responses_api, inject, coding },
                None => Sniff::Json { copy: Vec::new(), coding },
            };
            let held = (!held.is_empty()).then_some(held);
            ClientBody::Relayed(Box::new(Tail::new(held, upstream, sniff, recording)))
        }
        // A JSON answer was read whole: record it now (its usage read on the ledger's writer
        // from the decoded copy `read_answer` kept, or already read), send it with its length.
        None => {
            match decoded {
                Some(decoded) => recording.set_usage_later(usage_later(Coding::Identity, decoded)),
                None => recording.set_usage(usage),
            }
            recording.finish();
            ClientBody::full(held)
        }
    };
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    *resp.headers_mut() = client_headers(&headers);
    resp
}

/// Adds `x-switchyard-connection` (the slug that served: a fallback hop's when the request
/// fell back), `x-switchyard-profile`, `x-switchyard-attempts` and `x-switchyard-reason` (not
/// in legacy mode, whose answers pass unchanged).
fn with_route(mut resp: Response, route: Route) -> Response {
    if route.legacy {
        return resp;
    }
    let h = resp.headers_mut();
    // The route's own strings become the values, checked as `HeaderValue::from_str` checks
    // (visible ASCII) but not copied: a value made from a `String` keeps its buffer.
    for (name, value) in [
        (X_SWITCHYARD_CONNECTION, route.connection),
        (X_SWITCHYARD_PROFILE, route.profile_id),
        (X_SWITCHYARD_REASON, route.reason),
    ] {
        if !value.is_ascii() {
            continue;
        }
        if let Ok(v) = HeaderValue::from_maybe_shared(bytes::Bytes::from(value)) {
            h.insert(name, v);
        }
    }
    h.insert(X_SWITCHYARD_ATTEMPTS, HeaderValue::from(route.attempts));
    resp
}
