//! The team relay's edge (invariants 26, 27): per-user tokens next to the install's own (which
//! counts only from a loopback peer), the user in the ledger, a revocation refused within a
//! second by a running relay; TLS required beyond loopback and served with a certificate made
//! here; `/readyz`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http::HeaderMap;
use serde_json::json;
use switchyard_engine::{Engine, MasterKey, Router, SystemClock};
use switchyard_mock_provider::KeyScript;
use switchyard_relay::{Listen, RelayState, Service, TlsFiles};

use crate::common::{relay, Key, TestResult};

fn bearer(token: &str) -> Result<HeaderMap, Box<dyn std::error::Error>> {
    let mut h = HeaderMap::new();
    h.insert("authorization", format!("Bearer {token}").parse()?);
    Ok(h)
}

async fn chat_as(r: &crate::common::Relay, token: &str) -> reqwest::Result<reqwest::Response> {
    let body = json!({"model": "m1", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]});
    r.http.post(format!("{}{}", r.base(), r.path())).bearer_auth(token).json(&body).send().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_token_is_recorded_by_name_and_refused_within_a_second_of_revocation() -> TestResult {
    let keys = vec![
        Key { label: "a", secret: "sk-a", weight: 1, script: KeyScript::new(["m1"]) },
        Key { label: "b", secret: "sk-b", weight: 1, script: KeyScript::new(["m1"]) },
    ];
    let r = relay("openai", &["m1"], keys, Some("balanced")).await?;
    let alice = r.engine.relay_user_add("alice").await?;
    // The relay re-reads the live users every 250 ms: the new token works within a second.
    let added = Instant::now();
    loop {
        let status = chat_as(&r, alice.expose()).await?.status();
        if status == 200 {
            break;
        }
        assert_eq!(status, 401, "before the relay re-reads the users the token is unknown, nothing else");
        assert!(added.elapsed() < Duration::from_secs(1), "a new user's token is accepted within a second");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(chat_as(&r, &r.token).await?.status(), 200, "the install's own token keeps working on loopback");
    assert_eq!(chat_as(&r, "syu_0000").await?.status(), 401, "an unknown user token is refused");

    r.engine.relay_user_revoke("alice").await?;
    let revoked = Instant::now();
    let refused_after = loop {
        let status = chat_as(&r, alice.expose()).await?.status();
        if status == 401 {
            break revoked.elapsed();
        }
        assert!(revoked.elapsed() < Duration::from_secs(1), "a revoked token must be refused within a second");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(refused_after < Duration::from_secs(1), "refused {refused_after:?} after the revocation");

    let r = r.stop().await?;
    let rows = r.engine.attempts("c", 500).await?;
    let users: Vec<Option<String>> = rows.iter().map(|a| a.user.clone()).collect();
    assert!(users.contains(&Some("alice".to_string())), "alice's request is recorded under her name: {users:?}");
    assert!(users.contains(&None), "the local token's request carries no user: {users:?}");
    let text = r.data_dir_text();
    assert!(!text.contains(alice.expose()), "the user token is never stored (only its hash)");
    let json = serde_json::to_string(&rows)?;
    assert!(json.contains("\"user\":\"alice\""), "attempts JSON rows carry \"user\"");
    assert!(!json.contains(alice.expose()), "never the token");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_install_token_counts_only_from_loopback_and_a_user_token_from_anywhere() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = Arc::new(
        Engine::open_with(dir.path(), Arc::new(switchyard_vault::MemoryVault::new()), Arc::new(SystemClock)).await?,
    );
    let local = engine.relay_token(false).await?;
    let bob = engine.relay_user_add("bob").await?;
    let state =
        RelayState::new(Arc::new(Router::start(engine.clone())), switchyard_engine::Secret::new(local.expose()))?;
    state.refresh_users().await;
    assert!(state.is_authorized(&bearer(local.expose())?, true), "the install's token from loopback");
    assert!(
        !state.is_authorized(&bearer(local.expose())?, false),
        "not from beyond loopback (a person's token is needed there)"
    );
    let caller = state.caller(&bearer(bob.expose())?, false).map(|(_, c)| c.user());
    assert_eq!(caller, Some(Some("bob".to_string())), "a user's token from anywhere, named");
    engine.relay_user_revoke("bob").await?;
    state.refresh_users().await;
    assert!(!state.is_authorized(&bearer(bob.expose())?, true), "revoked: refused at the next re-read");
    Ok(())
}

/// The certificate [`self_signed`] wrote in `dir`, as a root to trust.
fn self_signed_root(dir: &tempfile::TempDir) -> Result<reqwest::Certificate, Box<dyn std::error::Error>> {
    Ok(reqwest::Certificate::from_pem(&std::fs::read(dir.path().join("cert.pem"))?)?)
}

/// A self-signed certificate for 127.0.0.1, localhost and relay.example.com, written as PEM
/// files in `dir`.
fn self_signed(dir: &std::path::Path) -> Result<(TlsFiles, reqwest::Certificate), Box<dyn std::error::Error>> {
    let made = rcgen::generate_simple_self_signed(vec![
        "127.0.0.1".to_string(),
        "localhost".to_string(),
        "relay.example.com".to_string(),
    ])?;
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, made.cert.pem())?;
    std::fs::write(&key, made.signing_key.serialize_pem())?;
    owner_only(&key)?;
    Ok((TlsFiles { cert, key }, reqwest::Certificate::from_pem(made.cert.pem().as_bytes())?))
}

fn owner_only(path: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

/// Issue 39: a TLS key group or others may read was served; it is refused at start as the
/// master key file is (the message names the file and the mode, never the key).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_key_others_may_read_is_refused_at_start() -> TestResult {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir()?;
    let engine = Arc::new(
        Engine::open_with(dir.path(), Arc::new(switchyard_vault::MemoryVault::new()), Arc::new(SystemClock)).await?,
    );
    let certs = tempfile::tempdir()?;
    let (files, _) = self_signed(certs.path())?;
    std::fs::set_permissions(&files.key, std::fs::Permissions::from_mode(0o644))?;
    let service = Arc::new(Service::with(engine, Listen::Addr("0.0.0.0:0".parse()?), None).with_tls(Some(files)));
    let status = service.start().await;
    assert_eq!(status.state, switchyard_engine::RelayServiceState::Error, "a 0644 key does not serve");
    let why = status.error.unwrap_or_default();
    assert!(why.contains("key.pem") && why.contains("0644") && why.contains("chmod 600"), "says which and why: {why}");
    assert!(!why.contains("PRIVATE KEY"), "no key material: {why}");
    Ok(())
}

/// Issue 39: SIGHUP read the certificate files on the serving runtime: a FIFO at the path froze
/// every request. A path that is not a regular file is refused without opening it, reads run
/// off the runtime with a bound, and requests are answered all the while.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_at_the_key_path_never_stalls_a_reload_or_a_request() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = Arc::new(
        Engine::open_with(dir.path(), Arc::new(switchyard_vault::MemoryVault::new()), Arc::new(SystemClock)).await?,
    );
    let certs = tempfile::tempdir()?;
    let (files, root) = self_signed(certs.path())?;
    let service =
        Arc::new(Service::with(engine, Listen::Addr("0.0.0.0:0".parse()?), None).with_tls(Some(files.clone())));
    let port = service.start().await.bound_port.ok_or("no port")?;
    std::fs::remove_file(&files.key)?;
    let made = std::process::Command::new("mkfifo").arg(&files.key).status()?;
    assert!(made.success(), "mkfifo");
    let started = std::time::Instant::now();
    let reload = tokio::spawn({
        let service = service.clone();
        async move { service.reload_tls().await }
    });
    assert!(trusted_by(root.clone(), port).await?, "requests are answered while the reload runs");
    let why = reload.await?.err().ok_or("a FIFO is no key")?;
    assert!(why.contains("key.pem") && why.contains("not a regular file"), "the refusal names it: {why}");
    assert!(started.elapsed() < switchyard_relay::TLS_READ_TIMEOUT, "refused at once, not at the bound");
    assert!(trusted_by(root, port).await?, "the last good certificate is still served");
    service.stop().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beyond_loopback_only_with_tls_and_then_served_over_tls() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = Arc::new(
        Engine::open_with(dir.path(), Arc::new(switchyard_vault::MemoryVault::new()), Arc::new(SystemClock)).await?,
    );
    let any: SocketAddr = "0.0.0.0:0".parse()?;

    let plain = Arc::new(Service::with(engine.clone(), Listen::Addr(any), None));
    let status = plain.start().await;
    assert_eq!(
        status.state,
        switchyard_engine::RelayServiceState::Error,
        "a non-loopback address without a certificate does not listen"
    );
    let why = status.error.unwrap_or_default();
    assert!(why.contains("--tls-cert"), "the refusal says what is needed: {why}");

    let (files, root) = self_signed(dir.path())?;
    let service = Arc::new(Service::with(engine.clone(), Listen::Addr(any), None).with_tls(Some(files)));
    let status = service.start().await;
    assert_eq!(
        status.state,
        switchyard_engine::RelayServiceState::Listening,
        "with a certificate it listens: {:?}",
        status.error
    );
    let url = status.url.clone().unwrap_or_default();
    assert!(url.starts_with("https://"), "the status names https: {url}");
    let port = status.bound_port.unwrap_or_default();
    let client = reqwest::Client::builder().add_root_certificate(root).build()?;
    let health = client.get(format!("https://127.0.0.1:{port}/healthz")).send().await?;
    assert_eq!(health.status(), 200, "healthz over TLS with the certificate trusted");
    let ready = client.get(format!("https://127.0.0.1:{port}/readyz")).send().await?;
    assert_eq!(ready.status(), 200, "ready: store up, migrations applied");
    assert_eq!(ready.json::<serde_json::Value>().await?, json!({"ready": true}));

    let named = reqwest::Client::builder()
        .add_root_certificate(self_signed_root(&dir)?)
        .resolve("relay.example.com", SocketAddr::from(([127, 0, 0, 1], u16::try_from(port)?)))
        .build()?;
    let by_name = named.get(format!("https://relay.example.com:{port}/healthz")).send().await?;
    assert_eq!(by_name.status(), 200, "over TLS the relay answers the server's own name (no loopback Host rule)");

    let cleartext = reqwest::Client::new().get(format!("http://127.0.0.1:{port}/healthz")).send().await;
    assert!(cleartext.map(|r| r.status() != 200).unwrap_or(true), "plain HTTP to the TLS port is not answered");
    let untrusting = reqwest::Client::new().get(format!("https://127.0.0.1:{port}/healthz")).send().await;
    assert!(untrusting.is_err(), "a client that does not trust the certificate fails the handshake");
    service.stop().await;
    Ok(())
}

/// Whether a new client trusting only `root` completes a TLS request to `port`.
async fn trusted_by(root: reqwest::Certificate, port: i32) -> Result<bool, Box<dyn std::error::Error>> {
    let client = reqwest::Client::builder().add_root_certificate(root).build()?;
    Ok(client.get(format!("https://127.0.0.1:{port}/healthz")).send().await.is_ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_serves_the_renewed_certificate_and_a_broken_one_keeps_the_last_good() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = Arc::new(
        Engine::open_with(dir.path(), Arc::new(switchyard_vault::MemoryVault::new()), Arc::new(SystemClock)).await?,
    );
    let plain = Arc::new(Service::with(engine.clone(), Listen::Addr("127.0.0.1:0".parse()?), None));
    assert_eq!(plain.reload_tls().await, Ok(false), "nothing to reload without TLS");

    let first = tempfile::tempdir()?;
    let (files, old_root) = self_signed(first.path())?;
    let service =
        Arc::new(Service::with(engine.clone(), Listen::Addr("0.0.0.0:0".parse()?), None).with_tls(Some(files.clone())));
    let status = service.start().await;
    let port = status.bound_port.ok_or("no port")?;
    assert!(trusted_by(old_root.clone(), port).await?, "the first certificate is served");

    // Renewed in place (same paths, new key pair), then reloaded.
    let second = tempfile::tempdir()?;
    let (renewed, new_root) = self_signed(second.path())?;
    std::fs::copy(&renewed.cert, &files.cert)?;
    std::fs::copy(&renewed.key, &files.key)?;
    assert_eq!(service.reload_tls().await, Ok(true));
    assert!(trusted_by(new_root.clone(), port).await?, "new connections get the renewed certificate");
    assert!(!trusted_by(old_root, port).await?, "and not the old one");

    // A half-written renewal (the key of another pair) is refused; the renewed one stays.
    let third = tempfile::tempdir()?;
    let (other, _) = self_signed(third.path())?;
    std::fs::copy(&other.key, &files.key)?;
    let why = service.reload_tls().await.err().ok_or("a key that does not fit is refused")?;
    assert!(why.contains("does not fit") && why.contains("key.pem"), "the refusal names the file: {why}");
    assert!(!why.contains("PRIVATE KEY"), "no key material in the message: {why}");
    std::fs::write(&files.cert, "not pem")?;
    let why = service.reload_tls().await.err().ok_or("an unreadable certificate is refused")?;
    assert!(why.contains("cert.pem"), "the refusal names the file: {why}");
    assert!(trusted_by(new_root, port).await?, "the last good certificate is still served");
    service.stop().await;
    Ok(())
}

/// Issue 39: unauthenticated `/readyz` told both master-key ids and the internal reason. A
/// stranger (a load balancer) learns `ready:false` only; the install's token from loopback gets
/// the reason — and not when a proxy says it forwarded the request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_says_only_not_ready_to_a_stranger_once_the_master_key_was_rotated_away() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = Arc::new(
        Engine::open(switchyard_engine::OpenOptions::at(dir.path()).sealed(MasterKey::from_bytes([5; 32]))).await?,
    );
    let token = engine.relay_token(false).await?;
    let service = Arc::new(Service::with(engine.clone(), Listen::Addr("127.0.0.1:0".parse()?), None));
    let status = service.start().await;
    let port = status.bound_port.ok_or("listening")?;
    let http = reqwest::Client::new();
    let readyz = format!("http://127.0.0.1:{port}/readyz");
    assert_eq!(http.get(&readyz).send().await?.status(), 200, "ready under its key");
    engine.rotate_master_key(&MasterKey::from_bytes([6; 32])).await?;
    let answer = http.get(&readyz).send().await?;
    assert_eq!(answer.status(), 503, "a replica holding the old key is not ready");
    let body: serde_json::Value = answer.json().await?;
    assert_eq!(body, serde_json::json!({"ready": false}), "a stranger learns nothing but that");
    let answer = http.get(&readyz).bearer_auth(token.expose()).send().await?;
    let body: serde_json::Value = answer.json().await?;
    let reason = body["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("wrong master key"), "the operator is told why: {body}");
    let proxied = http.get(&readyz).bearer_auth(token.expose()).header("x-forwarded-for", "203.0.113.9").send().await?;
    let body: serde_json::Value = proxied.json().await?;
    assert_eq!(body, serde_json::json!({"ready": false}), "through a proxy the install token is nobody's");
    for forwarded in ["x-forwarded-for", "x-real-ip", "forwarded"] {
        let call = http
            .post(format!("http://127.0.0.1:{port}/c/any/v1/chat/completions"))
            .bearer_auth(token.expose())
            .header(forwarded, "for=203.0.113.9")
            .json(&serde_json::json!({"model": "m", "messages": []}))
            .send()
            .await?;
        assert_eq!(call.status(), 401, "{forwarded}: a proxied request is not the operator's, whatever its token");
    }
    assert_eq!(http.get(format!("http://127.0.0.1:{port}/healthz")).send().await?.status(), 200, "but it is alive");
    service.stop().await;
    Ok(())
}
