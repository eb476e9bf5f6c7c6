//! Credential health (docs/design.md, "credential health", invariant 21): one pure function of
//! what is known about a profile's credential and the clock → `static | ok | expiring |
//! expired | missing`, with a reason in plain words and the expiry. Never stored: computed
//! wherever it is shown or decides eligibility, with that moment's clock, so a token's expiry
//! takes effect without anything being written.
//!
//! The inputs for an `oauth` login (a later issue) are modelled now — whether its access token
//! can be refreshed and how the last refresh went — so that kind slots in without a new shape.

use crate::states::{CredentialHealthState, ProfileKind};

/// A token expiring within this long is `expiring` (seven days).
pub const EXPIRING_WITHIN_MS: i64 = 7 * 24 * 3600 * 1000;

/// What is known about a profile's credential besides whether it is there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CredentialFacts {
    pub kind: ProfileKind,
    /// When the credential stops working (unix ms), if known: a `token`'s entered expiry, an
    /// `oauth` access token's. Ignored for `api_key` and `external` (the official CLI renews
    /// its own login).
    pub expires_at_ms: Option<i64>,
    /// `oauth` only: whether the access token can be renewed. `None` for every other kind.
    pub refresh: Option<Refresh>,
}

impl Default for CredentialFacts {
    /// An API key: what every profile was before kinds existed.
    fn default() -> Self {
        CredentialFacts { kind: ProfileKind::ApiKey, expires_at_ms: None, refresh: None }
    }
}

/// Whether an `oauth` login can renew its access token, and how the last try went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refresh {
    /// A refresh token is held.
    pub possible: bool,
    pub last: Option<RefreshOutcome>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefreshOutcome {
    Succeeded,
    /// Network or provider trouble: the refresh token still stands and is tried again.
    Failed,
    /// The provider refused the refresh token: only signing in again helps.
    Rejected,
}

/// A credential's health at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CredentialHealth {
    pub state: CredentialHealthState,
    /// Why, in plain words; `None` when there is nothing to say (`static`, a plain `ok`).
    pub reason: Option<&'static str>,
    /// The expiry the state was judged by (`None`: unknown or not applicable).
    pub expires_at_ms: Option<i64>,
}

impl CredentialHealth {
    /// Whether routing may use the credential (`expired` and `missing` may not: invariant 21).
    pub fn usable(&self) -> bool {
        !matches!(self.state, CredentialHealthState::Expired | CredentialHealthState::Missing)
    }
}

pub const REASON_NO_KEY: &str = "no key in the keychain";
pub const REASON_NO_TOKEN: &str = "no token in the keychain; paste one with profile rotate";
pub const REASON_NOT_SIGNED_IN: &str =
    "the official CLI is not signed in in this profile's config directory; run profile login";
pub const REASON_NO_LOGIN: &str = "not signed in; run profile login";
pub const REASON_TOKEN_EXPIRED: &str = "the token has expired; paste a new one with profile rotate";
pub const REASON_TOKEN_EXPIRING: &str = "the token expires within 7 days; paste a new one before then";
pub const REASON_LOGIN_REJECTED: &str = "the provider refused the login's refresh; sign in again";
pub const REASON_LOGIN_EXPIRED: &str = "the login has expired and cannot be renewed; sign in again";
pub const REASON_LOGIN_EXPIRING: &str = "the login expires within 7 days and cannot be renewed; sign in again";
pub const REASON_REFRESHED_BEFORE_USE: &str = "the access token has lapsed; it is renewed before its next use";
pub const REASON_REFRESH_RETRIED: &str = "the last renewal failed; it is tried again before the next use";

/// The health of a credential of `facts.kind`, `present` saying whether it is there (the
/// keychain holds the secret, or the official CLI's credential file exists), at `now_ms`.
pub fn credential_health(facts: &CredentialFacts, present: bool, now_ms: i64) -> CredentialHealth {
    use CredentialHealthState as S;
    let judged = |state, reason| CredentialHealth { state, reason, expires_at_ms: facts.expires_at_ms };
    let plain = |state, reason| CredentialHealth { state, reason, expires_at_ms: None };
    match facts.kind {
        ProfileKind::ApiKey if present => plain(S::Static, None),
        ProfileKind::ApiKey => plain(S::Missing, Some(REASON_NO_KEY)),
        ProfileKind::External if present => plain(S::Ok, None),
        ProfileKind::External => plain(S::Missing, Some(REASON_NOT_SIGNED_IN)),
        ProfileKind::Token if !present => judged(S::Missing, Some(REASON_NO_TOKEN)),
        ProfileKind::Token => match expiry(facts.expires_at_ms, now_ms) {
            Expiry::Unknown | Expiry::Far => judged(S::Ok, None),
            Expiry::Soon => judged(S::Expiring, Some(REASON_TOKEN_EXPIRING)),
            Expiry::Past => judged(S::Expired, Some(REASON_TOKEN_EXPIRED)),
        },
        ProfileKind::Oauth if !present => judged(S::Missing, Some(REASON_NO_LOGIN)),
        ProfileKind::Oauth => {
            let refresh = facts.refresh.unwrap_or(Refresh { possible: false, last: None });
            if refresh.last == Some(RefreshOutcome::Rejected) {
                return judged(S::Expired, Some(REASON_LOGIN_REJECTED));
            }
            let retried = (refresh.last == Some(RefreshOutcome::Failed)).then_some(REASON_REFRESH_RETRIED);
            match (expiry(facts.expires_at_ms, now_ms), refresh.possible) {
                (Expiry::Unknown | Expiry::Far, _) => judged(S::Ok, retried),
                // Stale but refreshable is ok: the access token is renewed before it is used.
                (Expiry::Soon, true) => judged(S::Ok, retried),
                (Expiry::Past, true) => judged(S::Ok, retried.or(Some(REASON_REFRESHED_BEFORE_USE))),
                (Expiry::Soon, false) => judged(S::Expiring, Some(REASON_LOGIN_EXPIRING)),
                (Expiry::Past, false) => judged(S::Expired, Some(REASON_LOGIN_EXPIRED)),
            }
        }
    }
}

enum Expiry {
    Unknown,
    Far,
    Soon,
    Past,
}

/// Where `expires_at_ms` stands from `now_ms`: at the instant of expiry it is past.
fn expiry(expires_at_ms: Option<i64>, now_ms: i64) -> Expiry {
    match expires_at_ms {
        None => Expiry::Unknown,
        Some(at) if now_ms >= at => Expiry::Past,
        Some(at) if at.saturating_sub(now_ms) <= EXPIRING_WITHIN_MS => Expiry::Soon,
        Some(_) => Expiry::Far,
    }
}
