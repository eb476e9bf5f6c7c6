//! When a usage limit the CLI reports resets. Claude Code's result names the reset only in
//! its sentence ("You've hit your 5-hour limit · resets 4:24pm (UTC)"); the relay runs it
//! with `TZ=UTC`, so the time is UTC and says so. The CLI's formats (2.1.332's reset
//! formatter): within a day `4pm` / `4:24pm`; later `Dec 5, 4pm` / `Dec 5, 4:24pm`; in another
//! year `Jan 2, 2027, 4pm`; each followed by ` (UTC)`. A time without a date is the next
//! such time (a minute of slack for a reset that just passed); a date without a year is this
//! year's, or next year's when that is more than a day past. Anything else: unknown (`None`),
//! and the failure then has no reset of its own.

use jiff::civil::{date, Date};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// The reset the sentence names, as unix ms, judged at `now_ms`.
pub fn reset_at_ms(sentence: &str, now_ms: i64) -> Option<i64> {
    let after = &sentence[sentence.rfind("resets ")? + "resets ".len()..];
    let when = after.split(" (UTC)").next().filter(|_| after.contains(" (UTC)"))?.trim();
    let now = Timestamp::from_millisecond(now_ms).ok()?.to_zoned(TimeZone::UTC);
    let parts: Vec<&str> = when.split(", ").collect();
    let (day, clock) = match parts.as_slice() {
        [clock] => (None, *clock),
        [month_day, clock] => (Some((month_day_of(month_day)?, None)), *clock),
        [month_day, year, clock] => (Some((month_day_of(month_day)?, Some(year.parse::<i16>().ok()?))), *clock),
        _ => return None,
    };
    let (hour, minute) = clock_of(clock)?;
    let ms = |d: Date| -> Option<i64> {
        let at = d.at(hour, minute, 0, 0).to_zoned(TimeZone::UTC).ok()?;
        Some(at.timestamp().as_millisecond())
    };
    match day {
        None => {
            let today = ms(now.date())?;
            if today >= now_ms - 60_000 {
                Some(today)
            } else {
                ms(now.date().checked_add(1.day()).ok()?)
            }
        }
        Some(((month, day), Some(year))) => ms(date(year, month, day)),
        Some(((month, day), None)) => {
            let this_year = ms(Date::new(now.year(), month, day).ok()?)?;
            if this_year >= now_ms - 24 * 3_600_000 {
                Some(this_year)
            } else {
                ms(Date::new(now.year() + 1, month, day).ok()?)
            }
        }
    }
}

/// `Dec 5` → (12, 5).
fn month_day_of(text: &str) -> Option<(i8, i8)> {
    let (month, day) = text.split_once(' ')?;
    let m = MONTHS.iter().position(|n| *n == month)?;
    let d = day.parse::<i8>().ok().filter(|d| (1..=31).contains(d))?;
    Some((i8::try_from(m + 1).ok()?, d))
}

/// `4pm` / `4:24pm` / `12am` → (hour 0–23, minute).
fn clock_of(text: &str) -> Option<(i8, i8)> {
    let lower = text.to_ascii_lowercase();
    let (digits, pm) = match (lower.strip_suffix("pm"), lower.strip_suffix("am")) {
        (Some(d), _) => (d.to_string(), true),
        (_, Some(d)) => (d.to_string(), false),
        _ => return None,
    };
    let (h, m) = match digits.split_once(':') {
        Some((h, m)) if m.len() == 2 => (h.parse::<i8>().ok()?, m.parse::<i8>().ok()?),
        Some(_) => return None,
        None => (digits.parse::<i8>().ok()?, 0),
    };
    if !(1..=12).contains(&h) || !(0..60).contains(&m) {
        return None;
    }
    Some(((h % 12) + if pm { 12 } else { 0 }, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-12-02T14:24:00Z.
    const NOW: i64 = 1_796_221_440_000;
    const HOUR: i64 = 3_600_000;

    fn at(text: &str) -> i64 {
        text.parse::<Timestamp>().map(|t| t.as_millisecond()).unwrap_or_default()
    }

    #[test]
    fn the_cli_s_formats_read_as_the_next_such_time() {
        assert_eq!(at("2026-12-02T14:24:00Z"), NOW, "the fixture's now");
        let cases = [
            ("You've hit your 5-hour limit · resets 4:24pm (UTC)", Some(NOW + 2 * HOUR), "later today"),
            ("You've hit your 5-hour limit · resets 4pm (UTC)", Some(at("2026-12-02T16:00:00Z")), "on the hour"),
            ("resets 2:00pm (UTC)", Some(at("2026-12-03T14:00:00Z")), "past today: tomorrow"),
            ("resets 2:24pm (UTC)", Some(NOW), "just now: now, not tomorrow"),
            ("resets 12am (UTC)", Some(at("2026-12-03T00:00:00Z")), "midnight"),
            ("resets 12:30pm (UTC)", Some(at("2026-12-03T12:30:00Z")), "half past noon, passed"),
            ("You've hit your weekly limit · resets Dec 5, 4pm (UTC)", Some(at("2026-12-05T16:00:00Z")), "a date"),
            ("resets Dec 1, 8:15pm (UTC)", Some(at("2026-12-01T20:15:00Z")), "less than a day past: this year"),
            ("resets Dec 1, 9:15am (UTC)", Some(at("2027-12-01T09:15:00Z")), "more than a day past: next year"),
            ("resets Jan 2, 4pm (UTC)", Some(at("2027-01-02T16:00:00Z")), "January, next year"),
            ("resets Jan 2, 2027, 4pm (UTC)", Some(at("2027-01-02T16:00:00Z")), "with its year"),
        ];
        for (sentence, want, why) in cases {
            assert_eq!(reset_at_ms(sentence, NOW), want, "{why}: {sentence}");
        }
    }

    #[test]
    fn anything_else_is_unknown() {
        for sentence in [
            "You've hit your 5-hour limit · resets 4:24pm (PST)",
            "You've hit your 5-hour limit",
            "resets soon (UTC)",
            "resets 13pm (UTC)",
            "resets 4:6pm (UTC)",
            "resets Foo 5, 4pm (UTC)",
            "resets Dec 32, 4pm (UTC)",
            "resets 4:24 (UTC)",
        ] {
            assert_eq!(reset_at_ms(sentence, NOW), None, "{sentence}: no reset read");
        }
    }
}
