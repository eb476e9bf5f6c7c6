//! The tray and the notifications over Tauri's mock runtime (issue 17; a tray icon cannot be
//! clicked in the Xvfb window test): the menu shows each connection's mode and readiness and
//! offers the activated modes only while the gates pass, a click goes through the engine's
//! gates, the menu builds as Tauri menu items, and `refresh` turns a suspension into one
//! desktop notification (recorded by a test notifier), not one per refresh.

use std::sync::Arc;

use serde_json::{json, Value};
use switchyard_desktop::relay::RelayService;
use switchyard_desktop::tray::{apply_action, build_menu, refresh, Alerts, NotifierState};
use switchyard_desktop::tray_menu::{tray_model, TrayAction, TrayEntry, TrayNode};
use switchyard_engine::{Engine, ErrorCode, SystemClock};
use switchyard_mock_provider::{KeyScript, MockProvider};
use switchyard_vault::MemoryVault;
use tauri::menu::MenuItemKind;
use tauri::test::{mock_builder, mock_context, noop_assets, MockRuntime};
use tauri::{Manager, WebviewWindow};

use crate::common;
use crate::common::Recorded;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const CANARY: &str = "sk-canary-tray";

struct Shell {
    app: tauri::App<MockRuntime>,
    window: WebviewWindow<MockRuntime>,
    engine: Arc<Engine>,
    relay: Arc<RelayService>,
    shown: Arc<Recorded>,
    mock: MockProvider,
    _dir: tempfile::TempDir,
}

impl Shell {
    fn start() -> Result<Self, Box<dyn std::error::Error>> {
        let mock = tauri::async_runtime::block_on(MockProvider::start())?;
        for n in 1..=3 {
            mock.set_key(&format!("{CANARY}-{n}"), KeyScript::new(["m1"]));
        }
        let dir = tempfile::tempdir()?;
        let engine = Arc::new(tauri::async_runtime::block_on(Engine::open_with(
            dir.path(),
            Arc::new(MemoryVault::new()),
            Arc::new(SystemClock),
        ))?);
        let relay = Arc::new(tauri::async_runtime::block_on(async { RelayService::new(engine.clone(), Some(0)) }));
        let shown = Arc::new(Recorded::default());
        let builder = switchyard_desktop::specta_builder_for!(MockRuntime);
        let app = mock_builder()
            .invoke_handler(builder.invoke_handler())
            .manage(engine.clone())
            .manage(relay.clone())
            .manage(Alerts::default())
            .manage(NotifierState(shown.clone()))
            .build(mock_context(noop_assets()))?;
        // `setup` hooks run only when the event loop starts, which a mock app never does.
        builder.mount_events(&app);
        let window = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build()?;
        Ok(Shell { app, window, engine, relay, shown, mock, _dir: dir })
    }

    fn ok(&self, cmd: &str, args: Value) -> Result<Value, Box<dyn std::error::Error>> {
        common::invoke(&self.window, cmd, args).map_err(|e| format!("{cmd} failed: {e}").into())
    }

    fn add(&self, slug: &str, keys: &[u32]) -> TestResult {
        let base = format!("{}/v1", self.mock.base_url());
        let input = json!({ "slug": slug, "protocol": "openai", "base_url": base, "models": ["m1"], "mappings": [], "headers": [] });
        self.ok("connection_add", json!({ "input": input, "secret": format!("{CANARY}-{}", keys[0]) }))?;
        for (i, k) in keys.iter().enumerate().skip(1) {
            let profile = json!({ "label": format!("key{i}"), "weight": 1, "priority": null });
            self.ok("profile_add", json!({ "slug": slug, "input": profile, "secret": format!("{CANARY}-{k}") }))?;
        }
        Ok(())
    }

    fn model(&self) -> Result<Vec<TrayNode>, Box<dyn std::error::Error>> {
        let overview = tauri::async_runtime::block_on(self.engine.routing_overview())?;
        Ok(tray_model(Some(&self.relay.status()), &overview))
    }

    fn shown(&self) -> Vec<(String, String)> {
        self.shown.0.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

/// The submenu of `slug`: its title and its mode entries.
fn submenu<'a>(model: &'a [TrayNode], slug: &str) -> Option<(&'a str, &'a [TrayEntry])> {
    model.iter().find_map(|n| match n {
        TrayNode::Submenu { text, items, .. } if text.starts_with(&format!("{slug} — ")) => {
            Some((text.as_str(), items.as_slice()))
        }
        _ => None,
    })
}

fn entry<'a>(items: &'a [TrayEntry], mode: &str) -> Option<&'a TrayEntry> {
    items.iter().find(|e| {
        TrayAction::parse(&e.id)
            == Some(TrayAction::SetMode {
                slug: slug_of(&e.id),
                mode: mode.parse().unwrap_or(switchyard_engine::RoutingMode::Legacy),
            })
    })
}

fn slug_of(id: &str) -> String {
    id.splitn(3, ':').nth(2).unwrap_or_default().to_string()
}

#[test]
fn the_menu_offers_activation_only_behind_the_gates_and_clicks_go_through_the_engine() -> TestResult {
    let shell = Shell::start()?;
    shell.add("team", &[1, 2])?;
    shell.add("solo", &[3])?;

    let model = shell.model()?;
    let (title, items) = submenu(&model, "team").ok_or("no team submenu")?;
    assert_eq!(title, "team — legacy · gates fail", "nothing verified yet");
    let balanced = entry(items, "balanced").ok_or("no balanced entry")?;
    assert!(!balanced.enabled, "activation is not offered while the gates fail");
    let legacy = entry(items, "legacy").ok_or("no legacy entry")?;
    assert_eq!((legacy.enabled, legacy.checked), (false, Some(true)), "legacy is the current mode");
    match &model[0] {
        TrayNode::Item(e) => assert!(e.text.starts_with("Relay: "), "the relay line comes first: {}", e.text),
        other => return Err(format!("first node: {other:?}").into()),
    }

    // The engine checks the gates again: a click that raced a change is refused there.
    let refused =
        tauri::async_runtime::block_on(apply_action(&shell.engine, "team", switchyard_engine::RoutingMode::Balanced))
            .err()
            .ok_or("activation without verified keys must be refused")?;
    assert_eq!(refused.code(), ErrorCode::Precondition, "{refused}");

    shell.ok("verify", json!({ "slug": "team", "profile": null, "deep": false }))?;
    shell.ok("verify", json!({ "slug": "solo", "profile": null, "deep": false }))?;
    let model = shell.model()?;
    let (title, items) = submenu(&model, "team").ok_or("no team submenu")?;
    assert_eq!(title, "team — legacy · gates pass");
    assert!(entry(items, "balanced").is_some_and(|e| e.enabled), "verified: balanced is offered");
    assert!(entry(items, "priority").is_some_and(|e| e.enabled), "and priority");
    let (_, solo) = submenu(&model, "solo").ok_or("no solo submenu")?;
    assert!(entry(solo, "balanced").is_some_and(|e| !e.enabled), "one key cannot pass the two-key gate");

    let status =
        tauri::async_runtime::block_on(apply_action(&shell.engine, "team", switchyard_engine::RoutingMode::Balanced))?;
    assert_eq!((status.mode.to_string(), status.state.to_string()), ("balanced".into(), "active".into()));
    assert_eq!(status.activated_by.as_deref(), Some("desktop tray"), "routing status says who switched");
    let model = shell.model()?;
    let (title, items) = submenu(&model, "team").ok_or("no team submenu")?;
    assert_eq!(title, "team — balanced · active");
    assert!(entry(items, "legacy").is_some_and(|e| e.enabled && e.checked == Some(false)), "back to legacy is offered");
    assert!(entry(items, "balanced").is_some_and(|e| !e.enabled && e.checked == Some(true)));
    let status =
        tauri::async_runtime::block_on(apply_action(&shell.engine, "team", switchyard_engine::RoutingMode::Legacy))?;
    assert_eq!(status.mode.to_string(), "legacy", "the quick switch back deactivates");

    // The model becomes real Tauri menu items (mock runtime).
    let menu = build_menu(shell.app.handle(), &model)?;
    let kinds = menu.items()?;
    assert_eq!(kinds.len(), model.len(), "one menu item per node");
    let mut texts = Vec::new();
    for k in &kinds {
        match k {
            MenuItemKind::MenuItem(i) => texts.push(i.text()?),
            MenuItemKind::Submenu(s) => {
                texts.push(s.text()?);
                for child in s.items()? {
                    if let MenuItemKind::Check(c) = child {
                        texts.push(format!("{} [{}{}]", c.text()?, c.is_checked()?, c.is_enabled()?));
                    }
                }
            }
            _ => {}
        }
    }
    assert!(texts.contains(&"team — balanced · active".to_string()), "{texts:?}");
    assert!(texts.contains(&"Balanced [truefalse]".to_string()), "checked and greyed while current: {texts:?}");
    assert!(texts.ends_with(&["Open Switchyard".to_string(), "Quit".to_string()]), "{texts:?}");
    assert!(!format!("{texts:?}").contains("canary"), "no key in the menu");
    Ok(())
}

#[test]
fn a_suspension_is_notified_once_and_not_again_within_the_minute() -> TestResult {
    let shell = Shell::start()?;
    shell.add("team", &[1, 2])?;
    shell.ok("verify", json!({ "slug": "team", "profile": null, "deep": false }))?;
    tauri::async_runtime::block_on(apply_action(&shell.engine, "team", switchyard_engine::RoutingMode::Balanced))?;

    tauri::async_runtime::block_on(refresh(shell.app.handle()));
    assert_eq!(shell.shown(), [], "the first look is a baseline, nothing is announced at start-up");

    // Replacing a key makes its evidence stale: the two-key gate fails and routing suspends.
    shell.ok("profile_rotate", json!({ "slug": "team", "profile": "key1", "secret": format!("{CANARY}-3") }))?;
    tauri::async_runtime::block_on(refresh(shell.app.handle()));
    tauri::async_runtime::block_on(refresh(shell.app.handle()));
    let shown = shell.shown();
    assert_eq!(shown.len(), 1, "one notification for the suspension, not one per refresh: {shown:?}");
    assert_eq!(shown[0].0, "team: routing suspended");
    assert!(shown[0].1.contains("legacy"), "says what routing does now: {}", shown[0].1);
    assert!(!shown[0].1.contains("canary"), "no key in a notification");

    // Fixed and broken again within the minute: the limiter holds the second one back.
    shell.ok("verify", json!({ "slug": "team", "profile": null, "deep": false }))?;
    tauri::async_runtime::block_on(refresh(shell.app.handle()));
    shell.ok("profile_rotate", json!({ "slug": "team", "profile": "key1", "secret": format!("{CANARY}-1") }))?;
    tauri::async_runtime::block_on(refresh(shell.app.handle()));
    assert_eq!(shell.shown().len(), 1, "at most one notification per connection per minute");
    assert!(shell.app.try_state::<Alerts>().is_some());
    Ok(())
}
