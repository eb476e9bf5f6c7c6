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

const CANARY: &str = "oauthCANARY4b1d-";
const T0: i64 = 1_800_000_000_000;
const HOUR: i64 = 3_600_000;

/// What one attempt carried.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Sent {
    profile: String,
    token: String,
    account: Option<String>,
    base_url: Option<String>,
    credential: CredentialUse,
}

/// The relay's stand-in: 401 for revoked access tokens, 200 otherwise.
#[derive(Default)]
struct Backend {
    revoked: Mutex<HashSet<String>>,
    sent: Mutex<Vec<Sent>>,
}

impl Backend {
    fn revoke(&self, tokens: impl IntoIterator<Item = String>) {
        self.revoked.lock().unwrap().extend(tokens);
    }

    fn sent(&self) -> Vec<Sent> {
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

struct World {
    mock: MockProvider,
    dir: tempfile::TempDir,
    vault: Arc<MemoryVault>,
    clock: Arc<ManualClock>,
    engine: Arc<Engine>,
    router: Arc<Router>,
}

fn oauth() -> NewCredential {
    NewCredential { kind: Some("oauth".into()), client: None, expires_at: None }
}

/// An OpenAI connection `c` whose profiles are owned logins `labels`, each signed in by device
/// code against the mock (access tokens live an hour), verified.
async fn world(labels: &[&str]) -> Result<World, Box<dyn std::error::Error>> {
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

async fn point_at(engine: &Engine, mock: &MockProvider) -> TestResult {
    engine.set_user_setting(UserSetting::OauthIssuer, &mock.base_url()).await?;
    engine.set_user_setting(UserSetting::CodexBackendUrl, &format!("{}/backend-api/codex", mock.base_url())).await?;
    Ok(())
}

async fn sign_in(engine: &Engine, label: &str) -> TestResult {
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
    async fn route(&self, backend: &Backend) -> Result<Routed<&'static str, u16>, Box<dyn std::error::Error>> {
        self.route_turn(backend, "t").await
    }

    async fn route_turn(
        &self,
        backend: &Backend,
        turn: &str,
    ) -> Result<Routed<&'static str, u16>, Box<dyn std::error::Error>> {
        let request = RouteRequest::new(self.router.snapshot("c").await?, Some("gpt-5"), RequestKeys::turn(turn));
        Ok(self.router.route(request, backend).await?)
    }

    fn later(&self, ms: i64) {
        self.clock.0.fetch_add(ms, Ordering::SeqCst);
    }

    async fn ledger(&self) -> Result<Vec<switchyard_engine::AttemptView>, Box<dyn std::error::Error>> {
        self.router.flush().await;
        let mut rows = self.engine.attempts("c", 100).await?;
        rows.reverse();
        Ok(rows)
    }

    async fn login(&self, label: &str) -> Result<switchyard_engine::ProfileView, Box<dyn std::error::Error>> {
        Ok(self.engine.profile_show("c", label).await?)
    }

    /// Lets the snapshot reload (it is kept for a second of the engine clock).
    fn next_second(&self) {
        self.later(1_001);
    }
}

fn delivered<D, K>(r: &Routed<D, K>) -> bool {
    matches!(r, Routed::Delivered { .. })
}

fn db_bytes(dir: &Path) -> Vec<u8> {
    let mut all = std::fs::read(dir.join(DB_FILE)).unwrap_or_default();
    all.extend(std::fs::read(dir.join(format!("{DB_FILE}-wal"))).unwrap_or_default());
    all
}

fn contains(haystack: &[u8], needle: &str) -> bool {
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

#[tokio::test]
async fn a_browser_sign_in_refuses_a_wrong_state_and_keeps_its_tokens_in_the_keychain_only() -> TestResult {
    let w = world(&[]).await?;
    let p = NewProfile { label: "web".into(), weight: Some(1), priority: None };
    w.engine.profile_add_kind("c", p, oauth(), None).await?;
    let early = w.engine.oauth_browser_wait("c", "web").await;
    assert_eq!(early.map(|_| ()).map_err(|e| e.code().as_str()), Err("precondition"), "nothing started yet");

    // Port 0: the mock accepts any localhost redirect; the real issuer only Codex's 1455.
    let begun = w.engine.oauth_browser_begin_on("c", "web", 0).await?;
    let url = reqwest::Url::parse(&begun.authorize_url)?;
    assert!(begun.authorize_url.starts_with(&format!("{}/oauth/authorize?", w.mock.base_url())), "the issuer's page");
    let q: std::collections::HashMap<String, String> = url.query_pairs().into_owned().collect();
    let field = |k: &str| q.get(k).map(String::as_str).unwrap_or_default();
    assert_eq!(field("response_type"), "code", "an authorization code");
    assert_eq!(field("client_id"), "app_EMoamEEZ73f0CkXaXp7hrann", "as Codex");
    assert_eq!(field("scope"), "openid profile email offline_access", "offline_access brings the refresh token");
    assert_eq!(field("code_challenge_method"), "S256", "PKCE S256");
    assert_eq!(field("code_challenge").len(), 43, "base64url of a SHA-256");
    assert!(field("state").len() >= 32, "an unguessable state");
    for extra in ["id_token_add_organizations", "codex_cli_simplified_flow"] {
        assert_eq!(field(extra), "true", "Codex's extra parameter {extra}");
    }
    assert_eq!(field("originator"), "codex_cli_rs", "Codex's originator");
    let redirect = field("redirect_uri").to_string();
    assert!(redirect.starts_with("http://localhost:") && redirect.ends_with("/auth/callback"), "Codex's callback path");

    let http = reqwest::Client::new();
    let forged = http.get(format!("{redirect}?code=code-pkce-999&state=not-this-one")).send().await?;
    assert_eq!(forged.status().as_u16(), 400, "a callback with another state is refused");

    // The mock checks the verifier against the challenge: a code asked with one challenge is not
    // exchanged with another verifier (and is used up).
    let no_follow = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build()?;
    let challenge = "E9Melhoa2OwvFrEMTJguCjHmZdDy5FITBuVm5G-cM";
    let asked = no_follow
        .get(format!("{}/oauth/authorize", w.mock.base_url()))
        .query(&[
            ("response_type", "code"),
            ("client_id", "x"),
            ("redirect_uri", "http://localhost:9/auth/callback"),
            ("code_challenge", challenge),
            ("code_challenge_method", "S256"),
            ("state", "s"),
        ])
        .send()
        .await?;
    assert_eq!(asked.status().as_u16(), 302, "the mock approves at once");
    let location = asked.headers().get("location").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let code = reqwest::Url::parse(&location)?
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .ok_or("a code in the redirect")?;
    let exchange = |verifier: &'static str| {
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", "http://localhost:9/auth/callback"),
            ("client_id", "x"),
            ("code_verifier", verifier),
        ];
        http.post(format!("{}/oauth/token", w.mock.base_url())).form(&form).send()
    };
    assert_eq!(exchange("a-wrong-verifier").await?.status().as_u16(), 400, "a wrong verifier is refused");

    // The user approves: the browser follows the issuer's redirect to the listener.
    let page = http.get(&begun.authorize_url).send().await?;
    assert_eq!(page.status().as_u16(), 200, "the callback page says signed in");
    let view = w.engine.oauth_browser_wait("c", "web").await?;
    assert_eq!(view.credential_health.state.as_str(), "ok", "signed in");
    let login = view.login.clone().ok_or("an oauth profile shows its login")?;
    assert_eq!(login.generation, 1, "the first sign-in: a new generation");
    assert_eq!(login.account_id.as_deref(), Some("acct-1"), "the account from the id token");
    assert_eq!(view.credential_revision, 2, "a sign-in is a new credential");
    assert_eq!(w.vault.locators().len(), 1, "one keychain item");
    let again = w.engine.oauth_browser_wait("c", "web").await;
    assert_eq!(again.map(|_| ()).map_err(|e| e.code().as_str()), Err("precondition"), "the sign-in is used up");

    w.router.flush().await;
    let db = db_bytes(w.dir.path());
    assert!(!w.mock.oauth_access_tokens().is_empty(), "the mock issued tokens");
    for token in w.mock.oauth_access_tokens().iter().chain(w.mock.oauth_refresh_tokens().iter()) {
        assert!(!contains(&db, token), "no token in the database file");
    }
    assert!(!contains(&db, CANARY), "nor any part of one");
    assert!(!format!("{begun:?}{view:?}").contains(CANARY), "nor in what the window gets");
    Ok(())
}

/// Issue 39: changing `oauth-token-url` or `codex-backend-url` sent the live refresh or access
/// token to the new server without a word. A login is bound to the endpoints it was signed in
/// with: a token endpoint or a backend a setting names since is refused in words (503
/// `login_endpoints_changed`, the setting and the way back), and neither token is sent there.
#[tokio::test]
async fn a_changed_endpoint_setting_never_receives_a_login_s_tokens() -> TestResult {
    let w = world(&["pro"]).await?;
    let elsewhere = MockProvider::start().await?;
    let backend = Backend::default();

    // The token endpoint moves while the access token is due for renewal.
    w.engine.set_user_setting(UserSetting::OauthTokenUrl, &format!("{}/oauth/token", elsewhere.base_url())).await?;
    w.later(HOUR - 60_000);
    w.next_second();
    let refused = w.route(&backend).await?;
    assert_eq!(elsewhere.oauth_refresh_calls(), 0, "the refresh token never went to the new token endpoint");
    assert_eq!(w.mock.oauth_refresh_calls(), 0, "nor was it renewed behind the setting's back");
    match &refused {
        Routed::Unavailable { status, message, why, .. } => {
            assert_eq!((*status, why.as_str()), (503, "login_endpoints_changed"), "{message}");
            assert!(message.contains("oauth-token-url"), "names the setting: {message}");
            assert!(message.contains("profile login c pro"), "and the sign-in that rebinds it: {message}");
            assert!(!message.contains(CANARY), "never a token: {message}");
        }
        other => return Err(format!("a refusal in words, not {other:?}").into()),
    }
    assert!(backend.sent().is_empty(), "no attempt was made");

    // Set back, it renews where it was signed in; then the backend moves.
    w.engine.set_user_setting(UserSetting::OauthTokenUrl, "default").await?;
    w.engine
        .set_user_setting(UserSetting::CodexBackendUrl, &format!("{}/backend-api/codex", elsewhere.base_url()))
        .await?;
    // A router started now reads the setting at once (a running one within its snapshot's second).
    let backend = &backend;
    let fresh = |router: Arc<Router>, turn: &'static str| async move {
        let request = RouteRequest::new(router.snapshot("c").await?, Some("gpt-5"), RequestKeys::turn(turn));
        Ok::<_, Box<dyn std::error::Error>>(router.route(request, backend).await?)
    };
    let refused = fresh(Arc::new(Router::start(w.engine.clone())), "t2").await?;
    assert!(
        matches!(&refused, Routed::Unavailable { why, message, .. }
            if why.as_str() == "login_endpoints_changed" && message.contains("codex-backend-url")),
        "the backend move is refused in words: {refused:?}"
    );
    let to_elsewhere =
        backend.sent().iter().any(|s| s.base_url.as_deref().unwrap_or_default().starts_with(&elsewhere.base_url()));
    assert!(!to_elsewhere, "the access token never went to the new backend: {:?}", backend.sent());
    assert_eq!(w.mock.oauth_refresh_calls(), 1, "renewed at its own token endpoint once set back");
    point_at(&w.engine, &w.mock).await?;
    assert!(delivered(&fresh(Arc::new(Router::start(w.engine.clone())), "t3").await?), "set back, it serves");
    Ok(())
}

/// Issue 39: the issuer's `user_code` was handed to the front ends raw (escape sequences reached
/// the terminal). A code that is not plain text is refused, never shown.
#[tokio::test]
async fn a_device_code_that_is_not_plain_text_is_refused_not_shown() -> TestResult {
    let w = world(&[]).await?;
    w.mock.oauth_configure(OauthConfig {
        key: KeyScript::new(["gpt-5"]),
        account_id: "acct-1".into(),
        user_code: Some("\u{1b}]0;owned\u{7}\u{1b}[2JABCD".into()),
        ..Default::default()
    });
    let p = NewProfile { label: "pro".into(), weight: Some(1), priority: None };
    w.engine.profile_add_kind("c", p, oauth(), None).await?;
    let code = w.engine.oauth_sign_in_start("c", "pro").await;
    match code {
        Ok(c) => return Err(format!("handed to a front end: {c:?}").into()),
        Err(e) => {
            assert_eq!(e.code().as_str(), "precondition", "{e}");
            assert!(!e.to_string().contains('\u{1b}'), "the refusal does not carry it either: {e}");
        }
    }
    Ok(())
}

/// Issue 39: the browser callback served one connection at a time (an idle local connection
/// stalled it for 5 s) and listened on 127.0.0.1 only while the redirect names `localhost`
/// (which may resolve to [::1], free for any local program to take). Both loopbacks are bound on
/// the one port and each connection is answered on its own.
#[tokio::test]
async fn the_browser_callback_answers_beside_an_idle_connection_and_on_ipv6_loopback() -> TestResult {
    let w = world(&[]).await?;
    let p = NewProfile { label: "web".into(), weight: Some(1), priority: None };
    w.engine.profile_add_kind("c", p, oauth(), None).await?;
    let begun = w.engine.oauth_browser_begin_on("c", "web", 0).await?;
    let redirect = reqwest::Url::parse(&begun.authorize_url)?
        .query_pairs()
        .find(|(k, _)| k == "redirect_uri")
        .map(|(_, v)| v.into_owned())
        .ok_or("a redirect_uri")?;
    let port = reqwest::Url::parse(&redirect)?.port().ok_or("a port")?;
    // A local connection that sends nothing (a browser's pre-connect, another program).
    let _idle = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    let http = reqwest::Client::builder().timeout(std::time::Duration::from_secs(2)).build()?;
    if std::net::TcpListener::bind(("::1", 0)).is_ok() {
        let wrong = http.get(format!("http://[::1]:{port}/auth/callback?code=x&state=not-this-one")).send().await?;
        assert_eq!(wrong.status().as_u16(), 400, "[::1], where localhost may resolve first, is this sign-in's too");
    }
    let page = http.get(&begun.authorize_url).send().await?;
    assert_eq!(page.status().as_u16(), 200, "the callback is answered while the idle connection waits");
    let view = w.engine.oauth_browser_wait("c", "web").await?;
    assert_eq!(view.credential_health.state.as_str(), "ok", "signed in");
    Ok(())
}
