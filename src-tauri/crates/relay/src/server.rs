//! The relay's accept loop: HTTP/1 on loopback with a header-read timeout (which hyper also
//! applies while a kept-alive connection waits for its next request, so idle sockets close),
//! and a cap on open connections that keeps room for real work. Connections that have not
//! yet carried an authenticated request may hold at most [`Limits::unauthenticated`] slots;
//! past that — or when every slot is taken — the oldest of them is closed to admit the new
//! one, so a flood of idle or token-less sockets can never lock a real client out. The cap
//! follows the process's descriptor limit (raised to its hard limit at start). Graceful
//! shutdown stops accepting and lets in-flight answers, streams included, finish.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::Notify;

use crate::state::RelayState;

/// How long a client may take to send a request's headers, and how long a kept-alive
/// connection may wait for its next request.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Descriptors kept for everything that is not a client connection (upstream sockets are
/// counted per client connection below; the database, the keychain bus, logs).
const RESERVED_FDS: u64 = 64;

/// Connection limits of one relay.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_read_timeout: Duration,
    /// Open client connections at most.
    pub max_connections: usize,
    /// Of those, connections that have not yet passed the token check.
    pub unauthenticated: usize,
}

impl Limits {
    /// From the descriptor limit: each client connection may need an upstream one too.
    pub fn for_process() -> Self {
        let fds = raise_fd_limit();
        let max = usize::try_from(fds.saturating_sub(RESERVED_FDS) / 2).unwrap_or(usize::MAX).clamp(16, 8192);
        Limits { header_read_timeout: HEADER_READ_TIMEOUT, max_connections: max, unauthenticated: max * 3 / 4 }
    }
}

/// Raises the soft descriptor limit to the hard one; returns the limit now in force.
fn raise_fd_limit() -> u64 {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let limit = getrlimit(Resource::Nofile);
    let soft = limit.current.unwrap_or(u64::MAX);
    match limit.maximum {
        Some(hard) if hard > soft => {
            let raised = rustix::process::Rlimit { current: Some(hard), maximum: Some(hard) };
            if setrlimit(Resource::Nofile, raised).is_ok() {
                return hard;
            }
            soft
        }
        None => soft.max(65_536),
        _ => soft,
    }
}

/// Marks a connection once a request on it passed the token check (request extension).
#[derive(Debug, Clone)]
pub struct ConnMark(Arc<AtomicBool>);

impl ConnMark {
    pub fn authenticated(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

struct Slot {
    authenticated: Arc<AtomicBool>,
    evict: Arc<Notify>,
}

/// The open connections, oldest first.
#[derive(Default)]
struct Registry {
    next: u64,
    open: BTreeMap<u64, Slot>,
}

impl Registry {
    /// Makes room for one more connection; `false` when it must be refused.
    fn admit(&mut self, limits: &Limits) -> bool {
        let unauthenticated = self.open.values().filter(|s| !s.authenticated.load(Ordering::Relaxed)).count();
        let full = self.open.len() >= limits.max_connections;
        if !full && unauthenticated < limits.unauthenticated {
            return true;
        }
        let oldest = self.open.iter().find(|(_, s)| !s.authenticated.load(Ordering::Relaxed)).map(|(id, _)| *id);
        match oldest {
            Some(id) => {
                if let Some(slot) = self.open.remove(&id) {
                    slot.evict.notify_one();
                }
                true
            }
            // Every connection is carrying authenticated work: refuse the newcomer.
            None => !full,
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(auth: bool) -> Slot {
        Slot { authenticated: Arc::new(AtomicBool::new(auth)), evict: Arc::new(Notify::new()) }
    }

    #[test]
    fn the_oldest_unauthenticated_connection_makes_room_and_authenticated_work_is_kept() {
        let limits = Limits { header_read_timeout: HEADER_READ_TIMEOUT, max_connections: 4, unauthenticated: 3 };
        let mut reg = Registry::default();
        for (id, auth) in [(0, true), (1, false), (2, false)] {
            reg.open.insert(id, slot(auth));
        }
        assert!(reg.admit(&limits), "room left");
        reg.open.insert(3, slot(false));
        assert!(reg.admit(&limits), "full: the newcomer is admitted");
        assert!(!reg.open.contains_key(&1), "by closing the oldest unauthenticated connection");
        assert!(reg.open.contains_key(&0), "an authenticated connection is never closed for room");
        let mut busy = Registry::default();
        for id in 0..4 {
            busy.open.insert(id, slot(true));
        }
        assert!(!busy.admit(&limits), "every slot busy with authenticated work: refuse the newcomer");
    }
}
