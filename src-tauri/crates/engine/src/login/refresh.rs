//! Renewing an owned login's access token (invariant 22): one refresh at a time per login across
//! tasks (an async mutex per profile) and processes (`lock.rs`), compare-and-swap on the refresh
//! token it started from, and never a rotation.
//!
//! Under both locks the refresh reads the keychain item again: if its refresh token is no longer
//! the one the caller saw, another task or process has refreshed already and its tokens are
//! adopted — no second call, so a rotating refresh token is never sent twice. Otherwise it calls
//! the token endpoint and writes, in order, the keychain item (same locator, same generation) and
//! then the row's refresh columns (`record_refresh`, compare-and-swap on the generation; neither
//! revision moves, so evidence and routing stay as they are). A crash between the two leaves the
//! keychain ahead of the row; the next use reads the item, sees the row behind and brings it up
//! to date (`sync_row`). A note in the lock file says a refresh is under way; one found left
//! behind means a refresh died after sending, and is logged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use switchyard_core::credential_health::RefreshOutcome;
use switchyard_core::login::{
    outcome_from_word, outcome_word, refresh_allowed, refresh_due, refresh_jitter_ms, RefreshVerdict,
};
use switchyard_store::profiles::{self, ProfileRow, Refreshed};
use switchyard_vault::Locator;

use crate::config::rows::locator_of;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::fault::FaultPoint;
use crate::login::endpoints::EndpointMoved;
use crate::login::tokens::LoginTokens;

/// Per-profile refresh state of this process.
#[derive(Debug, Default)]
pub(crate) struct Logins {
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Refresh calls this process made (tests hold concurrency to one call).
    calls: std::sync::atomic::AtomicU64,
    /// profile id → the access expiry this process knows its row holds (so the hot path does not
    /// write a row a snapshot shows a second late).
    synced: Mutex<HashMap<String, i64>>,
    /// profile id → the login generation whose refresh the provider refused in this process.
    rejected: Mutex<HashMap<String, i64>>,
    /// profile id → the device code a front end without a terminal is signing it in with.
    pending: Mutex<HashMap<String, crate::login::DeviceCode>>,
    /// profile id → the browser sign-in under way (its verifier and callback listener).
    browser: Mutex<HashMap<String, crate::login::browser::PendingBrowser>>,
}

impl Logins {
    fn lock_for(&self, profile_id: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self.locks.lock().unwrap_or_else(PoisonError::into_inner);
        map.entry(profile_id.to_string()).or_default().clone()
    }

    pub(crate) fn hold_code(&self, profile_id: &str, code: crate::login::DeviceCode) {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner).insert(profile_id.to_string(), code);
    }

    pub(crate) fn held_code(&self, profile_id: &str) -> Option<crate::login::DeviceCode> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner).get(profile_id).cloned()
    }

    pub(crate) fn drop_code(&self, profile_id: &str) {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner).remove(profile_id);
    }

    /// Holds a browser sign-in (one replaced is dropped: its listener stops, its port is freed).
    pub(crate) fn hold_browser(&self, profile_id: &str, pending: crate::login::browser::PendingBrowser) {
        self.browser.lock().unwrap_or_else(PoisonError::into_inner).insert(profile_id.to_string(), pending);
    }

    pub(crate) fn take_browser(&self, profile_id: &str) -> Option<crate::login::browser::PendingBrowser> {
        self.browser.lock().unwrap_or_else(PoisonError::into_inner).remove(profile_id)
    }

    fn rejected(&self, profile_id: &str) -> Option<i64> {
        self.rejected.lock().unwrap_or_else(PoisonError::into_inner).get(profile_id).copied()
    }

    fn note_rejected(&self, profile_id: &str, generation: i64) {
        self.rejected.lock().unwrap_or_else(PoisonError::into_inner).insert(profile_id.to_string(), generation);
    }

    fn synced(&self, profile_id: &str) -> Option<i64> {
        self.synced.lock().unwrap_or_else(PoisonError::into_inner).get(profile_id).copied()
    }

    fn note_synced(&self, profile_id: &str, expires_at_ms: i64) {
        self.synced.lock().unwrap_or_else(PoisonError::into_inner).insert(profile_id.to_string(), expires_at_ms);
    }
}

/// Why a refresh is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// The access token is near its expiry (proactive): nothing happens when it no longer is.
    Due,
    /// The provider refused the access token (401): renew whatever its expiry says.
    Refused,
}

/// How a refresh ended.
#[derive(Debug)]
pub(crate) enum Renewal {
    /// This call renewed the tokens.
    Renewed(LoginTokens),
    /// Another task or process had renewed them: these are its tokens.
    Adopted(LoginTokens),
    /// Not renewed: not due (a proactive refresh another writer made unnecessary); the current tokens.
    Kept(LoginTokens),
    /// Not renewed now: a 429's or a transient failure's block, until `until_ms` (`None`:
    /// unknown); the current tokens.
    Blocked { tokens: LoginTokens, until_ms: Option<i64> },
    /// The refresh token was refused: the login is `expired` until the user signs in again.
    Rejected,
    /// The profile has no login item (signed out, or removed).
    Missing,
    /// The token endpoint setting names another than the login was signed in with: nothing sent.
    Moved(EndpointMoved),
}

/// Why an owned login gets no attempt now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NoLogin {
    /// No login item: never signed in, or signed out.
    SignedOut,
    /// The provider refused its renewal: only a new sign-in brings it back.
    Expired,
    /// The access token lapsed and the token endpoint asked to wait before renewing it.
    Lapsed,
    /// A setting names another token endpoint or backend than it was signed in with.
    Moved(EndpointMoved),
}

impl Engine {
    /// How many refresh calls this process has made (tests).
    #[doc(hidden)]
    pub fn login_refresh_calls(&self) -> u64 {
        self.logins.calls.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The login item at `locator`, read fresh from the keychain.
    pub(crate) async fn read_login(&self, locator: &Locator) -> Result<Option<LoginTokens>, EngineError> {
        Ok(self.vault_get(locator.clone()).await?.as_ref().and_then(LoginTokens::from_secret))
    }

    /// The tokens an attempt on `row` (an `oauth` profile) is sent with: the keychain item read
    /// fresh, renewed first when its access token is due; else why there is no usable login
    /// (signed out, expired, lapsed and not renewable now, or its endpoints moved).
    pub(crate) async fn login_for_attempt(
        &self,
        row: &ProfileRow,
    ) -> Result<Result<LoginTokens, NoLogin>, EngineError> {
        let Some(locator) = locator_of(row) else { return Ok(Err(NoLogin::SignedOut)) };
        let Some(tokens) = self.read_login(&locator).await? else { return Ok(Err(NoLogin::SignedOut)) };
        if self.login_rejected(row, tokens.generation) {
            return Ok(Err(NoLogin::Expired));
        }
        let now = self.now_ms();
        let jitter = refresh_jitter_ms(&row.id, tokens.generation);
        let tokens = if refresh_due(Some(tokens.expires_at_ms), now, jitter) {
            match self.refresh_login(&row.id, &tokens.refresh_mark(), Trigger::Due).await? {
                Renewal::Renewed(t) | Renewal::Adopted(t) | Renewal::Kept(t) => t,
                Renewal::Blocked { tokens: t, .. } => t,
                Renewal::Rejected => return Ok(Err(NoLogin::Expired)),
                Renewal::Missing => return Ok(Err(NoLogin::SignedOut)),
                Renewal::Moved(moved) => return Ok(Err(NoLogin::Moved(moved))),
            }
        } else {
            self.sync_row(row, &tokens).await;
            tokens
        };
        let usable = switchyard_core::login::access_usable(Some(tokens.expires_at_ms), self.now_ms());
        Ok(if usable { Ok(tokens) } else { Err(NoLogin::Lapsed) })
    }

    /// Whether the provider refused this login's refresh token (only a new sign-in, a new
    /// generation, brings it back): from the row, or from this process's own refresh when the row
    /// `row` was read before it.
    fn login_rejected(&self, row: &ProfileRow, generation: i64) -> bool {
        let stored = row.login_generation == generation
            && row.login_outcome.as_deref().and_then(outcome_from_word) == Some(RefreshOutcome::Rejected);
        stored || self.logins.rejected(&row.id) == Some(generation)
    }

    /// Refreshes `profile_id`'s login once, across tasks and processes, compare-and-swap on the
    /// refresh token whose mark is `seen`.
    pub(crate) async fn refresh_login(
        &self,
        profile_id: &str,
        seen: &str,
        trigger: Trigger,
    ) -> Result<Renewal, EngineError> {
        let task_lock = self.logins.lock_for(profile_id);
        let _in_process = task_lock.lock().await;
        let mut file_lock = self.lock_login(profile_id).await?;
        let row = {
            let mut conn = self.store.acquire().await?;
            profiles::by_id(&mut conn, profile_id).await?
        };
        let Some(row) = row else { return Ok(Renewal::Missing) };
        let Some(locator) = locator_of(&row) else { return Ok(Renewal::Missing) };
        let Some(tokens) = self.read_login(&locator).await? else { return Ok(Renewal::Missing) };
        if let Some((mark, at)) = file_lock.interrupted() {
            let state = if mark == tokens.refresh_mark() { "before its tokens were saved" } else { "after saving" };
            tracing::warn!(profile = %profile_id, started_ms = at, "an earlier login refresh was interrupted {state}");
            file_lock.note_done();
        }
        self.sync_row(&row, &tokens).await;
        if tokens.refresh_mark() != seen {
            return Ok(Renewal::Adopted(tokens));
        }
        let now = self.now_ms();
        if trigger == Trigger::Due
            && !refresh_due(Some(tokens.expires_at_ms), now, refresh_jitter_ms(&row.id, tokens.generation))
        {
            return Ok(Renewal::Kept(tokens));
        }
        let last = row.login_outcome.as_deref().and_then(outcome_from_word);
        let same_login = row.login_generation == tokens.generation;
        if same_login && last == Some(RefreshOutcome::Rejected) {
            return Ok(Renewal::Rejected);
        }
        if same_login && !refresh_allowed(row.login_blocked_until, last, now) {
            return Ok(Renewal::Blocked { tokens, until_ms: row.login_blocked_until });
        }
        let endpoints = self.login_endpoints().await?;
        if let Some(moved) = EndpointMoved::token_url(&tokens.endpoints, &endpoints) {
            tracing::warn!(profile = %profile_id, "the token endpoint setting changed since this login signed in; its refresh token is not sent there");
            return Ok(Renewal::Moved(moved));
        }
        file_lock.note_started(seen, now);
        self.logins.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let answer = self.call_refresh(&endpoints, &tokens.refresh).await;
        let at = self.now_ms();
        let renewal = match (answer.verdict, answer.issued) {
            (RefreshVerdict::Renewed, Some(issued)) => {
                self.faults.check(FaultPoint::RefreshBeforeKeychainWrite)?;
                let renewed = LoginTokens {
                    access: issued.access,
                    refresh: issued.refresh.unwrap_or(tokens.refresh),
                    expires_at_ms: issued.expires_at_ms,
                    account_id: issued.claims.account_id.or(tokens.account_id),
                    generation: tokens.generation,
                    endpoints: tokens.endpoints.clone(),
                };
                self.vault_put(locator, renewed.to_secret()?).await?;
                self.faults.check(FaultPoint::RefreshAfterKeychainWrite)?;
                let written = Refreshed {
                    expires_at: Some(renewed.expires_at_ms),
                    outcome: outcome_word(RefreshOutcome::Succeeded),
                    blocked_until: None,
                    at,
                };
                self.write_refresh(&row.id, renewed.generation, written).await?;
                tracing::info!(profile = %profile_id, "login refreshed");
                Renewal::Renewed(renewed)
            }
            (verdict, _) => {
                let written = Refreshed {
                    expires_at: None,
                    outcome: outcome_word(verdict.outcome()),
                    blocked_until: verdict.blocked_until(),
                    at,
                };
                self.write_refresh(&row.id, tokens.generation, written).await?;
                tracing::warn!(profile = %profile_id, outcome = written.outcome, "login refresh failed");
                match verdict {
                    RefreshVerdict::Rejected => {
                        self.logins.note_rejected(&row.id, tokens.generation);
                        Renewal::Rejected
                    }
                    _ => Renewal::Blocked { tokens, until_ms: verdict.blocked_until() },
                }
            }
        };
        file_lock.note_done();
        Ok(renewal)
    }

    async fn write_refresh(&self, profile_id: &str, generation: i64, r: Refreshed<'_>) -> Result<(), EngineError> {
        let mut conn = self.store.acquire().await?;
        if !profiles::record_refresh(&mut conn, profile_id, generation, r).await? {
            tracing::info!(profile = %profile_id, "the login was replaced by a new sign-in; its refresh is not recorded");
        } else if let Some(at) = r.expires_at {
            self.logins.note_synced(profile_id, at);
        }
        Ok(())
    }

    /// Brings the row's expiry up to the keychain item's when a refresh was written to the
    /// keychain but not to the row (a crash between the two writes).
    async fn sync_row(&self, row: &ProfileRow, tokens: &LoginTokens) {
        let known =
            row.expires_at == Some(tokens.expires_at_ms) || self.logins.synced(&row.id) == Some(tokens.expires_at_ms);
        if row.login_generation != tokens.generation || known {
            return;
        }
        let written = Refreshed {
            expires_at: Some(tokens.expires_at_ms),
            outcome: outcome_word(RefreshOutcome::Succeeded),
            blocked_until: None,
            at: self.now_ms(),
        };
        if let Err(e) = self.write_refresh(&row.id, tokens.generation, written).await {
            tracing::warn!(code = e.code().as_str(), "a login's row could not be brought up to its keychain item");
        } else {
            tracing::info!(profile = %row.id, "a login's row was brought up to its keychain item");
        }
    }
}
