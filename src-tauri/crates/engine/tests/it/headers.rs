//! Connection headers through the engine (what the CLI and the desktop form call) and import:
//! framing and credential-looking headers are refused by the one rule in core, the error names
//! the header and never the value, and nothing reaches the database file or an export.

use std::path::Path;

use crate::common::{legacy, open, profile, secret, TestResult};
use serde_json::json;
use switchyard_engine::{Conflict, ConnectionEdit, Engine, EngineError, DB_FILE};

const CANARY: &str = "sk-canary-echo-123";

/// Every byte of the database file and its WAL, as text to grep.
fn db_text(dir: &Path) -> String {
    let read = |name: String| std::fs::read(dir.join(name)).unwrap_or_default();
    let mut bytes = read(DB_FILE.to_string());
    bytes.extend(read(format!("{DB_FILE}-wal")));
    String::from_utf8_lossy(&bytes).into_owned()
}

fn with_header(slug: &str, header: &str) -> switchyard_engine::NewConnection {
    let mut c = legacy(slug);
    c.headers = vec![header.to_string()];
    c
}

/// The refusal as `field: message`, or a description of what came back instead.
fn refusal<T: std::fmt::Debug>(got: Result<T, EngineError>) -> String {
    match got {
        Err(EngineError::Invalid(e)) => e.to_string(),
        other => format!("not refused as invalid input: {other:?}"),
    }
}

#[tokio::test]
async fn framing_and_credential_names_are_refused_and_named() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    for name in [
        "Content-Length",
        "transfer-encoding",
        "host",
        "connection",
        "expect",
        "te",
        "upgrade",
        "keep-alive",
        "trailer",
        "proxy-connection",
        "authorization",
        "x-api-key",
        "api-key",
        "x-auth-token",
        "x-portkey-api-key",
        "x-helicone-auth",
        "x-client-secret",
    ] {
        let got = refusal(engine.connection_add(with_header("h", &format!("{name}: 1")), None).await);
        assert!(
            got.starts_with(&format!("header: '{}'", name.to_ascii_lowercase())),
            "'{name}' is refused naming the header: {got}"
        );
    }
    assert!(engine.connection_list().await?.is_empty(), "no refused header created a connection");
    Ok(())
}

#[tokio::test]
async fn a_credential_looking_value_is_refused_without_echo_and_never_stored() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    for value in [CANARY.to_string(), format!("Bearer {CANARY}"), "CanaryEcho123CanaryEcho123CanaryEcho123".into()] {
        let got = refusal(engine.connection_add(with_header("h", &format!("x-custom: {value}")), None).await);
        assert!(got.contains("'x-custom'"), "the refusal names the header: {got}");
        assert!(got.contains("switchyard profile add"), "the refusal points at credential profiles: {got}");
        assert!(!got.to_lowercase().contains("canary"), "the refusal never repeats the value: {got}");
    }

    engine.connection_add(legacy("main"), Some(secret("sk-own-key-1"))).await?;
    let before = engine.connection_show("main").await?;
    let edit = ConnectionEdit { headers: Some(vec![format!("X-Custom: {CANARY}")]), ..ConnectionEdit::default() };
    let got = refusal(engine.connection_edit("main", edit).await);
    assert!(!got.contains(CANARY), "an edit's refusal does not repeat the value either: {got}");
    assert_eq!(engine.connection_show("main").await?, before, "a refused edit changes nothing");

    assert!(!db_text(dir.path()).contains("canary"), "no refused value reached the database file or its WAL");
    assert!(!engine.export(None).await?.contains("canary"), "nor an export");
    Ok(())
}

#[tokio::test]
async fn an_import_carrying_such_a_header_is_refused_with_nothing_written() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    let doc = |name: &str, value: &str| {
        json!({
            "format": "switchyard.config",
            "version": 1,
            "connections": [{
                "ref": "c1", "slug": "team", "protocol": "openai",
                "base_url": "https://team.example.com/v1",
                "headers": [{"name": "openai-organization", "value": "org-team"}, {"name": name, "value": value}],
                "models": ["gpt-a"],
                "profiles": [{"ref": "p1", "label": "alice", "weight": 1, "priority": 0, "primary": true}]
            }]
        })
        .to_string()
    };
    let cases = [
        ("transfer-encoding", "chunked", "connections[0].headers[1].name: 'transfer-encoding'"),
        ("x-auth-token", "plain", "connections[0].headers[1].name: 'x-auth-token' carries a credential"),
        (
            "x-custom",
            "Bearer CanaryEcho123",
            "connections[0].headers[1].value: value of 'x-custom' looks like a secret",
        ),
        (
            "x-custom",
            "CanaryEcho123CanaryEcho123CanaryEcho123",
            "connections[0].headers[1].value: value of 'x-custom' looks like a secret",
        ),
    ];
    for (name, value, want) in cases {
        let got = refusal(engine.import(&doc(name, value), false, Conflict::Rename).await);
        assert!(got.starts_with(want), "import of '{name}' is refused at its path: {got}");
        assert!(!got.to_lowercase().contains("canary"), "the import error does not repeat the value: {got}");
    }
    assert!(engine.connection_list().await?.is_empty(), "a refused import writes no connection");
    assert!(!db_text(dir.path()).contains("anary"), "no refused value reached the database file");
    Ok(())
}

#[tokio::test]
async fn labels_with_hidden_characters_are_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine: Engine = open(dir.path()).await?;
    engine.connection_add(legacy("main"), Some(secret("sk-own-key-2"))).await?;
    for label in ["work\u{200B}key", "work\u{202E}yek", "\u{FEFF}work", "work\u{2066}key"] {
        let got = refusal(engine.profile_add("main", profile(label, 1), secret("sk-own-key-3")).await);
        assert!(got.starts_with("label: must not contain"), "{label:?} is refused: {got}");
    }
    assert_eq!(engine.profile_list("main").await?.len(), 1, "no refused label created a profile");
    Ok(())
}
