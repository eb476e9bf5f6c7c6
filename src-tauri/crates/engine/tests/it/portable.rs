//! Export and import of shared configurations on real SQLite files and the real keychain:
//! round trip, no secrets in exports, dry runs write nothing, slug conflicts, bad files and
//! a crash inside the import's transaction write nothing.

use std::path::Path;

use crate::common::{legacy, open, profile, secret, TestResult};
use serde_json::{json, Value};
use switchyard_engine::{Conflict, Engine, EngineError, ErrorCode, FaultPoint, DB_FILE};

/// A shared file: one balanced connection with two profiles, one legacy connection.
fn shared_doc() -> Value {
    json!({
        "format": "switchyard.config",
        "version": 1,
        "connections": [
            {
                "ref": "c1", "slug": "team", "protocol": "openai",
                "base_url": "https://team.example.com/v1",
                "headers": [{"name": "openai-organization", "value": "org-team"}],
                "models": ["gpt-a"], "mapping": {"fast": "gpt-a"}, "routing": "balanced",
                "profiles": [
                    {"ref": "p1", "label": "alice", "weight": 2, "priority": 0, "primary": true},
                    {"ref": "p2", "label": "bob", "weight": 5, "priority": 1, "primary": false}
                ]
            },
            {
                "ref": "c2", "slug": "claude", "protocol": "anthropic",
                "base_url": "https://claude.example.com",
                "models": ["m1"], "routing": "priority",
                "profiles": [
                    {"ref": "p3", "label": "only", "weight": 1, "priority": 0, "primary": true}
                ]
            }
        ]
    })
}

/// The DB file and its WAL, byte for byte.
fn db_bytes(dir: &Path) -> (Vec<u8>, Vec<u8>) {
    let read = |name: String| std::fs::read(dir.join(name)).unwrap_or_default();
    (read(DB_FILE.to_string()), read(format!("{DB_FILE}-wal")))
}

/// An export with every `ref` removed and profiles in label order: equal "up to refs".
fn without_refs(text: &str) -> Result<Value, serde_json::Error> {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("ref");
                m.values_mut().for_each(strip);
                if let Some(Value::Array(ps)) = m.get_mut("profiles") {
                    ps.sort_by_key(|p| p["label"].as_str().unwrap_or_default().to_string());
                }
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v: Value = serde_json::from_str(text)?;
    strip(&mut v);
    Ok(v)
}

async fn populated(dir: &Path) -> Result<Engine, EngineError> {
    let engine = open(dir).await?;
    engine.connection_add(legacy("main"), Some(secret("sk-canary-portable-0001"))).await?;
    engine.profile_add("main", profile("backup", 3), secret("sk-canary-portable-0002")).await?;
    engine.profile_add("main", profile("spare", 7), secret("sk-canary-portable-0003")).await?;
    engine.import(&shared_doc().to_string(), false, Conflict::Rename).await?;
    Ok(engine)
}

#[tokio::test]
async fn export_import_export_round_trips_up_to_refs() -> TestResult {
    let (a, b) = (tempfile::tempdir()?, tempfile::tempdir()?);
    let source = populated(a.path()).await?;
    let first = source.export(None).await?;
    let doc: Value = serde_json::from_str(&first)?;
    assert_eq!(doc["connections"].as_array().map(Vec::len), Some(3), "every connection is exported");
    assert_eq!(doc["connections"][2]["routing"], "balanced", "a pending mode is exported as the wanted mode");

    let target = open(b.path()).await?;
    let report = target.import(&first, false, Conflict::Rename).await?;
    assert_eq!(
        (report.created, report.renamed, report.skipped),
        (3, 0, 0),
        "a fresh data dir takes every connection under its own slug"
    );
    let second = target.export(None).await?;
    assert_eq!(without_refs(&second)?, without_refs(&first)?, "export → import → export keeps everything but the refs");
    let again = source.export(None).await?;
    assert_eq!(again, first, "refs are stable: two exports of one database are identical");
    Ok(())
}

#[tokio::test]
async fn exports_carry_no_secret_locator_or_database_id() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = populated(dir.path()).await?;
    let mut forbidden = vec![
        "canary".to_string(),
        "sk-".to_string(),
        engine.install_id().to_string(),
        "switchyard.".to_string() + engine.install_id(),
        "locator".to_string(),
        "evidence".to_string(),
        "revision".to_string(),
    ];
    for c in engine.connection_overview().await? {
        forbidden.push(c.connection.id.clone());
        forbidden.push(c.connection.basis_fingerprint.clone());
        forbidden.extend(c.profiles.iter().map(|p| p.id.clone()));
    }
    let selected = ["main".to_string()];
    for text in [engine.export(None).await?, engine.export(Some(&selected)).await?] {
        for needle in &forbidden {
            assert!(!text.to_lowercase().contains(&needle.to_lowercase()), "an export must not contain '{needle}'");
        }
    }
    let one: Value = serde_json::from_str(&engine.export(Some(&selected)).await?)?;
    assert_eq!(one["connections"].as_array().map(Vec::len), Some(1), "a selection exports only the named connections");
    assert_eq!(one["connections"][0]["profiles"][0]["ref"], "p1", "refs restart at p1 in every export");
    let missing = engine.export(Some(&["ghost".to_string()])).await;
    assert_eq!(
        missing.err().map(|e| e.code()),
        Some(ErrorCode::NotFound),
        "an unknown slug in the selection is an error, not a silent omission"
    );
    Ok(())
}

#[tokio::test]
async fn imported_profiles_are_disabled_without_credentials_and_the_mode_is_pending() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    engine.import(&shared_doc().to_string(), false, Conflict::Rename).await?;
    let team = engine.connection_show("team").await?;
    assert_eq!(team.profiles.len(), 2, "both profiles are created");
    for p in &team.profiles {
        assert!(!p.enabled, "imported profile '{}' starts disabled", p.label);
        assert_eq!(p.credential.as_str(), "missing", "imported profile '{}' has no secret", p.label);
    }
    let primaries: Vec<_> = team.profiles.iter().filter(|p| p.primary).map(|p| &p.label).collect();
    assert_eq!(primaries, vec!["alice"], "the primary flag is kept");
    assert_eq!((team.profiles[1].weight, team.profiles[1].priority), (5, 1), "weight and priority are kept");
    let status = engine.routing_status("team").await?;
    assert_eq!(status.mode.as_str(), "legacy", "an import never switches routing on");
    assert_eq!(
        status.pending_mode.map(|m| m.as_str()),
        Some("balanced"),
        "routing status says the wanted mode is pending"
    );
    let excluded: Vec<_> = status.gates.models[0].excluded.iter().map(|e| e.reason.as_str()).collect();
    assert_eq!(excluded, vec!["disabled", "disabled"], "the gate report says why");
    Ok(())
}

#[tokio::test]
async fn dry_run_writes_nothing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    engine.connection_add(legacy("team"), Some(secret("sk-canary-dry"))).await?;
    let before_rows = engine.connection_overview().await?;
    let before = db_bytes(dir.path());
    let report = engine.import(&shared_doc().to_string(), true, Conflict::Rename).await?;
    assert!(report.dry_run, "the report says it was a dry run");
    let actions: Vec<_> = report.connections.iter().map(|c| (c.action.as_str(), c.new_slug.as_deref())).collect();
    assert_eq!(
        actions,
        vec![("rename", Some("team-2")), ("create", Some("claude"))],
        "the dry run lists what would be renamed and created"
    );
    assert!(db_bytes(dir.path()) == before, "a dry run leaves the database file and its WAL byte for byte unchanged");
    assert_eq!(engine.connection_overview().await?, before_rows, "a dry run creates no rows");
    Ok(())
}

#[tokio::test]
async fn slug_conflicts_are_renamed_or_skipped_never_overwritten() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    engine.connection_add(legacy("team"), Some(secret("sk-canary-own"))).await?;
    let own = engine.connection_show("team").await?;
    let mut doc = shared_doc();
    doc["connections"][1]["slug"] = json!("team-2");

    let renamed = engine.import(&doc.to_string(), false, Conflict::Rename).await?;
    assert_eq!(
        renamed.connections[0].new_slug.as_deref(),
        Some("team-3"),
        "the rename avoids slugs used here and in the file"
    );
    assert_eq!(engine.connection_show("team").await?, own, "the existing connection is untouched");
    assert_eq!(
        engine.connection_show("team-3").await?.connection.base_url,
        "https://team.example.com/v1",
        "the renamed connection carries the file's definition"
    );

    let skipped = engine.import(&doc.to_string(), false, Conflict::Skip).await?;
    assert_eq!(
        (skipped.created, skipped.renamed, skipped.skipped),
        (0, 0, 2),
        "with skip, existing slugs are left alone"
    );
    assert_eq!(engine.connection_list().await?.len(), 3, "skip wrote nothing");
    assert_eq!(engine.connection_show("team").await?, own, "still untouched");
    Ok(())
}

#[tokio::test]
async fn bad_files_and_a_crash_inside_the_transaction_write_nothing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    let before = db_bytes(dir.path());
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(Edit, &str)> = vec![
        (Box::new(|d| d["connections"][0]["profiles"][1]["weight"] = json!(0)), "connections[0].profiles[1].weight"),
        (
            Box::new(|d| d["connections"][1]["profiles"][0]["api_key"] = json!("x")),
            "connections[1].profiles[0].api_key",
        ),
        (Box::new(|d| d["connections"][1]["ref"] = json!("c1")), "connections[1].ref"),
        (Box::new(|d| d["connections"][1]["base_url"] = json!("file:///etc")), "connections[1].base_url"),
        (Box::new(|d| d["version"] = json!(9)), "version"),
    ];
    for (edit, path) in cases {
        let mut doc = shared_doc();
        edit(&mut doc);
        match engine.import(&doc.to_string(), false, Conflict::Rename).await {
            Err(EngineError::Invalid(e)) => assert_eq!(e.field, path, "the error names the path"),
            other => panic!("a bad file must be refused at {path}, got {other:?}"),
        }
    }
    assert!(db_bytes(dir.path()) == before, "refused files change no byte of the database");

    engine.arm_fault(Some(FaultPoint::ImportAfterFirstConnection));
    let crashed = engine.import(&shared_doc().to_string(), false, Conflict::Rename).await;
    assert!(matches!(crashed, Err(EngineError::Crashed(_))), "the armed fault stops the import mid-way: {crashed:?}");
    assert!(
        engine.connection_list().await?.is_empty(),
        "the first connection, written before the crash, is rolled back with the rest"
    );
    Ok(())
}

#[tokio::test]
async fn export_refuses_secret_looking_values_instead_of_writing_them() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    engine.connection_add(legacy("main"), Some(secret("sk-canary-main"))).await?;
    let refused = engine.profile_add("main", profile("sk-pasted-by-mistake", 1), secret("sk-canary-2")).await;
    assert!(
        matches!(&refused, Err(EngineError::Invalid(e)) if e.field == "label"),
        "a key-shaped label is refused when typed: {refused:?}"
    );
    // A label stored before that rule existed (written here straight to the table).
    let connection_id = engine.connection_show("main").await?.connection.id;
    let store = switchyard_store::Store::open_at(&switchyard_engine::store_location(dir.path()).await?).await?;
    let mut conn = store.acquire().await?;
    let row = switchyard_store::profiles::NewProfile {
        id: "p_old",
        connection_id: &connection_id,
        label: "sk-pasted-by-mistake",
        weight: 1,
        priority: 1,
        enabled: false,
        is_primary: false,
        locator: None,
    };
    switchyard_store::profiles::insert(&mut conn, &row, 1).await?;
    drop(conn);
    store.close().await;
    match engine.export(None).await {
        Err(EngineError::Precondition(msg)) => {
            assert!(msg.contains("connections[0].profiles[1].label"), "the refusal names the offending field: {msg}");
            assert!(!msg.contains("pasted-by-mistake"), "and does not repeat the value: {msg}");
        }
        other => panic!("a key-shaped label must not be exported, got {other:?}"),
    }
    Ok(())
}
