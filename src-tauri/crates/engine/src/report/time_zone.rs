//! The user's time zone, in which usage counts its days and months (a setting: an IANA name
//! such as `Europe/Berlin`; absent, the system's — `TZ`, else `/etc/localtime`). Read from the
//! system tz database through `jiff`, offline; DST changes come from that database, so a day
//! is 23, 24 or 25 hours long as it really was. Also the `--since` forms (`RFC 3339` or `Nd`).

pub use crate::views::TimeZoneView;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use switchyard_core::InvalidInput;

use crate::context::Context;
use crate::error::EngineError;
use crate::settings::{Scope, TIME_ZONE};

/// Settings key of the time zone (an IANA name); absent means the system's.
pub const TIME_ZONE_KEY: &str = TIME_ZONE.key;

impl Context {
    /// The time zone usage counts days in.
    pub async fn time_zone(&self) -> Result<TimeZoneView, EngineError> {
        let (tz, source) = self.zone_and_source().await?;
        Ok(TimeZoneView { name: zone_name(&tz), source: source.to_string() })
    }

    pub(crate) async fn zone(&self) -> Result<TimeZone, EngineError> {
        Ok(self.zone_and_source().await?.0)
    }

    async fn zone_and_source(&self) -> Result<(TimeZone, &'static str), EngineError> {
        match self.setting(&TIME_ZONE, Scope::Global).await? {
            Some(name) => Ok((
                TimeZone::get(&name).map_err(|_| {
                    EngineError::Precondition(format!(
                        "time zone '{name}' is not in the system's tz database; set another with \
                         `switchyard settings time-zone NAME` (or `system`)"
                    ))
                })?,
                "setting",
            )),
            None => Ok((TimeZone::system(), "system")),
        }
    }

    /// Sets the time zone by IANA name; `system` removes the setting.
    pub async fn set_time_zone(&self, name: &str) -> Result<(), EngineError> {
        if name == "system" {
            return self.clear_setting(&TIME_ZONE, Scope::Global).await;
        }
        parse_zone(name)?;
        self.set_setting(&TIME_ZONE, Scope::Global, Some(name.to_string())).await
    }
}

/// An IANA time zone name known to the system's database.
pub fn parse_zone(name: &str) -> Result<TimeZone, InvalidInput> {
    let printable = name.len() <= 64 && name.bytes().all(|b| b.is_ascii_graphic());
    match printable.then(|| TimeZone::get(name).ok()).flatten() {
        Some(tz) => Ok(tz),
        None => Err(InvalidInput::new("time_zone", "must be an IANA time zone name such as Europe/Berlin, or system")),
    }
}

/// The zone's IANA name, or `system` when it has none (a `TZ` rule string, say).
pub fn zone_name(tz: &TimeZone) -> String {
    tz.iana_name().unwrap_or("system").to_string()
}

/// The calendar date of `ms` in `tz`.
pub fn date_of(ms: i64, tz: &TimeZone) -> Date {
    let ts = Timestamp::from_millisecond(ms).unwrap_or(Timestamp::UNIX_EPOCH);
    tz.to_datetime(ts).date()
}

/// The instant (unix ms) `date` starts in `tz` (the first instant of that day: a DST gap at
/// midnight starts the day at the gap's end).
pub fn start_of(date: Date, tz: &TimeZone) -> i64 {
    date.to_zoned(tz.clone()).map(|z| z.timestamp().as_millisecond()).unwrap_or(i64::MIN)
}

/// `--since`: RFC 3339 text, or `Nd` — the last N calendar days in `tz`, today included (`1d`
/// is since today's midnight).
pub fn parse_since(text: &str, now_ms: i64, tz: &TimeZone) -> Result<i64, InvalidInput> {
    let bad = || InvalidInput::new("since", "must be an RFC 3339 time (2026-11-01T00:00:00Z) or Nd (1-3660 days)");
    if let Some(days) = text.strip_suffix('d') {
        let n: i64 = days.parse().map_err(|_| bad())?;
        if !(1..=3660).contains(&n) {
            return Err(bad());
        }
        let first = date_of(now_ms, tz).checked_sub((n - 1).days()).map_err(|_| bad())?;
        return Ok(start_of(first, tz));
    }
    text.parse::<Timestamp>().map(|t| t.as_millisecond()).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(text: &str) -> i64 {
        text.parse::<Timestamp>().map(|t| t.as_millisecond()).unwrap_or(0)
    }

    #[test]
    fn days_follow_the_zone_across_a_dst_change() {
        let ny = parse_zone("America/New_York").unwrap_or(TimeZone::UTC);
        // 2026-03-08: clocks jump 02:00 -> 03:00 in New York; the day is 23 hours long.
        let start = start_of(Date::constant(2026, 3, 8), &ny);
        let next = start_of(Date::constant(2026, 3, 9), &ny);
        assert_eq!(next - start, 23 * 3600 * 1000, "the spring-forward day is 23 h");
        assert_eq!(start, ms("2026-03-08T05:00:00Z"), "midnight EST is 05:00 UTC");
        assert_eq!(next, ms("2026-03-09T04:00:00Z"), "the next midnight is EDT, 04:00 UTC");
        assert_eq!(date_of(ms("2026-03-09T03:59:59.999Z"), &ny), Date::constant(2026, 3, 8));
        assert_eq!(date_of(ms("2026-03-09T04:00:00Z"), &ny), Date::constant(2026, 3, 9));
    }

    #[test]
    fn since_reads_rfc3339_and_whole_days_in_the_zone() {
        let berlin = parse_zone("Europe/Berlin").unwrap_or(TimeZone::UTC);
        let now = ms("2026-07-10T12:00:00Z");
        assert_eq!(parse_since("1d", now, &berlin), Ok(ms("2026-07-09T22:00:00Z")), "today from local midnight");
        assert_eq!(parse_since("3d", now, &berlin), Ok(ms("2026-07-07T22:00:00Z")), "today and two days before");
        assert_eq!(parse_since("2026-07-01T00:00:00+02:00", now, &berlin), Ok(ms("2026-06-30T22:00:00Z")));
        assert!(parse_since("0d", now, &berlin).is_err(), "0 days is refused");
        assert!(parse_since("yesterday", now, &berlin).is_err());
    }

    #[test]
    fn unknown_zone_names_are_refused() {
        assert!(parse_zone("Mars/Olympus_Mons").is_err());
        assert!(parse_zone("../../etc/passwd").is_err());
        assert!(parse_zone("UTC").is_ok());
    }
}
