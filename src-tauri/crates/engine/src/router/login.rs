//! Owned logins on the routing path (docs/design.md, section 14). Before an attempt on an
//! `oauth` profile its keychain item is read fresh and, when the access token is due, renewed
//! first (`login/refresh.rs`, single-flight across tasks and processes); the attempt is sent to
//! the ChatGPT backend with the access token as a bearer and the account in `chatgpt-account-id`
//! (`CredentialUse::Login`). When the provider still answers 401, the login is renewed once —
//! merged with any concurrent renewal, adopted when another writer renewed already — and the same
//! profile gets one more attempt: neither the 401 nor the retry is a failover, and no circuit
//! opens for a token that was only stale. A refused renewal leaves the login `expired`: the 401
//! is settled as any credential failure (the turn fails over), and selection skips the profile
//! from then on.

use std::sync::Arc;

use switchyard_core::routing::FailureKind;

use crate::error::EngineError;
use crate::login::{EndpointMoved, NoLogin, Renewal, Trigger};
use crate::router::attempt::{Attempt, AttemptLogin, AttemptSecret};
use crate::router::refusal::{Refusal, Unavailable};
use crate::router::{RequestRun, Router, Snapshot};

impl Router {
    /// The access token and login facts for an attempt on `snap`'s `oauth` profile `index`, or
    /// why it has no usable login now. The attempt goes to the backend the login was signed in
    /// with; a setting that names another now gets no token (`NoLogin::Moved`).
    pub(crate) async fn login_credential(&self, snap: &Snapshot, index: usize) -> Result<AttemptSecret, EngineError> {
        let tokens = match self.engine.login_for_attempt(&snap.rows[index]).await? {
            Ok(tokens) => tokens,
            Err(why) => return Ok(AttemptSecret::NoLogin(why)),
        };
        let now = match &snap.login_backend {
            Some(url) => url.clone(),
            None => self.engine.login_endpoints().await?.backend_url,
        };
        if let Some(moved) = EndpointMoved::backend(&tokens.endpoints, &now) {
            tracing::warn!(profile = %snap.rows[index].id, "the backend setting changed since this login signed in; its access token is not sent there");
            return Ok(AttemptSecret::NoLogin(NoLogin::Moved(moved)));
        }
        let base_url = tokens.endpoints.backend_url.clone();
        let login = AttemptLogin { account_id: tokens.account_id.clone(), mark: tokens.refresh_mark(), base_url };
        Ok(AttemptSecret::Ready(Arc::new(tokens.access), Some(login)))
    }

    /// 503 for an owned login that gets no attempt: why, and the command that fixes it
    /// (`login_expired`, `login_endpoints_changed`; a lapsed one a later request renews:
    /// `primary_unavailable`).
    pub(crate) fn login_unavailable(&self, snap: &Snapshot, index: usize, why: &NoLogin) -> Unavailable {
        let (slug, label) = (&snap.slug, &snap.rows[index].label);
        let again = self.engine.login_command(slug, label);
        let (refusal, message) = match why {
            NoLogin::SignedOut => (
                Refusal::LoginExpired,
                format!("the ChatGPT login of profile '{label}' of '{slug}' is not signed in; sign it in: {again}"),
            ),
            NoLogin::Expired => (
                Refusal::LoginExpired,
                format!(
                    "the ChatGPT login of profile '{label}' of '{slug}' has expired (the provider refused its renewal); \
                     sign it in again: {again}"
                ),
            ),
            NoLogin::Lapsed => (
                Refusal::PrimaryUnavailable,
                format!(
                    "the ChatGPT login of profile '{label}' of '{slug}' has lapsed and its renewal must wait; a later \
                     request renews it"
                ),
            ),
            NoLogin::Moved(m) => (
                Refusal::LoginMoved,
                format!(
                    "profile '{label}' of '{slug}' was signed in with {} {}; the setting now names {}, and its tokens \
                     are not sent there: set it back (switchyard settings {} {}) or sign in again: {again}",
                    m.setting, m.signed_in_with, m.now, m.setting, m.signed_in_with
                ),
            ),
        };
        Unavailable::new(refusal, 503, None, message)
    }

    /// After `attempt` on an owned login was refused with 401: renew the login once (per
    /// request and profile) and return the same profile's next attempt with the new token.
    pub(crate) async fn renewed_attempt(&self, run: &mut RequestRun, attempt: &mut Attempt) -> AfterRefusal {
        let Some(login) = attempt.login.as_ref() else { return AfterRefusal::Settle };
        if run.renewed.contains(&attempt.profile_id) {
            return AfterRefusal::Settle;
        }
        run.renewed.push(attempt.profile_id.clone());
        let renewal = match self.engine.refresh_login(&attempt.profile_id, &login.mark, Trigger::Refused).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(code = e.code().as_str(), "login renewal after a 401 failed");
                return AfterRefusal::Settle;
            }
        };
        let tokens = match renewal {
            Renewal::Renewed(t) | Renewal::Adopted(t) => t,
            // The token endpoint asked for a wait (or is in trouble): the login cools until then
            // instead of taking the until-re-verified circuit of a refused key.
            Renewal::Blocked { until_ms, .. } => return AfterRefusal::CoolUntil(until_ms),
            Renewal::Rejected => return AfterRefusal::Unusable(NoLogin::Expired),
            Renewal::Moved(moved) => return AfterRefusal::Unusable(NoLogin::Moved(moved)),
            Renewal::Kept(_) | Renewal::Missing => return AfterRefusal::Settle,
        };
        run.counts.attempts += 1;
        let login = AttemptLogin {
            account_id: tokens.account_id.clone(),
            mark: tokens.refresh_mark(),
            base_url: tokens.endpoints.backend_url.clone(),
        };
        tracing::info!(profile = %attempt.profile_id, "login renewed after a 401; the same profile tries once more");
        AfterRefusal::Retry(Box::new(Attempt {
            profile_id: attempt.profile_id.clone(),
            number: run.counts.attempts,
            reason: attempt.reason,
            moved: None,
            strip_account_state: attempt.strip_account_state,
            secret: Arc::new(tokens.access),
            credential: attempt.credential,
            base_url: Some(login.base_url.clone()),
            login: Some(login),
            cli: attempt.cli,
            probe: attempt.probe.take(),
        }))
    }
}

/// What follows an owned login's 401.
#[derive(Debug)]
pub(crate) enum AfterRefusal {
    /// Renewed (or adopted): the same profile's next attempt.
    Retry(Box<Attempt>),
    /// The login cannot be renewed before `until` (`None`: unknown): settle the 401 as a
    /// credential cooldown until then.
    CoolUntil(Option<i64>),
    /// Settle the 401 as it is (already renewed in this request, no login).
    Settle,
    /// The renewal was refused (the login expired) or its endpoints moved: settle the 401; if
    /// nothing else serves the request, the client is told why and what to run instead of the
    /// provider's bare 401.
    Unusable(NoLogin),
}

/// Whether a failure of an attempt on an owned login is the provider refusing its access token.
pub(crate) fn refused_token(kind: FailureKind, attempt: &Attempt) -> bool {
    kind == FailureKind::AuthInvalid && attempt.login.is_some()
}
