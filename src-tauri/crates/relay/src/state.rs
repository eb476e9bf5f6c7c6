//! What every request handler shares: the engine's router, the relay token (re-read from the
//! keychain while the relay runs, so a rotation takes effect without a restart), the live
//! per-user tokens' hashes (re-read every [`USERS_REFRESH`], so a revocation on any replica is
//! refused within it) and one pooled HTTP client for upstream calls. The install's own token
//! counts only from a loopback peer; beyond loopback a person's token is needed (invariant 27).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use switchyard_core::body_skim::DigestMemo;
use switchyard_engine::{Router, TokenGrant};
use switchyard_vault::Secret;

use crate::body::copy_buffers::CopyBuffers;
use crate::cli_backend::CliSlots;
use crate::upstream::Upstream;

/// How often a running relay checks its token's revision (one SQLite read): a rotation (CLI
/// or desktop) reaches it within this time; the old token is refused from then on.
pub const TOKEN_REFRESH: Duration = Duration::from_secs(1);

/// How often the token is re-read from the keychain even when its revision did not move (a
/// keychain entry changed by hand). A keychain read costs a Secret Service session (a
/// Diffie-Hellman exchange): read every second it was 6 % of the relay's CPU at 500 req/s.
pub const TOKEN_REREAD: Duration = Duration::from_secs(60);

/// How often the live user tokens are re-read (one store read).
pub const USERS_REFRESH: Duration = Duration::from_millis(switchyard_engine::USERS_REFRESH_MS);

/// Whose token a request carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The install's own token (from a loopback peer).
    Local,
    /// A relay user's token: the user, their role and scope.
    User(Arc<TokenGrant>),
}

impl Caller {
    /// The name the ledger records (`None` for the install's own token).
    pub fn user(&self) -> Option<String> {
        match self {
            Caller::Local => None,
            Caller::User(grant) => Some(grant.name.clone()),
        }
    }

    /// What the caller may reach (`None`: everything — the install's own token).
    pub fn scope(&self) -> Option<&switchyard_engine::UserScope> {
        match self {
            Caller::Local => None,
            Caller::User(grant) => Some(&grant.scope).filter(|s| !s.is_everything()),
        }
    }
}

#[derive(Debug)]
pub struct RelayState {
    pub router: Arc<Router>,
    token: RwLock<Secret>,
    /// The token revision last read from the keychain, and when (engine clock).
    token_read: Mutex<(Option<i64>, Option<std::time::Instant>)>,
    pub(crate) http: Upstream,
    /// Digests of the messages routed bodies (and forwarded ones, off the request path) held
    /// before: an agent resends its conversation on every call (core `body_skim/memo.rs`).
    pub(crate) memo: Arc<DigestMemo>,
    /// Buffers for the copies of forwarded bodies, kept for reuse (`body/copy_buffers.rs`).
    pub(crate) copies: Arc<CopyBuffers>,
    /// The CLI backend's run permits, per profile (`cli_backend/slots.rs`).
    pub(crate) cli: CliSlots,
    /// Live user tokens: SHA-256 (hex) -> the user's grant.
    users: RwLock<HashMap<String, Arc<TokenGrant>>>,
    /// `relay serve --console`: the web console is served at `/console/`.
    console: bool,
}

impl RelayState {
    pub fn new(router: Arc<Router>, token: Secret) -> std::io::Result<Self> {
        let http = Upstream::new()?;
        Ok(RelayState {
            router,
            token: RwLock::new(token),
            token_read: Mutex::new((None, None)),
            http,
            memo: Arc::new(DigestMemo::default()),
            copies: Arc::new(CopyBuffers::default()),
            cli: CliSlots::default(),
            users: RwLock::default(),
            console: false,
        })
    }

    /// Serves the web console (`relay serve --console`).
    pub fn with_console(mut self, on: bool) -> Self {
        self.console = on;
        self
    }

    /// Whether the web console is served.
    pub fn console(&self) -> bool {
        self.console
    }

    /// Whether `headers` carry the current relay token (from a loopback peer) or a live
    /// user's token.
    pub fn is_authorized(&self, headers: &http::HeaderMap, loopback: bool) -> bool {
        self.caller(headers, loopback).is_some()
    }

    /// Whether the request carries the install's own token from loopback (the operator, who may
    /// see why the relay is not ready).
    pub fn is_operator(&self, headers: &http::HeaderMap, loopback: bool) -> bool {
        matches!(self.caller(headers, loopback), Some((_, Caller::Local)))
    }

    /// Where `headers` carry the current relay token, if they do (the install's own only).
    pub fn token_place(&self, headers: &http::HeaderMap) -> Option<crate::auth::TokenPlace> {
        crate::auth::token_place(headers, &self.token.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Who the request is from, and where its token was: the install's own token counts only
    /// when `loopback` and no proxy says it forwarded the request (`guard::is_proxied`); a user
    /// token (`syu_…`) is looked up by its SHA-256.
    pub fn caller(&self, headers: &http::HeaderMap, loopback: bool) -> Option<(crate::auth::TokenPlace, Caller)> {
        let loopback = loopback && !crate::guard::is_proxied(headers);
        let token = self.token.read().unwrap_or_else(PoisonError::into_inner);
        let users = self.users.read().unwrap_or_else(PoisonError::into_inner);
        crate::auth::find(headers, |presented| {
            if loopback && presented == &*token {
                return Some(Caller::Local);
            }
            let text = presented.expose();
            if users.is_empty() || !text.starts_with(switchyard_engine::USER_TOKEN_PREFIX) {
                return None;
            }
            let grant = users.get(&switchyard_engine::user_token_hash(text))?;
            // Past its expiry a token is nobody's (401), on every replica at once: the time is
            // the engine clock's, not a refresh away.
            let expired = grant.expires_at.is_some_and(|at| self.router.engine().now_ms() >= at);
            (!expired).then(|| Caller::User(grant.clone()))
        })
    }

    /// Re-reads the live user tokens; keeps the last set when the store cannot be read.
    pub async fn refresh_users(&self) {
        match self.router.engine().relay_user_tokens().await {
            Ok(rows) => {
                let fresh: HashMap<String, Arc<TokenGrant>> = rows.into_iter().map(|(h, g)| (h, Arc::new(g))).collect();
                let mut users = self.users.write().unwrap_or_else(PoisonError::into_inner);
                if *users != fresh {
                    tracing::debug!(users = fresh.len(), "relay user tokens changed");
                    *users = fresh;
                }
            }
            Err(e) => tracing::debug!(code = e.code().as_str(), "relay user tokens not re-read"),
        }
    }

    /// Runs `f` with the current token (the `/healthz` proof is keyed with it).
    pub(crate) fn with_token<T>(&self, f: impl FnOnce(&Secret) -> T) -> T {
        f(&self.token.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Replaces the token a client must present (the desktop calls it after Rotate).
    pub fn set_token(&self, token: Secret) {
        *self.token.write().unwrap_or_else(PoisonError::into_inner) = token;
    }

    /// Re-reads the stored token when its revision moved (or every [`TOKEN_REREAD`]); keeps
    /// the current one when the keychain cannot be read.
    pub async fn refresh_token(&self) {
        let engine = self.router.engine();
        let revision = match engine.relay_token_revision().await {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(code = e.code().as_str(), "relay token revision not read");
                return;
            }
        };
        let now = engine.monotonic();
        {
            let seen = self.token_read.lock().unwrap_or_else(PoisonError::into_inner);
            let fresh = seen.1.is_some_and(|at| now.saturating_duration_since(at) < TOKEN_REREAD);
            if fresh && seen.0 == revision {
                return;
            }
        }
        match engine.relay_token(false).await {
            Ok(token) => {
                *self.token_read.lock().unwrap_or_else(PoisonError::into_inner) = (revision, Some(now));
                let changed = *self.token.read().unwrap_or_else(PoisonError::into_inner) != token;
                if changed {
                    tracing::info!("relay token changed; the previous token is refused from now on");
                    self.set_token(token);
                }
            }
            Err(e) => tracing::debug!(code = e.code().as_str(), "relay token not re-read"),
        }
    }
}
