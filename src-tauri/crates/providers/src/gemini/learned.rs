//! Gemini's quota states, learned from its refusals: Gemini sends no rate-limit headers, so the
//! quota view shows what a structured 429 said — a per-minute quota spent until its
//! `RetryInfo.retryDelay`, a per-day quota spent until the next Pacific midnight — as quota
//! readings of the model called (`status` `rejected`, nothing left). Any other answer teaches
//! nothing: a profile with no such reading shows its quota as unknown. The signal is the one the
//! classification table reads (`rules::signal`), never the message. Pure: the clock is passed in.

use std::time::SystemTime;

use serde_json::Value;
use switchyard_core::routing::unix_ms;

use crate::gemini::pacific::next_pacific_midnight_ms;
use crate::gemini::rules::{retry_delay_ms, signal, QUOTA_PER_DAY, QUOTA_PER_MINUTE};
use crate::quota::window::{QuotaWindow, WindowKind};

/// The stored name of a learned per-minute window.
pub const PER_MINUTE: &str = "gemini_per_minute";
/// The stored name of a learned per-day window.
pub const PER_DAY: &str = "gemini_per_day";

/// The kind of a learned window's stored name.
pub fn kind_of_name(name: &str) -> Option<WindowKind> {
    match name {
        PER_MINUTE => Some(WindowKind::PerMinute),
        PER_DAY => Some(WindowKind::PerDay),
        _ => None,
    }
}

/// What a Gemini error answer (`status`, its decoded `body`) says about the called model's
/// quota at `now`: one spent window, or nothing.
pub fn learned_windows(status: u16, body: &[u8], now: SystemTime) -> Vec<QuotaWindow> {
    if status != 429 {
        return Vec::new();
    }
    let Ok(parsed) = serde_json::from_slice::<Value>(body) else { return Vec::new() };
    let first = match &parsed {
        Value::Array(items) => items.first().unwrap_or(&parsed),
        _ => &parsed,
    };
    let Some(error) = first.get("error") else { return Vec::new() };
    let now_ms = unix_ms(now);
    let (name, kind, resets_at_ms) = match signal(error) {
        Some(QUOTA_PER_DAY) => (PER_DAY, WindowKind::PerDay, next_pacific_midnight_ms(now_ms)),
        Some(QUOTA_PER_MINUTE) => {
            (PER_MINUTE, WindowKind::PerMinute, retry_delay_ms(error).and_then(|d| now_ms.checked_add(d)))
        }
        _ => return Vec::new(),
    };
    vec![QuotaWindow {
        name,
        kind,
        per_model: true,
        family: None,
        limit: None,
        remaining: Some(0),
        utilization: Some(1.0),
        resets_at_ms,
        status: Some("rejected".to_string()),
        window_minutes: None,
        claim: None,
    }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    /// 2026-03-08T09:30:00Z (01:30 PST, the morning clocks spring forward).
    fn at() -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(1_772_962_200_000)
    }

    #[test]
    fn a_per_minute_refusal_is_a_spent_window_until_the_retry_delay() {
        let body = br#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"x","details":[
            {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
            {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"39s"}]}}"#;
        let got = learned_windows(429, body, at());
        let summary: Vec<_> =
            got.iter().map(|w| (w.name, w.kind, w.per_model, w.resets_at_ms, w.status.as_deref())).collect();
        assert_eq!(
            summary,
            [(PER_MINUTE, WindowKind::PerMinute, true, Some(1_772_962_239_000), Some("rejected"))],
            "one spent per-minute window of the model, reset after the 39 s retry delay"
        );
    }

    #[test]
    fn a_per_day_refusal_is_spent_until_pacific_midnight_and_anything_else_teaches_nothing() {
        let body = br#"[{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"x","details":[
            {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]}]}}]"#;
        let got = learned_windows(429, body, at());
        assert_eq!(
            got.iter().map(|w| (w.kind, w.resets_at_ms)).collect::<Vec<_>>(),
            [(WindowKind::PerDay, Some(1_773_039_600_000))],
            "per day (read from the array a stream without alt=sse answers): until 2026-03-09T07:00Z, midnight PDT"
        );
        let bare = br#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"Resource has been exhausted"}}"#;
        assert!(learned_windows(429, bare, at()).is_empty(), "a bare RESOURCE_EXHAUSTED says nothing about a window");
        assert!(learned_windows(400, b"{}", at()).is_empty(), "another status teaches nothing");
        assert!(learned_windows(429, b"not json", at()).is_empty(), "nor an unreadable body");
    }
}
