//! The relay's accept loop: owns the TCP listener, admits each connection through the
//! [`Registry`] of open connections (`conn.rs`: the cap that keeps room for real work,
//! closing the oldest token-less connection when full), serves HTTP/1 on it with a header-read
//! timeout (which hyper also applies while a kept-alive connection waits for its next request,
//! so idle sockets close), and on shutdown stops accepting and lets in-flight answers, streams
//! included, finish. Beyond loopback every connection is TLS first (`tls.rs`): the handshake
//! has the header-read timeout too. What a request gets is the [`Handler`]'s business
//! (`handler.rs`), told whether the peer is on loopback (only there does the install's own
//! token count).

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::future::Either;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

use crate::conn::{Limits, Registry};
use crate::handler::Handler;

/// How long the loop waits after a failed accept (out of descriptors or similar) instead of
/// spinning.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// The relay's listening socket and the connections it admitted.
pub(crate) struct Listener {
    tcp: TcpListener,
    limits: Limits,
    registry: Arc<Mutex<Registry>>,
    tls: Option<TlsAcceptor>,
}

impl Listener {
    pub(crate) fn new(tcp: TcpListener, limits: Limits, tls: Option<TlsAcceptor>) -> Self {
        Listener { tcp, limits, registry: Arc::default(), tls }
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
                    Ok((tcp, peer)) => (tcp, peer.ip().is_loopback()),
                    Err(e) => {
                        tracing::warn!(error = %e, "relay accept failed");
                        tokio::time::sleep(ACCEPT_BACKOFF).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            self.serve_connection(tcp.0, tcp.1, &handler, &http, &graceful);
        }
        drop(self.tcp);
        graceful.shutdown().await;
    }

    /// Admits `tcp` (or drops it when every slot carries authenticated work) and serves it on
    /// a task of its own until it ends or is closed to make room.
    fn serve_connection(
        &self,
        tcp: TcpStream,
        loopback: bool,
        handler: &Handler,
        http: &http1::Builder,
        graceful: &GracefulShutdown,
    ) {
        let Some(admitted) = self.registry.lock().unwrap_or_else(PoisonError::into_inner).open(&self.limits) else {
            tracing::debug!("relay connection refused: every slot carries authenticated work");
            return;
        };
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        let local_port = tcp.local_addr().map_or(0, |a| a.port());
        let service = handler.connection(admitted.mark, local_port, loopback, self.tls.is_some());
        let (registry, id, evict) = (self.registry.clone(), admitted.id, admitted.evict);
        let served = match self.tls.clone() {
            None => Either::Left(graceful.watch(http.serve_connection(TokioIo::new(tcp), service))),
            Some(acceptor) => {
                let (http, watcher, timeout) = (http.clone(), graceful.watcher(), self.limits.header_read_timeout);
                Either::Right(async move {
                    let tls = match tokio::time::timeout(timeout, acceptor.accept(tcp)).await {
                        Ok(Ok(tls)) => tls,
                        Ok(Err(e)) => {
                            tracing::debug!(error = %e, "TLS handshake failed");
                            return Ok(());
                        }
                        Err(_) => {
                            tracing::debug!("TLS handshake timed out");
                            return Ok(());
                        }
                    };
                    watcher.watch(http.serve_connection(TokioIo::new(tls), service)).await
                })
            }
        };
        tokio::spawn(async move {
            tokio::select! {
                result = served => {
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
