//! What every request handler shares: the engine's router, the relay token (re-read from the
//! keychain while the relay runs, so a rotation takes effect without a restart) and one
//! pooled HTTP client for upstream calls.

use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use switchyard_core::body_skim::DigestMemo;
use switchyard_engine::Router;
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
        })
    }

    /// Whether `headers` carry the current relay token.
    pub fn is_authorized(&self, headers: &http::HeaderMap) -> bool {
        self.token_place(headers).is_some()
    }

    /// Where `headers` carry the current relay token, if they do.
    pub fn token_place(&self, headers: &http::HeaderMap) -> Option<crate::auth::TokenPlace> {
        crate::auth::token_place(headers, &self.token.read().unwrap_or_else(PoisonError::into_inner))
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
