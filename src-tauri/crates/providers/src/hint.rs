//! Cooldown hints from response headers: `retry-after-ms`, `Retry-After` (delta seconds or
//! HTTP date), and the reset headers of exhausted rate limits (`anthropic-ratelimit-*-reset`
//! as RFC 3339, `x-ratelimit-reset-*` as Go-style durations such as `6m0s`, `1.5s`, `20ms`).

use std::time::{Duration, SystemTime};

use switchyard_core::routing::unix_ms;

use crate::headers::HeaderSource;

/// Rate limits whose reset headers we read: (remaining header, reset header, format).
const RESET_HEADERS: [(&str, &str, ResetFormat); 6] = [
    ("anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset", ResetFormat::Rfc3339),
    ("anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset", ResetFormat::Rfc3339),
    ("anthropic-ratelimit-input-tokens-remaining", "anthropic-ratelimit-input-tokens-reset", ResetFormat::Rfc3339),
    ("anthropic-ratelimit-output-tokens-remaining", "anthropic-ratelimit-output-tokens-reset", ResetFormat::Rfc3339),
    ("x-ratelimit-remaining-requests", "x-ratelimit-reset-requests", ResetFormat::Duration),
    ("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens", ResetFormat::Duration),
];

#[derive(Debug, Clone, Copy)]
enum ResetFormat {
    Rfc3339,
    Duration,
}

/// The wall-clock time (unix ms) before which the provider asked not to retry, if it said.
/// Precedence: `retry-after-ms`, then `Retry-After`, then the latest reset among limits the
/// headers report as exhausted (remaining = 0). Resets of limits with room left say nothing
/// about this failure and are ignored. Unparseable values are ignored.
pub fn retry_at_ms<H: HeaderSource + ?Sized>(headers: &H, now: SystemTime) -> Option<i64> {
    let now_ms = unix_ms(now);
    if let Some(ms) =
        headers.header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()).filter(|ms| ms.is_finite() && *ms >= 0.0)
    {
        return Some(now_ms.saturating_add(ms.ceil() as i64));
    }
    if let Some(at) = headers.header("retry-after").and_then(|v| parse_retry_after(v, now)) {
        return Some(unix_ms(at));
    }
    RESET_HEADERS
        .iter()
        .filter(|(remaining, _, _)| headers.header(remaining).and_then(|v| v.parse::<u64>().ok()) == Some(0))
        .filter_map(|(_, reset, format)| {
            let v = headers.header(reset)?;
            match format {
                ResetFormat::Rfc3339 => parse_rfc3339_ms(v),
                ResetFormat::Duration => {
                    parse_duration(v).map(|d| now_ms.saturating_add(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)))
                }
            }
        })
        .max()
}

/// `Retry-After`: delta seconds (RFC 9110) or an HTTP date.
fn parse_retry_after(v: &str, now: SystemTime) -> Option<SystemTime> {
    if let Ok(secs) = v.parse::<u64>() {
        return now.checked_add(Duration::from_secs(secs));
    }
    parse_http_date(v)
}

/// An HTTP date (RFC 9110 section 5.6.7): IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), or
/// the obsolete forms a recipient must still accept: RFC 850 (`Sunday, 06-Nov-94 08:49:37
/// GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
pub fn parse_http_date(v: &str) -> Option<SystemTime> {
    let v = v.trim();
    let utc = |form: &str| {
        jiff::fmt::strtime::parse(form, v)
            .and_then(|t| t.to_datetime())
            .and_then(|dt| dt.to_zoned(jiff::tz::TimeZone::UTC))
            .map(|z| z.timestamp())
    };
    let at = jiff::fmt::rfc2822::parse(v)
        .map(|z| z.timestamp())
        .or_else(|_| utc("%A, %d-%b-%y %H:%M:%S GMT"))
        .or_else(|_| utc("%a %b %e %H:%M:%S %Y"))
        .ok()?;
    Some(SystemTime::from(at))
}

/// RFC 3339 text (any offset) as unix milliseconds.
pub fn parse_rfc3339_ms(v: &str) -> Option<i64> {
    v.trim().parse::<jiff::Timestamp>().ok().map(|t| t.as_millisecond())
}

/// Parses a Go-style duration as OpenAI sends in `x-ratelimit-reset-*`: one or more
/// `<number><unit>` parts with units `h`, `m`, `s`, `ms`, `us`/`µs`, `ns`, e.g. `6m0s`,
/// `1.772s`, `20ms`. Rounds up to whole milliseconds.
pub fn parse_duration(v: &str) -> Option<Duration> {
    let mut rest = v.trim();
    if rest.is_empty() {
        return None;
    }
    let mut total_ns: u128 = 0;
    while !rest.is_empty() {
        let num_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let number = &rest[..num_len];
        rest = &rest[num_len..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let scale_ns: u128 = match &rest[..unit_len] {
            "h" => 3_600_000_000_000,
            "m" => 60_000_000_000,
            "s" => 1_000_000_000,
            "ms" => 1_000_000,
            "us" | "µs" => 1_000,
            "ns" => 1,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total_ns = total_ns.checked_add(scaled_ns(number, scale_ns)?)?;
    }
    let ms = total_ns.div_ceil(1_000_000);
    Some(Duration::from_millis(u64::try_from(ms).ok()?))
}

/// `number` (decimal digits with at most one `.`) times `scale_ns`, exactly, rounded up.
fn scaled_ns(number: &str, scale_ns: u128) -> Option<u128> {
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let digits = |s: &str| -> Option<u128> {
        if s.is_empty() {
            return Some(0);
        }
        if !s.bytes().all(|b| b.is_ascii_digit()) || s.len() > 30 {
            return None;
        }
        s.parse().ok()
    };
    let whole = digits(int)?.checked_mul(scale_ns)?;
    let frac_value = digits(frac)?;
    let denom = 10u128.checked_pow(u32::try_from(frac.len()).ok()?)?;
    let part = frac_value.checked_mul(scale_ns)?.div_ceil(denom);
    whole.checked_add(part)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn http_dates_parse_in_all_three_forms_rfc_9110_names() {
        let want = Some(UNIX_EPOCH + Duration::from_secs(784_111_777));
        for form in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            assert_eq!(parse_http_date(form), want, "{form}: a recipient must accept it (RFC 9110 5.6.7)");
        }
        assert_eq!(parse_http_date("yesterday"), None, "anything else is no date");
    }

    #[test]
    fn rfc3339_times_read_with_any_offset() {
        assert_eq!(parse_rfc3339_ms("1994-11-06T08:49:37.250Z"), Some(784_111_777_250), "UTC with millis");
        assert_eq!(parse_rfc3339_ms("1994-11-06T09:49:37+01:00"), Some(784_111_777_000), "an offset is applied");
        assert_eq!(parse_rfc3339_ms("1994-11-06 08:49:37"), None, "no offset: not RFC 3339");
    }

    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_748_945_742) // Tue, 03 Jun 2025 10:15:42 GMT
    }
    const NOW_MS: i64 = 1_748_945_742_000;

    #[test]
    fn durations_in_go_format() {
        let cases = [
            ("6m0s", 360_000),
            ("1s", 1_000),
            ("20ms", 20),
            ("1.772s", 1_772),
            ("2h30m5.5s", 9_005_500),
            ("0s", 0),
            ("500us", 1),
            ("59.9999ms", 60),
        ];
        for (text, ms) in cases {
            assert_eq!(parse_duration(text), Some(Duration::from_millis(ms)), "{text} is {ms} ms (rounded up)");
        }
        for bad in ["", "5", "s", "1d", "1.2.3s", "-1s"] {
            assert_eq!(parse_duration(bad), None, "{bad:?} is not a duration");
        }
    }

    #[test]
    fn retry_after_as_seconds_or_http_date() {
        let secs = [("retry-after", "20")];
        assert_eq!(retry_at_ms(&secs[..], now()), Some(NOW_MS + 20_000), "delta seconds");
        let date = [("Retry-After", "Tue, 03 Jun 2025 10:16:42 GMT")];
        assert_eq!(retry_at_ms(&date[..], now()), Some(NOW_MS + 60_000), "HTTP date");
        let ms = [("retry-after-ms", "1500.2"), ("retry-after", "20")];
        assert_eq!(retry_at_ms(&ms[..], now()), Some(NOW_MS + 1_501), "retry-after-ms first");
        let junk = [("retry-after", "soon")];
        assert_eq!(retry_at_ms(&junk[..], now()), None, "unparseable values are ignored");
    }

    #[test]
    fn reset_headers_of_exhausted_limits_only() {
        let anthropic = [
            ("anthropic-ratelimit-requests-remaining", "0"),
            ("anthropic-ratelimit-requests-reset", "2025-06-03T10:16:00Z"),
            ("anthropic-ratelimit-tokens-remaining", "0"),
            ("anthropic-ratelimit-tokens-reset", "2025-06-03T10:15:50.500Z"),
            ("anthropic-ratelimit-input-tokens-remaining", "12000"),
            ("anthropic-ratelimit-input-tokens-reset", "2025-06-03T11:00:00Z"),
        ];
        assert_eq!(
            retry_at_ms(&anthropic[..], now()),
            Some(NOW_MS + 18_000),
            "the latest reset among exhausted limits; limits with room are ignored"
        );
        let openai = [
            ("x-ratelimit-remaining-requests", "499"),
            ("x-ratelimit-reset-requests", "6m0s"),
            ("x-ratelimit-remaining-tokens", "0"),
            ("x-ratelimit-reset-tokens", "1.772s"),
        ];
        assert_eq!(retry_at_ms(&openai[..], now()), Some(NOW_MS + 1_772), "OpenAI durations count from now");
        let offset = [
            ("anthropic-ratelimit-requests-remaining", "0"),
            ("anthropic-ratelimit-requests-reset", "2025-06-03T12:16:00+02:00"),
        ];
        assert_eq!(retry_at_ms(&offset[..], now()), Some(NOW_MS + 18_000), "offsets");
        let room = [("x-ratelimit-remaining-tokens", "10"), ("x-ratelimit-reset-tokens", "9s")];
        assert_eq!(retry_at_ms(&room[..], now()), None, "no exhausted limit, no hint");
    }
}
