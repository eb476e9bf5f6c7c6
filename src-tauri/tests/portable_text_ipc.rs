//! Import of pasted or dropped text through the real commands over Tauri's mock runtime (issue
//! 17): the same preview and apply as a file, the same 1 MiB limit and path-named errors, and
//! nothing written by a preview or a bad text.

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
        let e = shell.err(cmd, json!({ "text": "{}", "onConflict": "overwrite" }))?;
        assert_eq!(e["code"], "invalid", "{cmd}: {e}");
    }
    let wrong = json!({ "format": "switchyard.config", "version": 1, "connections": [
        { "ref": "c1", "slug": "x", "protocol": "openai", "base_url": "ftp://nope", "models": ["m"], "routing": "legacy",
          "profiles": [] } ] });
    let e = shell.err("import_text_apply", json!({ "text": wrong.to_string(), "onConflict": "rename" }))?;
    assert!(e["message"].as_str().unwrap_or_default().contains("connections[0]"), "names the path: {e}");
    assert_eq!(shell.slugs()?, ["main", "other"], "nothing was written");
    Ok(())
}
