//! The relay: a hyper server on loopback (or, with TLS and per-user tokens, beyond it) that
//! coding agents and SDKs point at. Every route but `GET /healthz` and `/readyz` needs a token. Per connection, `/c/{slug}/…` speaks the
//! provider's own shape; legacy connections are forwarded to the primary byte for byte, and
//! balanced/priority connections go through the engine's router (sticky turns, failover
//! before output, probes, attempt ledger).

mod answer;
mod auth;
mod body;
mod cli_backend;
mod conn;
mod console;
mod guard;
mod handler;
mod header_names;
mod healthz;
mod intake;
mod listener;
mod logging;
mod me;
mod metrics;
mod reply;
mod request;
mod respond;
mod routes;
mod service;
mod state;
#[cfg(test)]
mod stream_props;
mod tls;
mod transport;
mod upstream;
mod upstream_pool;
mod upstream_request;

use std::future::Future;
use std::sync::Arc;

use switchyard_engine::Router as EngineRouter;
use switchyard_vault::Secret;
use tokio::net::TcpListener;

pub use conn::{fd_limit, raise_fd_limit, Limits, HEADER_READ_TIMEOUT};
pub use healthz::{is_own_relay, CHALLENGE_HEADER};
pub use logging::init_logging;
pub use service::{check_listen, check_loopback, Listen, RelayStatus, Service, DESKTOP_DRAIN, PORT_ENV};
pub use state::{Caller, RelayState, USERS_REFRESH};
pub use tls::{TlsFiles, READ_TIMEOUT as TLS_READ_TIMEOUT};

/// Whether this binary carries the built web console (`ui/dist-console` when it was compiled).
pub fn console_built() -> bool {
    console::assets::built()
}

/// Largest request body accepted (long agent conversations are big).
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// Serves the relay on `listener` (bind it to 127.0.0.1) until `shutdown` resolves; then
/// stops accepting and lets in-flight responses, streams included, finish. Connection limits
/// follow the process's descriptor limit (read, not raised: the binaries raise it).
pub async fn serve(
    listener: TcpListener,
    router: Arc<EngineRouter>,
    token: Secret,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let state = Arc::new(RelayState::new(router, token)?);
    serve_state(listener, state, Limits::for_process(), shutdown).await
}

/// Like [`serve`], with TLS on every connection when `tls` is given, and the web console at
/// `/console/` when `console` is set.
pub async fn serve_tls(
    listener: TcpListener,
    router: Arc<EngineRouter>,
    token: Secret,
    tls: Option<tokio_rustls::TlsAcceptor>,
    console: bool,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let state = Arc::new(RelayState::new(router, token)?.with_console(console));
    serve_with(listener, state, Limits::for_process(), tls, shutdown).await
}

/// Serves `GET /metrics` without a token on `listener` (`relay serve --metrics-listen`), with
/// TLS when `tls` is given, until `shutdown` resolves. Nothing else is served there.
pub async fn serve_metrics(
    listener: TcpListener,
    router: Arc<EngineRouter>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // No token is checked here: the state's token is never compared (nothing but /metrics).
    let state = Arc::new(RelayState::new(router, Secret::new(""))?);
    listener::Listener::new(listener, Limits::for_process(), tls)
        .serve(handler::Handler::metrics_only(state), shutdown)
        .await;
    Ok(())
}

/// Like [`serve`] over a state the caller keeps (to tell it a new token) and given limits.
pub async fn serve_state(
    listener: TcpListener,
    state: Arc<RelayState>,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, state, limits, None, shutdown).await
}

async fn serve_with(
    listener: TcpListener,
    state: Arc<RelayState>,
    limits: Limits,
    tls: Option<tokio_rustls::TlsAcceptor>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    state.refresh_users().await;
    let users = {
        let state = state.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(state::USERS_REFRESH);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                state.refresh_users().await;
            }
        })
    };
    let refresher = {
        let state = state.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(state::TOKEN_REFRESH);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                state.refresh_token().await;
            }
        })
    };
    let router = state.router.clone();
    listener::Listener::new(listener, limits, tls).serve(handler::Handler::new(state), shutdown).await;
    refresher.abort();
    users.abort();
    router.flush().await;
    Ok(())
}
