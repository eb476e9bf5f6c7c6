//! `--store postgres://…` through the built binary (issue 31 part B; runs under
//! `scripts/with-postgres`, skipped without SWITCHYARD_TEST_PG): the store is sealed (no master
//! key, or `--vault keychain`, exits 6 before anything happens), two data dirs on two "machines"
//! share one store, a `relay serve` on it records its ledger there, and neither `pg_dump` nor
//! the data dirs hold the provider key.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;
use switchyard_mock_provider::{KeyScript, MockProvider, OauthConfig};

use crate::common::{post, post_messages, run_env, serve_with, Run, TestResult};

const CANARY: &str = "sk-canary-cli-postgres-3d9e";

/// A fresh database on the test server, and its URL.
pub(crate) fn database(server: &str, name: &str) -> Result<String, Box<dyn std::error::Error>> {
    let made = Command::new("psql").arg(server).args(["-q", "-c", &format!("CREATE DATABASE {name}")]).output()?;
    assert!(made.status.success(), "CREATE DATABASE: {}", String::from_utf8_lossy(&made.stderr));
    let (base, _) = server.rsplit_once('/').ok_or("server URL has a path")?;
    Ok(format!("{base}/{name}"))
}

/// A master key file (0600) in `dir`.
pub(crate) fn master_key(dir: &Path) -> Result<std::path::PathBuf, Box<dyn std::error::Error>> {
    use std::os::unix::fs::PermissionsExt;
    let key = dir.join("master.key");
    std::fs::write(&key, crate::common::master_key_hex(0xcd))?;
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600))?;
    Ok(key)
}

pub(crate) fn run_on(
    d: &Path,
    store: &str,
    key: Option<&Path>,
    args: &[&str],
    stdin: Option<&str>,
) -> Result<Run, Box<dyn std::error::Error>> {
    let key = key.map(|k| k.display().to_string()).unwrap_or_default();
    let env = [("SWITCHYARD_STORE", store), ("SWITCHYARD_MASTER_KEY_FILE", key.as_str())];
    let env: Vec<(&str, &str)> = env.into_iter().filter(|(_, v)| !v.is_empty()).collect();
    run_env(d, args, stdin, &env)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_store_is_sealed_shared_and_keeps_the_ledger() -> TestResult {
    let Ok(server) = std::env::var("SWITCHYARD_TEST_PG") else { return Ok(()) };
    let url = database(&server, "sy_cli_store")?;
    let mock = MockProvider::start().await?;
    mock.set_key(CANARY, KeyScript::new(["m1"]));
    let (one, two, keys) = (tempfile::tempdir()?, tempfile::tempdir()?, tempfile::tempdir()?);
    let key = keys.path().join("master.key");
    std::fs::write(&key, crate::common::master_key_hex(0xab))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600))?;
    }
    let base = mock.base_url();
    let add =
        ["connection", "add", "c", "--protocol", "anthropic", "--base-url", &base, "--model", "m1", "--secret-stdin"];

    let no_key = run_on(one.path(), &url, None, &add, Some(CANARY))?;
    assert_eq!(no_key.code, 6, "no master key, no start on a Postgres store: {}", no_key.stderr);
    let keychain = run_on(one.path(), &url, Some(&key), &["--vault", "keychain", "connection", "list"], None)?;
    assert_eq!(keychain.code, 6, "the keychain is refused on a Postgres store");
    assert!(keychain.stderr.contains("Postgres"), "saying why: {}", keychain.stderr);

    let added = run_on(one.path(), &url, Some(&key), &add, Some(CANARY))?;
    assert_eq!(added.code, 0, "connection added on Postgres: {}", added.stderr);
    let listed = run_on(two.path(), &url, Some(&key), &["--json", "connection", "list"], None)?;
    assert!(listed.stdout.contains("\"c\""), "another data dir on the same store sees it: {}", listed.stdout);
    let user = run_on(two.path(), &url, Some(&key), &["--json", "relay", "users", "add", "alice"], None)?;
    let alice = serde_json::from_str::<Value>(&user.stdout)?["token"].as_str().unwrap_or_default().to_string();
    assert!(alice.starts_with("syu_"), "a user token: {} {}", user.stdout, user.stderr);

    let mut child = Command::new(assert_cmd::cargo::cargo_bin("switchyard"))
        .arg("--data-dir")
        .arg(two.path())
        .args(["relay", "serve", "--listen", "127.0.0.1:0"])
        .env("SWITCHYARD_STORE", &url)
        .env("SWITCHYARD_MASTER_KEY_FILE", &key)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut first = String::new();
    BufReader::new(child.stdout.take().ok_or("relay stdout")?).read_line(&mut first)?;
    let addr = first.trim().rsplit("http://").next().ok_or("relay address")?.to_string();
    let answer = post_messages(&addr, &alice, "")?;
    let _ = Command::new("kill").arg(child.id().to_string()).status();
    let status = child.wait()?;
    assert!(answer.starts_with("HTTP/1.1 200"), "the relay on Postgres serves with the sealed key: {answer:.120}");
    assert!(status.success(), "and stops cleanly: {status}");

    let rows = run_on(one.path(), &url, Some(&key), &["--json", "attempts", "c"], None)?;
    let rows: Value = serde_json::from_str(&rows.stdout)?;
    assert_eq!(rows[0]["user"], "alice", "the other data dir reads the relay's ledger row from the store: {rows}");

    let dump = Command::new("pg_dump").args(["--dbname", &url]).output()?;
    assert!(dump.status.success(), "pg_dump: {}", String::from_utf8_lossy(&dump.stderr));
    let dump = String::from_utf8_lossy(&dump.stdout);
    assert!(dump.contains("sealed_secrets") && dump.contains("alice"), "the dump is of this store");
    assert!(!dump.contains(CANARY) && !dump.contains(&alice), "no provider key or user token in pg_dump");
    for d in [one.path(), two.path()] {
        assert!(!d.join("switchyard.db").exists(), "no SQLite file beside a Postgres store");
    }
    mock.shutdown().await?;
    Ok(())
}

/// Issue 32 on a team store (invariant 22): two `relay serve` replicas with data dirs of their own
/// on one Postgres store are refused the owned login's access token at the same moment; the login
/// is refreshed exactly once — the second replica waits on the login's advisory lock in the store
/// (the data dirs' lock files are not shared) and adopts the first one's tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_one_store_refresh_an_owned_login_exactly_once() -> TestResult {
    let Ok(server) = std::env::var("SWITCHYARD_TEST_PG") else { return Ok(()) };
    let url = database(&server, "sy_cli_login_refresh")?;
    let mock = MockProvider::start().await?;
    mock.oauth_configure(OauthConfig {
        key: KeyScript::new(["gpt-5"]),
        account_id: "acct-team".into(),
        token_prefix: "CANARY-pg-login-".into(),
        // Long enough that both replicas are refused before the first refresh is written.
        refresh_delay_ms: Some(700),
        ..Default::default()
    });
    let (one, two, keys) = (tempfile::tempdir()?, tempfile::tempdir()?, tempfile::tempdir()?);
    let key = master_key(keys.path())?;
    let on = |d: &Path, args: &[&str]| -> Result<Run, Box<dyn std::error::Error>> {
        let r = run_on(d, &url, Some(&key), args, None)?;
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        Ok(r)
    };
    let base = format!("{}/v1", mock.base_url());
    on(one.path(), &["connection", "add", "c", "--protocol", "openai", "--base-url", &base, "--model", "gpt-5"])?;
    on(one.path(), &["settings", "oauth-issuer", &mock.base_url()])?;
    let backend = format!("{}/backend-api/codex", mock.base_url());
    on(one.path(), &["settings", "codex-backend-url", &backend])?;
    on(one.path(), &["profile", "login", "c", "pro", "--kind", "oauth"])?;
    let token = on(one.path(), &["relay", "token"])?.stdout.trim().to_string();

    let replica = |d: &Path| {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("switchyard"));
        cmd.arg("--data-dir").arg(d).args(["relay", "serve", "--listen", "127.0.0.1:0"]);
        cmd.env("SWITCHYARD_STORE", &url).env("SWITCHYARD_MASTER_KEY_FILE", &key);
        serve_with(cmd)
    };
    let (a, b) = (replica(one.path())?, replica(two.path())?);
    let call = |addr: String, token: String| {
        std::thread::spawn(move || {
            let headers = format!("authorization: Bearer {token}\r\noriginator: codex_exec\r\n");
            post(&addr, "/c/c/v1/responses", &headers, r#"{"model":"gpt-5","input":"hi","store":false}"#)
                .map_err(|e| e.to_string())
        })
    };
    for addr in [&a.addr, &b.addr] {
        let answer = call(addr.clone(), token.clone()).join().map_err(|_| "request thread")??;
        assert!(answer.starts_with("HTTP/1.1 200"), "each replica serves on the login: {answer:.200}");
    }
    assert_eq!(mock.oauth_refresh_calls(), 0, "no refresh yet");
    mock.oauth_expire_access_tokens();
    let (ta, tb) = (call(a.addr.clone(), token.clone()), call(b.addr.clone(), token.clone()));
    for (name, t) in [("a", ta), ("b", tb)] {
        let answer = t.join().map_err(|_| "request thread")??;
        assert!(answer.starts_with("HTTP/1.1 200"), "replica {name} serves after the renewal: {answer:.200}");
        assert!(!answer.contains("CANARY-pg-login-"), "replica {name}'s answer carries no token");
    }
    assert_eq!(
        mock.oauth_refresh_calls(),
        1,
        "two replicas with their own data dirs refused at once refresh the login exactly once"
    );
    assert!(a.stop()? && b.stop()?, "both replicas stop cleanly");
    let dump = Command::new("pg_dump").args(["--dbname", &url]).output()?;
    assert!(!String::from_utf8_lossy(&dump.stdout).contains("CANARY-pg-login-"), "no token in pg_dump");
    mock.shutdown().await?;
    Ok(())
}
