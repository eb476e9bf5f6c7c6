//! The relay's accept loop: HTTP/1 on loopback with a header-read timeout (which hyper also
//! applies while a kept-alive connection waits for its next request, so idle sockets close),
//! admitting each connection through the [`Registry`] of open connections
//! (`connections.rs`: the cap that keeps room for real work). Graceful shutdown stops
//! accepting and lets in-flight answers, streams included, finish.

use std::future::Future;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::Notify;

use crate::connections::{ConnMark, Limits, Registry, Slot};
use crate::state::RelayState;

/// Serves the relay's routes over `state` on `listener` until `shutdown` resolves.
pub async fn run(
    listener: TcpListener,
    state: Arc<RelayState>,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let registry = Arc::new(Mutex::new(Registry::default()));
    let graceful = GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout).keep_alive(true);
    tokio::pin!(shutdown);
    loop {
        let (tcp, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors or similar: back off instead of spinning.
                    tracing::warn!(error = %e, "relay accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let (id, slot) = {
            let mut reg = registry.lock().unwrap_or_else(PoisonError::into_inner);
            if !reg.admit(&limits) {
                tracing::debug!("relay connection refused: every slot carries authenticated work");
                continue;
            }
            let id = reg.next;
            reg.next += 1;
            let slot = Slot { authenticated: Arc::new(AtomicBool::new(false)), evict: Arc::new(Notify::new()) };
            let handles = (slot.authenticated.clone(), slot.evict.clone());
            reg.open.insert(id, slot);
            (id, handles)
        };
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        let local_port = tcp.local_addr().map_or(0, |a| a.port());
        let (authenticated, evict) = slot;
        let mark = ConnMark(authenticated);
        let state = state.clone();
        let service = hyper::service::service_fn(move |req: Request<Incoming>| {
            let (state, mark) = (state.clone(), mark.clone());
            async move {
                let resp = crate::routes::dispatch(state, &mark, local_port, req.map(axum::body::Body::new)).await;
                Ok::<_, std::convert::Infallible>(resp)
            }
        });
        let conn = graceful.watch(builder.serve_connection(TokioIo::new(tcp), service));
        let registry = registry.clone();
        tokio::spawn(async move {
            tokio::select! {
                result = conn => {
                    if let Err(e) = result {
                        tracing::debug!(error = %e, "relay connection ended with an error");
                    }
                }
                () = evict.notified() => tracing::debug!("relay connection closed to make room"),
            }
            registry.lock().unwrap_or_else(PoisonError::into_inner).open.remove(&id);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}
