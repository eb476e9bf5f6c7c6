//! When a Gemini per-day quota resets: the next midnight in US Pacific time
//! (`America/Los_Angeles`, so 07:00 or 08:00 UTC depending on daylight saving time). Pure:
//! the instant is given. The zone comes from the system's tz database when it has one, else
//! from the US rule written as a POSIX TZ string (the same offsets and DST changes since 2007),
//! so a machine without zoneinfo still cools a spent key until the right hour.

use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};

/// The zone Google's daily quotas reset in.
fn pacific() -> TimeZone {
    TimeZone::get("America/Los_Angeles").or_else(|_| TimeZone::posix("PST8PDT,M3.2.0,M11.1.0")).unwrap_or(TimeZone::UTC)
}

/// The first Pacific midnight strictly after `now_ms` (unix milliseconds), in unix ms.
pub fn next_pacific_midnight_ms(now_ms: i64) -> Option<i64> {
    let now = Timestamp::from_millisecond(now_ms).ok()?;
    let local = now.to_zoned(pacific());
    let tomorrow = local.date().checked_add(1.day()).ok()?;
    let midnight = tomorrow.to_zoned(local.time_zone().clone()).ok()?;
    Some(midnight.timestamp().as_millisecond())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(text: &str) -> i64 {
        text.parse::<Timestamp>().map(|t| t.as_millisecond()).unwrap_or_default()
    }

    #[test]
    fn resets_at_the_next_pacific_midnight_in_summer_and_winter() {
        assert_eq!(
            next_pacific_midnight_ms(ms("2026-07-10T15:00:00Z")),
            Some(ms("2026-07-11T07:00:00Z")),
            "PDT is UTC-7: midnight is 07:00 UTC"
        );
        assert_eq!(
            next_pacific_midnight_ms(ms("2026-01-10T15:00:00Z")),
            Some(ms("2026-01-11T08:00:00Z")),
            "PST is UTC-8: midnight is 08:00 UTC"
        );
        assert_eq!(
            next_pacific_midnight_ms(ms("2026-01-11T08:00:00Z")),
            Some(ms("2026-01-12T08:00:00Z")),
            "exactly at midnight: the next one (strictly after)"
        );
        assert_eq!(
            next_pacific_midnight_ms(ms("2026-01-11T07:59:59Z")),
            Some(ms("2026-01-11T08:00:00Z")),
            "a second before midnight: that midnight"
        );
    }

    #[test]
    fn a_manual_clock_across_the_dst_changes() {
        // 2026-03-08 02:00 PST -> PDT; the day of the change has 23 hours.
        assert_eq!(
            next_pacific_midnight_ms(ms("2026-03-08T09:00:00Z")),
            Some(ms("2026-03-09T07:00:00Z")),
            "after spring forward, the next midnight is in PDT (07:00 UTC)"
        );
        assert_eq!(
            next_pacific_midnight_ms(ms("2026-03-08T07:30:00Z")),
            Some(ms("2026-03-08T08:00:00Z")),
            "11:30 pm PST on March 7: midnight is still PST (08:00 UTC)"
        );
        // 2026-11-01 02:00 PDT -> PST; the day of the change has 25 hours.
        assert_eq!(
            next_pacific_midnight_ms(ms("2026-11-01T10:00:00Z")),
            Some(ms("2026-11-02T08:00:00Z")),
            "after fall back, the next midnight is in PST (08:00 UTC)"
        );
        assert_eq!(
            next_pacific_midnight_ms(ms("2026-10-31T20:00:00Z")),
            Some(ms("2026-11-01T07:00:00Z")),
            "before fall back, midnight is PDT (07:00 UTC)"
        );
    }

    #[test]
    fn the_posix_rule_agrees_with_the_tz_database() {
        let (Ok(db), Ok(rule)) = (TimeZone::get("America/Los_Angeles"), TimeZone::posix("PST8PDT,M3.2.0,M11.1.0"))
        else {
            return; // no zoneinfo on this machine: the rule is what is used, nothing to compare
        };
        for day in 0..800 {
            let t = Timestamp::from_second(1_767_225_600 + day * 86_400 + 3_600 * (day % 24))
                .unwrap_or(Timestamp::UNIX_EPOCH);
            assert_eq!(t.to_zoned(db.clone()).offset(), t.to_zoned(rule.clone()).offset(), "offsets agree at {t}");
        }
    }
}
