//! Owned logins through the engine (docs/design.md, section 14; invariants 21 and 22), against
//! the mock provider's fake authorization server over real HTTP, on a manual clock and the memory
//! vault: a device-code sign-in keeps its tokens in the keychain item only; refreshes are single
//! flight (many concurrent requests, two concurrent 401s, a second engine on the same data dir
//! standing in for a second process) and compare-and-swap on the refresh token (a refresh done
//! elsewhere is adopted); a 401 renews once and retries the same profile; `invalid_grant` expires
//! the login after one ledger row; 429 blocks and 5xx are never terminal; a crash between the
//! keychain write and the row write recovers; evidence stays current across ten refreshes and
//! balanced routing never suspends. The transport stands in for the relay: it refuses the access
//! tokens the test revoked and records what each attempt carried.

use std::collections::HashSet;
use std::future::Future;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use switchyard_core::routing::{Failure, FailureKind, Scope};
use switchyard_engine::{
    CredentialUse, Engine, FaultPoint, NewConnection, NewCredential, NewProfile, Reply, RequestKeys, RouteRequest,
    Routed, Router, Target, Transport, UserSetting, DB_FILE,
};
use switchyard_mock_provider::{KeyScript, MockProvider, OauthConfig, RefreshFault};
use switchyard_vault::MemoryVault;

use crate::common::{ManualClock, TestResult};

pub(crate) const CANARY: &str = "oauthCANARY4b1d-";
pub(crate) const T0: i64 = 1_800_000_000_000;
pub(crate) const HOUR: i64 = 3_600_000;

/// What one attempt carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sent {
    pub(crate) profile: String,
    pub(crate) token: String,
    pub(crate) account: Option<String>,
    pub(crate) base_url: Option<String>,
    pub(crate) credential: CredentialUse,
}

/// The relay's stand-in: 401 for revoked access tokens, 200 otherwise.
#[derive(Default)]
pub(crate) struct Backend {
    revoked: Mutex<HashSet<String>>,
    sent: Mutex<Vec<Sent>>,
}

impl Backend {
    pub(crate) fn revoke(&self, tokens: impl IntoIterator<Item = String>) {
        self.revoked.lock().unwrap().extend(tokens);
    }

    pub(crate) fn sent(&self) -> Vec<Sent> {
        self.sent.lock().unwrap().clone()
    }
}

impl Transport for Backend {
    type Delivered = &'static str;
    type Kept = u16;

    fn attempt(&self, target: Target<'_>) -> impl Future<Output = Reply<&'static str, u16>> + Send {
        let token = target.secret.expose().to_string();
        let refused = self.revoked.lock().unwrap().contains(&token);
        self.sent.lock().unwrap().push(Sent {
            profile: target.profile_id.to_string(),
            token,
            account: target.account_id.map(str::to_string),
            base_url: target.base_url.map(str::to_string),
            credential: target.credential,
        });
        async move {
            if refused {
                Reply::failed(Failure::new(FailureKind::AuthInvalid, Scope::Credential), Some(401), Some(1), Some(401))
            } else {
                Reply::deliver(200, Some(1), "answer")
            }
        }
    }
}

pub(crate) struct World {
    pub(crate) mock: MockProvider,
    pub(crate) dir: tempfile::TempDir,
    pub(crate) vault: Arc<MemoryVault>,
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) engine: Arc<Engine>,
    pub(crate) router: Arc<Router>,
}

pub(crate) fn oauth() -> NewCredential {
    NewCredential { kind: Some("oauth".into()), client: None, expires_at: None }
}

/// An OpenAI connection `c` whose profiles are owned logins `labels`, each signed in by device
/// code against the mock (access tokens live an hour), verified.
pub(crate) async fn world(labels: &[&str]) -> Result<World, Box<dyn std::error::Error>> {
    let mock = MockProvider::start().await?;
    mock.oauth_configure(OauthConfig {
        key: KeyScript::new(["gpt-5"]),
        account_id: "acct-1".into(),
        plan: Some("pro".into()),
        token_prefix: CANARY.into(),
        ..Default::default()
    });
    let dir = tempfile::tempdir()?;
    let vault = Arc::new(MemoryVault::new());
    let clock = Arc::new(ManualClock(AtomicI64::new(T0)));
    let engine = Arc::new(Engine::open_with(dir.path(), vault.clone(), clock.clone()).await?);
    point_at(&engine, &mock).await?;
    let conn = NewConnection {
        slug: "c".into(),
        protocol: "openai".into(),
        base_url: format!("{}/v1", mock.base_url()),
        models: vec!["gpt-5".into()],
        ..Default::default()
    };
    engine.connection_add(conn, None).await?;
    for label in labels {
        let added = engine
            .profile_add_kind(
                "c",
                NewProfile { label: (*label).into(), weight: Some(1), priority: None },
                oauth(),
                None,
            )
            .await?;
        assert_eq!(added.credential_health.state.as_str(), "missing", "an owned login is created signed out");
        sign_in(&engine, label).await?;
    }
    engine.verify("c", None, false, &|_| {}).await?;
    let router = Arc::new(Router::start(engine.clone()));
    Ok(World { mock, dir, vault, clock, engine, router })
}

pub(crate) async fn point_at(engine: &Engine, mock: &MockProvider) -> TestResult {
    engine.set_user_setting(UserSetting::OauthIssuer, &mock.base_url()).await?;
    engine.set_user_setting(UserSetting::CodexBackendUrl, &format!("{}/backend-api/codex", mock.base_url())).await?;
    Ok(())
}

pub(crate) async fn sign_in(engine: &Engine, label: &str) -> TestResult {
    let code = engine.oauth_sign_in_start("c", label).await?;
    assert_eq!(code.user_code, "ABCD-1234", "the code the user types");
    for _ in 0..5 {
        if let Some(view) = engine.oauth_sign_in_poll("c", label, &code).await? {
            assert_eq!(view.credential_health.state.as_str(), "ok", "signed in");
            return Ok(());
        }
    }
    Err("the device code was never approved".into())
}

impl World {
    pub(crate) async fn route(
        &self,
        backend: &Backend,
    ) -> Result<Routed<&'static str, u16>, Box<dyn std::error::Error>> {
        self.route_turn(backend, "t").await
    }

    pub(crate) async fn route_turn(
        &self,
        backend: &Backend,
        turn: &str,
    ) -> Result<Routed<&'static str, u16>, Box<dyn std::error::Error>> {
        let request = RouteRequest::new(self.router.snapshot("c").await?, Some("gpt-5"), RequestKeys::turn(turn));
        Ok(self.router.route(request, backend).await?)
    }

    pub(crate) fn later(&self, ms: i64) {
        self.clock.0.fetch_add(ms, Ordering::SeqCst);
    }

    pub(crate) async fn ledger(&self) -> Result<Vec<switchyard_engine::AttemptView>, Box<dyn std::error::Error>> {
        self.router.flush().await;
        let mut rows = self.engine.attempts("c", 100).await?;
        rows.reverse();
        Ok(rows)
    }

    pub(crate) async fn login(
        &self,
        label: &str,
    ) -> Result<switchyard_engine::ProfileView, Box<dyn std::error::Error>> {
        Ok(self.engine.profile_show("c", label).await?)
    }

    /// Lets the snapshot reload (it is kept for a second of the engine clock).
    pub(crate) fn next_second(&self) {
        self.later(1_001);
    }
}

pub(crate) fn delivered<D, K>(r: &Routed<D, K>) -> bool {
    matches!(r, Routed::Delivered { .. })
}

pub(crate) fn db_bytes(dir: &Path) -> Vec<u8> {
    let mut all = std::fs::read(dir.join(DB_FILE)).unwrap_or_default();
    all.extend(std::fs::read(dir.join(format!("{DB_FILE}-wal"))).unwrap_or_default());
    all
}

pub(crate) fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn a_device_code_sign_in_keeps_its_tokens_in_the_keychain_item_only() -> TestResult {
    let w = world(&["pro"]).await?;
    let view = w.login("pro").await?;
    let login = view.login.clone().ok_or("an oauth profile shows its login")?;
    assert_eq!(login.account_id.as_deref(), Some("acct-1"), "the account comes from the id token");
    assert_eq!(login.plan.as_deref(), Some("pro"), "and the plan");
    assert_eq!(login.generation, 1, "the first sign-in");
    assert_eq!(view.credential_revision, 2, "a sign-in is a new credential (the signed-out profile was 1)");
    assert_eq!(w.vault.locators().len(), 1, "one keychain item per login");
    let backend = Backend::default();
    assert!(delivered(&w.route(&backend).await?), "the login serves");
    let sent = backend.sent();
    assert_eq!(sent[0].credential, CredentialUse::Login, "an owned login authenticates as a login");
    assert_eq!(sent[0].account.as_deref(), Some("acct-1"), "with its account");
    assert_eq!(
        sent[0].base_url.as_deref(),
        Some(format!("{}/backend-api/codex", w.mock.base_url()).as_str()),
        "to the ChatGPT backend"
    );
    assert!(sent[0].token.starts_with(CANARY), "the access token the mock issued");
    w.router.flush().await;
    let db = db_bytes(w.dir.path());
    for token in w.mock.oauth_access_tokens().iter().chain(w.mock.oauth_refresh_tokens().iter()) {
        assert!(!contains(&db, token), "no token in the database file");
    }
    assert!(!contains(&db, CANARY), "nor any part of one");
    let export = w.engine.export(None).await?;
    assert!(!export.contains(CANARY), "nor in an export");
    assert!(!format!("{view:?}").contains(CANARY), "nor in a view");
    Ok(())
}

#[tokio::test]
async fn a_token_near_its_expiry_is_renewed_once_for_many_concurrent_requests() -> TestResult {
    let w = world(&["pro"]).await?;
    w.mock.oauth_configure(OauthConfig {
        key: KeyScript::new(["gpt-5"]),
        account_id: "acct-1".into(),
        token_prefix: CANARY.into(),
        refresh_delay_ms: Some(150),
        ..Default::default()
    });
    let first = w.mock.oauth_access_tokens();
    let before = w.login("pro").await?.credential_revision;
    w.later(HOUR - 2 * 60_000);
    let backend = Arc::new(Backend::default());
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let (w_router, b) = (w.router.clone(), backend.clone());
        let snapshot = w.router.snapshot("c").await?;
        tasks.push(tokio::spawn(async move {
            let request = RouteRequest::new(snapshot, Some("gpt-5"), RequestKeys::turn("t"));
            w_router.route(request, b.as_ref()).await.map(|r| delivered(&r))
        }));
    }
    for t in tasks {
        assert!(t.await??, "every request is served");
    }
    assert_eq!(w.mock.oauth_refresh_calls(), 1, "sixteen requests near the expiry renew the login once");
    assert_eq!(w.engine.login_refresh_calls(), 1, "and this engine made one call");
    let tokens = w.mock.oauth_access_tokens();
    assert!(
        backend.sent().iter().all(|s| s.token == tokens[1] && s.token != first[0]),
        "every attempt used the new token"
    );
    let view = w.login("pro").await?;
    assert_eq!(view.credential_revision, before, "a refresh is not a rotation");
    assert_eq!(view.login.map(|l| l.generation), Some(1), "nor a new sign-in");
    Ok(())
}

#[tokio::test]
async fn a_401_renews_once_and_retries_the_same_profile() -> TestResult {
    let w = world(&["pro", "spare"]).await?;
    w.engine.routing_activate("c", switchyard_engine::Strategy::Priority, "test").await?;
    let backend = Backend::default();
    backend.revoke(w.mock.oauth_access_tokens());
    assert!(delivered(&w.route(&backend).await?), "served after the renewal");
    let sent = backend.sent();
    assert_eq!(sent.len(), 2, "the refused attempt and one retry");
    assert_eq!(sent[0].profile, sent[1].profile, "the retry is on the same profile, not a failover");
    assert_ne!(sent[0].token, sent[1].token, "with the renewed token");
    assert_eq!(w.mock.oauth_refresh_calls(), 1, "one renewal");
    let rows = w.ledger().await?;
    let kinds: Vec<Option<&str>> = rows.iter().map(|r| r.failure_kind.as_deref()).collect();
    assert_eq!(kinds, vec![Some("auth_invalid"), None], "both attempts are in the ledger");
    // No circuit opened for a token that was only stale: the next request goes straight there.
    let again = Backend::default();
    w.next_second();
    assert!(delivered(&w.route(&again).await?), "the profile still serves");
    assert_eq!(again.sent()[0].profile, sent[0].profile, "no failover, no probe");
    Ok(())
}

#[tokio::test]
async fn two_concurrent_401s_make_one_refresh() -> TestResult {
    let w = world(&["pro"]).await?;
    w.mock.oauth_configure(OauthConfig {
        key: KeyScript::new(["gpt-5"]),
        account_id: "acct-1".into(),
        token_prefix: CANARY.into(),
        refresh_delay_ms: Some(200),
        ..Default::default()
    });
    let backend = Arc::new(Backend::default());
    backend.revoke(w.mock.oauth_access_tokens());
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let (router, b) = (w.router.clone(), backend.clone());
        let snapshot = w.router.snapshot("c").await?;
        tasks.push(tokio::spawn(async move {
            let request = RouteRequest::new(snapshot, Some("gpt-5"), RequestKeys::turn("t"));
            router.route(request, b.as_ref()).await.map(|r| delivered(&r))
        }));
    }
    for t in tasks {
        assert!(t.await??, "both requests are served");
    }
    assert_eq!(w.mock.oauth_refresh_calls(), 1, "two concurrent 401s merge into one refresh");
    assert_eq!(backend.sent().len(), 4, "two refused attempts, two retries");
    Ok(())
}

#[tokio::test]
async fn a_refresh_done_by_another_process_is_adopted_not_repeated() -> TestResult {
    let w = world(&["pro"]).await?;
    // A second engine on the same data dir and keychain: another process.
    let other = Arc::new(Engine::open_with(w.dir.path(), w.vault.clone(), w.clock.clone()).await?);
    let other_router = Arc::new(Router::start(other.clone()));
    let backend = Backend::default();
    assert!(delivered(&w.route(&backend).await?), "this process serves with the first token");
    // The other process finds the token refused and renews it.
    let old = w.mock.oauth_access_tokens();
    backend.revoke(old.clone());
    let request = RouteRequest::new(other_router.snapshot("c").await?, Some("gpt-5"), RequestKeys::turn("t"));
    assert!(delivered(&other_router.route(request, &backend).await?), "the other process renews and serves");
    assert_eq!(w.mock.oauth_refresh_calls(), 1, "one refresh so far");
    // This process still holds a snapshot from before; its next attempt reads the item fresh.
    assert!(delivered(&w.route(&backend).await?), "this process serves with the adopted token");
    let sent = backend.sent();
    let last = sent.last().ok_or("an attempt")?;
    assert!(!old.contains(&last.token), "the newest token, read from the keychain");
    assert_eq!(w.mock.oauth_refresh_calls(), 1, "adopted, never refreshed twice (the old refresh token is spent)");
    Ok(())
}

#[tokio::test]
async fn invalid_grant_expires_the_login_after_one_ledger_row_and_nothing_is_sent_to_it_afterwards() -> TestResult {
    let w = world(&["pro", "spare"]).await?;
    w.engine.routing_activate("c", switchyard_engine::Strategy::Priority, "test").await?;
    let pro_id = w.login("pro").await?.id;
    let backend = Backend::default();
    // Only pro's token is refused; its refresh token is refused too.
    backend.revoke(w.mock.oauth_access_tokens().into_iter().take(1));
    w.mock.oauth_fail_next_refresh(RefreshFault::InvalidGrant);
    assert!(delivered(&w.route(&backend).await?), "the turn fails over to the spare");
    let view = w.login("pro").await?;
    assert_eq!(view.credential_health.state.as_str(), "expired", "a refused refresh expires the login");
    assert_eq!(view.login.and_then(|l| l.last_refresh).as_deref(), Some("rejected"), "and says why");
    for _ in 0..3 {
        w.next_second();
        assert!(delivered(&w.route(&backend).await?), "the spare serves");
    }
    let rows = w.ledger().await?;
    let on_pro: Vec<_> = rows.iter().filter(|r| r.profile == pro_id).collect();
    assert_eq!(on_pro.len(), 1, "one ledger row on the expired login, none afterwards");
    assert_eq!(on_pro[0].failure_kind.as_deref(), Some("auth_invalid"), "the refused attempt");
    assert_eq!(w.mock.oauth_refresh_calls(), 1, "no refresh storm: the rejection is final until a new sign-in");
    // Signing in again brings it back with its id.
    sign_in(&w.engine, "pro").await?;
    let back = w.login("pro").await?;
    assert_eq!((back.id.as_str(), back.credential_health.state.as_str()), (pro_id.as_str(), "ok"), "same id, ok");
    assert_eq!(back.login.map(|l| l.generation), Some(2), "a new generation");
    Ok(())
}

/// The mock's reuse detection (openai/codex #24365): a refresh token the issuer has already seen
/// used is refused with `refresh_token_reused` (401, the error under `error.code`), which is as
/// final as `invalid_grant`: the login expires, once, with no refresh storm.
#[tokio::test]
async fn a_refresh_token_already_used_elsewhere_is_refused_as_reused_and_expires_the_login() -> TestResult {
    let w = world(&["pro"]).await?;
    let backend = Backend::default();
    w.mock.oauth_revoke_refresh_tokens();
    w.later(2 * HOUR);
    let _ = w.route(&backend).await?;
    let view = w.login("pro").await?;
    assert_eq!(view.credential_health.state.as_str(), "expired", "a reused refresh token expires the login");
    assert_eq!(view.login.and_then(|l| l.last_refresh).as_deref(), Some("rejected"), "and says why");
    w.later(60_000);
    let _ = w.route(&backend).await?;
    assert_eq!(w.mock.oauth_refresh_calls(), 1, "one refused refresh, never repeated");
    Ok(())
}

#[tokio::test]
async fn a_429_blocks_until_retry_after_and_a_5xx_is_never_terminal() -> TestResult {
    let w = world(&["pro"]).await?;
    let backend = Backend::default();
    w.later(HOUR - 60_000);
    w.mock.oauth_fail_next_refresh(RefreshFault::RateLimited { retry_after_secs: 7 });
    assert!(delivered(&w.route(&backend).await?), "the old token still works until its expiry");
    let view = w.login("pro").await?;
    assert_eq!(view.credential_health.state.as_str(), "ok", "a blocked refresh is not an expired login");
    let login = view.login.ok_or("login")?;
    assert_eq!(login.last_refresh.as_deref(), Some("failed"), "the refresh failed");
    assert!(login.blocked_until.is_some(), "blocked until Retry-After");
    w.later(3_000);
    assert!(delivered(&w.route(&backend).await?), "still served");
    assert_eq!(w.mock.oauth_refresh_calls(), 1, "no refresh before Retry-After");
    w.later(5_000);
    w.mock.oauth_fail_next_refresh(RefreshFault::ServerError);
    assert!(delivered(&w.route(&backend).await?), "served through a 5xx refresh");
    assert_eq!(w.mock.oauth_refresh_calls(), 2, "tried again after the block");
    assert_eq!(w.login("pro").await?.credential_health.state.as_str(), "ok", "a 5xx is transient");
    w.later(31_000);
    assert!(delivered(&w.route(&backend).await?), "served");
    assert_eq!(w.mock.oauth_refresh_calls(), 3, "the backoff ended: renewed");
    let login = w.login("pro").await?.login.ok_or("login")?;
    assert_eq!((login.last_refresh.as_deref(), login.blocked_until), (Some("succeeded"), None), "clean again");
    Ok(())
}

#[tokio::test]
async fn a_stale_but_refreshable_token_shows_ok_and_is_renewed_at_its_next_use() -> TestResult {
    let w = world(&["pro"]).await?;
    w.later(2 * HOUR);
    let view = w.login("pro").await?;
    assert_eq!(view.credential_health.state.as_str(), "ok", "lapsed but refreshable is ok");
    assert!(view.credential_health.reason.is_some(), "with a reason");
    let backend = Backend::default();
    assert!(delivered(&w.route(&backend).await?), "renewed before use and served");
    assert_eq!(w.mock.oauth_refresh_calls(), 1, "one renewal");
    assert_eq!(backend.sent().len(), 1, "one attempt: the lapsed token was never sent");
    Ok(())
}

#[tokio::test]
async fn a_crash_between_the_keychain_write_and_the_row_write_recovers_to_a_usable_login() -> TestResult {
    let w = world(&["pro"]).await?;
    w.later(HOUR - 60_000);
    w.engine.arm_fault(Some(FaultPoint::RefreshAfterKeychainWrite));
    let backend = Backend::default();
    assert!(w.route(&backend).await.is_err(), "the process dies after writing the keychain item");
    assert_eq!(w.mock.oauth_refresh_calls(), 1, "the refresh happened");
    let stale = w.login("pro").await?.credential_health.expires_at;
    // A new process on the same data dir and keychain.
    let restarted = Arc::new(Engine::open_with(w.dir.path(), w.vault.clone(), w.clock.clone()).await?);
    let router = Arc::new(Router::start(restarted.clone()));
    let request = RouteRequest::new(router.snapshot("c").await?, Some("gpt-5"), RequestKeys::turn("t"));
    assert!(delivered(&router.route(request, &backend).await?), "the login serves after the restart");
    assert_eq!(w.mock.oauth_refresh_calls(), 1, "with the tokens the crashed refresh saved: no second refresh");
    let tokens = w.mock.oauth_access_tokens();
    assert_eq!(backend.sent().last().map(|s| s.token.clone()), tokens.last().cloned(), "the new access token");
    let fresh = restarted.profile_show("c", "pro").await?.credential_health.expires_at;
    assert_ne!(fresh, stale, "the row was brought up to the keychain item");
    Ok(())
}

#[tokio::test]
async fn evidence_stays_current_across_ten_refreshes_and_balanced_routing_never_suspends() -> TestResult {
    let w = world(&["one", "two"]).await?;
    w.engine.routing_activate("c", switchyard_engine::Strategy::Balanced, "test").await?;
    let backend = Backend::default();
    for round in 1..=10 {
        w.later(HOUR);
        for turn in 0..2 {
            assert!(delivered(&w.route_turn(&backend, &format!("{round}-{turn}")).await?), "round {round}: served");
        }
        let status = w.engine.routing_status("c").await?;
        assert_eq!(status.state.as_str(), "active", "round {round}: balanced routing never suspends");
        assert!(status.gates.ok, "round {round}: the gates hold");
        assert!(
            status.profiles.iter().all(|p| p.evidence.as_str() == "current"),
            "round {round}: evidence stays current across refreshes"
        );
    }
    assert_eq!(w.mock.oauth_refresh_calls(), 20, "each login renewed once an hour");
    Ok(())
}

#[tokio::test]
async fn oauth_is_for_openai_connections_only_and_takes_no_secret() -> TestResult {
    let w = world(&[]).await?;
    let anthropic = NewConnection {
        slug: "a".into(),
        protocol: "anthropic".into(),
        base_url: "http://127.0.0.1:9".into(),
        models: vec!["m".into()],
        ..Default::default()
    };
    w.engine.connection_add(anthropic, None).await?;
    let p = |l: &str| NewProfile { label: l.into(), weight: Some(1), priority: None };
    let refused = w.engine.profile_add_kind("a", p("x"), oauth(), None).await;
    assert_eq!(refused.map(|_| ()).map_err(|e| e.code().as_str()), Err("invalid"), "no owned login for Claude");
    let secret = w.engine.profile_add_kind("c", p("y"), oauth(), Some(switchyard_engine::Secret::new("sk-x"))).await;
    assert_eq!(secret.map(|_| ()).map_err(|e| e.code().as_str()), Err("invalid"), "an owned login takes no secret");
    Ok(())
}

#[tokio::test]
async fn a_front_end_without_a_terminal_signs_in_with_a_code_the_engine_holds() -> TestResult {
    let w = world(&[]).await?;
    let p = NewProfile { label: "desk".into(), weight: Some(1), priority: None };
    w.engine.profile_add_kind("c", p, oauth(), None).await?;
    let early = w.engine.oauth_device_check("c", "desk").await;
    assert_eq!(early.map(|_| ()).map_err(|e| e.code().as_str()), Err("precondition"), "nothing started yet");
    let code = w.engine.oauth_device_begin("c", "desk").await?;
    assert_eq!((code.user_code.as_str(), code.interval_secs), ("ABCD-1234", 1), "the code and its interval to show");
    let pending = w.engine.oauth_device_check("c", "desk").await;
    assert_eq!(
        pending.map(|_| ()).map_err(|e| e.code().as_str()),
        Err("precondition"),
        "not approved at the first poll"
    );
    let view = w.engine.oauth_device_check("c", "desk").await?;
    assert_eq!(view.credential_health.state.as_str(), "ok", "approved at the second: signed in");
    assert!(!format!("{code:?}{view:?}").contains(CANARY), "what the window gets holds no token");
    let again = w.engine.oauth_device_check("c", "desk").await;
    assert_eq!(again.map(|_| ()).map_err(|e| e.code().as_str()), Err("precondition"), "the code is used up");
    Ok(())
}

#[tokio::test]
async fn an_export_carries_the_profile_without_its_login_and_it_arrives_missing() -> TestResult {
    let w = world(&["pro"]).await?;
    let export = w.engine.export(None).await?;
    assert!(!export.contains(CANARY), "no token in the export");
    let other = tempfile::tempdir()?;
    let target = Engine::open_with(other.path(), Arc::new(MemoryVault::new()), w.clock.clone()).await?;
    target.import(&export, false, switchyard_engine::Conflict::Rename).await?;
    let arrived = target.profile_show("c", "pro").await?;
    assert_eq!(arrived.kind.as_str(), "oauth", "the kind travels");
    assert_eq!(arrived.credential_health.state.as_str(), "missing", "the login does not: sign in again");
    assert_eq!(arrived.login.map(|l| (l.account_id, l.generation)), Some((None, 0)), "no account, never signed in");
    Ok(())
}

#[tokio::test]
async fn lock_files_go_with_their_profile_and_stale_ones_are_swept_at_start() -> TestResult {
    let w = world(&["pro", "spare"]).await?;
    w.engine.routing_activate("c", switchyard_engine::Strategy::Priority, "test").await?;
    let backend = Backend::default();
    backend.revoke(w.mock.oauth_access_tokens());
    assert!(delivered(&w.route(&backend).await?), "a renewal creates the lock file");
    let logins = w.dir.path().join(switchyard_engine::LOGINS_DIR);
    let pro = w.login("pro").await?.id;
    assert!(logins.join(format!("{pro}.lock")).is_file(), "pro's lock file exists after its refresh");
    std::fs::write(logins.join("p_gone.lock"), "")?;
    let reopened = Engine::open_with(w.dir.path(), w.vault.clone(), w.clock.clone()).await?;
    assert!(!logins.join("p_gone.lock").exists(), "a removed profile's lock file is swept at start");
    assert!(logins.join(format!("{pro}.lock")).is_file(), "a live profile's stays");
    drop(reopened);
    // pro is the primary (added first): promote the spare, then remove pro.
    w.engine
        .profile_edit("c", "spare", switchyard_engine::ProfileEdit { make_primary: true, ..Default::default() })
        .await?;
    let pro_removed = w.engine.profile_remove("c", "pro").await?;
    assert_eq!(pro_removed.profiles_removed, 1, "pro removed");
    assert!(!logins.join(format!("{pro}.lock")).exists(), "its lock file went with it");
    Ok(())
}

#[tokio::test]
async fn a_401_while_the_token_endpoint_asks_to_wait_cools_the_login_until_then_not_until_reverified() -> TestResult {
    let w = world(&["pro", "spare"]).await?;
    w.engine.routing_activate("c", switchyard_engine::Strategy::Priority, "test").await?;
    let pro = w.login("pro").await?.id;
    let backend = Backend::default();
    backend.revoke(w.mock.oauth_access_tokens().into_iter().take(1));
    w.mock.oauth_fail_next_refresh(RefreshFault::RateLimited { retry_after_secs: 20 });
    assert!(delivered(&w.route(&backend).await?), "the turn fails over to the spare");
    let status = w.engine.routing_status("c").await?;
    let health = status.profiles.iter().find(|p| p.id == pro).map(|p| p.health.clone()).unwrap_or_default();
    let until = health.first().and_then(|h| h.until.clone());
    assert!(until.is_some(), "pro cools until a known time (the Retry-After), not until re-verified: {health:?}");
    assert_eq!(
        w.login("pro").await?.credential_health.state.as_str(),
        "ok",
        "a blocked renewal is not an expired login"
    );
    w.later(21_000);
    // A new turn (the first one stays bound to the spare it failed over to); pro's old token is
    // still refused, and now its renewal may be tried.
    assert!(delivered(&w.route_turn(&backend, "t2").await?), "served");
    let sent = backend.sent();
    assert_eq!(sent.last().map(|s| s.profile.clone()), Some(pro.clone()), "pro serves again once the block ended");
    assert_eq!(w.mock.oauth_refresh_calls(), 2, "the blocked renewal, then the one that worked");
    Ok(())
}
