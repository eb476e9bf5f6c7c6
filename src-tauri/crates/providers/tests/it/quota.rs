//! Quota readings from recorded answers: one fixture per header family in
//! `tests/fixtures/quota/` (same format as the taxonomy fixtures), plus malformed, missing and
//! contradictory values, which must read as unknown and never panic.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use proptest::prelude::*;
use switchyard_core::connection::Protocol;
use switchyard_providers::quota::{kind_of, quota_table};
use switchyard_providers::{read_quota, QuotaWindow};

/// Tue, 03 Jun 2025 10:15:42 GMT, the `date` of every fixture.
const NOW_MS: i64 = 1_748_945_742_000;

fn now() -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(NOW_MS).unwrap_or_default())
}

/// The headers of `tests/fixtures/<dir>/<name>.http` (comment lines, status line, headers,
/// blank line, body).
fn headers(dir: &str, name: &str) -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(dir).join(format!("{name}.http"));
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("fixture {} must be readable: {e}", path.display()));
    let head = text.split_once("\n\n").map_or(text.as_str(), |(h, _)| h);
    head.lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect()
}

fn read(p: Protocol, dir: &str, name: &str) -> Vec<QuotaWindow> {
    read_quota(p, headers(dir, name).as_slice(), now())
}

/// A window with every value unknown (its kind and family as its name says).
fn unknown(name: &'static str, per_model: bool) -> QuotaWindow {
    QuotaWindow {
        name,
        kind: kind_of(name, None).expect("a window name of the tables"),
        per_model,
        family: ["opus", "sonnet"].into_iter().find(|f| name.ends_with(f)),
        limit: None,
        remaining: None,
        utilization: None,
        resets_at_ms: None,
        status: None,
        window_minutes: None,
        claim: None,
    }
}

fn counted(name: &'static str, limit: u64, remaining: u64, resets_at_ms: i64) -> QuotaWindow {
    QuotaWindow {
        limit: Some(limit),
        remaining: Some(remaining),
        resets_at_ms: Some(resets_at_ms),
        ..unknown(name, true)
    }
}

fn shared(name: &'static str, utilization: f64, resets_at_ms: i64, status: Option<&str>) -> QuotaWindow {
    QuotaWindow {
        utilization: Some(utilization),
        resets_at_ms: Some(resets_at_ms),
        status: status.map(str::to_string),
        ..unknown(name, false)
    }
}

#[test]
fn anthropic_api_limits_are_read_per_model() {
    let got = read(Protocol::Anthropic, "quota", "anthropic_api");
    let want = vec![
        counted("requests", 50, 49, NOW_MS + 1_000),
        counted("tokens", 48_000, 47_000, NOW_MS + 2_000),
        counted("input_tokens", 40_000, 40_000, NOW_MS),
        counted("output_tokens", 8_000, 7_000, NOW_MS + 8_500),
    ];
    assert_eq!(got, want, "four per-model windows, resets in RFC 3339 (any offset)");
}

#[test]
fn anthropic_unified_windows_belong_to_the_account() {
    let got = read(Protocol::Anthropic, "quota", "anthropic_unified");
    let want = vec![
        QuotaWindow {
            resets_at_ms: Some(1_748_962_800_000),
            status: Some("allowed".into()),
            claim: Some("five_hour".into()),
            ..unknown("unified", false)
        },
        shared("unified_5h", 0.42, 1_748_962_800_000, Some("allowed")),
        shared("unified_7d", 0.81, 1_749_380_400_000, Some("allowed_warning")),
        shared("unified_7d_sonnet", 0.27, 1_749_380_400_000, Some("allowed")),
    ];
    assert_eq!(
        got, want,
        "5 h, 7 d and the Sonnet weekly utilization with unix-second resets; the overall status and \
         which window binds (the representative claim)"
    );
    let kinds: Vec<&str> = got.iter().map(|w| w.kind.as_str()).collect();
    assert_eq!(kinds, ["overall", "five_hour", "seven_day", "seven_day_model"], "each window's kind");
    assert_eq!(got[3].family, Some("sonnet"), "the model window holds for its family, whatever model was called");
}

#[test]
fn openai_api_limits_count_their_resets_from_now() {
    let got = read(Protocol::Openai, "quota", "openai_api");
    let want = vec![counted("requests", 500, 499, NOW_MS + 120), counted("tokens", 30_000, 29_980, NOW_MS + 360_000)];
    assert_eq!(got, want, "Go durations are added to the clock passed in");
}

#[test]
fn codex_windows_take_percent_and_either_reset_header() {
    let got = read(Protocol::Openai, "quota", "codex");
    let want = vec![
        QuotaWindow { window_minutes: Some(300), ..shared("codex_5h", 0.125, NOW_MS + 10_000_000, None) },
        QuotaWindow { window_minutes: Some(10_080), ..shared("codex_7d", 0.36, NOW_MS + 388_800_000, None) },
    ];
    assert_eq!(
        got, want,
        "used percent becomes a share; a time and a countdown that agree give one reset; 300 and 10 080 \
         minutes are the 5-hour and the weekly window"
    );
}

#[test]
fn codex_windows_are_known_by_length_not_slot() {
    let got = read(Protocol::Openai, "quota", "codex_swapped");
    let named: Vec<(&str, &str, Option<f64>)> = got.iter().map(|w| (w.name, w.kind.as_str(), w.utilization)).collect();
    assert_eq!(
        named,
        [("codex_7d", "seven_day", Some(0.88)), ("codex_5h", "five_hour", Some(0.42))],
        "the weekly window sent in the primary slot is the weekly window"
    );
    let jitter = |a: &str, b: &str| {
        let hs = [
            ("x-codex-primary-window-minutes", "300"),
            ("x-codex-primary-reset-after-seconds", a),
            ("x-codex-secondary-window-minutes", "300"),
            ("x-codex-secondary-reset-after-seconds", b),
        ];
        read_quota(Protocol::Openai, &hs[..], now()).into_iter().map(|w| w.name).collect::<Vec<_>>()
    };
    assert_eq!(jitter("3600", "3659"), ["codex_5h"], "one length, resets 59 s apart: one window, kept once");
    assert_eq!(jitter("3600", "3660"), ["codex_primary", "codex_secondary"], "a minute apart: two, by slot");
}

#[test]
fn failure_answers_are_read_too() {
    let got = read(Protocol::Anthropic, "anthropic", "rate_limit_error");
    assert_eq!(
        got,
        vec![counted("requests", 50, 0, NOW_MS + 18_000), counted("input_tokens", 40_000, 38_000, NOW_MS + 3_000)],
        "a 429 reports its limits like a success does"
    );
    let got = read(Protocol::Openai, "openai", "rate_limit_exceeded");
    assert!(
        got.iter().any(|w| w.name == "requests" || w.name == "tokens"),
        "the OpenAI 429 fixture's x-ratelimit headers are read: {got:?}"
    );
}

#[test]
fn malformed_and_contradictory_anthropic_values_are_unknown() {
    let got = read(Protocol::Anthropic, "quota", "anthropic_malformed");
    let want = vec![
        unknown("requests", true),
        QuotaWindow { resets_at_ms: Some(NOW_MS + 18_000), ..unknown("tokens", true) },
        QuotaWindow { remaining: Some(39_000), ..unknown("input_tokens", true) },
        unknown("unified_5h", false),
        unknown("unified_7d", false),
        unknown("unified_7d_opus", false),
    ];
    assert_eq!(
        got, want,
        "unreadable values, remaining > limit, a header repeated with two values, a utilization \
         above 1, a countdown where a time belongs and a key-shaped status are all unknown; \
         windows that were not sent are absent"
    );
}

#[test]
fn malformed_and_contradictory_openai_values_are_unknown() {
    let got = read(Protocol::Openai, "quota", "openai_malformed");
    let want = vec![
        unknown("requests", true),
        QuotaWindow { remaining: Some(150_000), resets_at_ms: Some(NOW_MS + 360_000), ..unknown("tokens", true) },
        unknown("codex_primary", false),
        unknown("codex_secondary", false),
    ];
    assert_eq!(
        got, want,
        "remaining > limit, days as a Go unit, exponent notation, 250 %, a zero-minute window, two \
         resets that disagree, a negative share and a reset in milliseconds are all unknown"
    );
}

/// The reset each window reads from `headers` alone (at [`NOW_MS`]), by window name.
fn resets(p: Protocol, headers: &[(&str, &str)]) -> Vec<(&'static str, Option<i64>)> {
    read_quota(p, headers, now()).into_iter().map(|w| (w.name, w.resets_at_ms)).collect()
}

#[test]
fn a_reset_beyond_the_windows_longest_span_is_unknown() {
    const H: i64 = 3_600_000;
    let openai = |v: &str| resets(Protocol::Openai, &[("x-ratelimit-reset-requests", v)]);
    assert_eq!(openai("1000000000000h"), [("requests", None)], "a trillion hours is not believed");
    assert_eq!(openai("25h"), [("requests", None)], "past a day (the longest request window) is not believed");
    assert_eq!(openai("23h"), [("requests", Some(NOW_MS + 23 * H))], "within a day it is");

    let anthropic = |v: &str| resets(Protocol::Anthropic, &[("anthropic-ratelimit-requests-reset", v)]);
    assert_eq!(anthropic("0000-01-01T00:00:00+01:00"), [("requests", None)], "a reset before year 0 is unknown");
    assert_eq!(anthropic("2035-06-03T10:15:42Z"), [("requests", None)], "ten years ahead is unknown");
    assert_eq!(anthropic("2025-06-03T10:14:42Z"), [("requests", Some(NOW_MS - 60_000))], "a minute ago: stale, kept");

    let five = |secs: i64| {
        let at = ((NOW_MS + secs * 1000) / 1000).to_string();
        resets(Protocol::Anthropic, &[("anthropic-ratelimit-unified-5h-reset", at.as_str())])
    };
    assert_eq!(five(4 * 3600), [("unified_5h", Some(NOW_MS + 4 * H))], "4 h into a 5 h window");
    assert_eq!(five(6 * 3600), [("unified_5h", None)], "6 h is longer than the 5 h window");

    let ten_years = (315_360_000).to_string();
    let codex = read_quota(
        Protocol::Openai,
        &[
            ("x-codex-primary-reset-after-seconds", ten_years.as_str()),
            ("x-codex-primary-used-percent", "100"),
            ("x-codex-secondary-window-minutes", "5256000"),
        ][..],
        now(),
    );
    assert_eq!(codex[0].resets_at_ms, None, "a ten-year countdown is not believed, so it blocks nothing");
    assert_eq!(codex[1].window_minutes, None, "nor a ten-year window");
}

#[test]
fn missing_headers_give_no_windows() {
    let plain = [("content-type", "application/json"), ("x-request-id", "req_1")];
    for p in [Protocol::Openai, Protocol::Anthropic] {
        assert_eq!(read_quota(p, &plain[..], now()), vec![], "{p}: no limit headers, no readings");
    }
    let other = headers("quota", "openai_api");
    assert_eq!(
        read_quota(Protocol::Anthropic, other.as_slice(), now()),
        vec![],
        "another dialect's headers are not this dialect's"
    );
    assert_eq!(read_quota(Protocol::Openai, &(), now()), vec![], "no headers at all");
}

#[test]
fn unreadable_bytes_in_a_header_map_are_unknown() {
    use reqwest::header::{HeaderMap, HeaderValue};
    let mut map = HeaderMap::new();
    map.insert("x-ratelimit-limit-requests", HeaderValue::from_static("60"));
    if let Ok(v) = HeaderValue::from_bytes(b"5\xff9") {
        map.insert("x-ratelimit-remaining-requests", v);
    }
    map.append("x-ratelimit-reset-requests", HeaderValue::from_static("1s"));
    map.append("x-ratelimit-reset-requests", HeaderValue::from_static("2s"));
    let got = read_quota(Protocol::Openai, &map, now());
    assert_eq!(
        got,
        vec![QuotaWindow { limit: Some(60), ..unknown("requests", true) }],
        "non-ASCII bytes and a repeated reset with two values are unknown; the readable limit stays"
    );
}

#[test]
fn tables_name_each_window_once_in_their_own_headers() {
    for p in [Protocol::Openai, Protocol::Anthropic] {
        for row in quota_table(p) {
            assert_eq!(kind_of(row.name, None), Some(row.kind), "{p}/{}: the name gives back the row's kind", row.name);
            assert_eq!(
                row.family.is_some(),
                row.kind.as_str() == "seven_day_model",
                "{p}/{}: family windows",
                row.name
            );
        }
        let names: Vec<&str> = quota_table(p).iter().map(|r| r.name).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{p}: window names are keys in the store, so unique");
        for row in quota_table(p) {
            for h in row.header_names() {
                assert_eq!(h, h.to_ascii_lowercase(), "{p}/{}: header names are lower case", row.name);
                let prefixed = match p {
                    Protocol::Anthropic => h.starts_with("anthropic-ratelimit-"),
                    Protocol::Openai => h.starts_with("x-ratelimit-") || h.starts_with("x-codex-"),
                };
                assert!(prefixed, "{p}/{}: {h} must carry a dialect prefix, or the fast path skips it", row.name);
            }
        }
    }
}

fn table_headers(p: Protocol) -> Vec<&'static str> {
    quota_table(p).iter().flat_map(|r| r.header_names().collect::<Vec<_>>()).collect()
}

proptest! {
    #[test]
    fn any_header_values_never_panic(values in proptest::collection::vec(".{0,24}", 40), repeat in any::<bool>()) {
        for p in [Protocol::Openai, Protocol::Anthropic] {
            let mut hs: Vec<(String, String)> = table_headers(p)
                .into_iter()
                .zip(values.iter().cycle())
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect();
            if repeat {
                let copy = hs.clone();
                hs.extend(copy.into_iter().map(|(k, v)| (k, format!("{v}0"))));
            }
            for w in read_quota(p, hs.as_slice(), now()) {
                prop_assert!(w.utilization.is_none_or(|u| (0.0..=1.0).contains(&u)), "shares stay in 0..=1");
                prop_assert!(
                    !matches!((w.limit, w.remaining), (Some(l), Some(r)) if r > l),
                    "never more left than the limit"
                );
                if repeat {
                    prop_assert_eq!(w.limit, None, "every value was contradicted by its copy");
                    prop_assert_eq!(w.utilization, None, "every value was contradicted by its copy");
                }
            }
        }
    }
}
