//! Signing in an owned login (docs/design.md, section 14; issue 39): the browser sign-in refuses a
//! wrong state and keeps its tokens in the keychain only; a login is bound to the endpoints it was
//! signed in with (a changed setting never receives its tokens); an issuer's code that is not plain
//! text is refused, not shown; the browser callback answers beside an idle connection and on IPv6
//! loopback. On `oauth_logins.rs`'s world (the mock's authorization server over real HTTP).

use std::sync::Arc;

use switchyard_engine::{NewProfile, RequestKeys, RouteRequest, Routed, Router, UserSetting};
use switchyard_mock_provider::{KeyScript, MockProvider, OauthConfig};

use crate::common::TestResult;
use crate::oauth_logins::*;
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
