//! Eligibility and gate tests: every exclusion reason, their precedence, scope isolation
//! between credential-wide and per-model circuits, and the activation gate report.

use std::sync::Arc;

use crate::fixture::{basis, criteria, pool, profile, HOUR_MS, MAX_AGE_MS, NOW};
use switchyard_core::connection::Protocol;
use switchyard_core::routing::{
    evaluate, evaluate_gates, evaluate_gates_under_quota, Admission, CircuitBoard, CircuitSnapshot, Eligibility,
    Exclusion, Failure, FailureKind, NoCircuits, PersistedState, ProfileView, QuotaBlocks, QuotaPolicy, QuotaReading,
    Scope,
};
use switchyard_core::BasisFingerprint;

/// The single reason `p` is excluded for `model` on `board`, or None when eligible.
fn reason(p: ProfileView, model: &str, board: &CircuitBoard) -> Option<Exclusion> {
    let b = basis();
    let e = evaluate(&[p], model, &criteria(&b), &board.view());
    assert_eq!(
        e.eligible().len() + e.excluded().len(),
        1,
        "every profile is either eligible or excluded, never both or neither"
    );
    e.excluded().first().map(|&(_, r)| r)
}

fn open(board: &CircuitBoard, id: &str, model: &str, kind: FailureKind, scope: Scope) {
    let snap = board.record_failure(id, model, &Failure::new(kind, scope), NOW);
    assert!(snap.is_some(), "{kind} with scope {scope} must open a circuit");
}

#[test]
fn a_verified_enabled_profile_is_eligible() {
    let board = CircuitBoard::default();
    assert_eq!(reason(profile("a", 1, 0, &["m"]), "m", &board), None, "nothing excludes it");
}

#[test]
fn configuration_and_evidence_reasons() {
    let board = CircuitBoard::default();
    let base = || profile("a", 1, 0, &["m"]);

    let mut p = base();
    p.enabled = false;
    assert_eq!(reason(p, "m", &board), Some(Exclusion::Disabled), "a disabled profile is out");

    let mut p = base();
    p.credential_present = false;
    assert_eq!(reason(p, "m", &board), Some(Exclusion::SecretMissing), "no secret, no routing");

    let mut p = base();
    p.evidence = None;
    assert_eq!(reason(p, "m", &board), Some(Exclusion::NoEvidence), "unverified is out");

    let mut p = base();
    p.credential_revision = 2;
    assert_eq!(
        reason(p, "m", &board),
        Some(Exclusion::StaleEvidence),
        "a rotated credential makes the old evidence stale"
    );

    let mut p = base();
    if let Some(e) = p.evidence.as_mut() {
        e.basis = BasisFingerprint::compute(Protocol::Openai, "https://elsewhere.test/v1", &[]);
    }
    assert_eq!(
        reason(p, "m", &board),
        Some(Exclusion::StaleEvidence),
        "evidence taken under another base URL is stale"
    );

    let mut p = base();
    if let Some(e) = p.evidence.as_mut() {
        e.verified_at_ms = NOW - MAX_AGE_MS - 1;
    }
    assert_eq!(reason(p, "m", &board), Some(Exclusion::StaleEvidence), "evidence older than the max age is stale");

    let mut p = base();
    if let Some(e) = p.evidence.as_mut() {
        e.auth_invalid = true;
    }
    assert_eq!(
        reason(p, "m", &board),
        Some(Exclusion::AuthInvalid),
        "a verification that rejected the key excludes it"
    );

    assert_eq!(
        reason(base(), "other-model", &board),
        Some(Exclusion::ModelUnsupported),
        "a model the evidence does not list is unsupported"
    );
}

#[test]
fn health_reasons() {
    let board = CircuitBoard::default();
    open(&board, "a", "m", FailureKind::RateLimited, Scope::Credential);
    assert_eq!(
        reason(profile("a", 1, 0, &["m"]), "m", &board),
        Some(Exclusion::CircuitOpen),
        "a rate-limited credential is cooling down"
    );

    let board = CircuitBoard::default();
    open(&board, "a", "m", FailureKind::AuthInvalid, Scope::Credential);
    assert_eq!(
        reason(profile("a", 1, 0, &["m"]), "m", &board),
        Some(Exclusion::AuthInvalid),
        "an auth failure reports auth_invalid, not a generic open circuit"
    );

    let board = CircuitBoard::default();
    open(&board, "a", "m", FailureKind::ModelForbidden, Scope::CredentialModel);
    assert_eq!(
        reason(profile("a", 1, 0, &["m"]), "m", &board),
        Some(Exclusion::ModelCircuitOpen),
        "a forbidden model opens the (profile, model) circuit"
    );

    let board = Arc::new(CircuitBoard::default());
    let hint = Failure::new(FailureKind::RateLimited, Scope::Credential).with_retry_at(Some(NOW));
    assert!(board.record_failure("a", "m", &hint, NOW - 1).is_some(), "opens until NOW");
    let lease = match board.admit("a", "m", NOW) {
        Admission::Probe(l) => l,
        other => panic!("the cooldown ended, so the first caller must get the probe: {other:?}"),
    };
    assert_eq!(
        reason(profile("a", 1, 0, &["m"]), "m", &board),
        Some(Exclusion::ProbeInFlight),
        "while someone holds the half-open probe the profile is not eligible"
    );
    drop(lease);
    assert_eq!(
        reason(profile("a", 1, 0, &["m"]), "m", &board),
        None,
        "a released probe makes the half-open profile eligible again (to claim the probe)"
    );
}

#[test]
fn the_first_reason_in_precedence_order_wins() {
    let board = CircuitBoard::default();
    open(&board, "a", "m", FailureKind::RateLimited, Scope::Credential);
    open(&board, "a", "m", FailureKind::ModelForbidden, Scope::CredentialModel);
    let mut p = profile("a", 1, 0, &["m"]);
    p.enabled = false;
    p.credential_present = false;
    p.credential_revision = 9;
    assert_eq!(reason(p.clone(), "m", &board), Some(Exclusion::Disabled), "disabled first");
    p.enabled = true;
    assert_eq!(reason(p.clone(), "m", &board), Some(Exclusion::SecretMissing), "then secret");
    p.credential_present = true;
    assert_eq!(reason(p.clone(), "m", &board), Some(Exclusion::StaleEvidence), "then evidence");
    p.credential_revision = 1;
    assert_eq!(
        reason(p, "m", &board),
        Some(Exclusion::CircuitOpen),
        "the credential-wide circuit is reported before the model circuit"
    );
}

#[test]
fn model_forbidden_on_one_model_leaves_the_profile_for_others() {
    let board = CircuitBoard::default();
    open(&board, "a", "model-a", FailureKind::ModelForbidden, Scope::CredentialModel);
    let p = || profile("a", 1, 0, &["model-a", "model-b"]);
    assert_eq!(reason(p(), "model-a", &board), Some(Exclusion::ModelCircuitOpen), "the forbidden model is excluded");
    assert_eq!(
        reason(p(), "model-b", &board),
        None,
        "a model-permission failure must not open the credential-wide circuit"
    );
    let snap = board.snapshot_of("a", "");
    assert_eq!(snap.state, PersistedState::Closed, "the credential circuit stays closed");

    open(&board, "a", "model-a", FailureKind::RateLimited, Scope::Credential);
    assert_eq!(
        reason(p(), "model-b", &board),
        Some(Exclusion::CircuitOpen),
        "a credential-wide failure takes the profile out for every model"
    );
}

#[test]
fn persisted_snapshots_answer_like_the_board() {
    let snaps = vec![CircuitSnapshot {
        profile_id: "a".into(),
        model: "m".into(),
        state: PersistedState::Open,
        kind: Some(FailureKind::ModelForbidden),
        until_ms: Some(NOW + HOUR_MS),
        backoff_level: 0,
    }];
    let b = basis();
    let e = evaluate(&[profile("a", 1, 0, &["m", "n"])], "m", &criteria(&b), snaps.as_slice());
    assert_eq!(e.excluded(), &[(0, Exclusion::ModelCircuitOpen)], "snapshot lookup sees the row");
    let e = evaluate(&[profile("a", 1, 0, &["m", "n"])], "n", &criteria(&b), snaps.as_slice());
    assert_eq!(e.eligible(), &[0], "other models are unaffected");
}

#[test]
fn gates_pass_only_with_every_model_served_and_one_pooled() {
    let b = basis();
    let models = vec!["m1".to_string(), "m2".to_string()];
    let mut profiles = pool(2, &["m1", "m2"]);
    let report = evaluate_gates(&profiles, &models, &criteria(&b), &NoCircuits);
    assert!(report.ok, "two verified profiles for both models pass: {:?}", report.failures());

    profiles[1].enabled = false;
    let report = evaluate_gates(&profiles, &models, &criteria(&b), &NoCircuits);
    assert!(!report.ok, "one profile per model is not a pool: the gates must fail closed");
    assert_eq!(report.failures(), vec!["no model has two eligible profiles"], "says why");

    let mut profiles = pool(2, &["m1"]);
    profiles.push(profile("p02", 1, 0, &["m1"]));
    let report = evaluate_gates(&profiles, &models, &criteria(&b), &NoCircuits);
    assert!(!report.ok, "an enabled model nobody serves fails the gates");
    let m2 = report.models.iter().find(|m| m.model == "m2");
    assert_eq!(m2.map(|m| m.excluded.len()), Some(3), "the report names every profile that does not count for m2");

    let json = serde_json::to_value(&report).unwrap_or_default();
    assert_eq!(json["ok"], false, "ok is a boolean");
    assert_eq!(json["models"][1]["model"], "m2", "models in enabled order");
    assert_eq!(json["models"][0]["eligible"][0], "p00", "eligible ids are strings");
    assert_eq!(
        json["models"][1]["excluded"][0],
        serde_json::json!({"profile": "p00", "reason": "model_unsupported"}),
        "exclusions serialize as {{profile, reason}} with snake_case reasons"
    );
}

#[test]
fn every_reason_has_its_snake_case_name() {
    let names: Vec<String> = Exclusion::ALL.iter().map(|r| serde_json::to_string(r).unwrap_or_default()).collect();
    let want = [
        "disabled",
        "secret_missing",
        "missing",
        "expired",
        "no_evidence",
        "stale_evidence",
        "auth_invalid",
        "model_unsupported",
        "circuit_open",
        "model_circuit_open",
        "quota_reserve",
        "probe_in_flight",
    ];
    assert_eq!(names.len(), want.len(), "every reason is named");
    for (got, (want, r)) in names.iter().zip(want.iter().zip(Exclusion::ALL)) {
        assert_eq!(got, &format!("\"{want}\""), "serde name of {r:?}");
        assert_eq!(r.as_str(), *want, "as_str of {r:?}");
    }
}

fn exhausted_until(reset: i64) -> QuotaReading<'static> {
    QuotaReading { limit: Some(50), remaining: Some(0), utilization: None, resets_at_ms: Some(reset), status: None }
}

#[test]
fn a_quota_block_excludes_as_quota_reserve_until_the_reset() {
    let b = basis();
    let profiles = pool(2, &["m"]);
    let policy = QuotaPolicy { enabled: true, reserve_pct: 0 };
    let mut blocks = QuotaBlocks::default();
    blocks.judge(&policy, &profiles[0].id, "", &exhausted_until(NOW + 60_000), NOW);
    let mut e = Eligibility::default();
    e.evaluate_under_quota(&profiles, "m", &criteria(&b), &NoCircuits, &blocks);
    assert_eq!(e.excluded(), &[(0, Exclusion::QuotaReserve)], "the exhausted key is skipped");
    assert_eq!(e.eligible(), &[1], "the other still serves");
    let later = switchyard_core::routing::Criteria { now_ms: NOW + 60_000, ..criteria(&b) };
    e.evaluate_under_quota(&profiles, "m", &later, &NoCircuits, &blocks);
    assert_eq!(e.eligible(), &[0, 1], "at the reset the key is eligible again");
    let gates = evaluate_gates_under_quota(&profiles, &["m".to_string()], &criteria(&b), &NoCircuits, &blocks);
    assert_eq!(gates.models[0].excluded.len(), 1, "the gate report lists the quota exclusion");
    assert_eq!(gates.models[0].excluded[0].reason.as_str(), "quota_reserve", "with its reason");
}

#[test]
fn quota_reserve_comes_after_the_circuits_and_before_a_probe() {
    let b = basis();
    let board = CircuitBoard::default();
    open(&board, "p00", "m", FailureKind::ModelForbidden, Scope::CredentialModel);
    let profiles = pool(1, &["m"]);
    let mut blocks = QuotaBlocks::default();
    blocks.judge(&QuotaPolicy { enabled: true, reserve_pct: 0 }, "p00", "m", &exhausted_until(NOW + 1_000), NOW);
    let mut e = Eligibility::default();
    e.evaluate_under_quota(&profiles, "m", &criteria(&b), &board.view(), &blocks);
    assert_eq!(e.excluded(), &[(0, Exclusion::ModelCircuitOpen)], "an open circuit is reported first");
    let disabled = vec![ProfileView { enabled: false, ..profiles[0].clone() }];
    e.evaluate_under_quota(&disabled, "m", &criteria(&b), &NoCircuits, &blocks);
    assert_eq!(e.excluded(), &[(0, Exclusion::Disabled)], "configuration first");
}

#[test]
fn without_quota_blocks_evaluation_is_unchanged() {
    let b = basis();
    let profiles = pool(3, &["m"]);
    let mut e = Eligibility::default();
    e.evaluate_under_quota(&profiles, "m", &criteria(&b), &NoCircuits, &QuotaBlocks::NONE);
    assert_eq!(e, evaluate(&profiles, "m", &criteria(&b), &NoCircuits), "no blocks: the same sets as before");
    let off = QuotaPolicy { enabled: false, reserve_pct: 50 };
    let mut blocks = QuotaBlocks::default();
    blocks.judge(&off, "p00", "", &exhausted_until(NOW + 60_000), NOW);
    assert!(blocks.is_empty(), "off: an exhausted reading blocks nothing");
    assert_eq!(
        evaluate_gates_under_quota(&profiles, &["m".to_string()], &criteria(&b), &NoCircuits, &blocks),
        evaluate_gates(&profiles, &["m".to_string()], &criteria(&b), &NoCircuits),
        "off: the gate report is the same"
    );
}
