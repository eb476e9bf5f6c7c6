//! A routing mode wanted by an imported file stays pending until the receiver's own profiles
//! have credentials, are enabled and verified, and the gates hold; then it is restored by
//! itself and verify says so. The provider is a tiny local HTTP responder for `GET /v1/models`.

use crate::common::{open, secret, TestResult};
use serde_json::json;
use switchyard_engine::{Conflict, Engine, ProfileEdit};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Answers every request with a models listing that has `m1`; returns the base URL.
async fn models_server() -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut seen = Vec::new();
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let body = r#"{"object":"list","data":[{"id":"m1","object":"model"}]}"#;
                let resp = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(resp.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    Ok(format!("http://{addr}/v1"))
}

fn enable() -> ProfileEdit {
    ProfileEdit { enabled: Some(true), ..Default::default() }
}

async fn assert_pending(engine: &Engine, when: &str) -> TestResult {
    let status = engine.routing_status("team").await?;
    assert_eq!(status.mode.as_str(), "legacy", "{when}: the connection must still route as legacy");
    assert_eq!(
        status.pending_mode.map(|m| m.as_str()),
        Some("balanced"),
        "{when}: routing status must say balanced is pending"
    );
    Ok(())
}

#[tokio::test]
async fn pending_mode_is_restored_only_after_credentials_enable_verify_and_gates() -> TestResult {
    let base_url = models_server().await?;
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    let doc = json!({
        "format": "switchyard.config", "version": 1,
        "connections": [{
            "ref": "c1", "slug": "team", "protocol": "openai", "base_url": base_url,
            "models": ["m1"], "routing": "balanced",
            "profiles": [
                {"ref": "p1", "label": "alice", "weight": 1, "priority": 0, "primary": true},
                {"ref": "p2", "label": "bob", "weight": 1, "priority": 1, "primary": false}
            ]
        }]
    });
    engine.import(&doc.to_string(), false, Conflict::Rename).await?;
    assert_pending(&engine, "right after import").await?;

    // Enabled and verified, but no credentials: nothing can be proven.
    engine.profile_edit("team", "alice", enable()).await?;
    let report = engine.verify("team", None, false, &|_| {}).await?;
    assert!(
        report.results.iter().all(|r| r.outcome.as_str() == "unverified"),
        "profiles without a secret cannot be verified: {:?}",
        report.results
    );
    assert_eq!(report.routing_restored, None, "nothing was restored");
    assert_pending(&engine, "enabled and verified without credentials").await?;

    // The disabled imported primary stays editable (it is not being disabled).
    engine.profile_edit("team", "bob", ProfileEdit { weight: Some(2), ..Default::default() }).await?;
    engine.profile_rotate("team", "alice", secret("sk-canary-alice")).await?;
    engine.profile_rotate("team", "bob", secret("sk-canary-bob")).await?;
    let creds: Vec<_> = engine.profile_list("team").await?.into_iter().map(|p| p.credential.as_str()).collect();
    assert_eq!(creds, vec!["present", "present"], "rotate adds a first credential");
    assert_pending(&engine, "credentials added, not yet verified").await?;

    // Verified with one profile still disabled: only one eligible profile, gates fail.
    let report = engine.verify("team", None, false, &|_| {}).await?;
    assert!(
        report.results.iter().all(|r| r.outcome.as_str() == "verified"),
        "both keys answer the listing: {:?}",
        report.results
    );
    assert_eq!(report.routing_restored, None, "one enabled profile cannot pass the gates");
    assert_pending(&engine, "verified but bob disabled").await?;

    // Enabling bob makes the gates hold on current evidence: restored at once.
    engine.profile_edit("team", "bob", enable()).await?;
    let status = engine.routing_status("team").await?;
    assert_eq!(status.mode.as_str(), "balanced", "the pending mode is restored once the gates hold");
    assert_eq!(status.state.as_str(), "active", "restored routing is active");
    assert_eq!(status.pending_mode, None, "nothing is pending any more");
    assert_eq!(status.activated_by.as_deref(), Some("import"), "the import gets the credit");
    Ok(())
}

#[tokio::test]
async fn verify_says_when_it_restores_the_pending_mode() -> TestResult {
    let base_url = models_server().await?;
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    let doc = json!({
        "format": "switchyard.config", "version": 1,
        "connections": [{
            "ref": "c1", "slug": "team", "protocol": "openai", "base_url": base_url,
            "models": ["m1"], "routing": "balanced",
            "profiles": [
                {"ref": "p1", "label": "alice", "primary": true},
                {"ref": "p2", "label": "bob"}
            ]
        }]
    });
    engine.import(&doc.to_string(), false, Conflict::Rename).await?;
    for label in ["alice", "bob"] {
        engine.profile_rotate("team", label, secret("sk-canary-x")).await?;
        engine.profile_edit("team", label, enable()).await?;
    }
    assert_pending(&engine, "credentials and enabled, never verified").await?;
    let report = engine.verify("team", None, false, &|_| {}).await?;
    assert_eq!(report.routing.mode.as_str(), "balanced", "verification proved the gates");
    let said = report.routing_restored.unwrap_or_default();
    assert!(said.contains("balanced routing restored"), "verify tells the user the mode was restored: '{said}'");

    // Deactivating afterwards is final: no pending mode comes back.
    let after = engine.routing_deactivate("team").await?;
    assert_eq!((after.mode.as_str(), after.pending_mode), ("legacy", None), "legacy by choice");
    Ok(())
}
