//! `Engine::quota`: the latest limit readings of a connection's profiles as front ends show
//! them (docs/interface.md, `switchyard quota`), read from the `quota` table the router writes.
//! Each reading carries its age; one whose window has reset since it was seen is marked
//! stale — its numbers no longer hold (invariant 18). Unknown values stay `None`, and so does a
//! reset no window can have (further than a week from when it was seen). Subscription windows
//! also say their kind, whether the provider names them as binding the account (the overall
//! window's representative claim), and when they run out at the last hour's rate: from the
//! stored base (the window's first reading of the last hour) to the latest reading
//! (`switchyard_providers::quota::exhausts_at`). Never polled: only what answers reported.

pub use crate::views::{ProfileQuota, QuotaView, QuotaWindowView};
use jiff::tz::TimeZone;
use switchyard_core::routing::believable_reset;
use switchyard_providers::quota::{claimed_window, exhausts_at, family_of, kind_of, Sample};
use switchyard_store::{profiles, quota};

use crate::clock::rfc3339;
use crate::context::Context;
use crate::error::EngineError;
use crate::report::time_zone::zone_name;
use crate::views::small;

/// The overall window, whose claim names the binding one.
const OVERALL: &str = "unified";

impl Context {
    /// The latest quota readings of every profile of `slug`.
    pub async fn quota(&self, slug: &str) -> Result<QuotaView, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let mut conn = self.store.acquire().await?;
        let rows = profiles::for_connection(&mut conn, &connection.id).await?;
        let mut readings = quota::for_connection(&mut conn, &connection.id).await?;
        drop(conn);
        // A time zone setting that no longer resolves shows UTC here, not an error.
        let tz = self.zone().await.unwrap_or(TimeZone::UTC);
        let now = self.now_ms();
        let profiles = rows
            .into_iter()
            .map(|p| {
                let mine: Vec<quota::QuotaRow> = extract(&mut readings, |r| r.profile_id == p.id);
                let claim = mine.iter().find(|r| r.name == OVERALL).and_then(|r| r.claim.as_deref());
                let binding = claim.and_then(claimed_window).map(str::to_string);
                let windows = mine.into_iter().map(|r| window_view(r, binding.as_deref(), now, &tz)).collect();
                ProfileQuota { id: p.id, label: p.label, windows }
            })
            .collect();
        Ok(QuotaView { slug: connection.slug, time_zone: zone_name(&tz), profiles })
    }
}

/// Moves the rows matching `keep` out of `rows`, in order.
fn extract<T>(rows: &mut Vec<T>, keep: impl Fn(&T) -> bool) -> Vec<T> {
    let (mine, rest): (Vec<T>, Vec<T>) = std::mem::take(rows).into_iter().partition(|r| keep(r));
    *rows = rest;
    mine
}

/// A weekday and time in `tz`: `Tue 14:05`.
fn local(ms: i64, tz: &TimeZone) -> Option<String> {
    let t = jiff::Timestamp::from_millisecond(ms).ok()?;
    Some(t.to_zoned(tz.clone()).strftime("%a %H:%M").to_string())
}

/// One stored reading as shown at `now_ms`; `binding` is the window the profile's overall
/// reading names.
fn window_view(r: quota::QuotaRow, binding: Option<&str>, now_ms: i64, tz: &TimeZone) -> QuotaWindowView {
    let secs = |ms: i64| small(ms.div_euclid(1000));
    let count = |v: Option<i64>| v.and_then(|v| i32::try_from(v).ok());
    // A reset no window can have (a row written before resets were bounded) is unknown.
    let resets_at_ms = r.resets_at_ms.filter(|at| believable_reset(*at, r.seen_at_ms));
    let minutes = r.window_minutes.and_then(|m| u32::try_from(m).ok());
    let kind = kind_of(&r.name, minutes);
    let stale = resets_at_ms.is_some_and(|at| at <= now_ms);
    let base = r.base_seen_at_ms.zip(r.base_utilization).map(|(at_ms, utilization)| Sample { at_ms, utilization });
    let latest = r.utilization.map(|utilization| Sample { at_ms: r.seen_at_ms, utilization });
    let runs_out = match (kind, base, latest) {
        (Some(k), Some(base), Some(latest)) if k.is_subscription() && !stale => exhausts_at(base, latest, resets_at_ms),
        _ => None,
    };
    QuotaWindowView {
        kind: kind.map_or("unknown", |k| k.as_str()).to_string(),
        model: Some(r.model).filter(|m| !m.is_empty()),
        family: family_of(&r.name).map(str::to_string),
        limit: count(r.limit_value),
        remaining: count(r.remaining),
        utilization: r.utilization,
        resets_at: resets_at_ms.map(rfc3339),
        seen_at: rfc3339(r.seen_at_ms),
        status: r.status,
        window_minutes: count(r.window_minutes),
        age_secs: secs(now_ms.saturating_sub(r.seen_at_ms).max(0)),
        resets_in_secs: resets_at_ms.map(|at| secs(at.saturating_sub(now_ms))),
        stale,
        binding: binding == Some(r.name.as_str()),
        exhausts_at: runs_out.map(rfc3339),
        exhausts_in_secs: runs_out.map(|at| secs(at.saturating_sub(now_ms))),
        resets_local: resets_at_ms.and_then(|at| local(at, tz)),
        exhausts_local: runs_out.and_then(|at| local(at, tz)),
        name: r.name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600_000;

    fn row(resets_at_ms: Option<i64>) -> quota::QuotaRow {
        quota::QuotaRow {
            profile_id: "p".into(),
            name: "requests".into(),
            model: String::new(),
            limit_value: Some(50),
            remaining: Some(3_000_000_000),
            utilization: None,
            resets_at_ms,
            status: None,
            window_minutes: None,
            seen_at_ms: 1_000_000,
            claim: None,
            base_seen_at_ms: None,
            base_utilization: None,
        }
    }

    fn view(r: quota::QuotaRow, now_ms: i64) -> QuotaWindowView {
        window_view(r, None, now_ms, &TimeZone::UTC)
    }

    #[test]
    fn age_reset_and_staleness_are_from_the_clock() {
        let v = view(row(Some(1_090_000)), 1_060_500);
        assert_eq!((v.age_secs, v.resets_in_secs, v.stale), (60, Some(29), false), "a live window");
        assert_eq!(v.model, None, "'' is a window of the whole account");
        assert_eq!(v.remaining, None, "a count beyond i32 is unknown, not clamped");
        assert_eq!(v.kind, "requests", "its kind");
        let v = view(row(Some(1_090_000)), 1_090_000);
        assert!(v.stale, "at its reset the reading stops holding");
        assert_eq!(v.resets_in_secs, Some(0), "reset now");
        let v = view(row(None), 9_000_000);
        assert!(!v.stale, "without a known reset only the age tells");
    }

    #[test]
    fn an_unbelievable_reset_reads_as_unknown() {
        for (what, at) in [("past year 9999", 1_000_000_000_000 * 3_600_000), ("before year 0", -62_167_222_800_000)] {
            let v = view(row(Some(at)), 1_060_500);
            assert_eq!(v.resets_at, None, "{what}: unknown, not an empty or non-RFC-3339 time");
            assert_eq!((v.resets_in_secs, v.stale), (None, false), "{what}: nothing follows from it");
        }
    }

    /// A 5-hour subscription window seen at `seen` (used `u`), with a base reading.
    fn five_hour(seen: i64, u: f64, base: Option<(i64, f64)>, reset: i64) -> quota::QuotaRow {
        quota::QuotaRow {
            name: "unified_5h".into(),
            limit_value: None,
            remaining: None,
            utilization: Some(u),
            resets_at_ms: Some(reset),
            status: Some("allowed".into()),
            seen_at_ms: seen,
            base_seen_at_ms: base.map(|b| b.0),
            base_utilization: base.map(|b| b.1),
            ..row(None)
        }
    }

    #[test]
    fn two_readings_an_hour_apart_forecast_the_run_out_exactly() {
        let t0 = 1_735_689_600_000; // 2025-01-01T00:00:00Z
        let v = view(five_hour(t0 + H, 0.5, Some((t0, 0.25)), t0 + 4 * H), t0 + H + 60_000);
        assert_eq!(v.kind, "five_hour", "the kind");
        assert_eq!(
            v.exhausts_at.as_deref(),
            Some("2025-01-01T03:00:00.000Z"),
            "a quarter used in the hour, half left: two more hours after the latest reading"
        );
        assert_eq!(v.exhausts_in_secs, Some(7_140), "counted from now (a minute after the reading)");
        assert_eq!(v.exhausts_local.as_deref(), Some("Wed 03:00"), "and in the time zone");
        assert_eq!(v.resets_local.as_deref(), Some("Wed 04:00"), "the reset too");
        let v = view(five_hour(t0 + H, 0.5, Some((t0, 0.25)), t0 + 3 * H), t0 + H);
        assert_eq!(v.exhausts_at, None, "the window resets before it would run out");
        let v = view(five_hour(t0 + H, 0.5, None, t0 + 4 * H), t0 + H);
        assert_eq!(v.exhausts_at, None, "no base: no forecast");
        let v = view(five_hour(t0 + H, 0.5, Some((t0, 0.25)), t0 + 4 * H), t0 + 4 * H);
        assert_eq!(v.exhausts_at, None, "a stale reading forecasts nothing");
        let api = quota::QuotaRow {
            utilization: Some(0.5),
            base_seen_at_ms: Some(0),
            base_utilization: Some(0.1),
            ..row(None)
        };
        assert_eq!(view(api, H).exhausts_at, None, "per-minute API limits are not forecast");
    }

    #[test]
    fn the_claimed_window_binds() {
        let r = five_hour(1_000, 0.5, None, 2 * H);
        assert!(window_view(r.clone(), Some("unified_5h"), 1_000, &TimeZone::UTC).binding, "named by the claim");
        assert!(!window_view(r, Some("unified_7d"), 1_000, &TimeZone::UTC).binding, "another window binds");
    }
}
