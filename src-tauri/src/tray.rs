//! The tray icon and the desktop notifications (issues 17 and 28). Every few seconds (and when
//! the relay's status changes) the routing overview is read once from the engine: it rebuilds
//! the tray menu (`tray_menu.rs`) and, with each connection's quota readings
//! (`Engine::alert_states`), goes through the engine's `AlertWatch`, whose alerts (suspended,
//! every key cooling down, a login expired or gone, a subscription window rejected, a key out of
//! quota, a cap past 80 % or refusing, a login expiring; at most one per connection a minute; a
//! refusing cap also marks its connection in the menu) become desktop notifications. Menu clicks call `routing_activate` /
//! `routing_deactivate`, which check the gates themselves.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use switchyard_engine::{Alert, AlertWatch, Engine, RoutingMode, RoutingStatus, Strategy};
use tauri::menu::{CheckMenuItem, IsMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Runtime};

use crate::relay::RelayService;
use crate::tray_menu::{tray_model, TrayAction, TrayEntry, TrayNode};

pub const TRAY_ID: &str = "switchyard";
/// Who activated, as `routing status` shows it.
const ACTOR: &str = "desktop tray";
/// How often the tray and the alerts look at the routing state.
pub const REFRESH_EVERY: Duration = Duration::from_secs(3);

/// The alert state of the running app.
#[derive(Default)]
pub struct Alerts(pub Mutex<AlertWatch>);

/// Notifications go through this, so tests can see them without a notification daemon.
pub trait Notifier: Send + Sync {
    fn notify(&self, title: &str, body: &str);
}

/// The desktop's notification service (tauri-plugin-notification).
pub struct DesktopNotifier<R: Runtime>(pub AppHandle<R>);

impl<R: Runtime> Notifier for DesktopNotifier<R> {
    fn notify(&self, title: &str, body: &str) {
        use tauri_plugin_notification::NotificationExt;
        if let Err(e) = self.0.notification().builder().title(title).body(body).show() {
            tracing::warn!(error = %e, "a desktop notification could not be shown");
        }
    }
}

/// The managed notifier.
pub struct NotifierState(pub Arc<dyn Notifier>);

fn entry_item<R: Runtime, M: Manager<R>>(app: &M, e: &TrayEntry) -> tauri::Result<Box<dyn IsMenuItem<R>>> {
    Ok(match e.checked {
        Some(checked) => Box::new(CheckMenuItem::with_id(app, &e.id, &e.text, e.enabled, checked, None::<&str>)?),
        None => Box::new(MenuItem::with_id(app, &e.id, &e.text, e.enabled, None::<&str>)?),
    })
}

/// The Tauri menu of the model.
pub fn build_menu<R: Runtime, M: Manager<R>>(app: &M, model: &[TrayNode]) -> tauri::Result<Menu<R>> {
    let mut items: Vec<Box<dyn IsMenuItem<R>>> = Vec::new();
    for node in model {
        match node {
            TrayNode::Item(e) => items.push(entry_item(app, e)?),
            TrayNode::Separator => items.push(Box::new(PredefinedMenuItem::separator(app)?)),
            TrayNode::Submenu { text, items: entries, keys } => {
                let mut children = entries.iter().map(|e| entry_item(app, e)).collect::<tauri::Result<Vec<_>>>()?;
                if !keys.is_empty() {
                    children.push(Box::new(PredefinedMenuItem::separator(app)?));
                    for k in keys {
                        children.push(entry_item(app, k)?);
                    }
                }
                let refs: Vec<&dyn IsMenuItem<R>> = children.iter().map(|c| c.as_ref()).collect();
                items.push(Box::new(Submenu::with_items(app, text, true, &refs)?));
            }
        }
    }
    let refs: Vec<&dyn IsMenuItem<R>> = items.iter().map(|c| c.as_ref()).collect();
    Menu::with_items(app, &refs)
}

/// Shows and focuses the main window.
pub fn open_window<R: Runtime>(app: &AppHandle<R>) {
    if let Some(w) = app.get_webview_window("main") {
        let _ = w.unminimize();
        let _ = w.show();
        let _ = w.set_focus();
    }
}

/// What a click does; `SetMode` goes to the engine (its gates decide) and answers the new status.
pub async fn apply_action(
    engine: &Engine,
    slug: &str,
    mode: RoutingMode,
) -> Result<RoutingStatus, switchyard_engine::EngineError> {
    match Strategy::from_mode(mode) {
        None => engine.routing_deactivate(slug).await,
        Some(strategy) => engine.routing_activate(slug, strategy, ACTOR).await,
    }
}

fn on_menu_event<R: Runtime>(app: &AppHandle<R>, id: &str) {
    match TrayAction::parse(id) {
        Some(TrayAction::Open) => open_window(app),
        Some(TrayAction::Quit) => app.exit(0),
        Some(TrayAction::SetMode { slug, mode }) => {
            let app = app.clone();
            tauri::async_runtime::spawn(async move {
                let Some(engine) = app.try_state::<Arc<Engine>>().map(|e| e.inner().clone()) else { return };
                if let Err(e) = apply_action(&engine, &slug, mode).await {
                    if let Some(n) = app.try_state::<NotifierState>() {
                        n.0.notify(&format!("{slug}: could not switch to {mode}"), &e.to_string());
                    }
                }
                refresh(&app).await;
            });
        }
        None => {}
    }
}

/// Creates the tray icon (no-op where the platform has no tray: the app works without it).
pub fn install<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let menu = build_menu(app, &tray_model(None, &[]))?;
    let mut builder = TrayIconBuilder::with_id(TRAY_ID)
        .tooltip("Switchyard")
        .menu(&menu)
        .on_menu_event(|app, event| on_menu_event(app, event.id().as_ref()));
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    builder.build(app)?;
    Ok(())
}

/// Reads the routing overview once: rebuilds the tray menu and shows the alerts it brings.
pub async fn refresh<R: Runtime>(app: &AppHandle<R>) {
    let Some(engine) = app.try_state::<Arc<Engine>>().map(|e| e.inner().clone()) else { return };
    let overview = match engine.routing_overview().await {
        Ok(o) => o,
        Err(e) => {
            tracing::warn!(error = %e, "the tray could not read the routing state");
            return;
        }
    };
    let relay = app.try_state::<Arc<RelayService>>().map(|r| r.status());
    let states = engine.alert_states(&overview).await;
    if let Err(e) = &states {
        tracing::warn!(error = %e, "the alerts could not read the quota readings or the caps");
    }
    if let Some(tray) = app.tray_by_id(TRAY_ID) {
        let pools = engine.pool_list().await.unwrap_or_default();
        let capped: Vec<String> = states.iter().flatten().filter(|s| s.capped()).map(|s| s.slug.clone()).collect();
        let model = crate::tray_menu::with_caps(tray_model(relay.as_ref(), &overview), &capped);
        let model = crate::tray_menu::with_pools(model, &pools);
        match build_menu(app, &model) {
            Ok(menu) => {
                let _ = tray.set_menu(Some(menu));
                let _ = tray.set_tooltip(Some(crate::tray_menu::relay_text(relay.as_ref())));
            }
            Err(e) => tracing::warn!(error = %e, "the tray menu could not be built"),
        }
    }
    let Ok(states) = states else { return };
    let alerts: Vec<Alert> = match app.try_state::<Alerts>() {
        Some(a) => a.0.lock().unwrap_or_else(PoisonError::into_inner).observe(&states, engine.monotonic()),
        None => Vec::new(),
    };
    if let Some(n) = app.try_state::<NotifierState>() {
        for a in alerts {
            n.0.notify(&a.title, &a.body);
        }
    }
}

/// Refreshes every [`REFRESH_EVERY`] for as long as the app runs.
pub fn spawn_refresh<R: Runtime>(app: AppHandle<R>) {
    tauri::async_runtime::spawn(async move {
        loop {
            refresh(&app).await;
            tokio::time::sleep(REFRESH_EVERY).await;
        }
    });
}
