//! Starting with the system through the real commands over Tauri's mock runtime (issue 17):
//! off by default; turning it on writes the XDG autostart entry for this binary and persists
//! the wish in the engine; turning it off removes the entry.

use std::sync::Arc;

use serde_json::{json, Value};
use switchyard_engine::{Engine, SystemClock};
use switchyard_vault::MemoryVault;
use tauri::test::{mock_builder, mock_context, noop_assets, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::WebviewWindow;

type TestResult = Result<(), Box<dyn std::error::Error>>;

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
}

#[test]
fn autostart_writes_and_removes_the_xdg_entry_and_persists_the_wish() -> TestResult {
    let config = tempfile::tempdir()?;
    // The only test in this binary, so setting the variable races nothing.
    std::env::set_var("XDG_CONFIG_HOME", config.path());
    let entry = config.path().join("autostart").join("switchyard.desktop");
    let shell = Shell::start()?;

    let off = shell.ok("autostart_status", json!({}))?;
    assert_eq!(off, json!({ "enabled": false, "entry": null }), "off by default");
    assert!(!entry.exists());

    let on = shell.ok("autostart_set", json!({ "enabled": true }))?;
    assert_eq!(on["enabled"], true, "{on}");
    assert_eq!(on["entry"], entry.display().to_string(), "the entry written is reported: {on}");
    let text = std::fs::read_to_string(&entry)?;
    let exe = std::env::current_exe()?;
    assert!(text.lines().any(|l| l == format!("Exec={}", exe.display())), "starts this binary: {text}");
    assert_eq!(shell.ok("autostart_status", json!({}))?["enabled"], true, "the wish is persisted by the engine");

    let off = shell.ok("autostart_set", json!({ "enabled": false }))?;
    assert_eq!(off, json!({ "enabled": false, "entry": null }));
    assert!(!entry.exists(), "turning it off removes the entry");
    let bad = shell.err("autostart_set", json!({ "enabled": "yes" }))?;
    assert!(bad.to_string().contains("enabled"), "a non-boolean is refused: {bad}");
    Ok(())
}
