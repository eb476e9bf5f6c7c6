//! Export and import through the real commands over Tauri's mock runtime (issue 7): the export
//! file carries no key, the preview writes nothing, applying creates disabled profiles without
//! keys, and bad files fail with the engine's path-named message.

use crate::common;

use crate::common::Shell;

use serde_json::{json, Value};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const CANARY: &str = "sk-canary-portable";

fn seeded() -> Result<Shell, Box<dyn std::error::Error>> {
    common::two_connections(CANARY)
}

#[test]
fn export_preview_and_apply_through_the_commands() -> TestResult {
    let shell = seeded()?;
    let out = tempfile::tempdir()?;
    let all = out.path().join("all.json");
    let one = out.path().join("main.json");
    let path = all.display().to_string();

    let exported = shell.ok("export_config", json!({ "slugs": null, "path": path }))?;
    assert_eq!(exported, json!({ "path": path, "connections": 2 }));
    let text = std::fs::read_to_string(&all)?;
    assert!(text.contains("\"switchyard.config\""), "format v1 was written: {text}");
    assert!(!text.contains(CANARY), "the export carries no key: {text}");
    let exported = shell.ok("export_config", json!({ "slugs": ["main"], "path": one.display().to_string() }))?;
    assert_eq!(exported["connections"], 1, "only the selected connection");
    let missing = shell.err("export_config", json!({ "slugs": ["nope"], "path": one.display().to_string() }))?;
    assert_eq!(missing["code"], "not_found", "{missing}");

    let preview = shell.ok("import_preview", json!({ "path": path, "onConflict": "rename" }))?;
    assert_eq!(preview["dry_run"], true);
    assert_eq!(preview["renamed"], 2, "both slugs are taken here: {preview}");
    assert_eq!(preview["connections"][0]["action"], "rename");
    assert_eq!(preview["connections"][0]["new_slug"], "main-2");
    assert_eq!(shell.slugs()?, ["main", "other"], "the preview wrote nothing");
    let skip = shell.ok("import_preview", json!({ "path": path, "onConflict": "skip" }))?;
    assert_eq!(skip["skipped"], 2, "{skip}");
    assert_eq!(skip["connections"][1]["new_slug"], Value::Null);
    // The policy is a typed argument (`ConflictPolicy`): another word is refused before the command runs.
    let bad_choice = shell.err("import_preview", json!({ "path": path, "onConflict": "overwrite" }))?;
    assert!(bad_choice.to_string().contains("onConflict"), "the refusal names the argument: {bad_choice}");
    assert_eq!(shell.slugs()?, ["main", "other"], "a refused choice wrote nothing");

    let applied = shell.ok("import_apply", json!({ "path": one.display().to_string(), "onConflict": "rename" }))?;
    assert_eq!(applied["dry_run"], false);
    assert_eq!(applied["renamed"], 1);
    let detail = shell.ok("connection_show", json!({ "slug": "main-2" }))?;
    let profiles = detail["profiles"].as_array().ok_or("profiles")?;
    assert_eq!(profiles.len(), 2, "{detail}");
    for p in profiles {
        assert_eq!(p["enabled"], false, "imported profiles arrive disabled: {p}");
        assert_eq!(p["credential"], "missing", "and without a key: {p}");
    }
    Ok(())
}

#[test]
fn bad_files_fail_with_the_path_in_the_document_and_write_nothing() -> TestResult {
    let shell = seeded()?;
    let out = tempfile::tempdir()?;
    let good = out.path().join("good.json");
    shell.ok("export_config", json!({ "slugs": null, "path": good.display().to_string() }))?;
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&good)?)?;
    doc["connections"][0]["profiles"][1]["weight"] = json!(100_000);
    let bad = out.path().join("bad.json");
    std::fs::write(&bad, serde_json::to_string(&doc)?)?;
    for cmd in ["import_preview", "import_apply"] {
        let e = shell.err(cmd, json!({ "path": bad.display().to_string(), "onConflict": "rename" }))?;
        assert_eq!(e["code"], "invalid", "{e}");
        let message = e["message"].as_str().unwrap_or_default();
        assert!(message.contains("connections[0].profiles[1].weight"), "names the path: {message}");
    }
    assert_eq!(shell.slugs()?, ["main", "other"], "nothing was written");

    let big = out.path().join("big.json");
    std::fs::write(&big, " ".repeat(1024 * 1024 + 1))?;
    let e = shell.err("import_preview", json!({ "path": big.display().to_string(), "onConflict": "rename" }))?;
    assert!(e["message"].as_str().unwrap_or_default().contains("1 MiB"), "{e}");
    let e = shell.err("import_preview", json!({ "path": out.path().join("none.json"), "onConflict": "rename" }))?;
    assert!(e["message"].as_str().unwrap_or_default().contains("none.json"), "{e}");
    Ok(())
}
