//! Each use case loads what it needs once (issue 13.5): one readiness per connection per
//! call, and the keychain asked about a profile's secret once per credential revision.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use switchyard_engine::{Engine, NewConnection, NewProfile, Secret, SystemClock};
use switchyard_mock_provider::{KeyScript, MockProvider};
use switchyard_vault::{Locator, MemoryVault, Vault, VaultError};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The memory vault, counting reads.
#[derive(Debug, Default)]
struct CountingVault {
    inner: MemoryVault,
    reads: AtomicUsize,
}

impl Vault for CountingVault {
    fn put(&self, locator: &Locator, secret: &Secret) -> Result<(), VaultError> {
        self.inner.put(locator, secret)
    }
    fn get(&self, locator: &Locator) -> Result<Option<Secret>, VaultError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.inner.get(locator)
    }
    fn delete(&self, locator: &Locator) -> Result<bool, VaultError> {
        self.inner.delete(locator)
    }
}

async fn three_keys(
    vault: &Arc<CountingVault>,
    mock: &MockProvider,
) -> Result<(tempfile::TempDir, Engine), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let engine = Engine::open_with(dir.path(), vault.clone(), Arc::new(SystemClock)).await?;
    for secret in ["sk-once-a", "sk-once-b", "sk-once-c"] {
        mock.set_key(secret, KeyScript::new(["m1"]));
    }
    let conn = NewConnection {
        slug: "c".into(),
        protocol: "openai".into(),
        base_url: format!("{}/v1", mock.base_url()),
        models: vec!["m1".into()],
        ..Default::default()
    };
    engine.connection_add(conn, Some(Secret::new("sk-once-a"))).await?;
    for (label, secret) in [("b", "sk-once-b"), ("c", "sk-once-c")] {
        engine
            .profile_add("c", NewProfile { label: label.into(), weight: Some(1), priority: None }, Secret::new(secret))
            .await?;
    }
    engine.verify("c", None, false, &|_| {}).await?;
    Ok((dir, engine))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn activation_and_status_each_compute_one_readiness() -> TestResult {
    let mock = MockProvider::start().await?;
    let vault = Arc::new(CountingVault::default());
    let (_dir, engine) = three_keys(&vault, &mock).await?;
    let before = engine.readiness_loads();
    engine.routing_activate("c", switchyard_engine::Strategy::Balanced, "test").await?;
    assert_eq!(engine.readiness_loads() - before, 1, "activation judges the gates and answers from one readiness");
    let before = engine.readiness_loads();
    let status = engine.routing_status("c").await?;
    assert_eq!(status.mode.as_str(), "balanced", "the activation took");
    assert_eq!(engine.readiness_loads() - before, 1, "a status look reconciles and reports from one readiness");
    let before = engine.readiness_loads();
    engine.routing_deactivate("c").await?;
    assert_eq!(engine.readiness_loads() - before, 1, "deactivation too");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_ask_the_keychain_once_per_credential_revision() -> TestResult {
    let mock = MockProvider::start().await?;
    let vault = Arc::new(CountingVault::default());
    let (_dir, engine) = three_keys(&vault, &mock).await?;
    let before = vault.reads.load(Ordering::SeqCst);
    for _ in 0..3 {
        let profiles = engine.profile_list("c").await?;
        assert!(profiles.iter().all(|p| p.credential.as_str() == "present"), "every secret is there: {profiles:?}");
        engine.connection_show("c").await?;
        engine.routing_status("c").await?;
    }
    assert_eq!(
        vault.reads.load(Ordering::SeqCst) - before,
        0,
        "verify just read every secret: nine views later the keychain was not asked again"
    );
    engine.profile_rotate("c", "b", Secret::new("sk-once-b2")).await?;
    let before = vault.reads.load(Ordering::SeqCst);
    engine.profile_list("c").await?;
    engine.profile_list("c").await?;
    assert_eq!(
        vault.reads.load(Ordering::SeqCst) - before,
        1,
        "after a rotation the new revision is asked about once, the others not at all"
    );
    Ok(())
}
