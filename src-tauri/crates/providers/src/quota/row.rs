//! One row of a quota table: which headers describe one limit window and how their values
//! are written, and the reading of those headers. Every value is read on its own; one that is
//! missing, malformed or contradicted (by a repeated copy, by `remaining > limit`, by two reset
//! headers that disagree) is `None`, and so is a reset or a window length the window cannot
//! have (further from now than its longest span, [`QuotaRow::longest_minutes`]).

use switchyard_core::routing::QUOTA_RESET_SLACK_MS;

use crate::headers::{Agreed, HeaderSource};
use crate::hint::parse_duration;
use crate::quota::window::{QuotaWindow, WindowKind};

/// How a share of the window is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Share {
    /// 0 ..= 1 (`anthropic-ratelimit-unified-5h-utilization: 0.42`).
    Fraction,
    /// 0 ..= 100 (`x-codex-primary-used-percent: 42.5`).
    Percent,
}

/// How a reset time is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reset {
    /// `2025-06-03T10:16:00Z` (Anthropic's request and token limits).
    Rfc3339,
    /// Unix seconds (`anthropic-ratelimit-unified-5h-reset`, `x-codex-primary-reset-at`).
    UnixSeconds,
    /// A Go-style duration from now (`x-ratelimit-reset-requests: 6m0s`).
    GoDuration,
    /// Whole seconds from now (`x-codex-primary-reset-after-seconds`).
    DeltaSeconds,
}

/// A quota table row. `name` is also the window's name in readings, the store and the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaRow {
    pub name: &'static str,
    /// What the window is (a Codex slot row's kind is its slot's; the reading classifies it by
    /// its length, `quota/codex.rs`).
    pub kind: WindowKind,
    /// The provider scopes the window per model.
    pub per_model: bool,
    /// The window is one model family's (e.g. `opus`: Anthropic's `unified-7d_opus`): it holds
    /// for the models whose name contains the family, whatever model was called.
    pub family: Option<&'static str>,
    pub limit: Option<&'static str>,
    pub remaining: Option<&'static str>,
    pub utilization: Option<(&'static str, Share)>,
    /// Headers that each give the reset; when several are sent they must agree.
    pub resets: &'static [(&'static str, Reset)],
    pub status: Option<&'static str>,
    pub window_minutes: Option<&'static str>,
    /// The header naming which window binds the account now (Anthropic's representative
    /// claim, e.g. `five_hour`), read as a status word.
    pub claim: Option<&'static str>,
    /// The longest this window can be, in minutes: a reset further than that (plus
    /// [`QUOTA_RESET_SLACK_MS`]) from now, ahead or behind, and a stated window longer than
    /// that, are not believed (unknown).
    pub longest_minutes: u32,
}

impl QuotaRow {
    /// A row with no headers (the tables fill in theirs).
    pub const EMPTY: QuotaRow = QuotaRow {
        name: "",
        kind: WindowKind::Requests,
        per_model: false,
        family: None,
        limit: None,
        remaining: None,
        utilization: None,
        resets: &[],
        status: None,
        window_minutes: None,
        claim: None,
        longest_minutes: DAY_MINUTES,
    };

    /// Every header name this row reads.
    pub fn header_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        let singles = [
            self.limit,
            self.remaining,
            self.utilization.map(|(n, _)| n),
            self.status,
            self.window_minutes,
            self.claim,
        ];
        singles.into_iter().flatten().chain(self.resets.iter().map(|(n, _)| *n))
    }

    /// The window as `headers` describe it; `None` when none of its headers was sent.
    pub fn read<H: HeaderSource + ?Sized>(&self, headers: &H, now_ms: i64) -> Option<QuotaWindow> {
        if self.header_names().all(|n| headers.header_agreed(n) == Agreed::Absent) {
            return None;
        }
        let value = |name: Option<&'static str>| match name.map(|n| headers.header_agreed(n)) {
            Some(Agreed::One(v)) => Some(v),
            _ => None,
        };
        let mut limit = value(self.limit).and_then(parse_count);
        let mut remaining = value(self.remaining).and_then(parse_count);
        if let (Some(l), Some(r)) = (limit, remaining) {
            if r > l {
                // Which of the two is wrong cannot be told: both are unknown.
                (limit, remaining) = (None, None);
            }
        }
        let utilization = self.utilization.and_then(|(n, share)| value(Some(n)).and_then(|v| parse_share(v, share)));
        Some(QuotaWindow {
            name: self.name,
            kind: self.kind,
            per_model: self.per_model,
            family: self.family,
            limit,
            remaining,
            utilization,
            resets_at_ms: self.reset_of(headers, now_ms),
            status: value(self.status).and_then(parse_status),
            window_minutes: value(self.window_minutes)
                .and_then(parse_count)
                .and_then(|m| u32::try_from(m).ok())
                .filter(|m| (1..=self.longest_minutes).contains(m)),
            claim: value(self.claim).and_then(parse_status),
        })
    }

    /// The window's reset as `headers` give it, within the window's longest span of `now_ms`
    /// (what a rejected window's cooldown lasts until, `classify.rs`); `None` when unknown.
    pub fn reset_of<H: HeaderSource + ?Sized>(&self, headers: &H, now_ms: i64) -> Option<i64> {
        self.read_reset(headers, now_ms).filter(|at| self.believable(*at, now_ms))
    }

    /// A reset within the window's longest span (and the slack) of `now_ms`, either way.
    fn believable(&self, at_ms: i64, now_ms: i64) -> bool {
        let span = i64::from(self.longest_minutes) * 60_000 + QUOTA_RESET_SLACK_MS;
        at_ms.abs_diff(now_ms) <= span.unsigned_abs()
    }

    /// The reset every sent reset header agrees on (within [`RESET_AGREEMENT_MS`]); unknown
    /// when one is unreadable or they disagree.
    fn read_reset<H: HeaderSource + ?Sized>(&self, headers: &H, now_ms: i64) -> Option<i64> {
        let mut agreed: Option<i64> = None;
        for (name, format) in self.resets {
            let at = match headers.header_agreed(name) {
                Agreed::Absent => continue,
                Agreed::Conflicting => return None,
                Agreed::One(v) => parse_reset(v, *format, now_ms)?,
            };
            match agreed {
                None => agreed = Some(at),
                Some(first) if first.abs_diff(at) <= RESET_AGREEMENT_MS => {}
                Some(_) => return None,
            }
        }
        agreed
    }
}

/// How far two reset headers of one window may differ and still agree: an absolute time and a
/// countdown are rounded to seconds and the countdown runs from our clock, not the provider's.
pub const RESET_AGREEMENT_MS: u64 = 60_000;

/// The longest window of per-minute, per-hour and per-day request and token limits.
pub const DAY_MINUTES: u32 = 24 * 60;

/// Countdowns longer than this are not even added to the clock (about ten years; the row's
/// longest window then decides what is believed).
const MAX_COUNTDOWN_SECS: u64 = 315_360_000;

/// A non-negative integer written as plain digits (no sign, no fraction, no exponent).
fn parse_count(v: &str) -> Option<u64> {
    if v.is_empty() || v.len() > 19 || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok()
}

fn parse_share(v: &str, share: Share) -> Option<f64> {
    let x: f64 = v.parse().ok().filter(|x: &f64| x.is_finite())?;
    let fraction = match share {
        Share::Fraction => x,
        Share::Percent => x / 100.0,
    };
    (0.0..=1.0).contains(&fraction).then_some(fraction)
}

/// A status word: 1–32 of `a-z 0-9 _ -` (any case; stored lower case) that does not look like
/// a key. Anything else is not stored (it could be anything, even text that must not reach
/// the database).
fn parse_status(v: &str) -> Option<String> {
    let ok = (1..=32).contains(&v.len())
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && !switchyard_core::secret_shape::looks_like_key(v);
    ok.then(|| v.to_ascii_lowercase())
}

fn parse_reset(v: &str, format: Reset, now_ms: i64) -> Option<i64> {
    match format {
        Reset::Rfc3339 => crate::hint::parse_rfc3339_ms(v),
        Reset::UnixSeconds => {
            // 2001-09-09 ..= 5138-11-16: plain seconds, not milliseconds or a small countdown.
            let secs = parse_count(v).filter(|s| (1_000_000_000..100_000_000_000).contains(s))?;
            i64::try_from(secs).ok()?.checked_mul(1000)
        }
        Reset::GoDuration => {
            let ms = i64::try_from(parse_duration(v)?.as_millis()).ok()?;
            now_ms.checked_add(ms)
        }
        Reset::DeltaSeconds => {
            let secs = parse_count(v).filter(|s| *s <= MAX_COUNTDOWN_SECS)?;
            now_ms.checked_add(i64::try_from(secs).ok()?.checked_mul(1000)?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_plain_digits() {
        assert_eq!(parse_count("50"), Some(50), "digits");
        for bad in ["", "-1", "+5", "5.0", "1e3", " 5", "5a", "99999999999999999999"] {
            assert_eq!(parse_count(bad), None, "{bad:?} is not a count");
        }
    }

    #[test]
    fn shares_stay_within_the_window() {
        assert_eq!(parse_share("0.42", Share::Fraction), Some(0.42), "fraction");
        assert_eq!(parse_share("42.5", Share::Percent), Some(0.425), "percent");
        for (bad, share) in [
            ("1.5", Share::Fraction),
            ("-0.1", Share::Fraction),
            ("101", Share::Percent),
            ("NaN", Share::Fraction),
            ("inf", Share::Percent),
            ("half", Share::Fraction),
        ] {
            assert_eq!(parse_share(bad, share), None, "{bad:?} is no share of a window");
        }
    }

    #[test]
    fn resets_in_every_format() {
        let now = 1_748_945_742_000;
        assert_eq!(parse_reset("2025-06-03T10:16:00Z", Reset::Rfc3339, now), Some(1_748_945_760_000), "RFC 3339");
        assert_eq!(parse_reset("1748963742", Reset::UnixSeconds, now), Some(1_748_963_742_000), "unix seconds");
        assert_eq!(parse_reset("6m0s", Reset::GoDuration, now), Some(now + 360_000), "Go duration");
        assert_eq!(parse_reset("90", Reset::DeltaSeconds, now), Some(now + 90_000), "countdown");
        for (bad, format) in [
            ("tomorrow", Reset::Rfc3339),
            ("3600", Reset::UnixSeconds),
            ("1748963742000", Reset::UnixSeconds),
            ("-5s", Reset::GoDuration),
            ("1.5", Reset::DeltaSeconds),
            ("999999999999", Reset::DeltaSeconds),
        ] {
            assert_eq!(parse_reset(bad, format, now), None, "{bad:?} is no {format:?} reset");
        }
    }

    #[test]
    fn status_words_only() {
        assert_eq!(parse_status("Allowed_Warning").as_deref(), Some("allowed_warning"), "lower-cased");
        assert_eq!(parse_status("not one word"), None, "not a word");
        assert_eq!(parse_status("sk-canary-7f3a9c1e"), None, "key-shaped words are never kept");
        assert_eq!(parse_status(&"a".repeat(33)), None, "too long");
    }
}
