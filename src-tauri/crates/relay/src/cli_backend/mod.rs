//! The CLI backend's side of one attempt (docs/design.md, "The CLI backend"): when the engine's
//! [`Target`] says the official CLI serves it, the transport comes here instead of making an
//! HTTP call. A request print mode cannot carry is refused — 400 in Anthropic's shape, reason
//! `not_supported_by_cli_backend`, a request-scoped failure, so never failed over — before
//! anything runs. Otherwise the attempt waits for one of the profile's run permits
//! (`slots.rs`), runs `claude -p` once (`run.rs`) within the connection's first-byte timeout,
//! and returns what came of it (`answer.rs`): a Messages answer with the CLI's usage and its
//! reference cost, or the error answer the API would have given, classified like any other.

mod answer;
mod run;
mod slots;

pub(crate) use slots::CliSlots;

use std::time::Instant;

use switchyard_core::routing::{Failure, FailureKind, Scope};
use switchyard_engine::{AttemptFacts, CliTarget, Reply, Target};
use switchyard_providers::claude_cli::{cli_prompt, plain_model, NotCarried};

use crate::answer::{Delivered, Kept};
use crate::body::outgoing::Outgoing;
use crate::cli_backend::answer::{from_run, no_cli, not_supported};
use crate::cli_backend::run::{run_cli, RunSpec};
use crate::intake::Intake;

/// Serves one attempt of `intake` through the CLI, with a run permit of `slots`.
pub(crate) async fn attempt(
    intake: &Intake,
    slots: &CliSlots,
    target: Target<'_>,
    cli: CliTarget<'_>,
) -> Reply<Delivered, Kept> {
    let incoming = &intake.received;
    let snap = target.snapshot;
    let mut facts = AttemptFacts::default();
    if incoming.method != http::Method::POST || incoming.rest.trim_end_matches('/') != "v1/messages" {
        return not_supported(&NotCarried(format!(
            "{} /{} (it serves POST /v1/messages)",
            incoming.method, incoming.rest
        )));
    }
    let Outgoing::Buffered(body) = &intake.body else {
        return not_supported(&NotCarried("a body still streaming in".into()));
    };
    let beta = incoming.headers.get("anthropic-beta").map(|v| v.to_str().unwrap_or("?"));
    let mut prompt = match cli_prompt(body, beta) {
        Ok(p) => p,
        Err(why) => return not_supported(&why),
    };
    // The connection's mapping (or a hop's model) names the model the CLI is asked for. It
    // reaches argv after `--model`: one that could be read as an option is refused (issue 39;
    // core refuses it on input, this holds for a row written before that), never echoed.
    if let Some(model) = target.upstream_model {
        if !plain_model(model) {
            let why = "the model the connection maps this request to (not a plain model name)";
            return not_supported(&NotCarried(why.into()));
        }
        prompt.model = model.to_string();
    }
    let program = match cli.program {
        Ok(p) => p,
        Err(why) => {
            let failure = Failure::new(FailureKind::Unknown, Scope::Ambiguous);
            return Reply::failed(failure, Some(502), None, Some(no_cli(why)));
        }
    };
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + snap.first_byte_timeout;
    let run = async {
        let _permit = slots.acquire(target.profile_id, cli.max_concurrent).await;
        let spec = RunSpec {
            program,
            config_dir: cli.config_dir,
            base_url: &snap.base_url,
            prompt: &prompt,
            runs_dir: cli.runs_dir,
        };
        run_cli(spec).await
    };
    let Ok(ran) = tokio::time::timeout_at(deadline, run).await else {
        facts.timed_out = true;
        return Reply::failed(Failure::network(), None, None, None).with(facts);
    };
    let ttfb_ms = Some(i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX));
    from_run(ran, &prompt, ttfb_ms, target.now, facts)
}
