//! The Gemini dialect against its recorded samples: what each structured refusal cools and
//! until when (a per-day quota until the next Pacific midnight, across DST changes on a manual
//! clock; a per-minute quota for its retry delay; a bare RESOURCE_EXHAUSTED never fails over
//! but passes its delay on), errors wrapped in the JSON-array stream, and discovery against a
//! local server (paging with `nextPageToken`, only `generateContent` models, the key in
//! `x-goog-api-key` and never in the URL).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use switchyard_core::connection::Protocol;
use switchyard_core::routing::{unix_ms, CooldownEnd, CooldownPolicy, FailureKind, Scope};
use switchyard_providers::classify;

const G: Protocol = Protocol::Gemini;

fn fixture_body(row: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/gemini/{row}.http", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("fixture");
    text.split_once("\n\n").map(|(_, b)| b.as_bytes().to_vec()).expect("a body")
}

fn at(rfc3339: &str) -> SystemTime {
    let t: jiff::Timestamp = rfc3339.parse().expect("a time");
    UNIX_EPOCH + Duration::from_millis(t.as_millisecond() as u64)
}

fn ms(rfc3339: &str) -> i64 {
    unix_ms(at(rfc3339))
}

#[test]
fn a_per_day_quota_cools_the_key_and_model_until_the_next_pacific_midnight_across_dst() {
    let body = fixture_body("quota_per_day");
    // (the manual clock, the midnight it must cool until)
    for (now, until, why) in [
        ("2026-03-07T20:00:00Z", "2026-03-08T08:00:00Z", "before spring forward: PST midnight"),
        ("2026-03-08T12:00:00Z", "2026-03-09T07:00:00Z", "the day DST starts: the next midnight is PDT"),
        ("2026-10-31T23:00:00Z", "2026-11-01T07:00:00Z", "before fall back: PDT midnight"),
        ("2026-11-01T12:00:00Z", "2026-11-02T08:00:00Z", "the day DST ends: the next midnight is PST"),
    ] {
        let c = classify(G, 429, &(), &body, at(now));
        assert_eq!(
            (c.rule, c.failure.kind, c.failure.scope),
            ("quota_per_day", FailureKind::QuotaExhausted, Scope::CredentialModel),
            "a per-day violation (with per-minute ones beside it) is the (key, model)'s spent day"
        );
        assert_eq!(c.failure.retry_at_ms, Some(ms(until)), "{why}");
        assert_eq!(
            CooldownPolicy::default().open_until(c.failure.kind, 0, c.failure.retry_at_ms, ms(now)),
            Some(CooldownEnd::At(ms(until))),
            "{why}: the circuit opens until then, not for the 39 s retry delay"
        );
    }
}

#[test]
fn a_per_minute_quota_cools_for_its_retry_delay_a_bare_one_never_fails_over() {
    let now = at("2026-03-10T17:20:11Z");
    let c = classify(G, 429, &(), &fixture_body("quota_per_minute"), now);
    assert_eq!(
        (c.failure.kind, c.failure.scope, c.failure.retry_at_ms),
        (FailureKind::RateLimited, Scope::CredentialModel, Some(unix_ms(now) + 39_154)),
        "per minute: that (key, model) for RetryInfo.retryDelay (39.15 s, rounded up)"
    );
    assert!(c.failure.scope.allows_failover(), "another key may serve the model now");
    let bare = classify(G, 429, &(), &fixture_body("resource_exhausted"), now);
    assert_eq!((bare.failure.kind, bare.failure.scope), (FailureKind::Unknown, Scope::Ambiguous), "bare: ambiguous");
    assert!(!bare.failure.scope.allows_failover(), "a bare RESOURCE_EXHAUSTED never fails over");
    assert_eq!(bare.failure.retry_at_ms, None, "no delay given, none invented");
    let with_delay = br#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"m","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"20s"}]}}"#;
    let c = classify(G, 429, &(), with_delay, now);
    assert_eq!(
        (c.rule, c.failure.scope, c.failure.retry_at_ms),
        ("resource_exhausted", Scope::Ambiguous, Some(unix_ms(now) + 20_000)),
        "a delay without a quota violation: still no failover, the delay passed to the client"
    );
    let minute_without_delay = br#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]}]}}"#;
    assert_eq!(
        classify(G, 429, &(), minute_without_delay, now).failure.scope,
        Scope::Ambiguous,
        "a per-minute violation without RetryInfo is not the table's per-minute row"
    );
}

#[test]
fn key_project_and_request_refusals() {
    let now = at("2026-03-10T17:20:11Z");
    let got = |row: &str, status: u16| {
        let c = classify(G, status, &(), &fixture_body(row), now);
        (c.failure.kind, c.failure.scope, c.failure.retry_at_ms)
    };
    assert_eq!(got("api_key_invalid", 400), (FailureKind::AuthInvalid, Scope::Credential, None), "invalid key");
    assert_eq!(got("service_disabled", 403), (FailureKind::QuotaExhausted, Scope::Credential, None), "API disabled");
    assert_eq!(
        CooldownPolicy::default().open_until(FailureKind::QuotaExhausted, 0, None, unix_ms(now)),
        Some(CooldownEnd::At(unix_ms(now) + 60 * 60_000)),
        "a disabled service or billing cools the key 60 min"
    );
    assert_eq!(got("billing_disabled", 403).1, Scope::Credential, "billing off");
    assert_eq!(got("permission_denied", 403).1, Scope::Ambiguous, "other 403s: no failover");
    assert_eq!(got("not_found", 404), (FailureKind::BadRequest, Scope::Request, None), "unknown model: passed through");
    assert_eq!(got("unavailable", 503).0, FailureKind::Overloaded, "503 UNAVAILABLE: the provider");
}

#[test]
fn errors_in_the_json_array_stream_and_in_chunks_classify_the_same() {
    let now = at("2026-03-10T17:20:11Z");
    let body = fixture_body("quota_per_minute");
    let mut wrapped = b"[".to_vec();
    wrapped.extend_from_slice(&body);
    wrapped.extend_from_slice(b"]");
    assert_eq!(
        classify(G, 429, &(), &wrapped, now),
        classify(G, 429, &(), &body, now),
        "streamGenerateContent without alt=sse answers an error as a one-element array"
    );
    let chunk = br#"{"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}"#;
    let c = classify(G, 200, &(), chunk, now);
    assert_eq!((c.failure.kind, c.failure.scope), (FailureKind::ServerError, Scope::Provider), "an error chunk");
}
