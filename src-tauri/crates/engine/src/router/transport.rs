//! The HTTP side of the routing loop, as the engine sees it: what one physical attempt is
//! sent with ([`Target`]: the connection, the key, the model names and the time, every rule
//! already decided) and everything the attempt learned ([`Reply`]: the classified outcome
//! and its [`AttemptFacts`]). The relay implements [`Transport`]; it never calls back into
//! the router, and nothing about an attempt travels through shared flags.

use std::future::Future;
use std::time::SystemTime;

use switchyard_core::routing::Failure;
use switchyard_providers::QuotaWindow;
use switchyard_vault::Secret;

use crate::router::{CliTarget, Snapshot};

/// What the transport needs for one physical attempt.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The connection this attempt goes to: the request's own, or a fallback hop (its base
    /// URL, headers and timeout apply).
    pub snapshot: &'a Snapshot,
    pub profile_id: &'a str,
    pub secret: &'a Secret,
    /// 1 for the first attempt of the request.
    pub number: u32,
    /// Legacy pass-through: deliver whatever comes back, as it comes.
    pub pass_through: bool,
    /// The model the client asked for (client-facing name; a hop's own name on a hop that
    /// names one), if the request names one.
    pub model: Option<&'a str>,
    /// The model name the upstream is sent: `model` mapped by the connection's mapping when
    /// the attempt routes, as asked when it passes through. The body is rewritten only when
    /// this differs from the name the client sent.
    pub upstream_model: Option<&'a str>,
    /// This attempt goes to another account than the one that produced the conversation's
    /// account-bound items (a failover or a move): drop those items from the body (Responses
    /// `reasoning` items with `encrypted_content`, Anthropic signed `thinking` blocks).
    pub strip_account_state: bool,
    /// The engine clock's wall time as the attempt starts: the transport dates cooldown hints
    /// and quota resets with it (the clock circuits use, manual in tests).
    pub now: SystemTime,
    /// The official CLI serves this attempt instead of an HTTP call (the connection's CLI
    /// backend is on and the profile is an external Claude Code login; `router/cli_backend.rs`).
    pub cli: Option<CliTarget<'a>>,
    /// How the attempt authenticates upstream, decided from the profile's kind.
    pub credential: CredentialUse,
    /// The upstream base URL when it is not the connection's (an external Codex login: the
    /// ChatGPT backend its credential is for); the request's path maps onto it as onto the
    /// connection's base URL.
    pub base_url: Option<&'a str>,
    /// `CredentialUse::Login`: the ChatGPT account the login belongs to.
    pub account_id: Option<&'a str>,
}

/// How an attempt authenticates upstream (`Target::credential`); the engine decides it from
/// the profile's kind (docs/design.md, section 14), the transport only carries it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialUse {
    /// `api_key`: the secret in the dialect's credential header (`x-api-key`, `Authorization:
    /// Bearer`); the client's credentials are dropped.
    Key,
    /// `token`: the secret as `Authorization: Bearer`, `oauth-2025-04-20` added to the client's
    /// `anthropic-beta` list (appended when absent), no `x-api-key`; nothing else changed.
    Token,
    /// `external`: the client's own `Authorization` forwarded unchanged (the official CLI's
    /// login; Switchyard never holds it, stores it or logs it); `secret` is empty.
    Client,
    /// `oauth` (a login Switchyard owns): the access token as `Authorization: Bearer` and the
    /// signed-in account in `chatgpt-account-id` (`Target::account_id`), to `Target::base_url`
    /// (the ChatGPT backend); nothing else changed.
    Login,
}

/// Everything one attempt learned, returned with its outcome (recorded by the loop).
#[derive(Debug, Default)]
pub struct AttemptFacts {
    /// The OpenAI Responses answer's id (routed successes): remembered with the profile that
    /// produced it, so a request continuing it goes back to that account.
    pub response_id: Option<String>,
    /// The model of a request whose body was still streaming when it was sent (forwarding
    /// reads no body first), read once the attempt was answered.
    pub late_model: Option<String>,
    /// The body had account-bound items dropped (asked by `Target::strip_account_state`);
    /// recorded in the attempt's `moved` column.
    pub dropped_account_state: bool,
    /// The answer's limit headers, read before its body (any status, legacy included).
    pub quota: Vec<QuotaWindow>,
    /// No response head came within the connection's first-byte timeout (the relay answers
    /// 504 `upstream_timeout` rather than 502 when nothing else was kept).
    pub timed_out: bool,
    /// What the official CLI reported the attempt's tokens would cost at list price (USD; CLI
    /// backend attempts only): recorded as a reference figure, never as a cost.
    pub reference_cost_usd: Option<f64>,
    /// A forwarded body went over the relay's limit while it streamed upstream: the request is
    /// answered 413 whatever came back.
    pub body_too_large: bool,
}

/// The transport's classified answer to one attempt.
#[derive(Debug)]
pub enum Outcome<D, K> {
    /// A success to hand to the client (`body`: what the relay streams on). The attempt's
    /// usage and any later failure are set on the [`Recording`] the engine returns with it.
    ///
    /// [`Recording`]: crate::Recording
    Deliver { status: u16, ttfb_ms: Option<i64>, body: D },
    /// The attempt failed before any output. `kept`: an answer to deliver as it is when no
    /// other attempt succeeds (an upstream error answer); `None` when nothing came back.
    Failed { failure: Failure, status: Option<u16>, ttfb_ms: Option<i64>, kept: Option<K> },
}

/// One attempt's outcome and what it learned.
#[derive(Debug)]
pub struct Reply<D, K> {
    pub outcome: Outcome<D, K>,
    pub facts: AttemptFacts,
}

impl<D, K> Reply<D, K> {
    /// A success that learned nothing else.
    pub fn deliver(status: u16, ttfb_ms: Option<i64>, body: D) -> Self {
        Reply { outcome: Outcome::Deliver { status, ttfb_ms, body }, facts: AttemptFacts::default() }
    }

    /// A failure that learned nothing else.
    pub fn failed(failure: Failure, status: Option<u16>, ttfb_ms: Option<i64>, kept: Option<K>) -> Self {
        Reply { outcome: Outcome::Failed { failure, status, ttfb_ms, kept }, facts: AttemptFacts::default() }
    }

    pub fn with(mut self, facts: AttemptFacts) -> Self {
        self.facts = facts;
        self
    }
}

/// The HTTP side of the loop.
pub trait Transport {
    /// What a successful attempt hands on (the relay: held bytes and the stream's tail).
    type Delivered;
    /// An error answer kept for delivery.
    type Kept;

    fn attempt(&self, target: Target<'_>) -> impl Future<Output = Reply<Self::Delivered, Self::Kept>> + Send;
}
