//! An owned login's rules (docs/design.md, section 14; invariant 22), pure and clock-injected:
//! when an access token is due for renewal (ahead of its expiry, with a per-login jitter so many
//! logins do not renew together), how the token endpoint's answer to a refresh is classified
//! (from its status and the JSON `error` field, never from wording), how long a refused or
//! troubled refresh keeps the login from trying again, and when a new access token expires.
//!
//! Nothing here talks to the network, reads a clock or holds a token: the engine's `login/`
//! room does that and asks these functions what to do.

use crate::credential_health::RefreshOutcome;

/// Renew an access token this long before it expires (five minutes), plus the jitter.
pub const REFRESH_AHEAD_MS: i64 = 5 * 60 * 1000;

/// The jitter's span: each login renews up to this much earlier than [`REFRESH_AHEAD_MS`].
pub const REFRESH_JITTER_MS: i64 = 60 * 1000;

/// Shortest and longest a token endpoint's `Retry-After` blocks a login's refresh.
pub const MIN_BLOCK_MS: i64 = 1_000;
pub const MAX_BLOCK_MS: i64 = 60 * 60 * 1000;

/// How long a 429 without `Retry-After` blocks the login's refresh.
pub const DEFAULT_BLOCK_MS: i64 = 60 * 1000;

/// How long a transient refresh failure (5xx, network, an unreadable answer) waits before the
/// next try, unless the access token has lapsed (then the next use tries at once).
pub const TRANSIENT_BACKOFF_MS: i64 = 30 * 1000;

/// The access token's life when the answer gives neither `expires_in` nor a readable `exp`.
pub const DEFAULT_ACCESS_LIFE_MS: i64 = 60 * 60 * 1000;

/// The token endpoint's `error` codes that mean the refresh token is gone: only signing in
/// again helps (RFC 6749 §5.2 `invalid_grant`; OpenAI's rotation reuse and expiry codes).
pub const REJECTING_ERRORS: [&str; 6] = [
    "invalid_grant",
    "refresh_token_reused",
    "refresh_token_expired",
    "refresh_token_invalidated",
    "token_revoked",
    "invalid_token",
];

/// The per-login jitter in `[0, REFRESH_JITTER_MS)`: a hash of the profile id and the login
/// generation, so one login always renews at the same point and different logins spread out.
pub fn refresh_jitter_ms(profile_id: &str, generation: i64) -> i64 {
    // FNV-1a: stable across processes and builds (the std hasher is seeded per process).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in profile_id.bytes().chain(generation.to_le_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    i64::try_from(h % u64::try_from(REFRESH_JITTER_MS).unwrap_or(1)).unwrap_or(0)
}

/// Whether an access token expiring at `expires_at_ms` should be renewed before its next use at
/// `now_ms` (`jitter_ms` from [`refresh_jitter_ms`]). An unknown expiry is never due: the
/// provider's 401 then says when.
pub fn refresh_due(expires_at_ms: Option<i64>, now_ms: i64, jitter_ms: i64) -> bool {
    expires_at_ms.is_some_and(|at| at.saturating_sub(now_ms) <= REFRESH_AHEAD_MS + jitter_ms)
}

/// Whether the access token can still be sent at `now_ms` (a token at its expiry is lapsed).
pub fn access_usable(expires_at_ms: Option<i64>, now_ms: i64) -> bool {
    expires_at_ms.is_none_or(|at| now_ms < at)
}

/// When a refreshed access token expires: `expires_in` (seconds) when the answer gives it, else
/// the token's own `exp` claim (unix seconds), else [`DEFAULT_ACCESS_LIFE_MS`] from now.
pub fn access_expiry_ms(expires_in_secs: Option<i64>, exp_claim_secs: Option<i64>, now_ms: i64) -> i64 {
    match (expires_in_secs.filter(|s| *s > 0), exp_claim_secs.filter(|s| *s > 0)) {
        (Some(secs), _) => now_ms.saturating_add(secs.saturating_mul(1000)),
        (None, Some(exp)) => exp.saturating_mul(1000),
        (None, None) => now_ms.saturating_add(DEFAULT_ACCESS_LIFE_MS),
    }
}

/// What the token endpoint's answer to a refresh means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefreshVerdict {
    /// New tokens: written compare-and-swap on the refresh token the refresh started from.
    Renewed,
    /// The refresh token was refused (`invalid_grant`, reused, revoked): the login is
    /// `expired` until the user signs in again. Never retried.
    Rejected,
    /// Rate limited (429): no refresh before `until_ms` (its `Retry-After`, clamped).
    Blocked { until_ms: i64 },
    /// Provider or network trouble: the refresh token still stands; tried again from `until_ms`.
    Transient { until_ms: i64 },
}

impl RefreshVerdict {
    /// What the login's row records as the last refresh's outcome (credential health reads it).
    pub fn outcome(self) -> RefreshOutcome {
        match self {
            RefreshVerdict::Renewed => RefreshOutcome::Succeeded,
            RefreshVerdict::Rejected => RefreshOutcome::Rejected,
            RefreshVerdict::Blocked { .. } | RefreshVerdict::Transient { .. } => RefreshOutcome::Failed,
        }
    }

    /// Until when no new refresh is tried (`None`: no block).
    pub fn blocked_until(self) -> Option<i64> {
        match self {
            RefreshVerdict::Blocked { until_ms } | RefreshVerdict::Transient { until_ms } => Some(until_ms),
            RefreshVerdict::Renewed | RefreshVerdict::Rejected => None,
        }
    }
}

/// Classifies the token endpoint's answer to a refresh: `status` `None` when nothing came back
/// (network), `error` the JSON body's `error` field, `retry_after_secs` its `Retry-After`.
pub fn classify_refresh(
    status: Option<u16>,
    error: Option<&str>,
    retry_after_secs: Option<u64>,
    now_ms: i64,
) -> RefreshVerdict {
    let transient = RefreshVerdict::Transient { until_ms: now_ms.saturating_add(TRANSIENT_BACKOFF_MS) };
    let Some(status) = status else { return transient };
    if (200..300).contains(&status) {
        return RefreshVerdict::Renewed;
    }
    if error.is_some_and(|e| REJECTING_ERRORS.contains(&e)) {
        return RefreshVerdict::Rejected;
    }
    match status {
        429 => {
            let asked = retry_after_secs
                .map(|s| i64::try_from(s).unwrap_or(i64::MAX).saturating_mul(1000))
                .unwrap_or(DEFAULT_BLOCK_MS);
            RefreshVerdict::Blocked { until_ms: now_ms.saturating_add(asked.clamp(MIN_BLOCK_MS, MAX_BLOCK_MS)) }
        }
        // A 401 from the token endpoint itself: the refresh token is not accepted.
        401 => RefreshVerdict::Rejected,
        _ => transient,
    }
}

/// Whether a refresh may be tried at `now_ms`: never after a rejection (only a new sign-in
/// helps), and not before a 429's or a transient failure's block ends — also when the access
/// token has lapsed, so a troubled endpoint never gets a retry storm from every request.
pub fn refresh_allowed(blocked_until_ms: Option<i64>, last: Option<RefreshOutcome>, now_ms: i64) -> bool {
    last != Some(RefreshOutcome::Rejected) && blocked_until_ms.is_none_or(|until| now_ms >= until)
}

/// The word a refresh outcome is stored as (`profiles.login_outcome`).
pub fn outcome_word(outcome: RefreshOutcome) -> &'static str {
    match outcome {
        RefreshOutcome::Succeeded => "succeeded",
        RefreshOutcome::Failed => "failed",
        RefreshOutcome::Rejected => "rejected",
    }
}

/// The outcome a stored word names (`None`: no refresh recorded, or a word this build does not know).
pub fn outcome_from_word(word: &str) -> Option<RefreshOutcome> {
    match word {
        "succeeded" => Some(RefreshOutcome::Succeeded),
        "failed" => Some(RefreshOutcome::Failed),
        "rejected" => Some(RefreshOutcome::Rejected),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    #[test]
    fn a_token_is_due_within_the_lead_and_its_jitter_and_never_when_its_expiry_is_unknown() {
        assert!(!refresh_due(None, NOW, 0), "an unknown expiry waits for the provider's 401");
        assert!(!refresh_due(Some(NOW + REFRESH_AHEAD_MS + 1), NOW, 0), "just outside the lead");
        assert!(refresh_due(Some(NOW + REFRESH_AHEAD_MS), NOW, 0), "at the lead");
        assert!(refresh_due(Some(NOW + REFRESH_AHEAD_MS + 500), NOW, 500), "the jitter renews earlier");
        assert!(refresh_due(Some(NOW - 1), NOW, 0), "a lapsed token is due");
    }

    #[test]
    fn the_jitter_is_stable_per_login_and_spreads_logins_out() {
        let a = refresh_jitter_ms("p_a", 1);
        assert_eq!(a, refresh_jitter_ms("p_a", 1), "the same login always renews at the same point");
        assert!((0..REFRESH_JITTER_MS).contains(&a), "within the span");
        let distinct: std::collections::BTreeSet<i64> =
            (0..50).map(|i| refresh_jitter_ms(&format!("p_{i}"), 1)).collect();
        assert!(distinct.len() > 40, "fifty logins get (nearly) fifty different points, got {}", distinct.len());
        assert_ne!(a, refresh_jitter_ms("p_a", 2), "a new sign-in moves the point");
    }

    #[test]
    fn token_endpoint_answers_are_classified_from_status_and_the_error_field() {
        use RefreshVerdict as V;
        // (status, error field, Retry-After, verdict, why)
        type Case<'a> = (Option<u16>, Option<&'a str>, Option<u64>, V, &'a str);
        let cases: [Case<'_>; 9] = [
            (Some(200), None, None, V::Renewed, "new tokens"),
            (Some(400), Some("invalid_grant"), None, V::Rejected, "RFC 6749 invalid_grant"),
            (Some(401), Some("refresh_token_reused"), None, V::Rejected, "a reused rotating token"),
            (Some(400), Some("token_revoked"), None, V::Rejected, "revoked"),
            (Some(401), None, None, V::Rejected, "the token endpoint refuses the token"),
            (Some(429), None, Some(7), V::Blocked { until_ms: NOW + 7_000 }, "Retry-After honoured"),
            (Some(429), None, Some(86_400), V::Blocked { until_ms: NOW + MAX_BLOCK_MS }, "clamped to an hour"),
            (
                Some(503),
                Some("invalid_grant_maybe"),
                None,
                V::Transient { until_ms: NOW + TRANSIENT_BACKOFF_MS },
                "5xx",
            ),
            (None, None, None, V::Transient { until_ms: NOW + TRANSIENT_BACKOFF_MS }, "network"),
        ];
        for (status, error, retry, want, why) in cases {
            assert_eq!(classify_refresh(status, error, retry, NOW), want, "{why}");
        }
        assert_eq!(
            classify_refresh(Some(429), None, Some(0), NOW),
            V::Blocked { until_ms: NOW + MIN_BLOCK_MS },
            "a zero Retry-After still waits the minimum"
        );
        assert_eq!(
            classify_refresh(Some(429), None, None, NOW),
            V::Blocked { until_ms: NOW + DEFAULT_BLOCK_MS },
            "no Retry-After: the default block"
        );
    }

    #[test]
    fn only_a_rejection_is_terminal_and_a_block_holds_until_it_ends() {
        use RefreshOutcome as O;
        assert!(refresh_allowed(None, None, NOW), "never refreshed");
        assert!(!refresh_allowed(None, Some(O::Rejected), NOW), "rejected: sign in again");
        assert!(!refresh_allowed(Some(NOW + 5), Some(O::Failed), NOW), "blocked (429 or transient)");
        assert!(refresh_allowed(Some(NOW), Some(O::Failed), NOW), "the block ended");
    }

    #[test]
    fn a_new_access_token_expires_by_expires_in_then_its_exp_claim_then_the_default() {
        assert_eq!(access_expiry_ms(Some(3600), Some(1), NOW), NOW + 3_600_000, "expires_in first");
        assert_eq!(access_expiry_ms(None, Some(1_900_000_000), NOW), 1_900_000_000_000, "then exp");
        assert_eq!(access_expiry_ms(Some(0), None, NOW), NOW + DEFAULT_ACCESS_LIFE_MS, "then the default");
        assert!(access_usable(Some(NOW + 1), NOW) && !access_usable(Some(NOW), NOW), "lapsed at its expiry");
    }

    #[test]
    fn outcome_words_round_trip() {
        for o in [RefreshOutcome::Succeeded, RefreshOutcome::Failed, RefreshOutcome::Rejected] {
            assert_eq!(outcome_from_word(outcome_word(o)), Some(o), "{o:?}");
        }
        assert_eq!(outcome_from_word("later"), None, "an unknown word is no outcome");
    }
}
