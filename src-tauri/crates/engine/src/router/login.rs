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
use switchyard_vault::Secret;

use crate::error::EngineError;
use crate::login::{Renewal, Trigger};
use crate::router::attempt::{Attempt, AttemptLogin};
use crate::router::{RequestRun, Router, Snapshot};

impl Router {
    /// The access token and login facts for an attempt on `snap`'s `oauth` profile `index`
    /// (`None`: no usable login now).
    pub(crate) async fn login_credential(
        &self,
        snap: &Snapshot,
        index: usize,
    ) -> Result<Option<(Arc<Secret>, AttemptLogin)>, EngineError> {
        let Some(tokens) = self.engine.login_for_attempt(&snap.rows[index]).await? else { return Ok(None) };
        let base_url = match &snap.login_backend {
            Some(url) => url.clone(),
            None => self.engine.login_endpoints().await?.backend_url,
        };
        let login = AttemptLogin { account_id: tokens.account_id.clone(), mark: tokens.refresh_mark(), base_url };
        Ok(Some((Arc::new(tokens.access), login)))
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
            Renewal::Kept(_) | Renewal::Rejected | Renewal::Missing => return AfterRefusal::Settle,
        };
        run.counts.attempts += 1;
        let login = AttemptLogin {
            account_id: tokens.account_id.clone(),
            mark: tokens.refresh_mark(),
            base_url: login.base_url.clone(),
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
    /// Settle the 401 as it is (refused refresh, already renewed in this request, no login).
    Settle,
}

/// Whether a failure of an attempt on an owned login is the provider refusing its access token.
pub(crate) fn refused_token(kind: FailureKind, attempt: &Attempt) -> bool {
    kind == FailureKind::AuthInvalid && attempt.login.is_some()
}
