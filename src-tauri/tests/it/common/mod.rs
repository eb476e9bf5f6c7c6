//! The desktop shell over Tauri's mock runtime for IPC tests: the real commands (the
//! tauri-specta handler) on an engine with the memory vault, called as the window calls them.
#![allow(dead_code)]

use std::sync::Arc;

use serde_json::{json, Value};
use switchyard_engine::{Engine, SystemClock};
use switchyard_vault::MemoryVault;
use tauri::test::{mock_builder, mock_context, noop_assets, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::WebviewWindow;

/// One IPC call as the window makes it: the answer, or the error the command returned.
pub fn invoke(window: &WebviewWindow<MockRuntime>, cmd: &str, args: Value) -> Result<Value, Value> {
    let request = InvokeRequest {
        cmd: cmd.into(),
        callback: tauri::ipc::CallbackFn(0),
        error: tauri::ipc::CallbackFn(1),
        url: "tauri://localhost".parse().map_err(|_| json!("bad url"))?,
        body: tauri::ipc::InvokeBody::Json(args),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_string(),
    };
    tauri::test::get_ipc_response(window, request)
        .and_then(|body| body.deserialize::<Value>().map_err(|e| json!(e.to_string())))
}

pub struct Shell {
    _app: tauri::App<MockRuntime>,
    pub window: WebviewWindow<MockRuntime>,
    _dir: tempfile::TempDir,
}

impl Shell {
    pub fn start() -> Result<Self, Box<dyn std::error::Error>> {
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

    pub fn call(&self, cmd: &str, args: Value) -> Result<Value, Value> {
        invoke(&self.window, cmd, args)
    }

    pub fn ok(&self, cmd: &str, args: Value) -> Result<Value, Box<dyn std::error::Error>> {
        self.call(cmd, args).map_err(|e| format!("{cmd} failed: {e}").into())
    }

    pub fn err(&self, cmd: &str, args: Value) -> Result<Value, Box<dyn std::error::Error>> {
        match self.call(cmd, args) {
            Ok(v) => Err(format!("{cmd} should have failed but answered {v}").into()),
            Err(e) => Ok(e),
        }
    }

    pub fn slugs(&self) -> Result<Vec<String>, Box<dyn std::error::Error>> {
        let list = self.ok("list_connections", json!({}))?;
        Ok(list
            .as_array()
            .map(|a| a.iter().filter_map(|d| d["connection"]["slug"].as_str().map(str::to_string)).collect())
            .unwrap_or_default())
    }
}

/// Two OpenAI connections, `main` (two keys) and `other`, their keys `{canary}-main`, `{canary}-other`, `{canary}-2`.
pub fn two_connections(canary: &str) -> Result<Shell, Box<dyn std::error::Error>> {
    let shell = Shell::start()?;
    for slug in ["main", "other"] {
        shell.ok(
            "connection_add",
            json!({ "input": { "slug": slug, "protocol": "openai", "base_url": "https://api.example.com/v1",
                    "models": ["m1", "m2"], "mappings": [], "headers": ["OpenAI-Organization: org-1"] },
                    "secret": format!("{canary}-{slug}") }),
        )?;
    }
    shell.ok(
        "profile_add",
        json!({ "slug": "main", "input": { "label": "backup", "weight": 3, "priority": null }, "secret": format!("{canary}-2") }),
    )?;
    Ok(shell)
}

/// A notifier that keeps what it was asked to show, `(title, body)` in order.
#[derive(Default)]
pub struct Recorded(pub std::sync::Mutex<Vec<(String, String)>>);

impl switchyard_desktop::tray::Notifier for Recorded {
    fn notify(&self, title: &str, body: &str) {
        if let Ok(mut v) = self.0.lock() {
            v.push((title.to_string(), body.to_string()));
        }
    }
}
