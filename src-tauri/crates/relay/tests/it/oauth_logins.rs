//! Owned logins through the relay (docs/design.md, section 14; invariants 21 and 22), against the
//! mock provider's fake authorization server and its ChatGPT backend route, over real HTTP, on a
//! manual clock and the memory vault:
//! - a request for an `oauth` profile goes to `<backend>/responses` with the login's bearer and
//!   `chatgpt-account-id`, the client's own headers (originator, user agent, session) unchanged,
//!   and serves Codex and an SDK alike (OpenAI allows its sign-in in other tools);
//! - the access token is renewed before its expiry, and the old one is not sent after that;
//! - a 401 renews once and retries the same profile; concurrent 401s make one refresh;
//! - a refused refresh expires the login (credential health, routing status's reason), the turn
//!   fails over, and nothing is sent on it afterwards;
//! - Codex's usage windows (`x-codex-*`) on an owned login's answers reach the quota view, and a
//!   spent window (`usage_limit_reached`) cools the login until the body's reset;
//! - tokens (canary) appear in no database file, attempt row, export, relay answer or error.

use std::sync::Arc;

use serde_json::{json, Value};
use switchyard_engine::{Engine, NewConnection, NewCredential, NewProfile, Router, UserSetting};
use switchyard_mock_provider::{
    Behaviour, KeyScript, LimitWindow, MockProvider, OauthConfig, RefreshFault, ResetAt, Subscription, UsageWindow,
};
use switchyard_vault::MemoryVault;

use crate::common::clock::{ManualClock, JAN_2025};
use crate::common::TestResult;

const CANARY: &str = "CANARY-oauth-6d2f9a-";
const HOUR: i64 = 3_600_000;
const BACKEND_PATH: &str = "/backend-api/codex/responses";

struct World {
    mock: MockProvider,
    router: Arc<Router>,
    clock: Arc<ManualClock>,
    engine: Arc<Engine>,
    url: String,
    token: String,
    http: reqwest::Client,
    dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

fn config(delay_ms: Option<u64>) -> OauthConfig {
    config_for(KeyScript::new(["gpt-5"]), delay_ms)
}

fn config_for(key: KeyScript, delay_ms: Option<u64>) -> OauthConfig {
    OauthConfig {
        key,
        account_id: "acct-7".into(),
        plan: Some("plus".into()),
        token_prefix: CANARY.into(),
        refresh_delay_ms: delay_ms,
        ..Default::default()
    }
}

/// A relay over an OpenAI connection `c` whose profiles are owned logins `labels` (signed in by
/// device code against the mock), verified, in `mode`.
async fn world(labels: &[&str], mode: Option<&str>) -> Result<World, Box<dyn std::error::Error>> {
    let mock = MockProvider::start().await?;
    mock.oauth_configure(config(None));
    let dir = tempfile::tempdir()?;
    let clock = ManualClock::new();
    let engine = Arc::new(Engine::open_with(dir.path(), Arc::new(MemoryVault::new()), clock.clone()).await?);
    engine.set_user_setting(UserSetting::OauthIssuer, &mock.base_url()).await?;
    engine.set_user_setting(UserSetting::CodexBackendUrl, &format!("{}/backend-api/codex", mock.base_url())).await?;
    let conn = NewConnection {
        slug: "c".into(),
        protocol: "openai".into(),
        base_url: format!("{}/v1", mock.base_url()),
        models: vec!["gpt-5".into()],
        ..Default::default()
    };
    engine.connection_add(conn, None).await?;
    for label in labels {
        let kind = NewCredential { kind: Some("oauth".into()), client: None, expires_at: None };
        let new = NewProfile { label: (*label).into(), weight: Some(1), priority: None };
        engine.profile_add_kind("c", new, kind, None).await?;
        let code = engine.oauth_sign_in_start("c", label).await?;
        let mut signed = false;
        for _ in 0..5 {
            if engine.oauth_sign_in_poll("c", label, &code).await?.is_some() {
                signed = true;
                break;
            }
        }
        assert!(signed, "{label} signs in");
    }
    engine.verify("c", None, false, &|_| {}).await?;
    if let Some(m) = mode {
        engine.routing_activate("c", m.parse()?, "test").await?;
    }
    mock.reset_counts();
    let token = engine.relay_token(false).await?;
    let token_text = token.expose().to_string();
    let router = Arc::new(Router::start(engine.clone()));
    let (url, stop, task) = crate::common::serve_on_loopback(router.clone(), token).await?;
    Ok(World {
        mock,
        router,
        clock,
        engine,
        url,
        token: token_text,
        http: reqwest::Client::new(),
        dir,
        stop: Some(stop),
        task: Some(task),
    })
}

impl World {
    /// `POST /c/c/v1/responses` as Codex sends it (or, with `codex` false, as an SDK does).
    async fn responses(&self, codex: bool) -> reqwest::Result<reqwest::Response> {
        let body = json!({"model": "gpt-5", "input": "hi", "store": false});
        let mut req = self.http.post(format!("{}/c/c/v1/responses", self.url)).bearer_auth(&self.token).json(&body);
        req = if codex {
            req.header("originator", "codex_exec")
                .header("user-agent", "codex_exec/0.177.0 (Debian 12; x86_64)")
                .header("session-id", "sess-1")
        } else {
            req.header("user-agent", "OpenAI/Python 1.99.0")
        };
        req.send().await
    }

    fn backend_requests(&self) -> Vec<switchyard_mock_provider::RecordedRequest> {
        self.mock.requests().into_iter().filter(|r| r.path == BACKEND_PATH).collect()
    }

    /// Lets the relay's snapshot reload (kept for a second of the engine clock).
    fn next_second(&self) {
        self.clock.step(1_001);
    }

    /// Stops the relay (the ledger flushes) and returns the data dir's files as text.
    async fn stop_and_read(&mut self) -> Result<String, Box<dyn std::error::Error>> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await??;
        }
        let mut text = String::new();
        for e in std::fs::read_dir(self.dir.path())?.flatten() {
            if e.path().is_file() {
                text.push_str(&String::from_utf8_lossy(&std::fs::read(e.path())?));
            }
        }
        Ok(text)
    }
}

#[tokio::test]
async fn an_owned_login_reaches_the_chatgpt_backend_with_its_bearer_and_account_and_nothing_else_changes() -> TestResult
{
    let w = world(&["pro"], None).await?;
    let resp = w.responses(true).await?;
    assert_eq!(resp.status(), 200, "Codex is served on the owned login");
    let sdk = w.responses(false).await?;
    assert_eq!(sdk.status(), 200, "and so is an SDK: OpenAI allows its sign-in in other tools");
    let sent = w.backend_requests();
    assert_eq!(sent.len(), 2, "both went to the ChatGPT backend's responses route");
    let access = w.mock.oauth_access_tokens();
    let first = &sent[0];
    assert_eq!(first.header("authorization"), Some(format!("Bearer {}", access[0]).as_str()), "the login's bearer");
    assert_eq!(first.header("chatgpt-account-id"), Some("acct-7"), "the signed-in account");
    assert_eq!(first.header("originator"), Some("codex_exec"), "the client's identity is not rewritten");
    assert_eq!(first.header("user-agent"), Some("codex_exec/0.177.0 (Debian 12; x86_64)"), "nor its user agent");
    assert_eq!(first.header("session-id"), Some("sess-1"), "its session header passes");
    assert_eq!(sent[1].header("user-agent"), Some("OpenAI/Python 1.99.0"), "the SDK's request as it came");
    assert!(
        sent.iter().all(|r| r.header("authorization") != Some(format!("Bearer {}", w.token).as_str())),
        "never the relay token"
    );
    assert_eq!(w.mock.hits("sk-none"), 0, "nothing went to the connection's own base URL");
    assert!(w.mock.requests().iter().all(|r| r.path != "/v1/responses"), "the platform API was not called");
    Ok(())
}

#[tokio::test]
async fn the_access_token_is_renewed_before_its_expiry_and_the_old_one_is_not_sent_after() -> TestResult {
    let w = world(&["pro"], None).await?;
    assert_eq!(w.responses(true).await?.status(), 200, "served");
    w.clock.step(HOUR - 60_000);
    assert_eq!(w.responses(true).await?.status(), 200, "served near the expiry");
    assert_eq!(w.mock.oauth_refresh_calls(), 1, "renewed ahead of the expiry");
    let access = w.mock.oauth_access_tokens();
    let sent = w.backend_requests();
    assert_eq!(
        sent.iter().map(|r| r.header("authorization").unwrap_or_default().to_string()).collect::<Vec<_>>(),
        vec![format!("Bearer {}", access[0]), format!("Bearer {}", access[1])],
        "the old token before the renewal, the new one after"
    );
    let view = w.engine.profile_show("c", "pro").await?;
    assert_eq!(view.credential_revision, 2, "a refresh is not a rotation: the sign-in's revision stands");
    Ok(())
}

#[tokio::test]
async fn a_401_is_renewed_once_and_retried_on_the_same_profile() -> TestResult {
    let w = world(&["pro", "spare"], Some("priority")).await?;
    let pro = w.engine.profile_show("c", "pro").await?.id;
    w.mock.oauth_expire_access_tokens();
    let resp = w.responses(true).await?;
    assert_eq!(resp.status(), 200, "served after the renewal");
    assert_eq!(crate::common::header(&resp, "x-switchyard-profile"), pro, "by the same profile, not the spare");
    assert_eq!(crate::common::header(&resp, "x-switchyard-attempts"), "2", "the refused attempt and its retry");
    assert_eq!(w.mock.oauth_refresh_calls(), 1, "one renewal");
    let sent = w.backend_requests();
    assert_eq!(sent.len(), 2, "two attempts reached the backend");
    assert_ne!(sent[0].header("authorization"), sent[1].header("authorization"), "the retry carries the new token");
    Ok(())
}

#[tokio::test]
async fn concurrent_401s_through_the_relay_make_one_refresh() -> TestResult {
    let w = Arc::new(world(&["pro"], None).await?);
    w.mock.oauth_configure(config(Some(200)));
    w.mock.oauth_expire_access_tokens();
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let w = w.clone();
        tasks.push(tokio::spawn(async move { w.responses(true).await.map(|r| r.status().as_u16()) }));
    }
    for t in tasks {
        assert_eq!(t.await??, 200, "every request is served");
    }
    assert_eq!(w.mock.oauth_refresh_calls(), 1, "eight concurrent 401s merge into one refresh");
    Ok(())
}

#[tokio::test]
async fn a_refused_refresh_expires_the_login_the_turn_fails_over_and_nothing_is_sent_on_it_afterwards() -> TestResult {
    // Three logins, so the gates still hold once one of them has expired.
    let w = world(&["pro", "spare", "third"], Some("priority")).await?;
    let pro = w.engine.profile_show("c", "pro").await?.id;
    let pro_token = w.mock.oauth_access_tokens()[0].clone();
    let spare = w.engine.profile_show("c", "spare").await?.id;
    // Both access tokens are refused; pro's refresh is refused too, the spare's renews.
    w.mock.oauth_expire_access_tokens();
    w.mock.oauth_fail_next_refresh(RefreshFault::InvalidGrant);
    let resp = w.responses(true).await?;
    assert_eq!(resp.status(), 200, "the turn fails over to the spare, which renews and serves");
    assert_eq!(crate::common::header(&resp, "x-switchyard-profile"), spare, "served by the spare");
    assert_eq!(crate::common::header(&resp, "x-switchyard-attempts"), "3", "pro's 401, the spare's 401, its retry");
    let health = w.engine.profile_show("c", "pro").await?.credential_health;
    assert_eq!(health.state.as_str(), "expired", "the refused refresh expires pro's login");
    assert!(health.reason.is_some_and(|r| r.contains("sign in again")), "and says what to do");
    w.next_second();
    let status = w.engine.routing_status("c").await?;
    let excluded: Vec<(String, String)> =
        status.gates.models[0].excluded.iter().map(|e| (e.profile.clone(), e.reason.clone())).collect();
    assert!(excluded.contains(&(pro.clone(), "expired".into())), "routing status names expired: {excluded:?}");
    let before = w
        .backend_requests()
        .iter()
        .filter(|r| r.header("authorization") == Some(&format!("Bearer {pro_token}")))
        .count();
    assert_eq!(before, 1, "one attempt on pro's refused token");
    for _ in 0..3 {
        w.next_second();
        let r = w.responses(true).await?;
        let who = crate::common::header(&r, "x-switchyard-profile");
        let n = crate::common::header(&r, "x-switchyard-attempts");
        assert_eq!(r.status(), 200, "the spare serves ({who}, {n} attempts, spare {spare}: {})", r.text().await?);
        assert_ne!(crate::common::header(&r, "x-switchyard-profile"), pro, "never the expired login");
    }
    assert_eq!(w.mock.oauth_refresh_calls(), 2, "pro's refused refresh and the spare's one renewal: no storm");
    let after = w
        .backend_requests()
        .iter()
        .filter(|r| r.header("authorization") == Some(&format!("Bearer {pro_token}")))
        .count();
    assert_eq!(after, 1, "nothing was sent on the expired login afterwards");
    Ok(())
}

#[tokio::test]
async fn tokens_never_leave_the_keychain() -> TestResult {
    let mut w = world(&["pro"], None).await?;
    let ok = w.responses(true).await?;
    let (ok_headers, ok_body) = (format!("{:?}", ok.headers()), ok.text().await?);
    w.clock.step(2 * HOUR);
    w.mock.oauth_fail_next_refresh(RefreshFault::InvalidGrant);
    let refused = w.responses(true).await?;
    let refused_body = refused.text().await?;
    let rows = serde_json::to_string(&w.engine.attempts("c", 50).await?)?;
    let export = w.engine.export(None).await?;
    let list = serde_json::to_string(&w.engine.profile_list("c").await?)?;
    let files = w.stop_and_read().await?;
    for (what, text) in [
        ("the relay's answer headers", ok_headers.as_str()),
        ("the relay's answer", ok_body.as_str()),
        ("the refusal", refused_body.as_str()),
        ("attempt rows", rows.as_str()),
        ("the export", export.as_str()),
        ("the profile list", list.as_str()),
        ("the data dir's files", files.as_str()),
    ] {
        assert!(!text.contains(CANARY), "no token in {what}");
    }
    assert!(!files.is_empty(), "the data dir was read");
    let export: Value = serde_json::from_str(&export)?;
    assert_eq!(export["connections"][0]["profiles"][0]["kind"], "oauth", "the export carries the profile");
    assert!(export["connections"][0]["profiles"][0].get("expires_at").is_none_or(Value::is_null), "not its login");
    Ok(())
}

#[tokio::test]
async fn codex_windows_reach_the_quota_view_and_a_spent_window_cools_the_login() -> TestResult {
    let w = world(&["pro", "spare", "third"], Some("priority")).await?;
    let pro = w.engine.profile_show("c", "pro").await?.id;
    let windows = Subscription {
        five_hour: Some(UsageWindow { used: 0.3, reset: ResetAt::At((JAN_2025 + 4 * HOUR) / 1000) }),
        seven_day: Some(UsageWindow { used: 0.6, reset: ResetAt::At((JAN_2025 + 100 * HOUR) / 1000) }),
        ..Subscription::default()
    };
    // Tokens issued from now on (the spare's and the third's after a renewal) answer with windows.
    w.mock.oauth_configure(config_for(KeyScript::new(["gpt-5"]).subscription(windows), None));
    w.mock.oauth_expire_access_tokens();
    let served = w.responses(true).await?;
    assert_eq!(served.status(), 200, "renewed and served");
    w.router.flush_quota().await;
    let view = w.engine.quota("c").await?;
    let names: Vec<String> = view
        .profiles
        .iter()
        .find(|p| p.id == pro)
        .map(|p| p.windows.iter().map(|x| x.name.clone()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["codex_5h", "codex_7d"], "the login's windows, known by length");
    // A spent window: every token issued from now on is refused with usage_limit_reached.
    let reset = (JAN_2025 + 2 * HOUR) / 1000;
    let spent = KeyScript::new(["gpt-5"]).behaviour(Behaviour::usage_limit_until(LimitWindow::FiveHour, reset));
    w.mock.oauth_configure(config_for(spent, None));
    w.mock.oauth_expire_access_tokens();
    w.next_second();
    let r = w.responses(true).await?;
    assert_eq!(r.status(), 429, "every login's window is spent: the limit comes back");
    let status = w.engine.routing_status("c").await?;
    let until: Vec<Option<String>> = status
        .profiles
        .iter()
        .find(|p| p.id == pro)
        .map(|p| p.health.iter().map(|h| h.until.clone()).collect())
        .unwrap_or_default();
    assert_eq!(until, [Some("2025-01-01T02:00:00.000Z".to_string())], "pro cools until the body's reset");
    w.router.flush().await;
    let on_pro = |rows: &[switchyard_engine::AttemptView]| rows.iter().filter(|a| a.profile == pro).count();
    let before = on_pro(&w.engine.attempts("c", 100).await?);
    w.next_second();
    let again = w.responses(true).await?;
    assert_eq!(again.status(), 429, "the third login's window is spent too");
    w.router.flush().await;
    assert_eq!(on_pro(&w.engine.attempts("c", 100).await?), before, "nothing sent to the cooling login");
    Ok(())
}

/// Issue 39: an expired owned login was reported as "the primary profile has no secret in the
/// keychain" (503) and its first refusal passed the backend's bare 401 through. Both requests say
/// the login expired and name the command that signs it in again; so do `routing status` and
/// `profile list`.
#[tokio::test]
async fn an_expired_login_says_so_and_names_the_command_that_signs_it_in_again() -> TestResult {
    let w = world(&["pro"], None).await?;
    // The backend refuses the access token and the issuer refuses its renewal.
    w.mock.oauth_expire_access_tokens();
    w.mock.oauth_fail_next_refresh(RefreshFault::InvalidGrant);
    for n in 1..=2 {
        w.next_second();
        let resp = w.responses(true).await?;
        assert_eq!(resp.status(), 503, "request {n}: not the provider's bare 401");
        assert_eq!(crate::common::header(&resp, "x-switchyard-reason"), "login_expired", "request {n}");
        let body: Value = resp.json().await?;
        let message = body["error"]["message"].as_str().unwrap_or_default().to_string();
        assert!(message.contains("expired"), "request {n} says the login expired: {body}");
        assert!(message.contains("profile login c pro"), "and the command that signs it in again: {body}");
        assert!(!message.contains(CANARY), "never a token: {body}");
    }
    let status = w.engine.routing_status("c").await?;
    let pro = status.profiles.iter().find(|p| p.label == "pro").ok_or("pro in routing status")?;
    let reason = pro.credential_health.reason.clone().unwrap_or_default();
    assert!(reason.contains("profile login c pro"), "routing status names the command: {reason}");
    let list = w.engine.profile_list("c").await?;
    let reason = list.iter().find(|p| p.label == "pro").and_then(|p| p.credential_health.reason.clone());
    assert!(reason.unwrap_or_default().contains("profile login c pro"), "profile list names it too");
    assert_eq!(w.mock.oauth_refresh_calls(), 1, "one refused renewal, no storm");
    Ok(())
}
