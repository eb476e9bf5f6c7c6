//! Subscription credentials through the relay (issue 28 items 1 and 5; invariant 20), against
//! the mock provider, which records every header it got:
//! - a `token` profile serves a request that identifies as Claude Code with `Authorization:
//!   Bearer <token>`, `oauth-2025-04-20` appended to the client's `anthropic-beta` list and no
//!   `x-api-key`, nothing else changed; an SDK's request is refused 403 `client_not_allowed`
//!   when only token profiles could serve, and goes to the API key when one can;
//! - a request naming an `external` profile (`x-switchyard-profile`, the relay token in
//!   `x-switchyard-token`) is forwarded with the client's own `Authorization` unchanged, once,
//!   to that profile only: recorded under it (reason `pinned`), its 5-hour window's rejection cools it until the reset and
//!   the next such request is refused without reaching the provider; the client's credential is
//!   in no database file, export or attempt row. Named wrongly, with the token in the wrong
//!   header, or by another client: refused, nothing sent.

use std::path::Path;

use serde_json::{json, Value};
use switchyard_engine::{NewCredential, NewProfile, ProfileEdit, Secret};
use switchyard_mock_provider::{Behaviour, KeyScript, LimitWindow};

use crate::common::{header, relay, relay_stepped, user, Key, Relay, TestResult};

const TOKEN: &str = "sk-ant-oat01-CANARY-token-7c1e5a90b2d4";
const LOGIN: &str = "sk-ant-oat01-CANARY-login-3f9d2b6e8a10";
const CODEX_LOGIN: &str = "CANARY-codex-access-51e0c7a2";
const CC_UA: &str = "claude-cli/2.1.332 (external, sdk-cli)";
const SDK_UA: &str = "Anthropic/Python 0.40.0";

fn header_of<'a>(r: &'a switchyard_mock_provider::RecordedRequest, name: &str) -> Option<&'a str> {
    r.header(name)
}

fn key_a() -> Key<'static> {
    Key { label: "k1", secret: "sk-ant-api03-canary-subclients-k1", weight: 1, script: KeyScript::new(["m1"]) }
}

/// A Messages request through the relay with the relay token in `x-api-key` and `headers`.
async fn messages(r: &Relay, headers: &[(&str, &str)]) -> reqwest::Result<reqwest::Response> {
    let body = json!({"model": "m1", "max_tokens": 16, "messages": [user("hi")]});
    let mut req = r.http.post(format!("{}/c/c/v1/messages", r.url)).json(&body);
    req = req.header("anthropic-version", "2023-06-01");
    for (n, v) in headers {
        req = req.header(*n, *v);
    }
    req.send().await
}

async fn add_token(r: &Relay, label: &str, secret: &str) -> Result<String, Box<dyn std::error::Error>> {
    let kind = NewCredential { kind: Some("token".into()), client: Some("claude-code".into()), expires_at: None };
    let new = NewProfile { label: label.into(), weight: Some(1), priority: None };
    Ok(r.engine.profile_add_kind("c", new, kind, Some(Secret::new(secret))).await?.id)
}

/// An external profile of `client` whose config directory holds the CLI's login file.
async fn add_login(r: &Relay, label: &str, client: &str, file: &str) -> Result<String, Box<dyn std::error::Error>> {
    let kind = NewCredential { kind: Some("external".into()), client: Some(client.into()), expires_at: None };
    let new = NewProfile { label: label.into(), weight: Some(1), priority: None };
    let view = r.engine.profile_add_kind("c", new, kind, None).await?;
    let dir = view.config_dir.clone().ok_or("an external profile has a config directory")?;
    let contents = match client {
        "codex" => {
            json!({"tokens": {"access_token": CODEX_LOGIN, "account_id": "acct-1"}, "last_refresh": "2026-12-01T00:00:00Z"})
        }
        _ => json!({"claudeAiOauth": {"accessToken": LOGIN, "scopes": ["user:inference"]}}),
    };
    std::fs::write(Path::new(&dir).join(file), contents.to_string())?;
    Ok(view.id)
}

/// The database files of the data dir (not the CLI's config directories under `accounts/`,
/// which hold the CLI's own login by design), as text.
fn database_text(r: &Relay) -> String {
    let mut text = String::new();
    for e in std::fs::read_dir(r.dir.path()).into_iter().flatten().flatten() {
        if e.path().is_file() {
            text.push_str(&String::from_utf8_lossy(&std::fs::read(e.path()).unwrap_or_default()));
        }
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_serves_claude_code_only_as_a_bearer_with_the_oauth_beta() -> TestResult {
    // On a manual clock: the relay's snapshot reload is stepped to, not slept for.
    let (r, clock) = relay_stepped("anthropic", &["m1"], vec![key_a()], None).await?;
    r.mock.set_key(TOKEN, KeyScript::new(["m1"]).reply("token says hi"));
    add_token(&r, "tok", TOKEN).await?;
    // Legacy mode on the token: only it can serve.
    r.engine.profile_edit("c", "tok", ProfileEdit { make_primary: true, ..Default::default() }).await?;
    let token = r.token.clone();
    let cc = [
        ("x-api-key", token.as_str()),
        ("user-agent", CC_UA),
        ("x-app", "cli"),
        ("anthropic-beta", "claude-code-20250219,interleaved-thinking-2025-05-14"),
    ];
    let resp = messages(&r, &cc).await?;
    assert_eq!(resp.status(), 200, "Claude Code's request is served by the token");
    assert!(resp.text().await?.contains("token says hi"), "the token's account answered");
    let seen = r.mock.requests();
    assert_eq!(seen.len(), 1, "one request reached the provider");
    let got = &seen[0];
    assert_eq!(got.header("authorization"), Some(format!("Bearer {TOKEN}").as_str()), "the token as a bearer");
    assert_eq!(got.header("x-api-key"), None, "no x-api-key next to the token");
    assert_eq!(
        got.header("anthropic-beta"),
        Some("claude-code-20250219,interleaved-thinking-2025-05-14,oauth-2025-04-20"),
        "the oauth beta appended after the client's betas"
    );
    assert_eq!(got.header("user-agent"), Some(CC_UA), "the client's user agent unchanged");
    assert_eq!(got.header("x-app"), Some("cli"), "and its x-app");
    let sent = json!({"model": "m1", "max_tokens": 16, "messages": [user("hi")]});
    assert_eq!(got.json(), Some(sent), "the body unchanged");

    // The beta already there: the client's list is kept as it came.
    let mut with_beta = cc;
    with_beta[3] = ("anthropic-beta", "oauth-2025-04-20,claude-code-20250219");
    let resp = messages(&r, &with_beta).await?;
    assert_eq!(resp.status(), 200);
    let _ = resp.bytes().await?;
    let last = r.mock.requests().pop().ok_or("a second request")?;
    assert_eq!(last.header("anthropic-beta"), Some("oauth-2025-04-20,claude-code-20250219"), "kept as it came");

    // An SDK, while only the token could serve: refused, nothing sent.
    let before = r.mock.requests().len();
    let sdk = [("x-api-key", token.as_str()), ("user-agent", SDK_UA)];
    let resp = messages(&r, &sdk).await?;
    assert_eq!(resp.status(), 403, "an SDK's request is refused");
    assert_eq!(header(&resp, "x-switchyard-reason"), "client_not_allowed");
    let body: Value = resp.json().await?;
    assert_eq!(body["error"]["type"], "permission_error", "in Anthropic's error shape: {body}");
    assert!(body.to_string().contains("issued for"), "the message says why: {body}");
    assert!(!body.to_string().contains(TOKEN), "never the token");
    assert_eq!(r.mock.requests().len(), before, "nothing reached the provider");

    // Balanced over the API key and the token: the SDK goes to the key every time.
    r.engine.verify("c", None, false, &|_| {}).await?;
    r.engine.routing_activate("c", switchyard_engine::Strategy::Balanced, "test").await?;
    clock.step(1_100); // the relay's snapshot reloads at its next request
    for i in 0..4 {
        let content = format!("question {i}");
        let body = json!({"model": "m1", "max_tokens": 16, "messages": [user(&content)]});
        let mut req = r.http.post(format!("{}/c/c/v1/messages", r.url)).json(&body);
        req = req.header("anthropic-version", "2023-06-01").header("x-api-key", &token).header("user-agent", SDK_UA);
        let resp = req.send().await?;
        assert_eq!(resp.status(), 200, "the SDK is served by the API key");
        let _ = resp.bytes().await?;
        let last = r.mock.requests().pop().ok_or("a request")?;
        assert_eq!(last.key.as_deref(), Some(key_a().secret), "always by the API key, never the token");
        assert_eq!(last.header("authorization"), None, "the relay token is not forwarded");
        assert_eq!(header_of(&last, "x-switchyard-profile"), None, "no relay header reaches the provider");
    }
    let cc_turns = {
        let mut served = std::collections::BTreeSet::new();
        for i in 0..4 {
            let content = format!("task {i}");
            let body = json!({"model": "m1", "max_tokens": 16, "messages": [user(&content)]});
            let mut req = r.http.post(format!("{}/c/c/v1/messages", r.url)).json(&body);
            for (n, v) in cc {
                req = req.header(n, v);
            }
            let resp = req.header("anthropic-version", "2023-06-01").send().await?;
            assert_eq!(resp.status(), 200, "Claude Code is served in balanced mode");
            served.insert(header(&resp, "x-switchyard-profile"));
            let _ = resp.bytes().await?;
        }
        served
    };
    assert_eq!(cc_turns.len(), 2, "Claude Code's turns spread over the key and the token: {cc_turns:?}");
    let r = r.stop().await?;
    assert!(!database_text(&r).contains(TOKEN), "the token is in no database file");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_login_is_forwarded_unchanged_to_its_profile_only_and_never_kept() -> TestResult {
    let r = relay("anthropic", &["m1"], vec![key_a()], None).await?;
    r.mock.set_key(
        LOGIN,
        KeyScript::new(["m1"]).reply("login says hi").behaviour(Behaviour::sequence([
            Behaviour::Ok,
            Behaviour::usage_limit(LimitWindow::FiveHour, 120),
            Behaviour::Ok,
        ])),
    );
    let id = add_login(&r, "acct", "claude-code", ".credentials.json").await?;
    let token = r.token.clone();
    let bearer = format!("Bearer {LOGIN}");
    let named = [
        ("x-switchyard-token", token.as_str()),
        ("x-switchyard-profile", id.as_str()),
        ("authorization", bearer.as_str()),
        ("user-agent", CC_UA),
        ("anthropic-beta", "claude-code-20250219,oauth-2025-04-20"),
        ("x-switchyard-tag-launch", "l-1"),
    ];
    let resp = messages(&r, &named).await?;
    assert_eq!(resp.status(), 200, "the named login serves");
    assert!(resp.text().await?.contains("login says hi"), "with the client's own login");
    let got = r.mock.requests().pop().ok_or("a request upstream")?;
    assert_eq!(got.header("authorization"), Some(bearer.as_str()), "the client's Authorization unchanged");
    assert_eq!(got.header("anthropic-beta"), Some("claude-code-20250219,oauth-2025-04-20"), "its betas too");
    assert_eq!(got.header("x-api-key"), None, "no key added");
    let relay_headers: Vec<&str> =
        got.headers.keys().map(|n| n.as_str()).filter(|n| n.starts_with("x-switchyard-")).collect();
    assert!(relay_headers.is_empty(), "no x-switchyard-* header upstream (token, profile, tag): {relay_headers:?}");

    // The same login again: the provider rejects its 5-hour window; recorded, the profile cools
    // until the window's reset, and nothing fails over to the API key (the credential is the
    // login's own — its official CLI's — so the refusal is the login's: issue 39 holds only a
    // stranger's refused credential apart).
    let resp = messages(&r, &named).await?;
    assert_eq!(resp.status(), 429, "the provider's refusal is passed back");
    assert_eq!(header(&resp, "anthropic-ratelimit-unified-5h-status"), "rejected", "with its headers");
    let _ = resp.bytes().await?;
    assert_eq!(r.mock.hits(key_a().secret), 0, "never sent with the API key");
    let before = r.mock.requests().len();
    let resp = messages(&r, &named).await?;
    assert_eq!(resp.status(), 429, "the cooling login is refused by the relay");
    assert_eq!(header(&resp, "x-switchyard-reason"), "pinned_unavailable");
    assert!(header(&resp, "retry-after").parse::<u64>().is_ok_and(|s| (100..=120).contains(&s)), "until it resets");
    let _ = resp.bytes().await?;
    assert_eq!(r.mock.requests().len(), before, "nothing sent while it cools");

    // Refused before anything is sent: the token in Authorization's place, the API key named,
    // an unknown name, another client.
    let in_key = [("x-api-key", token.as_str()), ("x-switchyard-profile", id.as_str()), ("user-agent", CC_UA)];
    let resp = messages(&r, &in_key).await?;
    assert_eq!((resp.status().as_u16(), header(&resp, "x-switchyard-reason")), (400, "profile_not_pinnable".into()));
    let k1 = r.engine.profile_show("c", "k1").await?.id;
    for (name, ua, status, reason) in [
        (k1.as_str(), CC_UA, 400, "profile_not_pinnable"),
        ("nobody", CC_UA, 400, "profile_not_pinnable"),
        (id.as_str(), SDK_UA, 403, "client_not_allowed"),
    ] {
        let h = [("x-switchyard-token", token.as_str()), ("x-switchyard-profile", name), ("user-agent", ua)];
        let resp = messages(&r, &h).await?;
        assert_eq!(resp.status(), status, "{name} / {ua}");
        assert_eq!(header(&resp, "x-switchyard-reason"), reason, "{name} / {ua}");
        let _ = resp.bytes().await?;
    }
    assert_eq!(r.mock.requests().len(), before, "no refused request reached the provider");

    let r = r.stop().await?;
    let attempts = r.engine.attempts("c", 100).await?;
    let pinned: Vec<_> = attempts.iter().filter(|a| a.profile == id).collect();
    assert_eq!(pinned.len(), 2, "both forwarded requests are recorded under the login: {attempts:?}");
    assert!(pinned.iter().all(|a| a.reason == "pinned"), "reason pinned");
    assert!(pinned.iter().any(|a| a.failure_kind.as_deref() == Some("quota_exhausted")), "the refusal is recorded");
    let rows = serde_json::to_string(&attempts)?;
    assert!(!rows.contains(LOGIN), "the login is in no attempt row");
    assert!(!database_text(&r).contains(LOGIN), "nor in any database file");
    assert!(!r.engine.export(None).await?.contains(LOGIN), "nor in an export");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_codex_login_goes_to_the_chatgpt_backend() -> TestResult {
    let r = relay("openai", &["gpt-x"], vec![Key { script: KeyScript::new(["gpt-x"]), ..key_a() }], None).await?;
    // The one test of this binary that names an external Codex login: the variable is only read
    // for those.
    std::env::set_var(switchyard_engine::CODEX_BACKEND_ENV, format!("{}/backend-api/codex/", r.mock.base_url()));
    r.mock.set_key(CODEX_LOGIN, KeyScript::new(["gpt-x"]).reply("chatgpt says hi"));
    let id = add_login(&r, "plus", "codex", "auth.json").await?;
    let bearer = format!("Bearer {CODEX_LOGIN}");
    let body = json!({"model": "gpt-x", "input": "hi", "stream": false});
    let resp = r
        .http
        .post(format!("{}/c/c/v1/responses", r.url))
        .header("x-switchyard-token", &r.token)
        .header("x-switchyard-profile", "plus")
        .header("authorization", &bearer)
        .header("chatgpt-account-id", "acct-1")
        .header("originator", "codex_exec")
        .header("user-agent", "codex_exec/0.171.0 (Debian 12.0.0; x86_64)")
        .json(&body)
        .send()
        .await?;
    assert_eq!(resp.status(), 200, "served");
    assert!(resp.text().await?.contains("chatgpt says hi"), "by the login's account");
    let got = r.mock.requests().pop().ok_or("a request upstream")?;
    assert_eq!(got.path, "/backend-api/codex/responses", "v1/responses maps onto the ChatGPT backend");
    assert_eq!(got.header("authorization"), Some(bearer.as_str()), "the login unchanged");
    assert_eq!(got.header("chatgpt-account-id"), Some("acct-1"), "with its account id");
    assert_eq!(got.header("originator"), Some("codex_exec"), "and the client's own headers");
    let r = r.stop().await?;
    let attempts = r.engine.attempts("c", 10).await?;
    assert_eq!(attempts.first().map(|a| a.profile.as_str()), Some(id.as_str()), "recorded under the login");
    assert!(!database_text(&r).contains(CODEX_LOGIN), "the login is in no database file");
    Ok(())
}

/// Issue 39, defect 3: a request naming an external login carries the client's own credential;
/// when the provider refused *that* credential (401, or a 429 of its own), the login's circuit
/// opened — stored, so every replica obeyed — and the owner's next request got 503
/// `pinned_unavailable` until a manual reset: any token holder could lock another person's login
/// with one request. A failure is held against the login only when the credential is the login's
/// own (a string of its official CLI's credential file: what `exec` runs it with); a stranger's
/// refused credential — a 401, or a 429 of its own account — holds nothing against it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_of_the_client_s_own_credential_is_not_held_against_the_login() -> TestResult {
    let r = relay("anthropic", &["m1"], vec![key_a()], None).await?;
    r.mock.set_key(LOGIN, KeyScript::new(["m1"]).reply("the owner's login"));
    r.mock.set_key("sk-ant-oat01-limited", KeyScript::new(["m1"]).behaviour(Behaviour::rate_limited(600)));
    let id = add_login(&r, "acct", "claude-code", ".credentials.json").await?;
    let token = r.token.clone();
    let as_client = |credential: &str| {
        let bearer = format!("Bearer {credential}");
        move |h: &mut Vec<(String, String)>| h.push(("authorization".into(), bearer.clone()))
    };
    for stranger in ["sk-ant-oat01-not-a-login", "sk-ant-oat01-limited"] {
        let mut headers: Vec<(String, String)> =
            [("x-switchyard-token", token.as_str()), ("x-switchyard-profile", id.as_str()), ("user-agent", CC_UA)]
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
        as_client(stranger)(&mut headers);
        let pairs: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        let resp = messages(&r, &pairs).await?;
        assert!(matches!(resp.status().as_u16(), 401 | 429), "{stranger}: the provider's refusal comes back");
        let _ = resp.bytes().await?;
        let owner = format!("Bearer {LOGIN}");
        let mine = [
            ("x-switchyard-token", token.as_str()),
            ("x-switchyard-profile", id.as_str()),
            ("authorization", owner.as_str()),
            ("user-agent", CC_UA),
        ];
        let resp = messages(&r, &mine).await?;
        let (status, reason) = (resp.status(), header(&resp, "x-switchyard-reason"));
        assert_eq!(status, 200, "after {stranger}'s refusal the owner is still served (reason '{reason}')");
        assert!(resp.text().await?.contains("the owner's login"), "by the provider, with the owner's login");
    }
    let status = r.engine.routing_status("c").await?;
    let login = status.profiles.iter().find(|p| p.id == id).ok_or("the login is listed")?;
    assert!(
        login.health.iter().all(|h| h.state == switchyard_engine::CircuitState::Closed),
        "no circuit of the login opened: {:?}",
        login.health
    );
    Ok(())
}
