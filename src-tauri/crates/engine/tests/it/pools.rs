//! Pools, the configuration and gate side (invariant 24): `pool activate` passes only when
//! every member's connection has current evidence for its model and at least two members
//! count; a removed member's connection makes the gate report say so and an active pool keeps
//! routing on the members that remain; a pool round-trips through export and import by refs,
//! inactive until its gates hold; consecutive launches rotate by weight. Real keychain, real
//! HTTP to the mock provider.

use crate::common::{open, secret, TestResult};
use serde_json::Value;
use switchyard_engine::{Conflict, EngineError, NewConnection, ProfileEdit};
use switchyard_mock_provider::{KeyScript, MockProvider};

fn conn(slug: &str, base: &str, model: &str) -> NewConnection {
    NewConnection {
        slug: slug.into(),
        protocol: "anthropic".into(),
        base_url: base.into(),
        models: vec![model.into()],
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn activation_is_gated_and_a_removed_member_is_named() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key("sk-pool-glm", KeyScript::new(["glm-4.6"]));
    mock.set_key("sk-pool-kimi", KeyScript::new(["kimi-k2"]));
    mock.set_key("sk-pool-ds", KeyScript::new(["deepseek-chat"]));
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    engine.connection_add(conn("glm", &mock.base_url(), "glm-4.6"), Some(secret("sk-pool-glm"))).await?;
    engine.connection_add(conn("kimi", &mock.base_url(), "kimi-k2"), Some(secret("sk-pool-kimi"))).await?;
    engine.connection_add(conn("ds", &mock.base_url(), "deepseek-chat"), Some(secret("sk-pool-ds"))).await?;
    let members = ["glm=glm-4.6:3".to_string(), "kimi=kimi-k2:2".into(), "ds=deepseek-chat:1".into()];
    let added = engine.pool_add("fleet", "anthropic", &members).await?;
    assert_eq!(added.pool.state.as_str(), "inactive", "a pool is stored inactive (opt-in, invariant 2)");

    let refused = engine.pool_activate("fleet", switchyard_engine::Strategy::Balanced).await;
    let Err(EngineError::GateFailed { message, .. }) = refused else {
        return Err(format!("activation without evidence must fail closed: {refused:?}").into());
    };
    assert!(message.contains("no current evidence for model 'glm-4.6'"), "the report names the member: {message}");

    for slug in ["glm", "kimi", "ds"] {
        engine.verify(slug, None, false, &|_| {}).await?;
    }
    let active = engine.pool_activate("fleet", switchyard_engine::Strategy::Balanced).await?;
    assert_eq!(active.pool.state.as_str(), "active", "every member has current evidence: {active:?}");
    assert!(active.gates.ok && active.gates.counting == 3, "three members count");

    // A member whose connection is removed drops out; the pool keeps routing on the others.
    engine.connection_remove("ds").await?;
    let status = engine.pool_status("fleet").await?;
    assert_eq!(status.pool.state.as_str(), "active", "two members remain: still routing");
    let ds = status.pool.members.iter().find(|m| m.slug == "ds").ok_or("the removed member is still listed")?;
    assert!(!ds.ready, "the removed member does not count");
    assert_eq!(ds.why_out.as_deref(), Some("its connection was removed"), "and says why");
    assert!(
        status.gates.failures.iter().any(|f| f.contains("member 'ds=deepseek-chat': its connection was removed")),
        "the pool's gate report says so: {:?}",
        status.gates.failures
    );

    // A pool cannot be named like a connection, and its members speak its protocol.
    let clash = engine.pool_add("glm", "anthropic", &members[..2]).await;
    assert!(clash.is_err(), "a pool name that is a connection's slug is refused");
    let taken = engine.connection_add(conn("fleet", &mock.base_url(), "m1"), Some(secret("sk-pool-x"))).await;
    assert!(
        matches!(taken, Err(EngineError::Duplicate { .. })),
        "and a connection cannot take a pool's name (one routable name, one thing): {taken:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_round_trips_by_refs_and_waits_for_its_gates() -> TestResult {
    let mock = MockProvider::start().await?;
    for k in ["sk-pe-a", "sk-pe-b", "sk-pe-a2", "sk-pe-b2"] {
        mock.set_key(k, KeyScript::new(["m1"]));
    }
    let from = tempfile::tempdir()?;
    let exporter = open(from.path()).await?;
    exporter.connection_add(conn("a", &mock.base_url(), "m1"), Some(secret("sk-pe-a"))).await?;
    exporter.connection_add(conn("b", &mock.base_url(), "m1"), Some(secret("sk-pe-b"))).await?;
    exporter.verify("a", None, false, &|_| {}).await?;
    exporter.verify("b", None, false, &|_| {}).await?;
    exporter.pool_add("duo", "anthropic", &["a:2".to_string(), "b=m1".into()]).await?;
    exporter.pool_activate("duo", switchyard_engine::Strategy::Priority).await?;

    let text = exporter.export(None).await?;
    let doc: Value = serde_json::from_str(&text)?;
    assert_eq!(
        doc["pools"],
        serde_json::json!([{"name": "duo", "protocol": "anthropic", "mode": "priority", "active": true,
            "members": [{"connection": "c1", "weight": 2}, {"connection": "c2", "model": "m1", "weight": 1}]}]),
        "members by export-local refs, in order"
    );
    assert!(!text.contains("pl_") && !text.contains("c_"), "no database id in the file");

    let to = tempfile::tempdir()?;
    let importer = open(to.path()).await?;
    let report = importer.import(&text, false, Conflict::Rename).await?;
    assert_eq!(report.pools, vec!["duo".to_string()], "the import report lists the pool");
    let status = importer.pool_status("duo").await?;
    assert_eq!(status.pool.state.as_str(), "pending", "imported active: waits for its gates");
    assert_eq!(status.pool.mode.map(|m| m.as_str()), Some("priority"), "the mode came along");
    for (slug, key) in [("a", "sk-pe-a2"), ("b", "sk-pe-b2")] {
        importer.profile_rotate(slug, "primary", secret(key)).await?;
        importer.profile_edit(slug, "primary", ProfileEdit { enabled: Some(true), ..Default::default() }).await?;
        importer.verify(slug, None, false, &|_| {}).await?;
    }
    let restored = importer.pool_status("duo").await?;
    assert_eq!(restored.pool.state.as_str(), "active", "restored once its gates hold: {restored:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launches_rotate_by_weight_and_failover_skips_tried_members() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key("sk-pl-ga", KeyScript::new(["m1"]));
    mock.set_key("sk-pl-kb", KeyScript::new(["m1"]));
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    engine.connection_add(conn("ga", &mock.base_url(), "m1"), Some(secret("sk-pl-ga"))).await?;
    engine.connection_add(conn("kb", &mock.base_url(), "m1"), Some(secret("sk-pl-kb"))).await?;
    engine.verify("ga", None, false, &|_| {}).await?;
    engine.verify("kb", None, false, &|_| {}).await?;
    engine.pool_add("lb", "anthropic", &["ga:2".to_string(), "kb:1".into()]).await?;
    let inactive = engine.pool_launch("lb", &[]).await;
    assert!(inactive.is_err(), "an inactive pool launches nothing");
    engine.pool_activate("lb", switchyard_engine::Strategy::Balanced).await?;
    let mut order = Vec::new();
    for _ in 0..6 {
        order.push(engine.pool_launch("lb", &[]).await?.member);
    }
    assert_eq!(order, ["ga", "kb", "ga", "ga", "kb", "ga"], "SWRR per launch, the position kept between launches");
    let list = engine.pool_list().await?;
    assert_eq!(list[0].last_launched.as_deref(), Some("ga"), "pool list shows the last member launched");
    let next = engine.pool_launch("lb", &["ga".to_string()]).await?;
    assert_eq!(next.member, "kb", "a failover launch skips the member tried");
    assert_eq!(next.path, "lb@kb", "pinned to the member's relay path");
    let none = engine.pool_launch("lb", &["ga".to_string(), "kb".into()]).await;
    assert!(none.is_err(), "every member tried: nothing left");
    Ok(())
}
