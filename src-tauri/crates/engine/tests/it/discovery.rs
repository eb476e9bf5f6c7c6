//! Test/discovery, evidence and explicit activation against the mock provider over real HTTP
//! and the real keychain (issue 4).

use crate::common::{open, secret, TestResult};
use switchyard_engine::{ConnectionEdit, Engine, EngineError, NewConnection, NewProfile, RoutingStatus, VerifyReport};
use switchyard_mock_provider::{Behaviour, KeyScript, MockProvider};

fn openai(slug: &str, base: &str, models: &[&str]) -> NewConnection {
    NewConnection {
        slug: slug.into(),
        protocol: "openai".into(),
        base_url: format!("{base}/v1"),
        models: models.iter().map(|m| m.to_string()).collect(),
        ..Default::default()
    }
}

async fn add(engine: &Engine, slug: &str, label: &str, key: &str) -> Result<(), EngineError> {
    engine
        .profile_add(slug, NewProfile { label: label.into(), weight: None, priority: None }, secret(key))
        .await
        .map(|_| ())
}

async fn verify(engine: &Engine, slug: &str, deep: bool) -> Result<VerifyReport, EngineError> {
    engine.verify(slug, None, deep, &|_| {}).await
}

fn profile<'a>(s: &'a RoutingStatus, label: &str) -> &'a switchyard_engine::ProfileReadiness {
    s.profiles.iter().find(|p| p.label == label).unwrap_or_else(|| panic!("no profile {label} in status"))
}

fn excluded_reason(s: &RoutingStatus, model: &str, label: &str) -> Option<String> {
    let m = s.gates.models.iter().find(|m| m.model == model)?;
    m.excluded.iter().find(|e| e.label == label).map(|e| e.reason.clone())
}

#[tokio::test]
async fn every_evidence_source_is_recorded() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key("sk-listed", KeyScript::new(["m1", "m2"]));
    mock.set_key("sk-nolist", KeyScript::new(["m1", "m2"]).listing(Behaviour::ListingUnsupported));
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    engine.connection_add(openai("c", &mock.base_url(), &["m1", "m2", "m3"]), Some(secret("sk-listed"))).await?;
    add(&engine, "c", "nolist", "sk-nolist").await?;

    let report = verify(&engine, "c", false).await?;
    let listed = report.results.iter().find(|r| r.label == "primary").ok_or("primary missing")?;
    assert_eq!(listed.outcome.as_str(), "verified", "a key that lists its models is verified: {}", listed.detail);
    let supported: Vec<_> = listed.models.iter().filter(|m| m.supported).map(|m| m.model.as_str()).collect();
    assert_eq!(supported, vec!["m1", "m2"], "only models the listing has are supported (m3 is not listed)");
    assert!(listed.models.iter().all(|m| m.source == "listed"), "source is `listed`");

    let inferred = report.results.iter().find(|r| r.label == "nolist").ok_or("nolist missing")?;
    assert!(
        inferred.models.iter().all(|m| m.source == "inferred" && m.supported),
        "no listing: configuration is inferred"
    );
    assert_eq!(inferred.models.len(), 3, "every configured model is inferred");

    let deep = verify(&engine, "c", true).await?;
    let probed = deep.results.iter().find(|r| r.label == "primary").ok_or("primary missing")?;
    let m1 = probed.models.iter().find(|m| m.model == "m1").ok_or("m1 missing")?;
    assert_eq!((m1.source.as_str(), m1.supported), ("probed", true), "a served 1-token request proves the model");
    assert!(mock.hits_for("sk-listed", "m1") >= 1, "the deep check really called the provider for m1");
    mock.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn activation_is_refused_for_each_failing_gate_and_accepted_when_they_hold() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key("sk-a", KeyScript::new(["m1", "m2"]));
    mock.set_key("sk-b", KeyScript::new(["m1"]));
    mock.set_key("sk-c", KeyScript::new(["m2"]));
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    engine.connection_add(openai("c", &mock.base_url(), &["m1", "m2"]), Some(secret("sk-a"))).await?;

    // Gate 1: nothing verified.
    let err = engine.routing_activate("c", switchyard_engine::Strategy::Balanced, "test").await.err();
    match err {
        Some(EngineError::GateFailed { gates, .. }) => {
            let gates = gates.view();
            assert!(!gates.ok, "gates fail without evidence");
            assert_eq!(
                excluded_reason_gate(&gates, "m1", "primary"),
                Some("no_evidence".into()),
                "the report names the reason"
            );
        }
        other => panic!("activation without evidence must fail the gates, got {other:?}"),
    }

    // Gate 3: every model served, but by one profile only.
    verify(&engine, "c", false).await?;
    let err = engine.routing_activate("c", switchyard_engine::Strategy::Balanced, "test").await.err();
    let Some(EngineError::GateFailed { gates, .. }) = err else { panic!("one key cannot be balanced: {err:?}") };
    let gates = gates.view();
    assert!(gates.failures.iter().any(|f| f.contains("no model has two")), "the report says why: {:?}", gates.failures);

    // Gate 2: a model with zero eligible profiles (neither key of `d` may use m2).
    engine.connection_add(openai("d", &mock.base_url(), &["m1", "m2"]), Some(secret("sk-b"))).await?;
    add(&engine, "d", "b2", "sk-b").await?;
    verify(&engine, "d", false).await?;
    let err = engine.routing_activate("d", switchyard_engine::Strategy::Priority, "test").await.err();
    let Some(EngineError::GateFailed { gates, .. }) = err else { panic!("m2 has no eligible key: {err:?}") };
    let gates = gates.view();
    assert_eq!(
        excluded_reason_gate(&gates, "m2", "b2"),
        Some("model_unsupported".into()),
        "m2 is unsupported by both keys"
    );
    assert!(gates.failures.iter().any(|f| f.contains("model m2 has no eligible profile")), "{:?}", gates.failures);

    // Adding and verifying never activates by themselves.
    add(&engine, "c", "second", "sk-b").await?;
    add(&engine, "c", "third", "sk-c").await?;
    let report = verify(&engine, "c", false).await?;
    assert_eq!(report.routing.mode.as_str(), "legacy", "verification must never switch routing on");
    assert!(report.routing.gates.ok, "m1 has two keys and m2 has two: {:?}", report.routing.gates.failures);

    let status = engine.routing_activate("c", switchyard_engine::Strategy::Balanced, "test").await?;
    assert_eq!(
        (status.mode.as_str(), status.state.as_str()),
        ("balanced", "active"),
        "gates hold: activation succeeds"
    );
    assert_eq!(status.activated_by.as_deref(), Some("test"), "who activated is recorded");
    let back = engine.routing_deactivate("c").await?;
    assert_eq!(back.mode.as_str(), "legacy", "deactivate returns to legacy");
    mock.shutdown().await?;
    Ok(())
}

fn excluded_reason_gate(g: &switchyard_engine::GateView, model: &str, label: &str) -> Option<String> {
    let m = g.models.iter().find(|m| m.model == model)?;
    m.excluded.iter().find(|e| e.label == label).map(|e| e.reason.clone())
}

#[tokio::test]
async fn endpoint_edit_suspends_and_reverification_resumes() -> TestResult {
    let mock = MockProvider::start().await?;
    let moved = MockProvider::start().await?;
    for m in [&mock, &moved] {
        m.set_key("sk-a", KeyScript::new(["m1"]));
        m.set_key("sk-b", KeyScript::new(["m1"]));
    }
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    engine.connection_add(openai("c", &mock.base_url(), &["m1"]), Some(secret("sk-a"))).await?;
    add(&engine, "c", "b", "sk-b").await?;
    verify(&engine, "c", false).await?;
    engine.routing_activate("c", switchyard_engine::Strategy::Balanced, "test").await?;

    let edit = ConnectionEdit { base_url: Some(format!("{}/v1", moved.base_url())), ..Default::default() };
    engine.connection_edit("c", edit).await?;
    let status = engine.routing_status("c").await?;
    assert_eq!(
        (status.mode.as_str(), status.state.as_str()),
        ("balanced", "suspended"),
        "a new endpoint makes evidence stale"
    );
    assert!(
        status.note.as_deref().unwrap_or("").contains("verify"),
        "the status says what fixes it: {:?}",
        status.note
    );
    assert_eq!(
        profile(&status, "b").evidence.as_str(),
        "stale",
        "every profile's evidence is stale after an endpoint edit"
    );
    assert_eq!(excluded_reason(&status, "m1", "b"), Some("stale_evidence".into()), "gate reason is stale evidence");

    let report = verify(&engine, "c", false).await?;
    assert_eq!(
        (report.routing.mode.as_str(), report.routing.state.as_str()),
        ("balanced", "active"),
        "re-verification resumes"
    );
    assert!(moved.hits("sk-b") >= 1, "verification went to the new endpoint");
    mock.shutdown().await?;
    moved.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn rotation_makes_only_that_profile_stale() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key("sk-a", KeyScript::new(["m1"]));
    mock.set_key("sk-b", KeyScript::new(["m1"]));
    mock.set_key("sk-b2", KeyScript::new(["m1"]));
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    engine.connection_add(openai("c", &mock.base_url(), &["m1"]), Some(secret("sk-a"))).await?;
    add(&engine, "c", "b", "sk-b").await?;
    verify(&engine, "c", false).await?;
    engine.routing_activate("c", switchyard_engine::Strategy::Priority, "test").await?;
    engine.profile_rotate("c", "b", secret("sk-b2")).await?;
    let status = engine.routing_status("c").await?;
    assert_eq!(profile(&status, "b").evidence.as_str(), "stale", "the rotated profile's evidence is stale");
    assert_eq!(profile(&status, "primary").evidence.as_str(), "current", "the other profile keeps its evidence");
    assert_eq!(status.state.as_str(), "suspended", "with one eligible key left, no model has two: suspended");
    verify(&engine, "c", false).await?;
    assert!(mock.hits("sk-b2") >= 1, "re-verification used the new key");
    assert_eq!(engine.routing_status("c").await?.state.as_str(), "active", "and routing resumed");
    mock.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn a_model_forbidden_in_the_deep_check_excludes_only_that_model() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key("sk-a", KeyScript::new(["m1", "m2"]));
    mock.set_key("sk-b", KeyScript::new(["m1", "m2"]).model("m2", Behaviour::ModelForbidden));
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    engine.connection_add(openai("c", &mock.base_url(), &["m1", "m2"]), Some(secret("sk-a"))).await?;
    add(&engine, "c", "b", "sk-b").await?;
    let report = verify(&engine, "c", true).await?;
    let b = report.results.iter().find(|r| r.label == "b").ok_or("b missing")?;
    let m2 = b.models.iter().find(|m| m.model == "m2").ok_or("m2 missing")?;
    assert_eq!(
        (m2.supported, m2.failure_kind.as_deref()),
        (false, Some("model_forbidden")),
        "the deep check disproves m2"
    );
    let status = report.routing;
    assert_eq!(excluded_reason(&status, "m2", "b"), Some("model_unsupported".into()), "b is excluded for m2");
    let m1 = status.gates.models.iter().find(|m| m.model == "m1").ok_or("m1 missing")?;
    assert!(m1.eligible_labels.contains(&"b".to_string()), "b still serves m1: {m1:?}");
    let health = &profile(&status, "b").health;
    assert!(
        health.iter().any(|h| h.model.as_deref() == Some("m2") && h.state.as_str() == "open"),
        "m2's circuit is open: {health:?}"
    );
    assert!(
        health.iter().any(|h| h.model.is_none() && h.state.as_str() == "closed"),
        "the credential-wide circuit stays closed"
    );
    mock.shutdown().await?;
    Ok(())
}

#[tokio::test]
async fn refused_keys_and_unreachable_providers() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key("sk-a", KeyScript::new(["m1"]));
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    engine.connection_add(openai("c", &mock.base_url(), &["m1"]), Some(secret("sk-unknown"))).await?;
    let report = verify(&engine, "c", false).await?;
    assert_eq!(report.results[0].outcome.as_str(), "auth_invalid", "an unknown key is refused");
    let status = engine.routing_status("c").await?;
    assert_eq!(
        excluded_reason(&status, "m1", "primary"),
        Some("auth_invalid".into()),
        "refused keys are excluded as auth_invalid"
    );
    assert!(
        profile(&status, "primary").health.iter().any(|h| h.model.is_none() && h.state.as_str() == "open"),
        "auth failure opens the credential circuit"
    );

    engine.profile_rotate("c", "primary", secret("sk-a")).await?;
    let report = verify(&engine, "c", false).await?;
    assert_eq!(report.results[0].outcome.as_str(), "verified", "the replaced key verifies");
    assert!(
        profile(&report.routing, "primary").health.iter().all(|h| h.state.as_str() == "closed"),
        "success closes the circuits"
    );

    let url = mock.base_url();
    mock.shutdown().await?;
    let before = engine.routing_status("c").await?;
    let report = verify(&engine, "c", false).await?;
    let r = &report.results[0];
    assert_eq!(
        (r.outcome.as_str(), r.failure_kind.as_deref()),
        ("unverified", Some("network")),
        "no provider: nothing proven"
    );
    assert!(r.detail.contains("no evidence"), "the reason is clear: {}", r.detail);
    assert_eq!(
        profile(&report.routing, "primary").evidence_detail.as_ref().map(|e| e.verified_at.clone()),
        profile(&before, "primary").evidence_detail.as_ref().map(|e| e.verified_at.clone()),
        "a network failure writes no evidence ({url} is down)"
    );
    Ok(())
}
