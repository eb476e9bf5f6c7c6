//! A limit's calendar window in the configured time zone: the minute, hour, day, ISO week
//! (from Monday) or month that holds an instant, as [start, end) in unix ms. DST follows the
//! system's tz database (a day may be 23 or 25 hours).

use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan, Zoned};
use switchyard_core::limit::Period;

/// [start, end) of the `period` holding `now_ms` in `tz`.
pub(crate) fn window(period: Period, now_ms: i64, tz: &TimeZone) -> (i64, i64) {
    let ts = Timestamp::from_millisecond(now_ms).unwrap_or(Timestamp::UNIX_EPOCH);
    let z = ts.to_zoned(tz.clone());
    let start = start_of(period, &z).unwrap_or_else(|| z.clone());
    let span = match period {
        Period::Minute => 1.minute(),
        Period::Hour => 1.hour(),
        Period::Day => 1.day(),
        Period::Week => 1.week(),
        Period::Month => 1.month(),
    };
    let end = start.checked_add(span).map(|e| e.timestamp().as_millisecond()).unwrap_or(i64::MAX);
    (start.timestamp().as_millisecond(), end)
}

fn start_of(period: Period, z: &Zoned) -> Option<Zoned> {
    let trimmed = z.with().subsec_nanosecond(0).second(0);
    match period {
        Period::Minute => trimmed.build().ok(),
        Period::Hour => trimmed.minute(0).build().ok(),
        Period::Day => z.start_of_day().ok(),
        Period::Week => {
            let back = i64::from(z.weekday().to_monday_zero_offset());
            z.start_of_day().ok()?.checked_sub(back.days()).ok()
        }
        Period::Month => z.first_of_month().ok()?.start_of_day().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(text: &str) -> i64 {
        text.parse::<Timestamp>().map(|t| t.as_millisecond()).unwrap_or(0)
    }

    #[test]
    fn windows_are_calendar_periods_in_the_zone() {
        let berlin = TimeZone::get("Europe/Berlin").unwrap_or(TimeZone::UTC);
        let now = ms("2026-12-06T13:45:30.250Z"); // a Sunday, 14:45 in Berlin
        assert_eq!(window(Period::Minute, now, &berlin), (ms("2026-12-06T13:45:00Z"), ms("2026-12-06T13:46:00Z")));
        assert_eq!(window(Period::Hour, now, &berlin), (ms("2026-12-06T13:00:00Z"), ms("2026-12-06T14:00:00Z")));
        assert_eq!(
            window(Period::Day, now, &berlin),
            (ms("2026-12-05T23:00:00Z"), ms("2026-12-06T23:00:00Z")),
            "Berlin's midnight"
        );
        assert_eq!(
            window(Period::Week, now, &berlin),
            (ms("2026-11-29T23:00:00Z"), ms("2026-12-06T23:00:00Z")),
            "the ISO week began on Monday 30 November"
        );
        assert_eq!(window(Period::Month, now, &berlin), (ms("2026-11-30T23:00:00Z"), ms("2026-12-31T23:00:00Z")));
    }

    #[test]
    fn a_day_across_a_dst_change_is_as_long_as_it_was() {
        let ny = TimeZone::get("America/New_York").unwrap_or(TimeZone::UTC);
        let (start, end) = window(Period::Day, ms("2026-03-08T12:00:00Z"), &ny);
        assert_eq!(end - start, 23 * 3_600_000, "spring forward: a 23-hour day");
    }
}
