//! The relay's accept loop: owns the TCP listener, admits each connection through the
//! [`Registry`] of open connections (`connections.rs`: the cap that keeps room for real work,
//! closing the oldest token-less connection when full), serves HTTP/1 on it with a header-read
//! timeout (which hyper also applies while a kept-alive connection waits for its next request,
//! so idle sockets close), and on shutdown stops accepting and lets in-flight answers, streams
//! included, finish. What a request gets is the [`Handler`]'s business (`handler.rs`).

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpStream};

use crate::connections::{Limits, Registry};
use crate::handler::Handler;

/// How long the loop waits after a failed accept (out of descriptors or similar) instead of
/// spinning.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// The relay's listening socket and the connections it admitted.
pub(crate) struct Listener {
    tcp: TcpListener,
    limits: Limits,
    registry: Arc<Mutex<Registry>>,
}

impl Listener {
    pub(crate) fn new(tcp: TcpListener, limits: Limits) -> Self {
        Listener { tcp, limits, registry: Arc::default() }
    }

    /// Serves each admitted connection with `handler` until `shutdown` resolves, then drains.
    pub(crate) async fn serve(self, handler: Handler, shutdown: impl Future<Output = ()> + Send + 'static) {
        let graceful = GracefulShutdown::new();
        let mut http = http1::Builder::new();
        http.timer(TokioTimer::new()).header_read_timeout(self.limits.header_read_timeout).keep_alive(true);
        tokio::pin!(shutdown);
        loop {
            let tcp = tokio::select! {
                accepted = self.tcp.accept() => match accepted {
                    Ok((tcp, _)) => tcp,
                    Err(e) => {
                        tracing::warn!(error = %e, "relay accept failed");
                        tokio::time::sleep(ACCEPT_BACKOFF).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            self.serve_connection(tcp, &handler, &http, &graceful);
        }
        drop(self.tcp);
        graceful.shutdown().await;
    }

    /// Admits `tcp` (or drops it when every slot carries authenticated work) and serves it on
    /// a task of its own until it ends or is closed to make room.
    fn serve_connection(&self, tcp: TcpStream, handler: &Handler, http: &http1::Builder, graceful: &GracefulShutdown) {
        let Some(admitted) = self.registry.lock().unwrap_or_else(PoisonError::into_inner).open(&self.limits) else {
            tracing::debug!("relay connection refused: every slot carries authenticated work");
            return;
        };
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        let local_port = tcp.local_addr().map_or(0, |a| a.port());
        let service = handler.connection(admitted.mark, local_port);
        let conn = graceful.watch(http.serve_connection(TokioIo::new(tcp), service));
        let (registry, id, evict) = (self.registry.clone(), admitted.id, admitted.evict);
        tokio::spawn(async move {
            tokio::select! {
                result = conn => {
                    if let Err(e) = result {
                        tracing::debug!(error = %e, "relay connection ended with an error");
                    }
                }
                () = evict.notified() => tracing::debug!("relay connection closed to make room"),
            }
            registry.lock().unwrap_or_else(PoisonError::into_inner).close(id);
        });
    }
}
