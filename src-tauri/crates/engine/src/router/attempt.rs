//! One physical attempt as the loop carries it ([`Attempt`]): the chosen profile and why, its
//! secret read for this attempt, how it authenticates and where it goes, whether it drops
//! account-bound items, and the half-open probe it holds ([`Probe`]) — plus what an attempt on an
//! owned login carries ([`AttemptLogin`]).

use std::sync::Arc;

use switchyard_core::routing::{MoveCause, ProbeLease, SelectionReason};
use switchyard_vault::Secret;

use crate::login::NoLogin;
use crate::router::state::shared::StoreLease;
use crate::router::transport::CredentialUse;

/// A half-open probe this attempt holds: the board's claim and, where the state lives beyond
/// this process, its lease there (released when dropped).
#[derive(Debug)]
pub(crate) struct Probe {
    pub(super) lease: ProbeLease,
    pub(super) _beyond: Option<Box<StoreLease>>,
}

/// One physical attempt: the chosen profile and its secret, read for this attempt.
#[derive(Debug)]
pub(crate) struct Attempt {
    pub profile_id: String,
    pub number: u32,
    pub reason: SelectionReason,
    /// Set when this attempt moved its warm conversation off an ineligible key (a turn
    /// boundary only): why the old key could not keep it.
    pub moved: Option<MoveCause>,
    /// The attempt goes to another account than the one that produced the conversation's
    /// account-bound items: the transport drops them from the body.
    pub strip_account_state: bool,
    pub secret: Arc<Secret>,
    /// How the attempt authenticates upstream (from the profile's kind).
    pub credential: CredentialUse,
    /// An owned login's account and refresh mark (`router/login.rs`).
    pub login: Option<AttemptLogin>,
    /// Where the attempt goes when not to the connection's base URL (an owned login's backend,
    /// an external Codex login's).
    pub base_url: Option<String>,
    /// The official CLI may serve the attempt when the profile is one it serves (a request naming
    /// its profile carries the CLI's own login: it passes through, never to the CLI backend).
    pub cli: bool,
    pub(super) probe: Option<Probe>,
}

/// The secret an attempt is sent with, or why there is none.
#[derive(Debug)]
pub(crate) enum AttemptSecret {
    Ready(Arc<Secret>, Option<AttemptLogin>),
    /// The keychain has no secret for the profile.
    Missing,
    /// An owned login that cannot serve now (`login/refresh.rs`).
    NoLogin(NoLogin),
}

/// What an attempt on an owned login carries besides its access token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AttemptLogin {
    /// The ChatGPT account (`chatgpt-account-id`), when the sign-in named one.
    pub account_id: Option<String>,
    /// The mark of the refresh token the access token came with: a renewal after a 401 is
    /// compare-and-swap on it.
    pub mark: String,
    /// Where the attempt goes (the ChatGPT backend).
    pub base_url: String,
}
