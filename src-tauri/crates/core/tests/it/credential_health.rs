//! The credential health function over every input combination (docs/design.md, invariant
//! 21): each row is one combination of kind, presence, expiry, refresh facts and clock, with
//! the state it must give and why. Then eligibility: `expired` and `missing` exclude, at the
//! clock of the decision, and nothing about a profile but its credential changes.

use switchyard_core::credential_health::{
    credential_health, CredentialFacts, Refresh, RefreshOutcome, EXPIRING_WITHIN_MS,
};
use switchyard_core::routing::{evaluate, CircuitBoard, Exclusion, ProfileView};
use switchyard_core::states::{CredentialHealthState as S, ProfileKind as K};

use crate::fixture::{basis, criteria, profile, NOW};

const DAY: i64 = 24 * 3600 * 1000;

/// Expiry positions relative to NOW.
const FAR: Option<i64> = Some(NOW + 30 * DAY);
const SOON: Option<i64> = Some(NOW + 2 * DAY);
/// Exactly seven days ahead: already `expiring` (the window is inclusive).
const EDGE: Option<i64> = Some(NOW + EXPIRING_WITHIN_MS);
const JUST_OUTSIDE: Option<i64> = Some(NOW + EXPIRING_WITHIN_MS + 1);
/// The instant of expiry is past.
const NOW_EXACT: Option<i64> = Some(NOW);
const PAST: Option<i64> = Some(NOW - DAY);

const REFRESHABLE: Option<Refresh> = Some(Refresh { possible: true, last: None });
const REFRESHED: Option<Refresh> = Some(Refresh { possible: true, last: Some(RefreshOutcome::Succeeded) });
const RETRYING: Option<Refresh> = Some(Refresh { possible: true, last: Some(RefreshOutcome::Failed) });
const REJECTED: Option<Refresh> = Some(Refresh { possible: true, last: Some(RefreshOutcome::Rejected) });
const NO_REFRESH: Option<Refresh> = Some(Refresh { possible: false, last: None });

struct Row {
    kind: K,
    present: bool,
    expires: Option<i64>,
    refresh: Option<Refresh>,
    want: S,
    why: &'static str,
}

fn row(kind: K, present: bool, expires: Option<i64>, refresh: Option<Refresh>, want: S, why: &'static str) -> Row {
    Row { kind, present, expires, refresh, want, why }
}

#[test]
fn every_input_combination_has_its_state() {
    let rows = [
        // api_key: static when there, missing when not; an expiry means nothing for a key.
        row(K::ApiKey, true, None, None, S::Static, "a key that is there does not expire by itself"),
        row(K::ApiKey, true, PAST, None, S::Static, "an API key ignores an expiry (none is ever stored)"),
        row(K::ApiKey, false, None, None, S::Missing, "no key in the keychain"),
        row(K::ApiKey, false, PAST, None, S::Missing, "absence comes first"),
        // token: its expiry decides, seven days ahead.
        row(K::Token, true, None, None, S::Ok, "a token with no known expiry is ok"),
        row(K::Token, true, FAR, None, S::Ok, "thirty days left is ok"),
        row(K::Token, true, JUST_OUTSIDE, None, S::Ok, "one ms more than seven days left is still ok"),
        row(K::Token, true, EDGE, None, S::Expiring, "exactly seven days left is expiring"),
        row(K::Token, true, SOON, None, S::Expiring, "two days left is expiring"),
        row(K::Token, true, NOW_EXACT, None, S::Expired, "at the instant of expiry it is expired"),
        row(K::Token, true, PAST, None, S::Expired, "a day past expiry"),
        row(K::Token, false, FAR, None, S::Missing, "a token not in the keychain is missing, whatever its expiry"),
        row(K::Token, false, PAST, None, S::Missing, "missing before expired: pasting one is the fix either way"),
        row(K::Token, true, PAST, REFRESHABLE, S::Expired, "a token cannot be refreshed, whatever the input says"),
        // external: the credential file's existence decides; the CLI renews its own login.
        row(K::External, true, None, None, S::Ok, "the official CLI is signed in"),
        row(K::External, true, PAST, None, S::Ok, "an external login's expiry is the CLI's business"),
        row(K::External, false, None, None, S::Missing, "no credential file: not signed in"),
        // oauth (a later issue): stale but refreshable is ok.
        row(K::Oauth, false, FAR, REFRESHABLE, S::Missing, "no login stored"),
        row(K::Oauth, true, None, REFRESHABLE, S::Ok, "a login with unknown expiry"),
        row(K::Oauth, true, FAR, NO_REFRESH, S::Ok, "far from expiry, refresh or not"),
        row(K::Oauth, true, SOON, REFRESHABLE, S::Ok, "expiring soon but refreshable is ok"),
        row(K::Oauth, true, PAST, REFRESHABLE, S::Ok, "stale but refreshable is ok"),
        row(K::Oauth, true, PAST, REFRESHED, S::Ok, "refreshed before and refreshable again"),
        row(K::Oauth, true, PAST, RETRYING, S::Ok, "a failed refresh is retried: still ok"),
        row(K::Oauth, true, FAR, REJECTED, S::Expired, "a rejected refresh token needs a new sign-in"),
        row(K::Oauth, true, None, REJECTED, S::Expired, "rejected regardless of expiry"),
        row(K::Oauth, true, SOON, NO_REFRESH, S::Expiring, "no refresh token and seven days left"),
        row(K::Oauth, true, PAST, NO_REFRESH, S::Expired, "no refresh token and past expiry"),
        row(K::Oauth, true, PAST, None, S::Expired, "no refresh facts: treated as not refreshable"),
    ];
    for r in rows {
        let facts = CredentialFacts { kind: r.kind, expires_at_ms: r.expires, refresh: r.refresh };
        let got = credential_health(&facts, r.present, NOW);
        assert_eq!(got.state, r.want, "{}: {:?} present={} expires={:?}", r.why, r.kind, r.present, r.expires);
        if !matches!(got.state, S::Static | S::Ok) {
            assert!(got.reason.is_some(), "{}: every state but static and ok says why", r.why);
        } else if r.kind != K::Oauth {
            assert_eq!(got.reason, None, "{}: a plain ok or static has nothing to say", r.why);
        }
        let judged_by_expiry = matches!(r.kind, K::Token | K::Oauth);
        let want_expiry = if judged_by_expiry { r.expires } else { None };
        assert_eq!(got.expires_at_ms, want_expiry, "{}: the expiry judged by is reported", r.why);
        assert_eq!(got.usable(), !matches!(r.want, S::Expired | S::Missing), "{}: usable", r.why);
    }
}

#[test]
fn the_state_moves_with_the_clock_alone() {
    let facts = CredentialFacts { kind: K::Token, expires_at_ms: Some(NOW), refresh: None };
    let at = |now| credential_health(&facts, true, now).state;
    assert_eq!(at(NOW - EXPIRING_WITHIN_MS - 1), S::Ok, "before the seven-day window");
    assert_eq!(at(NOW - EXPIRING_WITHIN_MS), S::Expiring, "the window opens seven days ahead");
    assert_eq!(at(NOW - 1), S::Expiring, "one ms before expiry");
    assert_eq!(at(NOW), S::Expired, "at expiry");
}

fn token(id: &str, expires: Option<i64>) -> ProfileView {
    let mut p = profile(id, 1, 0, &["m"]);
    p.credential = CredentialFacts { kind: K::Token, expires_at_ms: expires, refresh: None };
    p
}

fn reason_at(p: &ProfileView, now_ms: i64) -> Option<Exclusion> {
    let b = basis();
    let mut c = criteria(&b);
    c.now_ms = now_ms;
    let e = evaluate(std::slice::from_ref(p), "m", &c, &CircuitBoard::default().view());
    e.excluded().first().map(|&(_, r)| r)
}

#[test]
fn expired_and_missing_are_not_eligible() {
    assert_eq!(reason_at(&token("t", FAR), NOW), None, "a verified token far from expiry serves");
    assert_eq!(reason_at(&token("t", SOON), NOW), None, "an expiring token still serves (it is a warning)");
    assert_eq!(reason_at(&token("t", PAST), NOW), Some(Exclusion::Expired), "an expired token does not");

    let mut missing = token("t", FAR);
    missing.credential_present = false;
    assert_eq!(reason_at(&missing, NOW), Some(Exclusion::SecretMissing), "a token not in the keychain: secret_missing");

    let mut external = profile("e", 1, 0, &["m"]);
    external.credential.kind = K::External;
    assert_eq!(reason_at(&external, NOW), None, "a signed-in external profile serves");
    external.credential_present = false;
    assert_eq!(reason_at(&external, NOW), Some(Exclusion::Missing), "an external profile not signed in: missing");

    let mut disabled = token("t", PAST);
    disabled.enabled = false;
    assert_eq!(reason_at(&disabled, NOW), Some(Exclusion::Disabled), "disabled still comes first");
    let mut unverified = token("t", PAST);
    unverified.evidence = None;
    assert_eq!(
        reason_at(&unverified, NOW),
        Some(Exclusion::Expired),
        "expiry is a configuration reason: reported before evidence"
    );
}

#[test]
fn expiry_is_judged_at_the_decision_clock() {
    let p = token("t", Some(NOW + 1_000));
    assert_eq!(reason_at(&p, NOW), None, "one second before expiry it serves");
    assert_eq!(reason_at(&p, NOW + 1_000), Some(Exclusion::Expired), "the same view, one second on: expired");
}

#[test]
fn an_expired_profile_keeps_its_place_and_comes_back() {
    let b = basis();
    let mut profiles = vec![token("a", PAST), profile("b", 3, 1, &["m"])];
    let board = CircuitBoard::default();
    let e = evaluate(&profiles, "m", &criteria(&b), &board.view());
    assert_eq!(e.eligible(), &[1], "only b serves while a is expired");
    assert_eq!(e.excluded(), &[(0, Exclusion::Expired)], "a is listed, with why");
    // A new token: same id, weight and order; only the expiry (and credential) changed.
    profiles[0].credential.expires_at_ms = FAR;
    let e = evaluate(&profiles, "m", &criteria(&b), &board.view());
    assert_eq!(e.eligible(), &[0, 1], "a is back in its place");
    assert_eq!((profiles[0].id.as_str(), profiles[0].weight), ("a", 1), "id and weight unchanged");
}
