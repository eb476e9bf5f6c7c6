//! Cooldown policy: how long an opened circuit stays open per failure kind and backoff level,
//! and the wall-clock helper `unix_ms`. Cooldowns are wall-clock (unix ms) because they persist.

use std::time::{SystemTime, UNIX_EPOCH};

use super::failure::FailureKind;

const SECOND_MS: i64 = 1_000;
const MINUTE_MS: i64 = 60 * SECOND_MS;
const HOUR_MS: i64 = 60 * MINUTE_MS;

/// Milliseconds since the unix epoch (negative before it), saturating.
pub fn unix_ms(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
    }
}

/// When an open circuit may be probed again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CooldownEnd {
    /// Half-open from this wall-clock time (unix ms) on.
    At(i64),
    /// No time end: only re-verification or credential replacement closes it (auth_invalid).
    UntilReverified,
}

/// Cooldown durations per kind. Backoff doubles per level (a failed probe raises the level)
/// up to the cap. A provider hint (Retry-After, reset headers) replaces the computed end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CooldownPolicy {
    pub rate_limit_base_ms: i64,
    pub rate_limit_cap_ms: i64,
    pub quota_base_ms: i64,
    pub quota_cap_ms: i64,
    pub model_forbidden_ms: i64,
}

impl Default for CooldownPolicy {
    /// docs/design.md ("Failure taxonomy"): rate limits 30 s doubling to 10 min; quota 60 min (doubling to 24 h on
    /// failed probes); model permission 24 h until a probe; auth until re-verified.
    fn default() -> Self {
        CooldownPolicy {
            rate_limit_base_ms: 30 * SECOND_MS,
            rate_limit_cap_ms: 10 * MINUTE_MS,
            quota_base_ms: 60 * MINUTE_MS,
            quota_cap_ms: 24 * HOUR_MS,
            model_forbidden_ms: 24 * HOUR_MS,
        }
    }
}

impl CooldownPolicy {
    /// The end of a cooldown opened now for `kind` at backoff `level`, or `None` when the kind
    /// never opens a circuit (provider, request and ambiguous kinds).
    pub fn open_until(&self, kind: FailureKind, level: u32, hint_ms: Option<i64>, now_ms: i64) -> Option<CooldownEnd> {
        let (base, cap) = match kind {
            FailureKind::AuthInvalid => return Some(CooldownEnd::UntilReverified),
            FailureKind::RateLimited => (self.rate_limit_base_ms, self.rate_limit_cap_ms),
            FailureKind::QuotaExhausted => (self.quota_base_ms, self.quota_cap_ms),
            FailureKind::ModelForbidden => (self.model_forbidden_ms, self.model_forbidden_ms),
            FailureKind::PermissionAmbiguous
            | FailureKind::Overloaded
            | FailureKind::ServerError
            | FailureKind::Network
            | FailureKind::BadRequest
            | FailureKind::Unknown => return None,
        };
        if let Some(hint) = hint_ms {
            return Some(CooldownEnd::At(hint.max(now_ms)));
        }
        Some(CooldownEnd::At(now_ms.saturating_add(backoff_ms(base, cap, level))))
    }
}

/// `base * 2^level`, capped.
fn backoff_ms(base: i64, cap: i64, level: u32) -> i64 {
    let factor = 1_i64.checked_shl(level.min(62)).unwrap_or(i64::MAX);
    base.saturating_mul(factor).min(cap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const NOW: i64 = 1_700_000_000_000;

    fn end(kind: FailureKind, level: u32, hint: Option<i64>) -> Option<CooldownEnd> {
        CooldownPolicy::default().open_until(kind, level, hint, NOW)
    }

    #[test]
    fn rate_limits_double_from_30s_to_a_10_minute_cap() {
        let got: Vec<Option<CooldownEnd>> = (0..7).map(|l| end(FailureKind::RateLimited, l, None)).collect();
        let want: Vec<Option<CooldownEnd>> =
            [30, 60, 120, 240, 480, 600, 600].into_iter().map(|s| Some(CooldownEnd::At(NOW + s * 1_000))).collect();
        assert_eq!(got, want, "rate-limit backoff is 30 s doubling, capped at 10 min");
        assert_eq!(
            end(FailureKind::RateLimited, 200, None),
            Some(CooldownEnd::At(NOW + 600_000)),
            "huge levels must not overflow"
        );
    }

    #[test]
    fn hints_win_and_auth_has_no_time_end() {
        assert_eq!(
            end(FailureKind::RateLimited, 3, Some(NOW + 7_000)),
            Some(CooldownEnd::At(NOW + 7_000)),
            "Retry-After replaces the computed backoff"
        );
        assert_eq!(
            end(FailureKind::QuotaExhausted, 0, None),
            Some(CooldownEnd::At(NOW + 3_600_000)),
            "quota without a reset header cools for 60 min"
        );
        assert_eq!(
            end(FailureKind::AuthInvalid, 0, Some(NOW + 1)),
            Some(CooldownEnd::UntilReverified),
            "an invalid key stays out until re-verified, whatever the headers say"
        );
        assert_eq!(
            end(FailureKind::ModelForbidden, 0, None),
            Some(CooldownEnd::At(NOW + 86_400_000)),
            "a model permission failure is probed again after 24 h"
        );
        for k in [
            FailureKind::Overloaded,
            FailureKind::ServerError,
            FailureKind::Network,
            FailureKind::BadRequest,
            FailureKind::PermissionAmbiguous,
            FailureKind::Unknown,
        ] {
            assert_eq!(end(k, 0, None), None, "{k} must not open a credential circuit");
        }
    }

    #[test]
    fn unix_ms_handles_both_sides_of_the_epoch() {
        assert_eq!(unix_ms(UNIX_EPOCH + Duration::from_millis(1_234)), 1_234, "after");
        assert_eq!(unix_ms(UNIX_EPOCH - Duration::from_millis(5)), -5, "before");
    }
}
