//! The real commands through Tauri's IPC (mock runtime, memory vault, mock provider): a whole
//! desktop journey with canary keys, where every command's answer and every event is checked
//! for the canary, and errors cross as `{ code, message, gates }`.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use switchyard_engine::{Engine, SystemClock};
use switchyard_mock_provider::{KeyScript, MockProvider};
use switchyard_vault::MemoryVault;
use tauri::test::{mock_builder, mock_context, noop_assets, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::{Listener, WebviewWindow};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const CANARY: &str = "sk-canary-ipc";

struct Shell {
    _app: tauri::App<MockRuntime>,
    window: WebviewWindow<MockRuntime>,
    events: Arc<Mutex<Vec<String>>>,
    /// Every answer (ok or error) as JSON text, with the command name.
    answers: Vec<(String, String)>,
    _mock: MockProvider,
    _dir: tempfile::TempDir,
}

impl Shell {
    fn start() -> Result<Self, Box<dyn std::error::Error>> {
        let mock = tauri::async_runtime::block_on(MockProvider::start())?;
        for n in 1..=3 {
            mock.set_key(&format!("{CANARY}-{n}"), KeyScript::new(["m1", "m2"]));
        }
        let dir = tempfile::tempdir()?;
        let engine = tauri::async_runtime::block_on(Engine::open_with(
            dir.path(),
            Arc::new(MemoryVault::new()),
            Arc::new(SystemClock),
        ))?;
        let builder = switchyard_desktop::specta_builder_for!(MockRuntime);
        let handler = builder.invoke_handler();
        let app = mock_builder().invoke_handler(handler).manage(engine).build(mock_context(noop_assets()))?;
        // `setup` hooks run only when the event loop starts, which a mock app never does.
        builder.mount_events(&app);
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = events.clone();
        app.listen_any("verify-progress", move |e| {
            if let Ok(mut v) = sink.lock() {
                v.push(e.payload().to_string());
            }
        });
        let window = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build()?;
        Ok(Shell { _app: app, window, events, answers: Vec::new(), _mock: mock, _dir: dir })
    }

    /// Invokes `cmd` as the window would; `Err` is the serialized `IpcError`.
    fn call(&mut self, cmd: &str, args: Value) -> Result<Value, Value> {
        let request = InvokeRequest {
            cmd: cmd.into(),
            callback: tauri::ipc::CallbackFn(0),
            error: tauri::ipc::CallbackFn(1),
            url: "tauri://localhost".parse().map_err(|_| json!("bad url"))?,
            body: tauri::ipc::InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        };
        let out = tauri::test::get_ipc_response(&self.window, request)
            .and_then(|body| body.deserialize::<Value>().map_err(|e| json!(e.to_string())));
        let text = match &out {
            Ok(v) | Err(v) => v.to_string(),
        };
        self.answers.push((cmd.to_string(), text));
        out
    }

    fn ok(&mut self, cmd: &str, args: Value) -> Result<Value, Box<dyn std::error::Error>> {
        self.call(cmd, args).map_err(|e| format!("{cmd} failed: {e}").into())
    }

    fn err(&mut self, cmd: &str, args: Value) -> Result<Value, Box<dyn std::error::Error>> {
        match self.call(cmd, args) {
            Ok(v) => Err(format!("{cmd} should have failed but answered {v}").into()),
            Err(e) => Ok(e),
        }
    }

    fn profile_id(&mut self, label: &str) -> Result<String, Box<dyn std::error::Error>> {
        let detail = self.ok("connection_show", json!({ "slug": "main" }))?;
        detail["profiles"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["label"] == label))
            .and_then(|p| p["id"].as_str())
            .map(str::to_string)
            .ok_or_else(|| format!("no profile {label}").into())
    }
}

fn connection(base: &str) -> Value {
    json!({ "slug": "main", "protocol": "openai", "base_url": format!("{base}/v1"),
            "models": ["m1", "m2"], "mappings": [], "headers": ["OpenAI-Organization: org-1"] })
}

#[test]
fn a_desktop_journey_never_returns_or_emits_a_secret() -> TestResult {
    let mut shell = Shell::start()?;
    let base = shell._mock.base_url();
    let added = shell.ok("connection_add", json!({ "input": connection(&base), "secret": format!("{CANARY}-1") }))?;
    assert_eq!(added["connection"]["routing_mode"], "legacy", "a new connection routes as legacy");
    shell.ok(
        "profile_add",
        json!({ "slug": "main", "input": { "label": "backup", "weight": 3, "priority": null }, "secret": format!("{CANARY}-2") }),
    )?;

    let refused = shell.err("routing_activate", json!({ "slug": "main", "mode": "balanced" }))?;
    assert_eq!(refused["code"], "precondition", "unverified profiles fail the gates: {refused}");
    assert_eq!(refused["gates"]["ok"], false, "a refused activation carries the gate report");
    assert!(
        refused["gates"]["models"][0]["excluded"].as_array().is_some_and(|x| x.len() == 2),
        "both profiles are excluded before verification: {refused}"
    );

    let report = shell.ok("verify", json!({ "slug": "main", "profile": null, "deep": false }))?;
    assert_eq!(report["routing"]["gates"]["ok"], true, "verification passes the gates: {report}");
    let events = shell.events.lock().map(|e| e.clone()).unwrap_or_default();
    assert_eq!(events.len(), 4, "a start and a finish event per profile: {events:?}");
    assert!(events.iter().all(|e| e.contains("\"slug\":\"main\"")), "events name the connection");

    shell.ok("routing_activate", json!({ "slug": "main", "mode": "balanced" }))?;
    let backup = shell.profile_id("backup")?;
    let primary = shell.profile_id("primary")?;
    let stale = shell.err(
        "profile_edit",
        json!({ "slug": "main", "profile": backup, "edit": { "label": null, "weight": 5, "priority": null, "enabled": null, "make_primary": false, "if_revision": 0 } }),
    )?;
    assert_eq!(stale["code"], "conflict", "a stale revision is a conflict: {stale}");
    assert_eq!(stale["gates"], Value::Null, "only refused activations carry gates");
    shell.ok(
        "profile_edit",
        json!({ "slug": "main", "profile": backup, "edit": { "weight": 5, "make_primary": false } }),
    )?;
    let list = shell.ok("list_connections", json!({}))?;
    let revisions: Vec<Value> = list[0]["profiles"]
        .as_array()
        .map(|ps| ps.iter().map(|p| json!({ "id": p["id"], "revision": p["revision"] })).rev().collect())
        .unwrap_or_default();
    let reordered = shell.ok("profile_reorder", json!({ "slug": "main", "order": revisions }))?;
    assert_eq!(reordered[0]["label"], "backup", "the reorder puts backup first");

    shell.ok("profile_rotate", json!({ "slug": "main", "profile": backup, "secret": format!("{CANARY}-3") }))?;
    let status = shell.ok("routing_status", json!({ "slug": "main" }))?;
    assert_eq!(status["state"], "suspended", "a rotation makes evidence stale and suspends: {status}");
    shell.ok("verify", json!({ "slug": "main", "profile": backup, "deep": true }))?;
    shell.ok("health_reset", json!({ "slug": "main", "profile": primary, "model": null }))?;
    shell.ok("connection_edit", json!({ "slug": "main", "edit": { "headers": [] } }))?;
    shell.ok("routing_deactivate", json!({ "slug": "main" }))?;
    shell.ok("profile_remove", json!({ "slug": "main", "profile": backup }))?;
    let removed = shell.ok("connection_remove", json!({ "slug": "main" }))?;
    assert_eq!(removed["profiles_removed"], 1, "{removed}");
    let missing = shell.err("connection_show", json!({ "slug": "main" }))?;
    assert_eq!(missing["code"], "not_found", "{missing}");

    let events = shell.events.lock().map(|e| e.clone()).unwrap_or_default();
    for (cmd, answer) in &shell.answers {
        assert!(!answer.contains("canary"), "{cmd} answered with a secret: {answer}");
    }
    for e in &events {
        assert!(!e.contains("canary"), "an event carried a secret: {e}");
    }
    assert!(shell.answers.len() >= 20, "the journey covered the commands");
    Ok(())
}
