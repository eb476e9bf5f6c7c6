//! Export and import through the real commands over Tauri's mock runtime (issue 7): the export
//! file carries no key, the preview writes nothing, applying creates disabled profiles without
//! keys, and bad files fail with the engine's path-named message.

use std::sync::Arc;

use serde_json::{json, Value};
use switchyard_engine::{Engine, SystemClock};
use switchyard_vault::MemoryVault;
use tauri::test::{mock_builder, mock_context, noop_assets, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::WebviewWindow;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const CANARY: &str = "sk-canary-portable";

struct Shell {
    _app: tauri::App<MockRuntime>,
    window: WebviewWindow<MockRuntime>,
    _dir: tempfile::TempDir,
}

impl Shell {
    fn start() -> Result<Self, Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let engine = Arc::new(tauri::async_runtime::block_on(Engine::open_with(
            dir.path(),
            Arc::new(MemoryVault::new()),
            Arc::new(SystemClock),
        ))?);
        let builder = switchyard_desktop::specta_builder_for!(MockRuntime);
        let app = mock_builder()
            .invoke_handler(builder.invoke_handler())
            .manage(engine)
            .build(mock_context(noop_assets()))?;
        let window = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build()?;
        Ok(Shell { _app: app, window, _dir: dir })
    }

    fn call(&self, cmd: &str, args: Value) -> Result<Value, Value> {
        let request = InvokeRequest {
            cmd: cmd.into(),
            callback: tauri::ipc::CallbackFn(0),
            error: tauri::ipc::CallbackFn(1),
            url: "tauri://localhost".parse().map_err(|_| json!("bad url"))?,
            body: tauri::ipc::InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        };
        tauri::test::get_ipc_response(&self.window, request)
            .and_then(|body| body.deserialize::<Value>().map_err(|e| json!(e.to_string())))
    }

    fn ok(&self, cmd: &str, args: Value) -> Result<Value, Box<dyn std::error::Error>> {
        self.call(cmd, args).map_err(|e| format!("{cmd} failed: {e}").into())
    }

    fn err(&self, cmd: &str, args: Value) -> Result<Value, Box<dyn std::error::Error>> {
        match self.call(cmd, args) {
            Ok(v) => Err(format!("{cmd} should have failed but answered {v}").into()),
            Err(e) => Ok(e),
        }
    }

    fn slugs(&self) -> Result<Vec<String>, Box<dyn std::error::Error>> {
        let list = self.ok("list_connections", json!({}))?;
        Ok(list
            .as_array()
            .map(|a| a.iter().filter_map(|d| d["connection"]["slug"].as_str().map(str::to_string)).collect())
            .unwrap_or_default())
    }
}

fn seeded() -> Result<Shell, Box<dyn std::error::Error>> {
    let shell = Shell::start()?;
    for slug in ["main", "other"] {
        shell.ok(
            "connection_add",
            json!({ "input": { "slug": slug, "protocol": "openai", "base_url": "https://api.example.com/v1",
                    "models": ["m1", "m2"], "mappings": [], "headers": ["OpenAI-Organization: org-1"] },
                    "secret": format!("{CANARY}-{slug}") }),
        )?;
    }
    shell.ok(
        "profile_add",
        json!({ "slug": "main", "input": { "label": "backup", "weight": 3, "priority": null }, "secret": format!("{CANARY}-2") }),
    )?;
    Ok(shell)
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
    let bad_choice = shell.err("import_preview", json!({ "path": path, "onConflict": "overwrite" }))?;
    assert_eq!(bad_choice["code"], "invalid", "{bad_choice}");

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
