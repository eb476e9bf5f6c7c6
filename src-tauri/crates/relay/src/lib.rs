//! The local relay: an axum server on loopback that coding agents and SDKs point at. Every
//! route but `GET /healthz` needs the relay token. Per connection, `/c/{slug}/…` speaks the
//! provider's own shape; legacy connections are forwarded to the primary byte for byte, and
//! balanced/priority connections go through the engine's router (sticky turns, failover
//! before output, probes, attempt ledger).

mod auth;
mod forward;
mod health;
mod legacy;
mod reply;
mod request;
mod routed;
mod state;
mod stream;
#[cfg(test)]
mod stream_props;
mod upstream;

use std::future::Future;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::{any, get};
use axum::serve::ListenerExt;
use switchyard_engine::Router as EngineRouter;
use switchyard_vault::Secret;
use tokio::net::TcpListener;

pub use state::RelayState;

/// Largest request body accepted (long agent conversations are big).
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// The relay's routes over `state`.
pub fn app(state: Arc<RelayState>) -> axum::Router {
    axum::Router::new()
        .route("/healthz", get(health::healthz))
        .route("/c/{slug}/{*rest}", any(request::handle))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

/// Serves the relay on `listener` (bind it to 127.0.0.1) until `shutdown` resolves; then
/// stops accepting and lets in-flight responses, streams included, finish.
pub async fn serve(
    listener: TcpListener,
    router: Arc<EngineRouter>,
    token: Secret,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let state = Arc::new(RelayState::new(router.clone(), token)?);
    // Stream chunks go out as they arrive: without TCP_NODELAY, Nagle holds each small SSE
    // frame until the client's delayed ACK (~40 ms).
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
    });
    axum::serve(listener, app(state)).with_graceful_shutdown(shutdown).await?;
    router.shutdown().await;
    Ok(())
}
