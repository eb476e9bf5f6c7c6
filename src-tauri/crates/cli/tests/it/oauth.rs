//! An owned Codex login through the `switchyard` binary (docs/design.md, section 14; invariant
//! 22), on the real keychain, against the mock provider's fake authorization server:
//! `profile login SLUG LABEL --kind oauth` creates the profile, shows the verification URL and the
//! code on stderr with progress while it waits, and prints the signed-in profile (account, no
//! token); `profile list` shows kind, health and account; then two `relay serve` processes on one
//! data dir both find the access token refused at the same moment, and the login is refreshed
//! exactly once — the second process waits on the login's lock file and adopts the first one's
//! tokens. No token appears in any output or file of the data dir.
//! Run under `scripts/with-keychain`.

use serde_json::Value;
use switchyard_mock_provider::{KeyScript, MockProvider, OauthConfig};

use crate::common::{files_text, post, run, serve, TestResult};

const CANARY: &str = "CANARY-cli-oauth-0e4b7d-";

fn ok(r: crate::common::Run, what: &str) -> Result<crate::common::Run, Box<dyn std::error::Error>> {
    if r.code != 0 {
        return Err(format!("{what} exited {}: {}", r.code, r.stderr).into());
    }
    Ok(r)
}

/// `POST /c/c/v1/responses` through the relay at `addr`, as Codex sends it; the raw answer.
fn responses(addr: &str, token: &str) -> Result<String, Box<dyn std::error::Error>> {
    let headers = format!("authorization: Bearer {token}\r\noriginator: codex_exec\r\n");
    post(addr, "/c/c/v1/responses", &headers, r#"{"model":"gpt-5","input":"hi","store":false}"#)
}

fn status_of(answer: &str) -> &str {
    answer.split(' ').nth(1).unwrap_or("")
}

/// A data dir with connection `c` (OpenAI, `gpt-5`) on the mock, its OAuth issuer the mock's.
fn owned_login_connection(mock: &MockProvider) -> Result<tempfile::TempDir, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let base = format!("{}/v1", mock.base_url());
    ok(
        run(d, &["connection", "add", "c", "--protocol", "openai", "--base-url", &base, "--model", "gpt-5"], None)?,
        "connection add",
    )?;
    ok(run(d, &["settings", "oauth-issuer", &mock.base_url()], None)?, "settings oauth-issuer")?;
    Ok(dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_relay_processes_on_one_data_dir_refresh_a_login_exactly_once() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.oauth_configure(OauthConfig {
        key: KeyScript::new(["gpt-5"]),
        account_id: "acct-cli".into(),
        plan: Some("pro".into()),
        token_prefix: CANARY.into(),
        // Long enough that both relays are refused before the first refresh is written.
        refresh_delay_ms: Some(700),
        ..Default::default()
    });
    let dir = owned_login_connection(&mock)?;
    let d = dir.path();
    let backend = format!("{}/backend-api/codex", mock.base_url());
    ok(run(d, &["settings", "codex-backend-url", &backend], None)?, "settings codex-backend-url")?;

    let login = ok(run(d, &["--json", "profile", "login", "c", "pro", "--kind", "oauth"], None)?, "profile login")?;
    assert!(login.stderr.contains(&format!("{}/codex/device", mock.base_url())), "the URL is shown: {}", login.stderr);
    assert!(login.stderr.contains("ABCD-1234"), "and the code: {}", login.stderr);
    assert!(login.stderr.contains("waiting for approval"), "progress while it waits: {}", login.stderr);
    let signed: Value = serde_json::from_str(&login.stdout)?;
    assert_eq!(signed["kind"], "oauth", "an oauth profile");
    assert_eq!(signed["credential_health"]["state"], "ok", "signed in");
    assert_eq!(signed["login"]["account_id"], "acct-cli", "its account");
    let list = ok(run(d, &["profile", "list", "c"], None)?, "profile list")?;
    assert!(
        list.stdout.contains("oauth") && list.stdout.contains("acct-cli"),
        "kind and account listed: {}",
        list.stdout
    );

    let token = ok(run(d, &["relay", "token"], None)?, "relay token")?.stdout.trim().to_string();
    let (a, b) = (serve(d)?, serve(d)?);
    for relay in [&a, &b] {
        let answer = responses(&relay.addr, &token)?;
        assert_eq!(status_of(&answer), "200", "each relay serves on the login: {answer}");
    }
    assert_eq!(mock.oauth_refresh_calls(), 0, "no refresh yet");

    // The access token is refused everywhere at once: both relays renew at the same moment.
    mock.oauth_expire_access_tokens();
    let (addr_a, addr_b, t_a, t_b) = (a.addr.clone(), b.addr.clone(), token.clone(), token.clone());
    let ta = std::thread::spawn(move || responses(&addr_a, &t_a).map_err(|e| e.to_string()));
    let tb = std::thread::spawn(move || responses(&addr_b, &t_b).map_err(|e| e.to_string()));
    for (name, t) in [("a", ta), ("b", tb)] {
        let answer = t.join().map_err(|_| "request thread")??;
        assert_eq!(status_of(&answer), "200", "relay {name} serves after the renewal: {answer}");
        assert!(!answer.contains(CANARY), "relay {name}'s answer carries no token");
    }
    assert_eq!(mock.oauth_refresh_calls(), 1, "two processes refused at once refresh the login exactly once");
    let backend_calls = mock.requests().iter().filter(|r| r.path == "/backend-api/codex/responses").count();
    assert_eq!(backend_calls, 6, "two first calls, two refused, two retries");
    assert!(a.stop()? && b.stop()?, "both relays stop cleanly");

    let after = ok(run(d, &["--json", "profile", "list", "c"], None)?, "profile list")?;
    let rows: Value = serde_json::from_str(&after.stdout)?;
    assert_eq!(rows[0]["login"]["last_refresh"], "succeeded", "the refresh is recorded");
    assert_eq!(rows[0]["login"]["generation"], 1, "a refresh is not a new sign-in");
    for (what, text) in [
        ("login stdout", login.stdout.as_str()),
        ("login stderr", login.stderr.as_str()),
        ("profile list", after.stdout.as_str()),
        ("the data dir", files_text(d).as_str()),
    ] {
        assert!(!text.contains(CANARY), "no token in {what}");
    }
    assert!(d.join("logins").is_dir(), "the logins' lock files live in <data dir>/logins");
    Ok(())
}

/// Issue 39: the issuer's `user_code` was printed raw — escape sequences reached the terminal.
/// A code that is not plain text is refused before anything is shown, and nothing a server says
/// reaches the terminal as an escape sequence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_code_carrying_terminal_escapes_never_reaches_the_terminal() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.oauth_configure(OauthConfig {
        key: KeyScript::new(["gpt-5"]),
        account_id: "acct-cli".into(),
        user_code: Some("\u{1b}]0;owned\u{7}\u{1b}[2JABCD-1234".into()),
        ..Default::default()
    });
    let dir = owned_login_connection(&mock)?;
    let d = dir.path();
    let login = run(d, &["profile", "login", "c", "pro", "--kind", "oauth"], None)?;
    let text = format!("{}{}", login.stdout, login.stderr);
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "no escape sequence reaches the terminal: {text:?}");
    assert_ne!(login.code, 0, "the sign-in is refused: {}", login.stderr);
    assert!(login.stderr.contains("device code is not plain text"), "saying why: {}", login.stderr);
    Ok(())
}
