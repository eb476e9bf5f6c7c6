//! What came of a CLI run, as the routing loop's [`Reply`]: a finished answer becomes a
//! Messages answer (JSON, or its event sequence when the client asked for a stream) with the
//! CLI's usage and its reference cost in the attempt's facts; a failed run becomes the error
//! answer the API would have given (`claude_cli::rules`), classified by the Anthropic table
//! like any HTTP answer, with `Retry-After` when the CLI named the reset; a run that never
//! reached the provider is a network failure. Refusals the relay makes itself carry their
//! reason in `x-switchyard-reason`.

use std::time::SystemTime;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::json;
use switchyard_core::routing::{unix_ms, Failure, FailureKind, Scope};
use switchyard_core::Protocol;
use switchyard_engine::{AttemptFacts, Reply};
use switchyard_providers::claude_cli::{
    message_events, message_json, read_result, refusal_of, CliPrompt, CliRefusal, NotCarried, NOT_SUPPORTED,
};
use switchyard_providers::content_coding::Coding;

use crate::answer::{Delivered, Kept};
use crate::cli_backend::run::Ran;

/// The reason of a CLI backend attempt that found no CLI to run.
pub(crate) const CLI_NOT_FOUND: &str = "cli_not_found";

/// An Anthropic error answer: `{"type":"error","error":{"type","message"}}`.
fn error_answer(
    status: u16,
    kind: &str,
    message: &str,
    retry_after_secs: Option<i64>,
    reason: Option<&'static str>,
) -> Kept {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    let mut headers = HeaderMap::new();
    headers.insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(secs) = retry_after_secs {
        if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
            headers.insert(http::header::RETRY_AFTER, v);
        }
    }
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    Kept { status, headers, body: Bytes::from(body.to_string()), reason }
}

/// A request print mode cannot carry: 400, a request-scoped failure (never failed over; the
/// CLI never ran).
pub(crate) fn not_supported(why: &NotCarried) -> Reply<Delivered, Kept> {
    let kept = error_answer(400, "invalid_request_error", &format!("{why}"), None, Some(NOT_SUPPORTED));
    Reply::failed(Failure::new(FailureKind::BadRequest, Scope::Request), Some(400), None, Some(kept))
}

/// No CLI to run (`SWITCHYARD_CLAUDE_BIN` names no program, or `claude` is not on PATH).
pub(crate) fn no_cli(why: &str) -> Kept {
    error_answer(502, "api_error", &format!("the Claude Code CLI backend cannot run: {why}"), None, Some(CLI_NOT_FOUND))
}

/// The reply for a finished run (`ttfb_ms`: how long the run took to answer).
pub(crate) fn from_run(
    ran: Ran,
    prompt: &CliPrompt,
    ttfb_ms: Option<i64>,
    now: SystemTime,
    mut facts: AttemptFacts,
) -> Reply<Delivered, Kept> {
    let (code, stdout) = match ran {
        Ran::Exited { code, stdout } => (code, stdout),
        Ran::NotStarted(why) => {
            // Local trouble, not the provider's: no circuit moves, nothing is retried.
            let failure = Failure::new(FailureKind::Unknown, Scope::Ambiguous);
            return Reply::failed(failure, Some(502), ttfb_ms, Some(no_cli(&why))).with(facts);
        }
    };
    let result = read_result(&stdout);
    if let Some(answer) = result.as_ref().filter(|_| code == Some(0)).and_then(|r| r.answer(&prompt.model)) {
        facts.reference_cost_usd = answer.reference_cost_usd;
        let (body, content_type) = if prompt.stream {
            (message_events(&answer), "text/event-stream")
        } else {
            (message_json(&answer), "application/json")
        };
        let mut headers = HeaderMap::new();
        headers.insert(http::header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        let delivered = Delivered {
            status: StatusCode::OK,
            headers,
            held: Bytes::from(body),
            tail: None,
            coding: Coding::Identity,
            usage: answer.usage,
            usage_later: None,
            response_id: None,
        };
        return Reply::deliver(200, ttfb_ms, delivered).with(facts);
    }
    facts.reference_cost_usd = result.as_ref().and_then(|r| r.total_cost_usd).filter(|c| c.is_finite() && *c > 0.0);
    let now_ms = unix_ms(now);
    match refusal_of(result.as_ref(), code, now_ms) {
        CliRefusal::NoAnswer { .. } => Reply::failed(Failure::network(), None, ttfb_ms, None).with(facts),
        CliRefusal::Answer { status, error_type, message, reset_at_ms, .. } => {
            let retry_after = reset_at_ms.map(|at| ((at - now_ms).max(0) + 999) / 1000);
            let kept = error_answer(status, &error_type, &message, retry_after, None);
            let pairs: Vec<(&str, &str)> =
                kept.headers.iter().filter_map(|(n, v)| Some((n.as_str(), v.to_str().ok()?))).collect();
            let failure =
                switchyard_providers::classify(Protocol::Anthropic, status, &pairs[..], &kept.body, now).failure;
            Reply::failed(failure, Some(status), ttfb_ms, Some(kept)).with(facts)
        }
    }
}
