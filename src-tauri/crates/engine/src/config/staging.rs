//! Secrets written to the keychain but not yet committed to a profile row ("staged"). Their
//! journal entries carry the writer's pid and a lease; this process also keeps the set it is
//! writing, so clean-up in the same process (tests, a second engine) can tell a live write
//! from one whose operation ended without committing. What counts as an orphan is decided in
//! `orphans.rs` from these facts.

use std::collections::BTreeSet;
use std::sync::Mutex;

use switchyard_vault::Locator;

/// How long a staged secret is protected from clean-up by other processes while its writer
/// lives. A write that takes longer loses its secret and fails at commit (nothing half-done).
pub const LEASE_MS: i64 = 5 * 60 * 1000;

/// Locators this process is staging right now.
static IN_FLIGHT: Mutex<BTreeSet<(String, String)>> = Mutex::new(BTreeSet::new());

/// A staged write of this process: registered while it lives, so dropping it (commit done,
/// error, or a cancelled future) ends the write's protection inside this process.
#[derive(Debug)]
pub(crate) struct Staged {
    key: (String, String),
}

impl Staged {
    pub(crate) fn register(locator: &Locator) -> Self {
        let key = (locator.service.clone(), locator.account.clone());
        if let Ok(mut set) = IN_FLIGHT.lock() {
            set.insert(key.clone());
        }
        Staged { key }
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Ok(mut set) = IN_FLIGHT.lock() {
            set.remove(&self.key);
        }
    }
}

/// This process's id as the journal stores it.
pub(crate) fn own_pid() -> i64 {
    i64::from(std::process::id())
}

/// Whether the writer `owner_pid` of the entry at `service`/`account` may still commit it:
/// this process only while the write is registered, another process while it runs.
pub(crate) fn writer_alive(owner_pid: i64, service: &str, account: &str) -> bool {
    if owner_pid == own_pid() {
        let key = (service.to_string(), account.to_string());
        return IN_FLIGHT.lock().map(|set| set.contains(&key)).unwrap_or(true);
    }
    process_alive(owner_pid)
}

/// Signal 0 probes a pid without touching it: `EPERM` means it runs as another user. A
/// reused pid only makes clean-up wait for the lease.
#[cfg(unix)]
pub(crate) fn process_alive(pid: i64) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

/// Without a portable probe the lease alone decides.
#[cfg(not(unix))]
pub(crate) fn process_alive(_pid: i64) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_write_is_alive_until_dropped() {
        let loc = Locator { service: "switchyard.test-staging".into(), account: "profile/p/1".into() };
        let staged = Staged::register(&loc);
        assert!(writer_alive(own_pid(), &loc.service, &loc.account), "a write in progress here is alive");
        drop(staged);
        assert!(
            !writer_alive(own_pid(), &loc.service, &loc.account),
            "once the operation ended without committing, this process's entry is an orphan"
        );
    }

    #[cfg(unix)]
    #[test]
    fn other_processes_are_probed_by_pid() {
        assert!(process_alive(1), "pid 1 always runs (EPERM counts as alive)");
        assert!(!process_alive(0), "pid 0 is no writer");
        assert!(!process_alive(i64::from(i32::MAX)), "a pid above pid_max runs nowhere");
    }
}
