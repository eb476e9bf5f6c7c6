//! Subscription accounts: the usage windows a key reports on successful model calls (Anthropic's
//! `anthropic-ratelimit-unified-*`, Codex's `x-codex-{primary,secondary}-*`), and the headers
//! and bodies of a spent window's refusal (Anthropic 429 `rate_limit_error` with the window
//! `rejected`; Codex 429 `usage_limit_reached` with its reset). Shapes as real answers show
//! them (the fixtures of `switchyard-providers` record where each comes from). A reset is
//! either a countdown from the mock's clock or an absolute time, so a test on a manual clock
//! can name a reset its own clock understands.

use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;
use serde::{Deserialize, Serialize};

use crate::wire::Dialect;

/// When a window resets. JSON: `{"in_secs": 3600}` (from the mock's clock) or
/// `{"at": 1735693200}` (unix seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResetAt {
    InSecs(u64),
    At(i64),
}

impl ResetAt {
    /// Unix seconds.
    pub(crate) fn unix(self) -> i64 {
        match self {
            ResetAt::InSecs(secs) => now_unix().saturating_add(i64::try_from(secs).unwrap_or(i64::MAX)),
            ResetAt::At(at) => at,
        }
    }

    /// Seconds from the mock's clock (0 when already past).
    pub(crate) fn secs_from_now(self) -> u64 {
        u64::try_from(self.unix().saturating_sub(now_unix())).unwrap_or(0)
    }
}

fn now_unix() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// Which window a refusal names. JSON: `"five_hour"`, `"seven_day"`, `"seven_day_opus"`,
/// `"seven_day_sonnet"` (the words of Anthropic's representative claim).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitWindow {
    FiveHour,
    SevenDay,
    SevenDayOpus,
    SevenDaySonnet,
}

impl LimitWindow {
    /// The claim word.
    fn claim(self) -> &'static str {
        match self {
            LimitWindow::FiveHour => "five_hour",
            LimitWindow::SevenDay => "seven_day",
            LimitWindow::SevenDayOpus => "seven_day_opus",
            LimitWindow::SevenDaySonnet => "seven_day_sonnet",
        }
    }

    /// The window's tag in `anthropic-ratelimit-unified-{tag}-*`.
    fn tag(self) -> &'static str {
        match self {
            LimitWindow::FiveHour => "5h",
            LimitWindow::SevenDay => "7d",
            LimitWindow::SevenDayOpus => "7d_opus",
            LimitWindow::SevenDaySonnet => "7d_sonnet",
        }
    }

    /// The Codex slot and length it is reported in (model windows: the weekly one's).
    fn codex(self, weekly_first: bool) -> (&'static str, u32) {
        match (self, weekly_first) {
            (LimitWindow::FiveHour, false) => ("primary", 300),
            (LimitWindow::FiveHour, true) => ("secondary", 300),
            (_, false) => ("secondary", 10_080),
            (_, true) => ("primary", 10_080),
        }
    }
}

/// One window as successful answers report it. JSON: `{"used": 0.42, "reset": {"in_secs": 3600}}`.
/// Its status is `rejected` when used up, `allowed_warning` from 80 % on, else `allowed`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsageWindow {
    /// Share used, 0 ..= 1.
    pub used: f64,
    pub reset: ResetAt,
}

impl UsageWindow {
    fn status(self) -> &'static str {
        if self.used >= 1.0 {
            "rejected"
        } else if self.used >= 0.8 {
            "allowed_warning"
        } else {
            "allowed"
        }
    }
}

/// The windows a subscription key reports on every successful model call. JSON (all optional):
/// `{"five_hour": W, "seven_day": W, "seven_day_opus": W, "seven_day_sonnet": W,
/// "codex_weekly_first": true}`. Anthropic answers carry each window's utilization, reset and
/// status and the overall status (the worst), reset and representative claim (the most used
/// window); the OpenAI dialects carry the 5-hour window as Codex's primary (300 min) and the
/// weekly as its secondary (10 080 min) — swapped with `codex_weekly_first`, as real answers
/// sometimes send them. Model windows are Anthropic's only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Subscription {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub five_hour: Option<UsageWindow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seven_day: Option<UsageWindow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seven_day_opus: Option<UsageWindow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seven_day_sonnet: Option<UsageWindow>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub codex_weekly_first: bool,
}

impl Subscription {
    fn windows(&self) -> impl Iterator<Item = (LimitWindow, UsageWindow)> + '_ {
        [
            (LimitWindow::FiveHour, self.five_hour),
            (LimitWindow::SevenDay, self.seven_day),
            (LimitWindow::SevenDayOpus, self.seven_day_opus),
            (LimitWindow::SevenDaySonnet, self.seven_day_sonnet),
        ]
        .into_iter()
        .filter_map(|(w, u)| u.map(|u| (w, u)))
    }
}

/// Adds the subscription's window headers to a successful answer.
pub(crate) fn mark(response: &mut Response, dialect: Dialect, s: &Subscription) {
    let mut headers: Vec<(String, String)> = Vec::new();
    match dialect {
        Dialect::Anthropic => {
            for (w, u) in s.windows() {
                let tag = w.tag();
                headers.push((format!("anthropic-ratelimit-unified-{tag}-utilization"), u.used.to_string()));
                headers.push((format!("anthropic-ratelimit-unified-{tag}-reset"), u.reset.unix().to_string()));
                headers.push((format!("anthropic-ratelimit-unified-{tag}-status"), u.status().to_string()));
            }
            let binding = s.windows().fold(None, |best: Option<(LimitWindow, UsageWindow)>, (w, u)| match best {
                Some((_, b)) if b.used >= u.used => best,
                _ => Some((w, u)),
            });
            if let Some((w, u)) = binding {
                let worst = ["rejected", "allowed_warning", "allowed"]
                    .into_iter()
                    .find(|st| s.windows().any(|(_, x)| x.status() == *st))
                    .unwrap_or("allowed");
                headers.push(("anthropic-ratelimit-unified-status".into(), worst.into()));
                headers.push(("anthropic-ratelimit-unified-reset".into(), u.reset.unix().to_string()));
                headers.push(("anthropic-ratelimit-unified-representative-claim".into(), w.claim().into()));
            }
        }
        Dialect::Chat | Dialect::Responses => {
            for (w, u) in s.windows().filter(|(w, _)| matches!(w, LimitWindow::FiveHour | LimitWindow::SevenDay)) {
                let (slot, minutes) = w.codex(s.codex_weekly_first);
                headers.extend(codex_window(slot, minutes, u.used, u.reset));
            }
        }
    }
    insert(response, headers);
}

/// The `x-codex-{slot}-*` headers of one window. A countdown is sent as both a time and a
/// countdown (they agree); an absolute reset as the time only (a countdown from the mock's own
/// clock would contradict a test's manual clock).
fn codex_window(slot: &str, minutes: u32, used: f64, reset: ResetAt) -> Vec<(String, String)> {
    let mut h = vec![
        (format!("x-codex-{slot}-used-percent"), (used * 100.0).to_string()),
        (format!("x-codex-{slot}-window-minutes"), minutes.to_string()),
        (format!("x-codex-{slot}-reset-at"), reset.unix().to_string()),
    ];
    if let ResetAt::InSecs(secs) = reset {
        h.push((format!("x-codex-{slot}-reset-after-seconds"), secs.to_string()));
    }
    h
}

/// The headers of an Anthropic refusal for a spent `window` (429 `rate_limit_error`).
pub(crate) fn anthropic_limit_headers(window: LimitWindow, reset: ResetAt) -> Vec<(String, String)> {
    let tag = window.tag();
    let at = reset.unix().to_string();
    vec![
        ("retry-after".into(), reset.secs_from_now().to_string()),
        ("anthropic-ratelimit-unified-status".into(), "rejected".into()),
        ("anthropic-ratelimit-unified-reset".into(), at.clone()),
        ("anthropic-ratelimit-unified-representative-claim".into(), window.claim().into()),
        (format!("anthropic-ratelimit-unified-{tag}-status"), "rejected".into()),
        (format!("anthropic-ratelimit-unified-{tag}-utilization"), "1.0".into()),
        (format!("anthropic-ratelimit-unified-{tag}-reset"), at),
    ]
}

/// The headers and body of a Codex refusal for a spent `window` (429 `usage_limit_reached`).
pub(crate) fn codex_limit(window: LimitWindow, reset: ResetAt) -> (Vec<(String, String)>, serde_json::Value) {
    let (slot, minutes) = window.codex(false);
    let mut error = serde_json::json!({
        "type": "usage_limit_reached",
        "message": "The usage limit has been reached",
        "plan_type": "pro",
        "resets_at": reset.unix(),
    });
    if let ResetAt::InSecs(secs) = reset {
        error["resets_in_seconds"] = serde_json::json!(secs);
    }
    (codex_window(slot, minutes, 1.0, reset), serde_json::json!({ "error": error }))
}

/// Sets each header (valid names and values only).
pub(crate) fn insert(response: &mut Response, headers: Vec<(String, String)>) {
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(name), HeaderValue::from_str(&value)) {
            response.headers_mut().insert(name, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_follows_the_share_used() {
        let w = |used| UsageWindow { used, reset: ResetAt::At(0) };
        assert_eq!([w(0.1).status(), w(0.8).status(), w(1.0).status()], ["allowed", "allowed_warning", "rejected"]);
    }

    #[test]
    fn codex_slots_follow_the_length_asked() {
        assert_eq!(LimitWindow::FiveHour.codex(false), ("primary", 300), "the 5-hour window first by default");
        assert_eq!(LimitWindow::SevenDay.codex(true), ("primary", 10_080), "or the weekly one");
    }
}
