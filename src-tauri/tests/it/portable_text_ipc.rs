//! Import of pasted or dropped text through the real commands over Tauri's mock runtime (issue
//! 17): the same preview and apply as a file, the same 1 MiB limit and path-named errors, and
//! nothing written by a preview or a bad text.

use crate::common;

use crate::common::Shell;

use serde_json::json;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const CANARY: &str = "sk-canary-portable";

fn seeded() -> Result<Shell, Box<dyn std::error::Error>> {
    common::two_connections(CANARY)
}

#[test]
fn pasted_text_previews_and_applies_like_a_file() -> TestResult {
    let shell = seeded()?;
    let out = tempfile::tempdir()?;
    let file = out.path().join("main.json");
    shell.ok("export_config", json!({ "slugs": ["main"], "path": file.display().to_string() }))?;
    // Pasted from chat: surrounding blank lines and indentation are what a copy brings.
    let text = format!("\n\n  {}\n", std::fs::read_to_string(&file)?);

    let preview = shell.ok("import_text_preview", json!({ "text": text, "onConflict": "rename" }))?;
    let from_file =
        shell.ok("import_preview", json!({ "path": file.display().to_string(), "onConflict": "rename" }))?;
    assert_eq!(preview, from_file, "pasted text gets exactly the preview its file gets");
    assert_eq!(preview["connections"][0]["new_slug"], "main-2", "{preview}");
    assert_eq!(shell.slugs()?, ["main", "other"], "the preview wrote nothing");

    let skip = shell.ok("import_text_preview", json!({ "text": text, "onConflict": "skip" }))?;
    assert_eq!(skip["skipped"], 1, "{skip}");
    let applied = shell.ok("import_text_apply", json!({ "text": text, "onConflict": "rename" }))?;
    assert_eq!(applied["renamed"], 1, "{applied}");
    assert_eq!(shell.slugs()?, ["main", "main-2", "other"]);
    let detail = shell.ok("connection_show", json!({ "slug": "main-2" }))?;
    for p in detail["profiles"].as_array().ok_or("profiles")? {
        assert_eq!(p["enabled"], false, "imported profiles arrive disabled: {p}");
        assert_eq!(p["credential"], "missing", "and without a key: {p}");
    }
    assert!(!detail.to_string().contains(CANARY), "no key crossed: {detail}");
    Ok(())
}

#[test]
fn bad_pasted_text_fails_with_a_code_and_writes_nothing() -> TestResult {
    let shell = seeded()?;
    for cmd in ["import_text_preview", "import_text_apply"] {
        let e = shell.err(cmd, json!({ "text": "hello, here is my config: {", "onConflict": "rename" }))?;
        assert_eq!(e["code"], "invalid", "{cmd}: {e}");
        let e = shell.err(cmd, json!({ "text": " ".repeat(1024 * 1024 + 1), "onConflict": "rename" }))?;
        assert!(e["message"].as_str().unwrap_or_default().contains("1 MiB"), "{cmd}: {e}");
        // A typed argument (`ConflictPolicy`): another word is refused before the command runs.
        let e = shell.err(cmd, json!({ "text": "{}", "onConflict": "overwrite" }))?;
        assert!(e.to_string().contains("onConflict"), "{cmd}: the refusal names the argument: {e}");
    }
    let wrong = json!({ "format": "switchyard.config", "version": 1, "connections": [
        { "ref": "c1", "slug": "x", "protocol": "openai", "base_url": "ftp://nope", "models": ["m"], "routing": "legacy",
          "profiles": [] } ] });
    let e = shell.err("import_text_apply", json!({ "text": wrong.to_string(), "onConflict": "rename" }))?;
    assert!(e["message"].as_str().unwrap_or_default().contains("connections[0]"), "names the path: {e}");
    assert_eq!(shell.slugs()?, ["main", "other"], "nothing was written");
    Ok(())
}
