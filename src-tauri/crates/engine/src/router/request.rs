//! What a request carries into routing, built once by the relay ([`RouteRequest`]): where it is
//! going (a connection or a pool, [`Resolved`] once by [`Router::resolve`]), the model, the
//! request's keys (or the promise of them, for legacy forwarding), the tags, the Responses id it
//! continues, the profile it names, its client and its user. [`Router::route`] takes it whole;
//! nothing about a request is set on the router by a second call.
//!
//! [`Router::route`]: crate::Router::route
//! [`Router::resolve`]: crate::Router::resolve

use std::sync::Arc;

use switchyard_core::conversation::ConversationKey;
use switchyard_core::states::OfficialClient;

use switchyard_vault::Secret;

use crate::ledger::DeferredKeys;
use crate::router::{Resolved, Snapshot};

/// One request to route.
#[derive(Debug)]
pub struct RouteRequest {
    /// Where the request goes: a connection's snapshot, or a pool (its member is chosen when the
    /// routing starts).
    pub target: Resolved,
    /// The model the client asked for (client-facing name); `None` when the body was not read
    /// first (forwarding) or names none — the request then routes as legacy.
    pub model: Option<String>,
    pub keys: RequestKeys,
    /// The caller's tags (`x-switchyard-tag-*`) as a JSON object, stored with every attempt
    /// of the request (ledger only; routing never reads them).
    pub tags: Option<String>,
    /// A Responses request's `previous_response_id`: state held by the account that made it.
    pub previous_response_id: Option<String>,
    /// The profile the request names (`x-switchyard-profile`: an id or label), sent by
    /// `switchyard exec` for an external login, with the credential the client carries: the
    /// request goes there only (`pinned.rs`).
    pub pinned: Option<Pin>,
    /// The official client the request identifies as (core `identify_client`): token and
    /// external profiles serve only their own client (invariant 20).
    pub client: Option<OfficialClient>,
    /// The relay user whose token the request carried (a `relay_users` name, never the
    /// token); `None` for the install's own token. Recorded with every attempt.
    pub user: Option<String>,
    /// The request's worst case (input from the body's length, its output cap): what a token
    /// or USD limit reserves. Zero when the body was not read first (no such limit met it).
    pub estimate: switchyard_core::limit::Estimate,
}

/// A request naming its external login: the profile (an id or label) and the credential the
/// client carries in `Authorization` or `x-api-key` (its own, never the relay token). A failure
/// is held against the login only when that credential is the login's own (`settle.rs`): a
/// stranger's refused credential never locks another person's login out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub profile: String,
    pub credential: Arc<Secret>,
}

impl RouteRequest {
    /// A request on `snapshot` for `model` with `keys`, no tags, no continued response, no
    /// named profile and no official client.
    pub fn new(snapshot: Arc<Snapshot>, model: Option<&str>, keys: RequestKeys) -> Self {
        RouteRequest::to(Resolved::Connection(snapshot), model, keys)
    }

    /// A request to `target` for `model` with `keys`, nothing else set.
    pub fn to(target: Resolved, model: Option<&str>, keys: RequestKeys) -> Self {
        RouteRequest {
            target,
            model: model.map(str::to_string),
            keys,
            tags: None,
            previous_response_id: None,
            pinned: None,
            client: None,
            user: None,
            estimate: switchyard_core::limit::Estimate::default(),
        }
    }
}

/// The keys a request is routed and recorded by.
#[derive(Debug)]
pub enum RequestKeys {
    /// Read before routing (a routed request's body was skimmed).
    Now {
        turn: String,
        /// The request's conversation (a hash); conversation affinity keys its binding by
        /// this and the model. `None`: not tracked (the request still routes by turn).
        conversation: Option<ConversationKey>,
        /// The client's session, hashed (ledger only; routing never reads it).
        session: Option<String>,
    },
    /// Legacy forwarding routes by none of them (one key, one attempt): the ledger's writer
    /// computes them from the body's copy after the answer, off the request path.
    Later(DeferredKeys),
}

impl RequestKeys {
    /// Keys read now: `turn`, with no conversation and no session.
    pub fn turn(turn: impl Into<String>) -> Self {
        RequestKeys::Now { turn: turn.into(), conversation: None, session: None }
    }
}

/// The turn key a forwarded request routes with (by nothing: one key, one attempt); its
/// ledger row gets the real keys from [`DeferredKeys`].
pub(crate) const FORWARDED_TURN: &str = "legacy";
