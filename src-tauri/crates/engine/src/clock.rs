//! The one clock of the routing path, injected so tests can step time: wall time (cooldowns,
//! evidence age, `Retry-After`/reset headers, ledger times) and monotonic time (snapshot
//! reloads). A manual clock moves both.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Unix time in milliseconds.
    fn now_ms(&self) -> i64;

    /// Monotonic time; a manual clock returns a fixed start plus the time it was stepped.
    fn monotonic(&self) -> Instant {
        Instant::now()
    }
}

/// The clock's wall time as a `SystemTime` (what header classification takes).
pub fn system_time(clock: &dyn Clock) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(clock.now_ms()).unwrap_or(0))
}

#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        // Straight from the OS clock: called several times per request.
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }
}

/// RFC 3339 UTC text for a unix-millisecond time (the JSON contract's time format).
pub fn rfc3339(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms).map(|t| format!("{t:.3}")).unwrap_or_default()
}
