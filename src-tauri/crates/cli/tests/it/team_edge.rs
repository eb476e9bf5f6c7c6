//! The team relay's edge through the built binary (invariants 26, 27): a sealed data dir whose
//! secrets never reach the database file or trace-level logs, served by a `relay serve` that a
//! SIGTERM stops gracefully (the in-flight request finishes, its ledger row — with the relay
//! user's name — is in the database, exit 0); nothing starts without the right master key;
//! rotation re-seals and the old key is refused; beyond loopback only with TLS.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use switchyard_mock_provider::{Behaviour, KeyScript, MockProvider};

use crate::common::{post_messages, run_env, TestResult};

const CANARY: &str = "sk-canary-cli-sealed-5e1b";

fn key_file(dir: &Path, name: &str, byte: u8, mode: u32) -> Result<PathBuf, Box<dyn std::error::Error>> {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, crate::common::master_key_hex(byte))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))?;
    Ok(path)
}

fn sealed_env(key: &Path) -> Vec<(&'static str, String)> {
    vec![
        ("SWITCHYARD_VAULT", "sealed".to_string()),
        ("SWITCHYARD_MASTER_KEY_FILE", key.display().to_string()),
        ("SWITCHYARD_LOG", "trace".to_string()),
    ]
}

fn run_sealed(
    d: &Path,
    key: &Path,
    args: &[&str],
    stdin: Option<&str>,
) -> Result<crate::common::Run, Box<dyn std::error::Error>> {
    let env = sealed_env(key);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    run_env(d, args, stdin, &env)
}

fn file_bytes(dir: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.path().is_file() {
            bytes.extend(std::fs::read(e.path()).unwrap_or_default());
        }
    }
    bytes
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sealed_relay_stops_gracefully_and_nothing_leaks() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key(CANARY, KeyScript::new(["m1"]).behaviour(Behaviour::slow(1500)));
    let dir = tempfile::tempdir()?;
    let keys = tempfile::tempdir()?;
    let d = dir.path();
    let key = key_file(keys.path(), "master.key", 0x11, 0o600)?;
    let base = mock.base_url();
    let add =
        ["connection", "add", "c", "--protocol", "anthropic", "--base-url", &base, "--model", "m1", "--secret-stdin"];
    let added = run_sealed(d, &key, &add, Some(CANARY))?;
    assert_eq!(added.code, 0, "connection added on the sealed vault: {}", added.stderr);
    let user = run_sealed(d, &key, &["--json", "relay", "users", "add", "alice"], None)?;
    assert_eq!(user.code, 0, "user added: {}", user.stderr);
    let alice = serde_json::from_str::<Value>(&user.stdout)?["token"].as_str().unwrap_or_default().to_string();
    assert!(alice.starts_with("syu_"), "a user token is printed once: {}", user.stdout);

    let log = keys.path().join("relay.log");
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("switchyard"));
    cmd.arg("--data-dir").arg(d).args(["relay", "serve", "--listen", "127.0.0.1:0"]);
    for (k, v) in sealed_env(&key) {
        cmd.env(k, v);
    }
    let mut child = cmd.stdout(Stdio::piped()).stderr(std::fs::File::create(&log)?).spawn()?;
    let mut first = String::new();
    BufReader::new(child.stdout.take().ok_or("relay stdout")?).read_line(&mut first)?;
    let addr = first.trim().rsplit("http://").next().ok_or("relay address")?.to_string();

    let in_flight = {
        let (addr, alice) = (addr.clone(), alice.clone());
        std::thread::spawn(move || post_messages(&addr, &alice, "").map_err(|e| e.to_string()))
    };
    std::thread::sleep(Duration::from_millis(500));
    let _ = std::process::Command::new("kill").arg(child.id().to_string()).status();
    let answer = in_flight.join().map_err(|_| "request thread")??;
    let status = child.wait()?;
    assert!(answer.starts_with("HTTP/1.1 200"), "the request in flight at SIGTERM is answered: {answer:.120}");
    assert!(status.success(), "the SIGTERM'd relay exits 0 after draining: {status}");

    let rows = run_sealed(d, &key, &["--json", "attempts", "c"], None)?;
    assert_eq!(rows.code, 0, "attempts read: {}", rows.stderr);
    let rows: Value = serde_json::from_str(&rows.stdout)?;
    let first_row = &rows.as_array().ok_or("attempt rows")?[0];
    assert_eq!(
        first_row["user"], "alice",
        "the in-flight request's ledger row was flushed, with its user: {first_row}"
    );
    assert_eq!(first_row["status"], 200, "and its answer");
    let usage = run_sealed(d, &key, &["--json", "usage", "c", "--by", "user"], None)?;
    assert!(usage.stdout.contains("\"key\": \"alice\""), "usage --by user groups by the user: {}", usage.stdout);

    let logs = std::fs::read(&log)?;
    assert!(
        contains(&logs, "TRACE") || contains(&logs, "DEBUG"),
        "the log ran at trace level (the test reads real logs)"
    );
    let stored = file_bytes(d);
    for (what, bytes) in [("trace logs", &logs), ("data dir files", &stored)] {
        assert!(!contains(bytes, "canary"), "the provider key never reaches the {what}");
        assert!(!contains(bytes, &alice), "nor the user token");
    }
    mock.shutdown().await?;
    Ok(())
}

#[test]
fn without_the_right_master_key_nothing_starts_and_rotation_retires_the_old_one() -> TestResult {
    let dir = tempfile::tempdir()?;
    let keys = tempfile::tempdir()?;
    let d = dir.path();
    let key = key_file(keys.path(), "a.key", 0x21, 0o600)?;
    let add = [
        "connection",
        "add",
        "c",
        "--protocol",
        "openai",
        "--base-url",
        "https://api.example.com/v1",
        "--secret-stdin",
    ];
    assert_eq!(run_sealed(d, &key, &add, Some(CANARY))?.code, 0, "sealed data dir made");
    let token = run_sealed(d, &key, &["relay", "token"], None)?.stdout.trim().to_string();

    let bare = run_env(d, &["relay", "token"], None, &[("SWITCHYARD_MASTER_KEY_FILE", "")])?;
    assert_eq!(bare.code, 6, "a sealed data dir without a master key does not start: {}", bare.stderr);
    assert!(bare.stderr.contains("no master key"), "and says why: {}", bare.stderr);
    let open = key_file(keys.path(), "open.key", 0x21, 0o644)?;
    let loose = run_sealed(d, &open, &["relay", "serve", "--listen", "127.0.0.1:0"], None)?;
    assert_eq!(loose.code, 6, "a key file others can read is refused: {}", loose.stderr);
    assert!(loose.stderr.contains("chmod 600"), "with what to do: {}", loose.stderr);
    let wrong = key_file(keys.path(), "wrong.key", 0x22, 0o600)?;
    let refused = run_sealed(d, &wrong, &["relay", "serve", "--listen", "127.0.0.1:0"], None)?;
    assert_eq!(refused.code, 6, "another key does not start the relay: {}", refused.stderr);
    assert!(refused.stderr.contains("wrong master key"), "the refusal names it: {}", refused.stderr);
    let keychain = run_env(d, &["--vault", "keychain", "relay", "token"], None, &[])?;
    assert_eq!(keychain.code, 6, "a sealed data dir is not opened on the keychain: {}", keychain.stderr);

    let new = key_file(keys.path(), "b.key", 0x23, 0o600)?;
    let new_arg = new.display().to_string();
    let rotated = run_sealed(d, &key, &["--json", "vault", "rotate-master-key", "--new-key-file", &new_arg], None)?;
    assert_eq!(rotated.code, 0, "rotation succeeds: {}", rotated.stderr);
    let report: Value = serde_json::from_str(&rotated.stdout)?;
    assert_eq!(report["resealed"], 2, "the connection's key and the relay token were re-sealed: {report}");
    let old = run_sealed(d, &key, &["relay", "token"], None)?;
    assert_eq!(old.code, 6, "the old key is refused after rotation: {}", old.stderr);
    let again = run_sealed(d, &new, &["relay", "token"], None)?;
    assert_eq!(again.stdout.trim(), token, "the new key opens the same secrets");
    for r in [&bare, &loose, &refused, &keychain, &rotated, &old, &again] {
        assert!(!r.stderr.contains("canary") && !r.stdout.contains("canary"), "no output carries the secret");
    }
    assert!(!contains(&file_bytes(d), "canary"), "nor the data dir");
    Ok(())
}

#[test]
fn beyond_loopback_the_relay_refuses_to_listen_without_tls() -> TestResult {
    let dir = tempfile::tempdir()?;
    let out = run_env(dir.path(), &["relay", "serve", "--listen", "0.0.0.0:0"], None, &[])?;
    assert_eq!(out.code, 2, "invalid input, nothing bound: {}", out.stderr);
    assert!(out.stderr.contains("--tls-cert"), "the refusal says what is needed: {}", out.stderr);
    let half = run_env(dir.path(), &["relay", "serve", "--listen", "0.0.0.0:0", "--tls-cert", "c.pem"], None, &[])?;
    assert_eq!(half.code, 2, "a certificate without its key is a usage error: {}", half.stderr);
    Ok(())
}

/// A client that trusts only `pem` (a new one each time: no pooled connection).
fn trusting(pem: &str) -> Result<reqwest::Client, Box<dyn std::error::Error>> {
    Ok(reqwest::Client::builder().add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes())?).build()?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relay_serve_with_a_certificate_speaks_https_is_ready_and_reloads_it_on_sighup() -> TestResult {
    let dir = tempfile::tempdir()?;
    let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()])?;
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, made.cert.pem())?;
    std::fs::write(&key, made.signing_key.serialize_pem())?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600))?;
        // a TLS key is owner-only
    }
    let data = dir.path().join("data");
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("switchyard"));
    cmd.arg("--data-dir").arg(&data).args(["relay", "serve", "--listen", "127.0.0.1:0", "--tls-cert"]);
    cmd.arg(&cert).arg("--tls-key").arg(&key);
    // Sealed, so the relay token needs no keychain here.
    for (k, v) in sealed_env(&key_file(dir.path(), "master.key", 0x31, 0o600)?) {
        cmd.env(k, v);
    }
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::null()).spawn()?;
    let mut first = String::new();
    BufReader::new(child.stdout.take().ok_or("relay stdout")?).read_line(&mut first)?;
    let url = first.trim().rsplit(' ').next().unwrap_or_default().to_string();
    let ready = trusting(&made.cert.pem())?.get(format!("{url}/readyz")).send().await;

    // The certificate is renewed on disk and the relay told with SIGHUP.
    let renewed = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()])?;
    std::fs::write(&cert, renewed.cert.pem())?;
    std::fs::write(&key, renewed.signing_key.serialize_pem())?;
    let _ = std::process::Command::new("kill").args(["-HUP", &child.id().to_string()]).status();
    let mut served_renewed = false;
    for _ in 0..40 {
        if trusting(&renewed.cert.pem())?.get(format!("{url}/healthz")).send().await.is_ok() {
            served_renewed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let old_after = trusting(&made.cert.pem())?.get(format!("{url}/healthz")).send().await;
    let alive = child.try_wait()?.is_none();

    let _ = std::process::Command::new("kill").arg(child.id().to_string()).status();
    let exited = child.wait()?;
    assert!(url.starts_with("https://127.0.0.1:"), "the relay announces https: {first}");
    assert_eq!(ready?.status(), 200, "ready over TLS with the certificate trusted");
    assert!(alive, "SIGHUP does not stop the relay");
    assert!(served_renewed, "within 2 s of SIGHUP new connections get the renewed certificate");
    assert!(old_after.is_err(), "and no longer the old one");
    assert!(exited.success(), "and it stops cleanly on SIGTERM: {exited}");
    Ok(())
}

/// Issue 39: `--store PATH` created its SQLite file 0644 (the data dir's own is private). The
/// file, its WAL and its shared-memory file are the owner's only, wherever the path is.
#[test]
fn a_store_file_named_with_store_is_created_owner_only() -> TestResult {
    use std::os::unix::fs::PermissionsExt;
    let (dir, elsewhere) = (tempfile::tempdir()?, tempfile::tempdir()?);
    let db = elsewhere.path().join("team.db");
    let path = db.display().to_string();
    let made = crate::common::run(dir.path(), &["--store", &path, "connection", "list"], None)?;
    assert_eq!(made.code, 0, "{}", made.stderr);
    for suffix in ["", "-wal", "-shm"] {
        let file = elsewhere.path().join(format!("team.db{suffix}"));
        let Ok(meta) = std::fs::metadata(&file) else { continue };
        let mode = meta.permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{} is the owner's only: {mode:o}", file.display());
    }
    assert!(db.exists(), "the store file was made where --store says");
    Ok(())
}
