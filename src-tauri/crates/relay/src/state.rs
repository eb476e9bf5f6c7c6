//! What every request handler shares: the engine's router, the relay token (re-read from the
//! keychain while the relay runs, so a rotation takes effect without a restart) and one
//! pooled HTTP client for upstream calls.

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use switchyard_engine::Router;
use switchyard_vault::Secret;

use crate::upstream::Upstream;

/// How often a running relay re-reads its token: a rotation (CLI or desktop) reaches it
/// within this time; the old token is refused from then on.
pub const TOKEN_REFRESH: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub struct RelayState {
    pub router: Arc<Router>,
    token: RwLock<Secret>,
    pub(crate) http: Upstream,
}

impl RelayState {
    pub fn new(router: Arc<Router>, token: Secret) -> std::io::Result<Self> {
        let http = Upstream::new()?;
        Ok(RelayState { router, token: RwLock::new(token), http })
    }

    /// Whether `headers` carry the current relay token.
    pub fn is_authorized(&self, headers: &axum::http::HeaderMap) -> bool {
        crate::auth::is_authorized(headers, &self.token.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Replaces the token a client must present (the desktop calls it after Rotate).
    pub fn set_token(&self, token: Secret) {
        *self.token.write().unwrap_or_else(PoisonError::into_inner) = token;
    }

    /// Re-reads the stored token; keeps the current one when the keychain cannot be read.
    pub async fn refresh_token(&self) {
        match self.router.engine().relay_token(false).await {
            Ok(token) => {
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
