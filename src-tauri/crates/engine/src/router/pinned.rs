//! Requests the client rule decides before selection (core `client_rule.rs`, invariant 20).
//!
//! A request that names its profile (`x-switchyard-profile`, sent by `switchyard exec` for an
//! external login) gets one attempt, on that profile only, carrying the client's own
//! credential (`CredentialUse::Client`): the credential belongs to one account, so nothing
//! fails over, retries elsewhere or falls back. It is refused, with nothing sent, when the name
//! is no profile of the connection or not an external one (`profile_not_pinnable`, 400), when
//! the request does not come from that login's official client (`client_not_allowed`, 403),
//! or when the profile cannot serve now — disabled, not signed in, cooling until its window
//! resets (`pinned_unavailable`, 503, or 429 with `Retry-After` while it cools). An external
//! Codex login goes to the ChatGPT backend (`accounts::codex_backend_url`), a Claude Code one to
//! the connection's base URL.
//!
//! A request none of whose servable profiles the client rule lets serve it gets
//! `client_not_allowed` (403) rather than a 503: waiting would not help.

use std::sync::Arc;

use switchyard_core::routing::{may_serve, Admission, FailureKind, SelectionReason};
use switchyard_core::states::{OfficialClient, ProfileKind};
use switchyard_vault::Secret;

use crate::config::accounts::codex_backend_url;
use crate::config::rows::client_of;
use crate::error::EngineError;
use crate::router::attempt::{Attempt, Probe};
use crate::router::refusal::{Refusal, Unavailable};
use crate::router::select::{retry_after, NextAttempt};
use crate::router::transport::CredentialUse;
use crate::router::{RequestRun, Router};

impl Router {
    /// The one attempt of a request naming its profile, or its refusal.
    /// `name`: the profile id or label the request names.
    pub(crate) async fn pinned_attempt(&self, run: &mut RequestRun, name: &str) -> Result<NextAttempt, EngineError> {
        let snap = run.snapshot.clone();
        let slug = &snap.slug;
        if run.counts.attempts > 0 {
            let message = "a request naming its profile makes one attempt".to_string();
            return Ok(refuse(Refusal::PinnedUnavailable, 503, None, message));
        }
        let Some(index) = snap.rows.iter().position(|r| r.id == name || r.label == name) else {
            let shown = switchyard_core::secret_shape::echo_safe(name).unwrap_or("the named profile");
            let message = format!("x-switchyard-profile: '{shown}' is no profile of '{slug}'");
            return Ok(refuse(Refusal::ProfileNotPinnable, 400, None, message));
        };
        let (row, profile) = (&snap.rows[index], &snap.profiles[index]);
        let kind = profile.credential.kind;
        if kind != ProfileKind::External {
            let message = format!(
                "profile '{}' of '{slug}' is a {kind} profile: only an external profile (the official CLI's own \
                 login) can be named in x-switchyard-profile; Switchyard chooses among the others itself",
                row.label
            );
            return Ok(refuse(Refusal::ProfileNotPinnable, 400, None, message));
        }
        let client = client_of(row);
        if !may_serve(kind, client, run.client, true) {
            let owner = client.map_or("its official client", client_name);
            let message = format!(
                "profile '{}' of '{slug}' is {owner}'s own login: it serves only requests from {owner}, and this \
                 request does not identify as {owner}",
                row.label
            );
            return Ok(refuse(Refusal::ClientNotAllowed, 403, None, message));
        }
        let now_ms = self.engine.now_ms();
        let health = profile.credential_health(now_ms);
        if !profile.enabled || !health.usable() {
            let why = if profile.enabled {
                format!("is not signed in ({}); run switchyard profile login {slug} {}", health.state, row.label)
            } else {
                "is disabled".to_string()
            };
            let message = format!("profile '{}' of '{slug}' {why}", row.label);
            return Ok(refuse(Refusal::PinnedUnavailable, 503, None, message));
        }
        let model = run.model.as_deref().unwrap_or("");
        let lease = match self.engine.board.admit(&profile.id, model, now_ms) {
            Admission::Closed => None,
            Admission::Probe(lease) => Some(lease),
            Admission::Blocked(_) => {
                let cooling = self.engine.board.blocking_cooldown(&profile.id, model, now_ms);
                let until = cooling.and_then(|(_, until)| until);
                let retry_after_secs = until.map(|u| retry_after(u, now_ms));
                let limited =
                    cooling.is_some_and(|(k, _)| matches!(k, FailureKind::RateLimited | FailureKind::QuotaExhausted));
                let message = format!(
                    "profile '{}' of '{slug}' cannot serve now{}{}; Switchyard does not send its request to another \
                     account",
                    row.label,
                    cooling.map(|(k, _)| format!(" ({k})")).unwrap_or_default(),
                    retry_after_secs.map(|s| format!("; retry in {s} s")).unwrap_or_default(),
                );
                let status = if limited { 429 } else { 503 };
                return Ok(refuse(Refusal::PinnedUnavailable, status, retry_after_secs, message));
            }
        };
        run.counts.attempts += 1;
        run.tried.push(profile.id.clone());
        Ok(NextAttempt::Go(Attempt {
            profile_id: profile.id.clone(),
            number: run.counts.attempts,
            reason: if lease.is_some() { SelectionReason::Probe } else { SelectionReason::Pinned },
            moved: None,
            strip_account_state: false,
            secret: Arc::new(Secret::new("")),
            credential: CredentialUse::Client,
            login: None,
            base_url: (client == Some(OfficialClient::Codex)).then(codex_backend_url),
            cli: false,
            probe: lease.map(|lease| Probe { lease, _beyond: None }),
        }))
    }

    /// `client_not_allowed`: the profiles at `servable` could serve now, but the client rule
    /// keeps every one of them from this request's client.
    pub(crate) fn client_not_allowed(&self, run: &RequestRun, servable: &[usize]) -> Unavailable {
        let snap = run.snapshot.clone();
        let kinds: Vec<ProfileKind> =
            servable.iter().filter_map(|&i| snap.profiles.get(i)).map(|p| p.credential.kind).collect();
        let tokens = kinds.iter().any(|k| matches!(k, ProfileKind::Token | ProfileKind::Oauth));
        let logins = kinds.contains(&ProfileKind::External);
        let mut why = Vec::new();
        if tokens {
            why.push("subscription tokens serve only the official client they were issued for");
        }
        if logins {
            why.push("external logins serve only their official CLI run through switchyard exec");
        }
        let message = format!(
            "no credential profile of '{}' may serve this client now: {}; Switchyard does not use them for other \
             clients, and no API-key profile can serve this request now",
            snap.slug,
            why.join("; ")
        );
        Unavailable::new(Refusal::ClientNotAllowed, 403, None, message)
    }
}

fn client_name(client: OfficialClient) -> &'static str {
    match client {
        OfficialClient::ClaudeCode => "Claude Code",
        OfficialClient::Codex => "Codex",
    }
}

/// The request is refused (`why`): `status` with `message`.
fn refuse(why: Refusal, status: u16, retry_after_secs: Option<u64>, message: String) -> NextAttempt {
    NextAttempt::Unavailable(Unavailable::new(why, status, retry_after_secs, message))
}
