//! The relay's side of the engine's routing loop: one physical HTTP attempt with the
//! profile's credential, to the connection the engine's [`Target`] names, returned as a
//! classified [`Reply`] (`answer.rs` reads the answer). An attempt the engine marks `strip_account_state`
//! sends the body without its account-bound items (its dialect says which: `switchyard_providers::dialect`). Everything else the
//! attempt learned — the answer's quota readings, its Responses id, a streamed body's model,
//! whether account state was dropped, a first-byte timeout — goes back in the [`Reply`]'s
//! facts; the transport holds no router and no shared flags. An attempt the engine gives to
//! the official CLI (`Target::cli`) runs it instead (`cli_backend/`).

use std::time::{Instant, SystemTime};

use bytes::Bytes;
use http_body_util::{Either, Full};
use switchyard_core::routing::Failure;
use switchyard_engine::{AttemptFacts, Reply, Target, Transport};
use switchyard_providers::content_coding::{Coding, Decoder};
use switchyard_providers::dialect::{self, strip_account_state, Dialect};
use switchyard_providers::read_quota;

use crate::answer::{read_answer, Answer, Delivered, Kept, StreamShape};
use crate::body::outgoing::Outgoing;
use crate::cli_backend::CliSlots;
use crate::intake::{upstream_body, Intake};
use crate::upstream::{NoAnswer, Upstream};
use crate::upstream_request::{upstream_headers, url_on};

pub(crate) struct HttpTransport<'a> {
    pub http: &'a Upstream,
    /// The request as read (each attempt builds its URL, headers and body from it and the
    /// connection it goes to).
    pub intake: &'a Intake,
    /// The CLI backend's run permits per profile.
    pub cli: &'a CliSlots,
}

impl Transport for HttpTransport<'_> {
    type Delivered = Delivered;
    type Kept = Kept;

    async fn attempt(&self, target: Target<'_>) -> Reply<Delivered, Kept> {
        if let Some(cli) = target.cli {
            // Boxed: the CLI backend's future is kilobytes every API key's attempt would carry.
            return Box::pin(crate::cli_backend::attempt(self.intake, self.cli, target, cli)).await;
        }
        // The connection the attempt goes to: its base URL (or the one the engine names for this
        // attempt: an owned or external login's backend), headers, mapping and timeout.
        let snap = target.snapshot;
        let received = &self.intake.received;
        // A dialect that names the model in the path (Gemini) rewrites the path, not the body.
        let dialect = dialect::of(snap.protocol);
        let mapped_rest = target.upstream_model.and_then(|m| dialect.path_for_model(&received.rest, m));
        let rest = mapped_rest.as_deref().unwrap_or(&received.rest);
        let base = target.base_url.unwrap_or(&snap.base_url);
        let url = url_on(base, snap.protocol, rest, received.query.as_deref());
        let headers = upstream_headers(&received.headers, snap, target.secret, target.credential, target.account_id);
        let mut facts = AttemptFacts::default();
        // A hop gets the same bytes, with the model the target names: only forwarding streams,
        // and a forwarded request has no chain to fall back along.
        let body = match &self.intake.body {
            Outgoing::Buffered(own) => {
                let body = upstream_body(snap.protocol, own, self.intake.model(), target.upstream_model);
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
        let method = received.method.clone();
        let sent = self.http.send_within(snap.first_byte_timeout, method, &url, headers, body).await;
        facts.timed_out = matches!(sent, Err(NoAnswer::TimedOut));
        // A streamed body's model, read from its copy once the attempt was answered.
        if target.model.is_none() {
            facts.late_model = self.intake.copy.as_ref().and_then(|copy| copy.model(snap.protocol));
        }
        facts.body_too_large = self.intake.copy.as_ref().is_some_and(|copy| copy.too_large());
        let answer = match sent {
            Err(_) => Answer::Failed(Failure::network(), None, None),
            Ok(resp) => {
                // Every answer's limit headers, before anything is read: the bytes stay as they are.
                facts.quota = read_quota(snap.protocol, resp.headers(), target.now);
                let shape = StreamShape::of(snap.protocol, &received.rest, received.query.as_deref());
                read_answer(snap.protocol, shape, started, target.now, resp, !target.pass_through).await
            }
        };
        // A dialect that sends no limit headers (Gemini) learns quota from a structured refusal.
        if let Answer::Failed(_, Some(kept), _) = &answer {
            facts.quota.extend(learned_from(dialect, kept, target.now));
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

/// The quota states a kept refusal teaches its dialect, read through its coding (nothing for a
/// dialect whose limit headers say it all).
fn learned_from(dialect: &dyn Dialect, kept: &Kept, now: SystemTime) -> Vec<switchyard_providers::QuotaWindow> {
    let coding = Coding::from_header(kept.headers.get(http::header::CONTENT_ENCODING).and_then(|v| v.to_str().ok()));
    let body = Decoder::decode_all(coding, &kept.body).unwrap_or_default();
    dialect.learned_quota(kept.status.as_u16(), &body, now)
}

/// `body` without its account-bound items when the attempt asks for that (noted in `facts`
/// when any were dropped).
fn account_bound(body: Bytes, target: Target<'_>, facts: &mut AttemptFacts) -> Bytes {
    let dialect = dialect::of(target.snapshot.protocol);
    let stripped = if target.strip_account_state { strip_account_state(dialect, &body) } else { None };
    facts.dropped_account_state = stripped.is_some();
    stripped.map(Bytes::from).unwrap_or(body)
}
