//! The real commands through Tauri's IPC (mock runtime, memory vault, mock provider, the
//! app's relay on a free port): a whole desktop journey with canary keys, where every
//! command's answer and every event is checked for the canary (and for the relay token,
//! which only `relay_token` may answer with), and errors cross as `{ code, message, gates }`.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use switchyard_desktop::relay::RelayService;
use switchyard_engine::{Engine, SystemClock};
use switchyard_mock_provider::{KeyScript, MockProvider};
use switchyard_vault::MemoryVault;
use tauri::test::{mock_builder, mock_context, noop_assets, MockRuntime};
use tauri::{Listener, WebviewWindow};

use crate::common;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const CANARY: &str = "sk-canary-ipc";

struct Shell {
    _app: tauri::App<MockRuntime>,
    window: WebviewWindow<MockRuntime>,
    events: Arc<Mutex<Vec<String>>>,
    relay_events: Arc<Mutex<Vec<String>>>,
    relay: Arc<RelayService>,
    /// Every answer (ok or error) as JSON text, with the command name.
    answers: Vec<(String, String)>,
    _mock: MockProvider,
    _dir: tempfile::TempDir,
}

impl Shell {
    fn start() -> Result<Self, Box<dyn std::error::Error>> {
        Self::start_on(0)
    }

    /// A shell whose relay asks for `port_override`; the relay starts like the app starts it.
    fn start_on(port_override: u16) -> Result<Self, Box<dyn std::error::Error>> {
        let mock = tauri::async_runtime::block_on(MockProvider::start())?;
        for n in 1..=3 {
            mock.set_key(&format!("{CANARY}-{n}"), KeyScript::new(["m1", "m2"]));
        }
        let dir = tempfile::tempdir()?;
        let engine = Arc::new(tauri::async_runtime::block_on(Engine::open_with(
            dir.path(),
            Arc::new(MemoryVault::new()),
            Arc::new(SystemClock),
        ))?);
        // Port 0: any free port, as `SWITCHYARD_RELAY_PORT=0` gives the app.
        let relay =
            Arc::new(tauri::async_runtime::block_on(async { RelayService::new(engine.clone(), Some(port_override)) }));
        let builder = switchyard_desktop::specta_builder_for!(MockRuntime);
        let handler = builder.invoke_handler();
        let app = mock_builder()
            .invoke_handler(handler)
            .manage(engine)
            .manage(relay.clone())
            .build(mock_context(noop_assets()))?;
        // `setup` hooks run only when the event loop starts, which a mock app never does.
        builder.mount_events(&app);
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = events.clone();
        app.listen_any("verify-progress", move |e| {
            if let Ok(mut v) = sink.lock() {
                v.push(e.payload().to_string());
            }
        });
        let relay_events = Arc::new(Mutex::new(Vec::new()));
        let sink = relay_events.clone();
        app.listen_any("relay-status-changed", move |e| {
            if let Ok(mut v) = sink.lock() {
                v.push(e.payload().to_string());
            }
        });
        let handle = app.handle().clone();
        relay.on_change(move |status| switchyard_desktop::events::emit_relay_status(&handle, status));
        tauri::async_runtime::block_on(relay.start());
        let window = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build()?;
        Ok(Shell { _app: app, window, events, relay_events, relay, answers: Vec::new(), _mock: mock, _dir: dir })
    }

    /// Invokes `cmd` as the window would; `Err` is the serialized `IpcError`.
    fn call(&mut self, cmd: &str, args: Value) -> Result<Value, Value> {
        let out = common::invoke(&self.window, cmd, args);
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

impl Shell {
    /// The ledger is written off the request path: polls `attempts` until `n` rows are there.
    fn attempts_until(&mut self, n: usize) -> Result<Vec<Value>, Box<dyn std::error::Error>> {
        for _ in 0..100 {
            let rows = self.ok("attempts", json!({ "slug": "main", "limit": 50 }))?;
            let rows = rows.as_array().cloned().unwrap_or_default();
            if rows.len() >= n {
                return Ok(rows);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Err(format!("fewer than {n} attempts were recorded").into())
    }
}

/// One chat completion through the relay (a fresh turn per `turn`); the HTTP status.
fn post_chat(url: &str, token: &str, turn: u32) -> Result<u16, Box<dyn std::error::Error>> {
    tauri::async_runtime::block_on(async {
        let body = json!({ "model": "m1", "messages": [{ "role": "user", "content": format!("hello {turn}") }] });
        let resp = reqwest::Client::new()
            .post(format!("{url}/c/main/v1/chat/completions"))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await?;
        Ok(resp.status().as_u16())
    })
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

    // The relay the app started: traffic through it lands in the ledger `attempts` lists.
    let status = shell.ok("relay_status", json!({}))?;
    assert_eq!(status["state"], "listening", "the relay starts with the app: {status}");
    assert_eq!(status["port_source"], "env", "the port override wins over the setting: {status}");
    let url = status["url"].as_str().ok_or("no relay url")?.to_string();
    let token = shell.ok("relay_token", json!({ "rotate": false }))?.as_str().ok_or("no token")?.to_string();
    assert!(token.starts_with("sy_"), "the relay token is the relay's own credential");
    for turn in 0..8 {
        assert_eq!(post_chat(&url, &token, turn)?, 200, "a request with the relay token is served");
    }
    let rows = shell.attempts_until(8)?;
    let ids: Vec<&str> = rows.iter().filter_map(|r| r["profile"].as_str()).collect();
    assert!(ids.iter().all(|id| *id == primary || *id == backup), "rows carry stable profile ids: {ids:?}");
    let to_backup = ids.iter().filter(|id| **id == backup).count();
    assert_eq!(to_backup, 6, "balanced 1:3 over 8 fresh turns sends 6 to backup (weight 3): {ids:?}");

    // Rotation restarts the relay: the old token is refused, only the new one is accepted.
    let rotated = shell.ok("relay_token", json!({ "rotate": true }))?.as_str().ok_or("no token")?.to_string();
    assert_ne!(rotated, token, "rotation gives a new token");
    let status = shell.ok("relay_status", json!({}))?;
    let url = status["url"].as_str().ok_or("no relay url after rotation")?.to_string();
    assert_eq!(post_chat(&url, &token, 100)?, 401, "the old token is refused after rotation");
    assert_eq!(post_chat(&url, &rotated, 101)?, 200, "the new token is accepted");
    let refused = shell.err("relay_set_port", json!({ "port": 80 }))?;
    assert_eq!(refused["code"], "invalid", "a privileged port is refused: {refused}");
    let tokens = [token, rotated];
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
    let bad = shell.err("routing_affinity", json!({ "slug": "main", "mode": "turn", "windowMin": 0 }))?;
    assert_eq!(bad["code"], "invalid", "a window under a minute is refused as invalid input: {bad}");
    let set = shell.ok("routing_affinity", json!({ "slug": "main", "mode": "turn", "windowMin": 30 }))?;
    assert_eq!(set["affinity"], json!({ "mode": "turn", "window_min": 30 }), "the status carries the new affinity");
    let quota = shell.ok("quota", json!({ "slug": "main" }))?;
    assert_eq!(quota["profiles"].as_array().map(Vec::len), Some(2), "quota lists every profile: {quota}");
    let usage = shell.ok("usage_chart", json!({ "slug": "main", "days": 7 }))?;
    assert_eq!(usage["days"].as_array().map(Vec::len), Some(7), "one bar per day of the range: {usage}");
    assert_eq!(usage["series"].as_array().map(Vec::len), Some(2), "a series per profile: {usage}");
    let bad_days = shell.err("usage_chart", json!({ "slug": "main", "days": 0 }))?;
    assert_eq!(bad_days["code"], "invalid", "a range of 0 days is invalid input: {bad_days}");
    shell.ok("verify", json!({ "slug": "main", "profile": backup, "deep": true }))?;
    shell.ok("health_reset", json!({ "slug": "main", "profile": primary, "model": null }))?;
    shell.ok("connection_edit", json!({ "slug": "main", "edit": { "headers": [] } }))?;
    shell.ok("routing_deactivate", json!({ "slug": "main" }))?;
    shell.ok("profile_remove", json!({ "slug": "main", "profile": backup }))?;
    let removed = shell.ok("connection_remove", json!({ "slug": "main" }))?;
    assert_eq!(removed["profiles_removed"], 1, "{removed}");
    let missing = shell.err("connection_show", json!({ "slug": "main" }))?;
    assert_eq!(missing["code"], "not_found", "{missing}");

    let mut events = shell.events.lock().map(|e| e.clone()).unwrap_or_default();
    let relay_events = shell.relay_events.lock().map(|e| e.clone()).unwrap_or_default();
    assert!(relay_events.iter().any(|e| e.contains("listening")), "relay status changes are events: {relay_events:?}");
    events.extend(relay_events);
    for (cmd, answer) in &shell.answers {
        assert!(!answer.contains("canary"), "{cmd} answered with a secret: {answer}");
        if cmd != "relay_token" {
            assert!(!tokens.iter().any(|t| answer.contains(t.as_str())), "{cmd} answered with the relay token");
        }
    }
    for e in &events {
        assert!(!e.contains("canary"), "an event carried a secret: {e}");
        assert!(!tokens.iter().any(|t| e.contains(t.as_str())), "an event carried the relay token: {e}");
    }
    assert!(shell.answers.len() >= 20, "the journey covered the commands");
    Ok(())
}

#[test]
fn a_taken_port_is_a_relay_error_not_a_crash_and_retry_starts_it_once_free() -> TestResult {
    let taken = std::net::TcpListener::bind("127.0.0.1:0")?;
    let port = taken.local_addr()?.port();
    let mut shell = Shell::start_on(port)?;
    let status = shell.ok("relay_status", json!({}))?;
    assert_eq!(status["state"], "error", "a taken port is reported: {status}");
    let why = status["error"].as_str().unwrap_or_default();
    assert!(why.contains(&format!("port {port} is already in use")), "the error names the port: {why}");
    assert_eq!(status["url"], Value::Null, "no URL while not listening");
    let still = shell.ok("list_connections", json!({}))?;
    assert_eq!(still, json!([]), "the rest of the app keeps working");
    drop(taken);
    let status = shell.ok("relay_restart", json!({}))?;
    assert_eq!(status["state"], "listening", "retry after the port is freed: {status}");
    assert_eq!(status["bound_port"], json!(port), "{status}");
    let relay_events = shell.relay_events.lock().map(|e| e.clone()).unwrap_or_default();
    assert!(relay_events.iter().any(|e| e.contains("already in use")), "the error was an event: {relay_events:?}");
    tauri::async_runtime::block_on(shell.relay.stop());
    assert_eq!(
        shell.relay.status().state,
        switchyard_engine::RelayServiceState::Stopped,
        "stop leaves a stopped relay"
    );
    Ok(())
}
