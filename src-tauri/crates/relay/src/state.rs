//! What every request handler shares: the engine's router, the relay token and one pooled
//! HTTP client for upstream calls.

use std::sync::Arc;
use std::time::Duration;

use switchyard_engine::Router;
use switchyard_vault::Secret;

#[derive(Debug)]
pub struct RelayState {
    pub router: Arc<Router>,
    pub(crate) token: Secret,
    pub(crate) http: reqwest::Client,
}

impl RelayState {
    pub fn new(router: Arc<Router>, token: Secret) -> std::io::Result<Self> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .pool_idle_timeout(Duration::from_secs(90))
            .pool_max_idle_per_host(512)
            .tcp_nodelay(true)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(std::io::Error::other)?;
        Ok(RelayState { router, token, http })
    }
}
