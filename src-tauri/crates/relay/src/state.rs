//! What every request handler shares: the engine's router, the relay token and one pooled
//! HTTP client for upstream calls.

use std::sync::Arc;

use switchyard_engine::Router;
use switchyard_vault::Secret;

use crate::upstream::Upstream;

#[derive(Debug)]
pub struct RelayState {
    pub router: Arc<Router>,
    pub(crate) token: Secret,
    pub(crate) http: Upstream,
}

impl RelayState {
    pub fn new(router: Arc<Router>, token: Secret) -> std::io::Result<Self> {
        let http = Upstream::new()?;
        Ok(RelayState { router, token, http })
    }
}
