//! A client connection: where it came from ([`Peer`]), its mark once it carried the token
//! ([`ConnMark`]), and the limits on open connections: a cap that
//! keeps room for real work. Connections that have not yet carried an authenticated request
//! may hold at most [`Limits::unauthenticated`] slots; past that — or when every slot is
//! taken — the oldest of them is closed to admit the new one, so a flood of idle or
//! token-less sockets can never lock a real client out. The cap follows the process's
//! descriptor limit, which the binaries raise at start ([`raise_fd_limit`]); the library
//! only reads it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

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
    /// From the process's descriptor limit now (read, never changed).
    pub fn for_process() -> Self {
        Self::for_fd_limit(fd_limit())
    }

    /// From a descriptor limit: each client connection may need an upstream one too.
    pub fn for_fd_limit(fds: u64) -> Self {
        let max = usize::try_from(fds.saturating_sub(RESERVED_FDS) / 2).unwrap_or(usize::MAX).clamp(16, 8192);
        Limits { header_read_timeout: HEADER_READ_TIMEOUT, max_connections: max, unauthenticated: max * 3 / 4 }
    }
}

/// The soft descriptor limit in force.
pub fn fd_limit() -> u64 {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current.unwrap_or(u64::MAX)
}

/// Raises the soft descriptor limit to the hard one; returns the limit now in force. For a
/// binary to call at start (the relay library never changes the process's limits).
pub fn raise_fd_limit() -> u64 {
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

/// Where a connection came from and in on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer {
    /// The port it came in on (the `/healthz` proof names it).
    pub(crate) local_port: u16,
    /// The peer is on loopback: only there does the install's own token count.
    pub(crate) loopback: bool,
    /// The connection is TLS (the relay listens beyond loopback): any `Host` is taken.
    pub(crate) tls: bool,
}

/// Marks a connection once a request on it passed the token check (request extension).
#[derive(Debug, Clone)]
pub struct ConnMark(pub(crate) Arc<AtomicBool>);

impl ConnMark {
    pub fn authenticated(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

pub(crate) struct Slot {
    pub(crate) authenticated: Arc<AtomicBool>,
    pub(crate) evict: Arc<Notify>,
}

/// The open connections, oldest first.
#[derive(Default)]
pub(crate) struct Registry {
    pub(crate) next: u64,
    pub(crate) open: BTreeMap<u64, Slot>,
}

/// A connection the registry admitted: its id, its mark (set once it carried the token) and
/// the signal that closes it to make room.
pub(crate) struct Admitted {
    pub(crate) id: u64,
    pub(crate) mark: ConnMark,
    pub(crate) evict: Arc<Notify>,
}

impl Registry {
    /// Admits one more connection, closing the oldest unauthenticated one when that is what
    /// makes room; `None` when it must be refused.
    pub(crate) fn open(&mut self, limits: &Limits) -> Option<Admitted> {
        if !self.admit(limits) {
            return None;
        }
        let id = self.next;
        self.next += 1;
        let slot = Slot { authenticated: Arc::new(AtomicBool::new(false)), evict: Arc::new(Notify::new()) };
        let admitted = Admitted { id, mark: ConnMark(slot.authenticated.clone()), evict: slot.evict.clone() };
        self.open.insert(id, slot);
        Some(admitted)
    }

    /// Forgets a connection that ended.
    pub(crate) fn close(&mut self, id: u64) {
        self.open.remove(&id);
    }

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
