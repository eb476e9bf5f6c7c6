//! Desktop alerts (issue 17): which routing changes deserve a notification — a connection
//! suspended, a key out of quota, every key of an active connection cooling down — found by
//! comparing two snapshots of [`RoutingStatus`], and at most one alert per connection a minute.
//! Pure: the caller passes the monotonic time; the desktop shell shows what comes out. The
//! first snapshot of a connection is a baseline (nothing is announced at start-up).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::error::EngineError;
use crate::views::RoutingStatus;
use crate::Engine;

/// The least time between two alerts about one connection.
pub const ALERT_MIN_GAP: Duration = Duration::from_secs(60);

/// What alerts look at in one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyState {
    pub label: String,
    pub enabled: bool,
    /// Its credential-wide circuit is open or half open (a cooldown or a failed key).
    pub cooling: bool,
    /// One of its circuits was opened by a quota answer.
    pub quota_exhausted: bool,
}

/// What alerts look at in one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionState {
    pub slug: String,
    /// `legacy`, `balanced` or `priority`.
    pub mode: String,
    pub suspended: bool,
    /// Why it is suspended (from the status), for the alert's text.
    pub note: Option<String>,
    pub keys: Vec<KeyState>,
}

impl ConnectionState {
    pub fn from_status(s: &RoutingStatus) -> Self {
        let keys = s
            .profiles
            .iter()
            .map(|p| KeyState {
                label: p.label.clone(),
                enabled: p.enabled,
                cooling: p.health.iter().any(|h| h.model.is_none() && h.state != "closed"),
                quota_exhausted: p
                    .health
                    .iter()
                    .any(|h| h.state != "closed" && h.kind.as_deref() == Some("quota_exhausted")),
            })
            .collect();
        ConnectionState {
            slug: s.slug.clone(),
            mode: s.mode.to_string(),
            suspended: s.state == "suspended",
            note: s.note.clone(),
            keys,
        }
    }

    /// An active balanced/priority connection whose every enabled key is cooling down: its
    /// requests get no answer until one comes back.
    pub fn all_cooling(&self) -> bool {
        let mut enabled = self.keys.iter().filter(|k| k.enabled).peekable();
        self.mode != "legacy" && !self.suspended && enabled.peek().is_some() && enabled.all(|k| k.cooling)
    }
}

/// Why a notification is shown; the order is the severity (most severe first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AlertKind {
    Suspended,
    AllCooling,
    QuotaExhausted,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    pub slug: String,
    pub kind: AlertKind,
    pub title: String,
    pub body: String,
}

/// The alerts of the change from `prev` to `next` (one connection), most severe first.
pub fn alerts_between(prev: &ConnectionState, next: &ConnectionState) -> Vec<Alert> {
    let slug = &next.slug;
    let mut out = Vec::new();
    if next.suspended && !prev.suspended {
        let why = next.note.clone().unwrap_or_else(|| "its routing gates no longer hold".into());
        out.push(Alert {
            slug: slug.clone(),
            kind: AlertKind::Suspended,
            title: format!("{slug}: routing suspended"),
            body: format!("Requests use the primary key only (legacy) until this is fixed: {why}"),
        });
    }
    if next.all_cooling() && !prev.all_cooling() {
        out.push(Alert {
            slug: slug.clone(),
            kind: AlertKind::AllCooling,
            title: format!("{slug}: every key is cooling down"),
            body: "Requests fail until a key's cooldown ends and its probe succeeds.".into(),
        });
    }
    let was_exhausted = |label: &str| prev.keys.iter().any(|k| k.label == label && k.quota_exhausted);
    let spent: Vec<&str> =
        next.keys.iter().filter(|k| k.quota_exhausted && !was_exhausted(&k.label)).map(|k| k.label.as_str()).collect();
    if !spent.is_empty() {
        let keys = spent.join(", ");
        out.push(Alert {
            slug: slug.clone(),
            kind: AlertKind::QuotaExhausted,
            title: format!("{slug}: key out of quota"),
            body: format!("{keys} reached its usage quota; other keys take its requests where they can."),
        });
    }
    out
}

/// At most one alert per connection per [`ALERT_MIN_GAP`], on the caller's monotonic clock.
#[derive(Debug)]
pub struct AlertLimiter {
    min_gap: Duration,
    last: HashMap<String, Instant>,
}

impl Default for AlertLimiter {
    fn default() -> Self {
        Self::new(ALERT_MIN_GAP)
    }
}

impl AlertLimiter {
    pub fn new(min_gap: Duration) -> Self {
        AlertLimiter { min_gap, last: HashMap::new() }
    }

    /// Whether an alert about `slug` may be shown at `now`; if so, it counts from `now`.
    pub fn admit(&mut self, slug: &str, now: Instant) -> bool {
        if let Some(last) = self.last.get(slug) {
            if now.saturating_duration_since(*last) < self.min_gap {
                return false;
            }
        }
        self.last.insert(slug.to_string(), now);
        true
    }
}

/// The alerts to show as snapshots arrive: the change per connection since its last snapshot
/// (the first is a baseline), the most severe per connection, rate limited.
#[derive(Debug, Default)]
pub struct AlertWatch {
    prev: HashMap<String, ConnectionState>,
    limiter: AlertLimiter,
}

impl AlertWatch {
    pub fn new(limiter: AlertLimiter) -> Self {
        AlertWatch { prev: HashMap::new(), limiter }
    }

    pub fn observe(&mut self, states: &[ConnectionState], now: Instant) -> Vec<Alert> {
        let mut shown = Vec::new();
        for next in states {
            if let Some(prev) = self.prev.get(&next.slug) {
                let mut found = alerts_between(prev, next);
                found.sort_by_key(|a| a.kind);
                if let Some(first) = found.into_iter().next() {
                    if self.limiter.admit(&next.slug, now) {
                        shown.push(first);
                    }
                }
            }
            self.prev.insert(next.slug.clone(), next.clone());
        }
        self.prev.retain(|slug, _| states.iter().any(|s| &s.slug == slug));
        shown
    }
}

impl Engine {
    /// The routing status of every connection, in slug order (the tray and the alerts).
    pub async fn routing_overview(&self) -> Result<Vec<RoutingStatus>, EngineError> {
        let mut out = Vec::new();
        for c in self.connection_list().await? {
            match self.routing_status(&c.slug).await {
                Ok(s) => out.push(s),
                // Removed between the list and its status.
                Err(EngineError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(label: &str, cooling: bool, quota: bool) -> KeyState {
        KeyState { label: label.into(), enabled: true, cooling, quota_exhausted: quota }
    }

    fn conn(mode: &str, suspended: bool, keys: Vec<KeyState>) -> ConnectionState {
        ConnectionState { slug: "team".into(), mode: mode.into(), suspended, note: None, keys }
    }

    #[test]
    fn the_limiter_admits_one_alert_per_connection_per_minute_on_a_manual_clock() {
        let t0 = Instant::now();
        let mut limiter = AlertLimiter::default();
        assert!(limiter.admit("a", t0), "the first alert is shown");
        assert!(!limiter.admit("a", t0 + Duration::from_secs(59)), "a second within the minute is dropped");
        assert!(limiter.admit("b", t0 + Duration::from_secs(1)), "another connection has its own minute");
        assert!(limiter.admit("a", t0 + Duration::from_secs(60)), "after a minute the next one is shown");
        assert!(!limiter.admit("a", t0 + Duration::from_secs(119)), "counted from the last shown, not the first");
        assert!(limiter.admit("a", t0 + Duration::from_secs(120)));
    }

    #[test]
    fn a_dropped_alert_does_not_restart_the_minute() {
        let t0 = Instant::now();
        let mut limiter = AlertLimiter::new(Duration::from_secs(60));
        assert!(limiter.admit("a", t0));
        for s in [10, 20, 30, 40, 50] {
            assert!(!limiter.admit("a", t0 + Duration::from_secs(s)));
        }
        assert!(limiter.admit("a", t0 + Duration::from_secs(60)), "dropped attempts did not push the window");
    }

    #[test]
    fn transitions_into_trouble_alert_and_staying_there_does_not() {
        let ok = conn("balanced", false, vec![key("a", false, false), key("b", false, false)]);
        let suspended = conn("balanced", true, ok.keys.clone());
        let kinds =
            |p: &ConnectionState, n: &ConnectionState| alerts_between(p, n).iter().map(|a| a.kind).collect::<Vec<_>>();
        assert_eq!(kinds(&ok, &suspended), [AlertKind::Suspended]);
        assert_eq!(kinds(&suspended, &suspended), [], "no repeat while it stays suspended");
        let cooling = conn("balanced", false, vec![key("a", true, false), key("b", true, true)]);
        assert_eq!(kinds(&ok, &cooling), [AlertKind::AllCooling, AlertKind::QuotaExhausted]);
        let one_cooling = conn("balanced", false, vec![key("a", true, false), key("b", false, false)]);
        assert_eq!(kinds(&ok, &one_cooling), [], "one key cooling is what failover is for");
        let legacy = conn("legacy", false, vec![key("a", true, false)]);
        assert_eq!(kinds(&conn("legacy", false, vec![key("a", false, false)]), &legacy), [], "legacy has no pool");
        let body = &alerts_between(&ok, &cooling)[1].body;
        assert!(body.starts_with("b reached its usage quota"), "names the key: {body}");
    }

    #[test]
    fn a_disabled_key_does_not_count_as_cooling() {
        let mut off = key("b", false, false);
        off.enabled = false;
        assert!(conn("priority", false, vec![key("a", true, false), off]).all_cooling());
        assert!(!conn("priority", false, vec![]).all_cooling(), "no enabled key is not 'all cooling'");
    }

    #[test]
    fn the_watch_baselines_then_shows_the_most_severe_within_the_limit() {
        let t0 = Instant::now();
        let mut watch = AlertWatch::default();
        let ok = conn("balanced", false, vec![key("a", false, false)]);
        let bad = conn("balanced", true, vec![key("a", true, true)]);
        assert_eq!(watch.observe(std::slice::from_ref(&bad), t0), [], "the first snapshot is a baseline");
        assert_eq!(watch.observe(std::slice::from_ref(&ok), t0 + Duration::from_secs(1)), []);
        let shown = watch.observe(std::slice::from_ref(&bad), t0 + Duration::from_secs(2));
        assert_eq!(shown.iter().map(|a| a.kind).collect::<Vec<_>>(), [AlertKind::Suspended], "one, the most severe");
        watch.observe(std::slice::from_ref(&ok), t0 + Duration::from_secs(3));
        assert_eq!(watch.observe(std::slice::from_ref(&bad), t0 + Duration::from_secs(30)), [], "rate limited");
        watch.observe(std::slice::from_ref(&ok), t0 + Duration::from_secs(40));
        assert_eq!(watch.observe(&[bad], t0 + Duration::from_secs(62)).len(), 1, "a minute after the last one");
    }
}
