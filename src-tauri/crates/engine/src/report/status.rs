//! `switchyard status [--line]`: every connection and pool on one screen — routing mode, keys
//! ok/cooling/expired, the window that binds (the provider's latest reading with the highest
//! use, and when it resets), today's spend against the connection's daily cap. Read from the
//! store (and the keychain's presence, as `routing status`), never the network: it is meant for
//! a shell prompt or Claude Code's `statusLine`.

use std::str::FromStr;

use switchyard_core::limit::Measure;
use switchyard_core::states::{CircuitState, CredentialHealthState, CredentialPresence};

use crate::clock::rfc3339;
use crate::context::Context;
use crate::error::EngineError;
use crate::report::time_zone::{date_of, start_of};
use crate::report::usage::UsageBy;
use crate::views::{ConnectionStatus, KeyCounts, PoolStatusLine, StatusView, WindowLine};

impl Context {
    /// Every connection's and pool's line.
    pub async fn status(&self) -> Result<StatusView, EngineError> {
        let mut connections = Vec::new();
        for c in self.connection_list().await? {
            connections.push(self.connection_status(&c.slug).await?);
        }
        let pools = self
            .pool_list()
            .await?
            .into_iter()
            .map(|p| PoolStatusLine {
                name: p.name,
                mode: p.mode,
                state: p.state,
                members: i32::try_from(p.members.len()).unwrap_or(i32::MAX),
            })
            .collect();
        Ok(StatusView { connections, pools })
    }

    async fn connection_status(&self, slug: &str) -> Result<ConnectionStatus, EngineError> {
        let now_ms = self.now_ms();
        let routing = self.routing_status(slug).await?;
        let mut keys = KeyCounts::default();
        let mut cooling_until: Option<i64> = None;
        for p in &routing.profiles {
            keys.total += 1;
            let expired =
                matches!(p.credential_health.state, CredentialHealthState::Expired | CredentialHealthState::Missing)
                    || p.credential == CredentialPresence::Missing;
            let open: Vec<&crate::views::HealthView> =
                p.health.iter().filter(|h| h.state != CircuitState::Closed).collect();
            if !p.enabled {
                keys.disabled += 1;
            } else if expired {
                keys.expired += 1;
            } else if !open.is_empty() {
                keys.cooling += 1;
                for until in open.iter().filter_map(|h| h.until.as_deref()).filter_map(ms_of) {
                    cooling_until = Some(cooling_until.map_or(until, |u| u.min(until)));
                }
            } else {
                keys.ok += 1;
            }
        }
        let mode = match (routing.state, routing.mode) {
            (switchyard_core::RoutingState::Suspended, _) => "suspended".to_string(),
            (_, mode) => mode.as_str().to_string(),
        };
        let quota = self.quota(slug).await?;
        let window = quota
            .profiles
            .iter()
            .flat_map(|p| p.windows.iter().map(move |w| (p, w)))
            .filter(|(_, w)| !w.stale)
            .filter_map(|(p, w)| w.used_fraction().map(|u| (p, w, u)))
            .max_by(|a, b| a.2.total_cmp(&b.2))
            .map(|(p, w, u)| WindowLine {
                profile: p.label.clone(),
                name: w.name.clone(),
                utilization: u,
                resets_at: w.resets_at.clone(),
                resets_in_secs: w.resets_in_secs,
            });
        let tz = self.zone().await?;
        let today = start_of(date_of(now_ms, &tz), &tz);
        let usage = self.usage(slug, Some(&rfc3339(today)), UsageBy::Profile).await?;
        let spend_today_usd = if usage.complete { usage.total.cost_usd.or(Some(0.0)) } else { None };
        let cap_today_usd = self
            .connection_limits(slug)
            .await?
            .iter()
            .filter(|l| l.measure == Measure::Usd.as_str() && l.period.as_deref() == Some("day"))
            .map(|l| l.capacity)
            .reduce(f64::min);
        Ok(ConnectionStatus {
            slug: slug.to_string(),
            mode,
            keys,
            cooling_in_secs: cooling_until.map(|u| secs((u - now_ms).max(0) / 1000)),
            window,
            spend_today_usd,
            cap_today_usd,
        })
    }
}

fn ms_of(rfc: &str) -> Option<i64> {
    jiff::Timestamp::from_str(rfc).ok().map(|t| t.as_millisecond())
}

fn secs(v: i64) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// `switchyard status --line`: one short line — per connection `SLUG MODE ok[/cool/exp]`, the
/// soonest cooldown, the binding window and today's spend against its cap; ` | ` between
/// connections. Plain ASCII but for none: a shell prompt shows it as it is.
pub fn status_line(view: &StatusView) -> String {
    let parts: Vec<String> = view
        .connections
        .iter()
        .map(|c| {
            let mut s = format!("{} {}ok", c.slug, c.keys.ok);
            if c.keys.cooling > 0 {
                s.push_str(&format!(" {}cool", c.keys.cooling));
                if let Some(secs) = c.cooling_in_secs {
                    s.push_str(&format!(":{}", short_duration(secs)));
                }
            }
            if c.keys.expired > 0 {
                s.push_str(&format!(" {}exp", c.keys.expired));
            }
            if let Some(w) = &c.window {
                s.push_str(&format!(" {}={:.0}%", w.name, w.utilization * 100.0));
                if let Some(secs) = w.resets_in_secs {
                    s.push_str(&format!("@{}", short_duration(secs)));
                }
            }
            match (c.spend_today_usd, c.cap_today_usd) {
                (Some(spent), Some(cap)) => s.push_str(&format!(" ${spent:.2}/${cap:.2}")),
                (Some(spent), None) if spent > 0.0 => s.push_str(&format!(" ${spent:.2}")),
                (None, Some(cap)) => s.push_str(&format!(" $?/${cap:.2}")),
                _ => {}
            }
            s
        })
        .collect();
    if parts.is_empty() {
        return "switchyard: no connections".to_string();
    }
    parts.join(" | ")
}

/// `45s`, `4m`, `1h12m`, `2d3h`.
fn short_duration(secs: i32) -> String {
    let secs = secs.max(0);
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => {
            let (h, m) = (s / 3600, (s % 3600) / 60);
            if m == 0 {
                format!("{h}h")
            } else {
                format!("{h}h{m}m")
            }
        }
        s => format!("{}d{}h", s / 86_400, (s % 86_400) / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_short() {
        assert_eq!(short_duration(5), "5s");
        assert_eq!(short_duration(240), "4m");
        assert_eq!(short_duration(4320), "1h12m");
        assert_eq!(short_duration(7200), "2h");
        assert_eq!(short_duration(183_600), "2d3h");
    }

    #[test]
    fn one_line_names_cooling_keys_spent_windows_and_spend() {
        let view = StatusView {
            connections: vec![ConnectionStatus {
                slug: "work".into(),
                mode: "priority".into(),
                keys: KeyCounts { total: 3, ok: 1, cooling: 1, expired: 1, disabled: 0 },
                cooling_in_secs: Some(240),
                window: Some(WindowLine {
                    profile: "b".into(),
                    name: "5h".into(),
                    utilization: 0.72,
                    resets_at: None,
                    resets_in_secs: Some(4320),
                }),
                spend_today_usd: Some(3.1),
                cap_today_usd: Some(10.0),
            }],
            pools: vec![],
        };
        assert_eq!(status_line(&view), "work 1ok 1cool:4m 1exp 5h=72%@1h12m $3.10/$10.00");
        assert_eq!(status_line(&StatusView { connections: vec![], pools: vec![] }), "switchyard: no connections");
    }
}
