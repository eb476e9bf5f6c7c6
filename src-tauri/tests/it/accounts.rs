//! Subscription accounts in the desktop shell (issue 28 item 7), over Tauri's mock runtime with
//! the app's relay, the mock provider and an engine on a stepped clock: profiles of kind `token`
//! and `external` are added through `profile_add` (a token never comes back), an external
//! profile's sign-in goes through `profile_login_command` (the exact terminal command) and
//! `profile_check_login` ("Check again": refused while the CLI's credential file is absent, `ok`
//! once it is there), a token is renewed through `profile_rotate` with `expires`; the tray lists
//! each key with its health, and `refresh` turns a rejected 5-hour window (a real 429 through the
//! relay) and a token that becomes expiring, then expired, and a login that disappears into one
//! notification each, after a silent baseline.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use switchyard_desktop::relay::RelayService;
use switchyard_desktop::tray::{refresh, Alerts, NotifierState};
use switchyard_desktop::tray_menu::{tray_model, TrayNode};
use switchyard_engine::{Clock, Engine};
use switchyard_mock_provider::{Behaviour, KeyScript, LimitWindow, MockProvider};
use switchyard_vault::MemoryVault;
use tauri::test::{mock_builder, mock_context, noop_assets, MockRuntime};
use tauri::WebviewWindow;

use crate::common;
use crate::common::Recorded;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const KEY_A: &str = "sk-ant-api03-canary-acct-a";
const KEY_B: &str = "sk-ant-api03-canary-acct-b";
const TOKEN: &str = "sk-ant-oat01-canary-acct-token";
const NEW_TOKEN: &str = "sk-ant-oat01-canary-acct-token-2";
const DAY: i64 = 86_400_000;

/// Wall time that starts at the machine's (the mock's resets are machine time) and moves only
/// when stepped; monotonic time moves with it.
#[derive(Debug)]
struct SteppedClock {
    start_ms: i64,
    start: Instant,
    stepped_ms: AtomicI64,
}

impl SteppedClock {
    fn new() -> Self {
        let start_ms = switchyard_engine::SystemClock.now_ms();
        SteppedClock { start_ms, start: Instant::now(), stepped_ms: AtomicI64::new(0) }
    }

    fn step(&self, ms: i64) {
        self.stepped_ms.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for SteppedClock {
    fn now_ms(&self) -> i64 {
        self.start_ms + self.stepped_ms.load(Ordering::SeqCst)
    }

    fn monotonic(&self) -> Instant {
        self.start + Duration::from_millis(u64::try_from(self.stepped_ms.load(Ordering::SeqCst)).unwrap_or(0))
    }
}

struct Shell {
    app: tauri::App<MockRuntime>,
    window: WebviewWindow<MockRuntime>,
    engine: Arc<Engine>,
    relay: Arc<RelayService>,
    clock: Arc<SteppedClock>,
    shown: Arc<Recorded>,
    mock: MockProvider,
    /// Every answer, for the canary check.
    answers: Mutex<Vec<String>>,
    dir: tempfile::TempDir,
}

impl Shell {
    fn start() -> Result<Self, Box<dyn std::error::Error>> {
        let mock = tauri::async_runtime::block_on(MockProvider::start())?;
        // a's 5-hour window is spent: a 429 with the unified headers saying `rejected`.
        mock.set_key(KEY_A, KeyScript::new(["m1"]).behaviour(Behaviour::usage_limit(LimitWindow::FiveHour, 3600)));
        mock.set_key(KEY_B, KeyScript::new(["m1"]));
        let dir = tempfile::tempdir()?;
        let clock = Arc::new(SteppedClock::new());
        let engine = Arc::new(tauri::async_runtime::block_on(Engine::open_with(
            dir.path(),
            Arc::new(MemoryVault::new()),
            clock.clone(),
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
        builder.mount_events(&app);
        tauri::async_runtime::block_on(relay.start());
        let window = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build()?;
        Ok(Shell { app, window, engine, relay, clock, shown, mock, answers: Mutex::new(Vec::new()), dir })
    }

    fn call(&self, cmd: &str, args: Value) -> Result<Value, Value> {
        let out = common::invoke(&self.window, cmd, args);
        if let (Ok(mut all), Ok(v) | Err(v)) = (self.answers.lock(), &out) {
            all.push(format!("{cmd}: {v}"));
        }
        out
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

    fn shown(&self) -> Vec<(String, String)> {
        self.shown.0.lock().map(|v| v.clone()).unwrap_or_default()
    }

    fn refresh(&self) {
        tauri::async_runtime::block_on(refresh(self.app.handle()));
    }

    /// The tray's key lines of `slug`.
    fn tray_keys(&self, slug: &str) -> Result<Vec<String>, Box<dyn std::error::Error>> {
        let overview = tauri::async_runtime::block_on(self.engine.routing_overview())?;
        let model = tray_model(Some(&self.relay.status()), &overview);
        model
            .iter()
            .find_map(|n| match n {
                TrayNode::Submenu { text, keys, .. } if text.starts_with(&format!("{slug} — ")) => {
                    Some(keys.iter().map(|k| k.text.clone()).collect())
                }
                _ => None,
            })
            .ok_or_else(|| format!("no {slug} submenu").into())
    }

    /// One Messages request through the app's relay.
    fn post(&self, turn: u32) -> Result<u16, Box<dyn std::error::Error>> {
        let status = self.relay.status();
        let url = status.url.ok_or("the relay has no URL")?;
        let token = tauri::async_runtime::block_on(self.engine.relay_token(false))?;
        let body = json!({ "model": "m1", "max_tokens": 16, "messages": [{ "role": "user", "content": format!("q {turn}") }] });
        let status = tauri::async_runtime::block_on(async {
            reqwest::Client::new()
                .post(format!("{url}/c/c/v1/messages"))
                .header("x-api-key", token.expose())
                .header("anthropic-version", "2023-06-01")
                .json(&body)
                .send()
                .await
                .map(|r| r.status().as_u16())
        })?;
        Ok(status)
    }
}

fn iso(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms).map(|t| t.to_string()).unwrap_or_default()
}

#[test]
fn token_and_external_profiles_sign_in_through_the_window_and_their_trouble_is_notified_once() -> TestResult {
    let shell = Shell::start()?;
    let base = shell.mock.base_url();
    let anthropic = |slug: &str| json!({ "slug": slug, "protocol": "anthropic", "base_url": base, "models": ["m1"], "mappings": [], "headers": [] });
    // c: two API keys, balanced; subs: a token and an external login.
    shell.ok("connection_add", json!({ "input": anthropic("c"), "secret": KEY_A }))?;
    shell.ok(
        "profile_add",
        json!({ "slug": "c", "input": { "label": "b", "weight": 1, "priority": null }, "secret": KEY_B }),
    )?;
    shell.ok("verify", json!({ "slug": "c", "profile": null, "deep": false }))?;
    shell.ok("routing_activate", json!({ "slug": "c", "mode": "balanced" }))?;
    shell.ok("connection_add", json!({ "input": anthropic("subs"), "secret": null }))?;

    let expires = iso(shell.clock.now_ms() + 8 * DAY);
    let tok = shell.ok(
        "profile_add",
        json!({ "slug": "subs", "input": { "label": "tok", "weight": 1, "priority": null }, "secret": TOKEN,
                "credential": { "kind": "token", "client": "claude-code", "expires_at": expires } }),
    )?;
    assert_eq!((tok["kind"].as_str(), tok["client"].as_str()), (Some("token"), Some("claude-code")), "{tok}");
    assert_eq!(tok["credential_health"]["state"], "ok", "8 days ahead is not yet expiring: {tok}");
    let refused = shell.err(
        "profile_add",
        json!({ "slug": "subs", "input": { "label": "x", "weight": 1, "priority": null }, "secret": "sk-ant-api03-not-a-token",
                "credential": { "kind": "token", "client": "claude-code" } }),
    )?;
    assert_eq!(refused["code"], "invalid", "an API key pasted as a token is refused: {refused}");
    let cli = shell.ok(
        "profile_add",
        json!({ "slug": "subs", "input": { "label": "cli", "weight": 1, "priority": null },
                "credential": { "kind": "external", "client": "claude-code" } }),
    )?;
    assert_eq!(cli["credential_health"]["state"], "missing", "not signed in yet: {cli}");
    let config_dir =
        std::path::PathBuf::from(cli["config_dir"].as_str().ok_or("an external profile has its directory")?);

    // Sign-in: the exact command for a terminal, then "Check again".
    let command = shell.ok("profile_login_command", json!({ "slug": "subs", "profile": "cli" }))?;
    let data_dir = std::path::absolute(shell.dir.path())?;
    assert_eq!(
        command.as_str(),
        Some(format!("switchyard --data-dir {} profile login subs cli", data_dir.display()).as_str()),
        "the app's data dir is not the CLI's default, so the command names it"
    );
    let not_yet = shell.err("profile_check_login", json!({ "slug": "subs", "profile": "cli" }))?;
    assert_eq!(not_yet["code"], "precondition", "still not signed in: {not_yet}");
    let token_login = shell.err("profile_login_command", json!({ "slug": "subs", "profile": "tok" }))?;
    assert!(
        token_login["message"].as_str().is_some_and(|m| m.contains("paste a new token")),
        "a token is renewed by pasting, not signing in: {token_login}"
    );
    std::fs::write(config_dir.join(".credentials.json"), "{\"canary\":\"login\"}")?;
    let signed_in = shell.ok("profile_check_login", json!({ "slug": "subs", "profile": "cli" }))?;
    assert_eq!(signed_in["credential_health"]["state"], "ok", "the CLI's credential file is there: {signed_in}");

    assert_eq!(shell.tray_keys("subs")?, ["tok", "cli"], "healthy keys are listed by label alone");
    shell.refresh();
    assert_eq!(shell.shown(), [], "the first look is a baseline");

    // a's 5-hour window is rejected through the relay: one notification, not one per look.
    for turn in 0..4 {
        assert_eq!(shell.post(turn)?, 200, "b serves every turn (a fails over once)");
    }
    let rejected = (0..100).any(|_| {
        let q = tauri::async_runtime::block_on(shell.engine.quota("c")).ok();
        let spent = q.is_some_and(|q| {
            q.profiles
                .iter()
                .any(|p| p.windows.iter().any(|w| w.name == "unified_5h" && w.status.as_deref() == Some("rejected")))
        });
        if !spent {
            std::thread::sleep(Duration::from_millis(50));
        }
        spent
    });
    assert!(rejected, "the relay recorded the rejected 5-hour window");
    shell.refresh();
    shell.refresh();
    let shown = shell.shown();
    assert_eq!(shown.len(), 1, "one notification for the rejected window: {shown:?}");
    assert_eq!(shown[0].0, "c: primary's 5-hour window is used up");
    assert!(shown[0].1.contains("resets"), "says when it resets: {}", shown[0].1);

    // The token comes within 7 days of its expiry, then passes it. (c goes back to legacy first:
    // days on, its evidence is too old for balanced routing, which would suspend it.)
    shell.ok("routing_deactivate", json!({ "slug": "c" }))?;
    shell.clock.step(2 * DAY);
    shell.refresh();
    assert_eq!(shell.tray_keys("subs")?[0], format!("tok (expiring {})", &expires[..10]), "the tray shows the day");
    shell.clock.step(7 * DAY);
    shell.refresh();
    assert_eq!(shell.tray_keys("subs")?, ["tok (expired)", "cli"]);
    std::fs::remove_file(config_dir.join(".credentials.json"))?;
    shell.clock.step(61_000);
    shell.refresh();
    shell.refresh();
    assert_eq!(shell.tray_keys("subs")?, ["tok (expired)", "cli (not signed in)"]);
    let titles: Vec<String> = shell.shown().into_iter().map(|(t, _)| t).collect();
    assert_eq!(
        titles,
        [
            "c: primary's 5-hour window is used up",
            "subs: tok expires soon",
            "subs: tok's token expired",
            "subs: cli is no longer signed in",
        ],
        "one notification per change, each a minute or more after the last"
    );
    let last = shell.shown().pop().map(|(_, b)| b).unwrap_or_default();
    assert!(last.contains("switchyard profile login subs cli"), "says how to sign in again: {last}");

    // Pasting a new token with its expiry brings tok back in place.
    let renewed = shell.ok(
        "profile_rotate",
        json!({ "slug": "subs", "profile": "tok", "secret": NEW_TOKEN, "expires": iso(shell.clock.now_ms() + 30 * DAY) }),
    )?;
    assert_eq!(renewed["credential_health"]["state"], "ok", "{renewed}");
    assert_eq!(renewed["id"], tok["id"], "the same profile, renewed");

    let answers = shell.answers.lock().map(|a| a.join("\n")).unwrap_or_default();
    let notes = format!("{:?}", shell.shown());
    for secret in [TOKEN, NEW_TOKEN, KEY_A, KEY_B, "canary\\\":\\\"login"] {
        assert!(!answers.contains(secret), "no answer carries {secret}");
        assert!(!notes.contains(secret), "no notification carries {secret}");
    }
    tauri::async_runtime::block_on(shell.relay.stop());
    Ok(())
}
