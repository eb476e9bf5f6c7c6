//! The alerts to show as snapshots arrive (issue 17): per connection the change since its last
//! snapshot (the first is a baseline: nothing is announced at start-up), the most severe alert
//! of a change, and at most one alert per connection per [`ALERT_MIN_GAP`] on the caller's
//! monotonic clock. What counts as an alert is `alerts.rs`; what a snapshot holds is read here
//! once per look ([`Engine::routing_overview`], [`Engine::alert_states`]).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::context::Context;
use crate::error::EngineError;
use crate::report::alerts::{alerts_between, Alert, ConnectionState};
use crate::views::RoutingStatus;

/// The least time between two alerts about one connection.
pub const ALERT_MIN_GAP: Duration = Duration::from_secs(60);

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

    /// The alerts of this look. A change whose alert the gap holds back stays news: the
    /// connection's previous snapshot is kept, so what still holds when the gap has passed is
    /// shown then (a token that expired seconds after another alert is not lost), and what
    /// came and went within the gap is not.
    pub fn observe(&mut self, states: &[ConnectionState], now: Instant) -> Vec<Alert> {
        let mut shown = Vec::new();
        for next in states {
            if let Some(prev) = self.prev.get(&next.slug) {
                let mut found = alerts_between(prev, next);
                found.sort_by_key(|a| a.kind);
                if let Some(first) = found.into_iter().next() {
                    if !self.limiter.admit(&next.slug, now) {
                        continue;
                    }
                    shown.push(first);
                }
            }
            self.prev.insert(next.slug.clone(), next.clone());
        }
        self.prev.retain(|slug, _| states.iter().any(|s| &s.slug == slug));
        shown
    }
}

impl Context {
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

    /// What the alerts look at in each connection of `overview`: its status and each key's
    /// rejected subscription windows (the quota view, read from the store, never polled from a
    /// provider). An error leaves the caller's previous snapshot standing.
    pub async fn alert_states(&self, overview: &[RoutingStatus]) -> Result<Vec<ConnectionState>, EngineError> {
        let mut out = Vec::with_capacity(overview.len());
        for s in overview {
            let caps = match self.connection_limits(&s.slug).await {
                Ok(caps) => caps,
                Err(EngineError::NotFound { .. }) => Vec::new(),
                Err(e) => return Err(e),
            };
            let state = ConnectionState::from_status(s).with_caps(&caps);
            match self.quota(&s.slug).await {
                Ok(q) => out.push(state.with_quota(&q)),
                // Removed since the overview: it drops out at the next look.
                Err(EngineError::NotFound { .. }) => out.push(state),
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::alerts::tests::{conn, key};
    use crate::report::alerts::{AlertKind, RejectedWindow};
    use switchyard_core::states::{CredentialHealthState, ProfileKind};

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

    #[test]
    fn a_rejected_window_and_an_expired_login_each_notify_once_within_the_gap() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut watch = AlertWatch::default();
        let ok = conn("balanced", false, vec![key("max-1", false, false), key("max-2", false, false)]);
        let mut spent = ok.clone();
        spent.keys[0].rejected =
            vec![RejectedWindow { key: "unified_5h|".into(), text: "5-hour window".into(), resets: None }];
        spent.keys[0].quota_exhausted = true;
        assert_eq!(watch.observe(std::slice::from_ref(&spent), t0), [], "rejected at start-up: the baseline, silent");
        watch.observe(std::slice::from_ref(&ok), t0 + s(1));
        let shown = watch.observe(std::slice::from_ref(&spent), t0 + s(2));
        assert_eq!(shown.iter().map(|a| a.kind).collect::<Vec<_>>(), [AlertKind::WindowRejected], "one alert");
        for t in 3..6 {
            assert_eq!(watch.observe(std::slice::from_ref(&spent), t0 + s(t)), [], "not once per look");
        }
        let mut expired = spent.clone();
        expired.keys[1].kind = ProfileKind::Token;
        expired.keys[1].login = CredentialHealthState::Expired;
        assert_eq!(watch.observe(std::slice::from_ref(&expired), t0 + s(30)), [], "within the gap: held back");
        let mut gone_too = expired.clone();
        gone_too.keys[0].kind = ProfileKind::External;
        gone_too.keys[0].login = CredentialHealthState::Missing;
        let shown = watch.observe(std::slice::from_ref(&gone_too), t0 + s(62));
        assert_eq!(shown.iter().map(|a| a.kind).collect::<Vec<_>>(), [AlertKind::LoginExpired], "after the gap: one");
        assert_eq!(
            shown[0].title, "team: 2 accounts need signing in",
            "the expiry held back by the gap is still news, told with the one that came since"
        );
        assert_eq!(watch.observe(&[gone_too], t0 + s(130)), [], "and then not again");
    }
}
