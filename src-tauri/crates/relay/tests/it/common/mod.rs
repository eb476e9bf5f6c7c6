//! A relay under test: a temp data dir on the memory vault (`relay_keychain`: the real
//! keychain), a connection on the mock
//! provider with the given keys, verified (and activated when asked), and the relay served
//! on 127.0.0.1:0.
#![allow(dead_code)]

pub mod clock;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};
use switchyard_engine::{Engine, NewConnection, NewProfile, Router, Secret};
use switchyard_mock_provider::{KeyScript, MockProvider};
use tokio::sync::oneshot;

pub type TestResult = Result<(), Box<dyn std::error::Error>>;

pub struct Key<'a> {
    pub label: &'a str,
    pub secret: &'a str,
    pub weight: i64,
    pub script: KeyScript,
}

pub struct Relay {
    pub mock: MockProvider,
    pub engine: Arc<Engine>,
    pub router: Arc<Router>,
    pub url: String,
    pub token: String,
    pub http: reqwest::Client,
    pub protocol: &'static str,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    pub dir: tempfile::TempDir,
}

pub async fn relay(
    protocol: &'static str,
    models: &[&str],
    keys: Vec<Key<'_>>,
    mode: Option<&str>,
) -> Result<Relay, Box<dyn std::error::Error>> {
    relay_with(protocol, models, &[], keys, mode).await
}

/// Like [`relay`], on a manual clock and the memory vault (for time-dependent journeys, which
/// step the clock instead of sleeping; the keychain is not what they test).
pub async fn relay_stepped(
    protocol: &'static str,
    models: &[&str],
    keys: Vec<Key<'_>>,
    mode: Option<&str>,
) -> Result<(Relay, Arc<clock::ManualClock>), Box<dyn std::error::Error>> {
    relay_stepped_at(clock::JAN_2025, protocol, models, keys, mode).await
}

/// Like [`relay_stepped`], the manual clock starting at `start_ms` (unix milliseconds).
pub async fn relay_stepped_at(
    start_ms: i64,
    protocol: &'static str,
    models: &[&str],
    keys: Vec<Key<'_>>,
    mode: Option<&str>,
) -> Result<(Relay, Arc<clock::ManualClock>), Box<dyn std::error::Error>> {
    let manual = clock::ManualClock::at(start_ms);
    let dir = tempfile::tempdir()?;
    let vault = Arc::new(switchyard_vault::MemoryVault::new());
    let engine = Arc::new(Engine::open_with(dir.path(), vault, manual.clone()).await?);
    Ok((relay_on(engine, dir, protocol, models, &[], keys, mode).await?, manual))
}

/// Like [`relay`], with `FROM=TO` model mappings on the connection.
pub async fn relay_with(
    protocol: &'static str,
    models: &[&str],
    mappings: &[&str],
    keys: Vec<Key<'_>>,
    mode: Option<&str>,
) -> Result<Relay, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let vault = Arc::new(switchyard_vault::MemoryVault::new());
    let engine = Arc::new(Engine::open_with(dir.path(), vault, Arc::new(switchyard_engine::SystemClock)).await?);
    relay_on(engine, dir, protocol, models, mappings, keys, mode).await
}

/// Like [`relay_with`], on the real keychain (Secret Service): the journeys that keep the
/// whole stack real (`journeys.rs`); elsewhere the keychain is not what a relay test tests.
pub async fn relay_keychain(
    protocol: &'static str,
    models: &[&str],
    mappings: &[&str],
    keys: Vec<Key<'_>>,
    mode: Option<&str>,
) -> Result<Relay, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let engine = Arc::new(Engine::open(dir.path()).await?);
    relay_on(engine, dir, protocol, models, mappings, keys, mode).await
}

async fn relay_on(
    engine: Arc<Engine>,
    dir: tempfile::TempDir,
    protocol: &'static str,
    models: &[&str],
    mappings: &[&str],
    keys: Vec<Key<'_>>,
    mode: Option<&str>,
) -> Result<Relay, Box<dyn std::error::Error>> {
    let mock = MockProvider::start().await?;
    for k in &keys {
        mock.set_key(k.secret, k.script.clone());
    }
    let base = match protocol {
        "openai" => format!("{}/v1", mock.base_url()),
        _ => mock.base_url(),
    };
    let conn = NewConnection {
        slug: "c".into(),
        protocol: protocol.into(),
        base_url: base,
        models: models.iter().map(|m| m.to_string()).collect(),
        mappings: mappings.iter().map(|m| m.to_string()).collect(),
        ..Default::default()
    };
    let mut keys = keys.into_iter();
    let first = keys.next().ok_or("at least one key")?;
    engine.connection_add(conn, Some(Secret::new(first.secret))).await?;
    engine
        .profile_edit(
            "c",
            "primary",
            switchyard_engine::ProfileEdit {
                label: Some(first.label.into()),
                weight: Some(first.weight),
                ..Default::default()
            },
        )
        .await?;
    for k in keys {
        engine
            .profile_add(
                "c",
                NewProfile { label: k.label.into(), weight: Some(k.weight), priority: None },
                Secret::new(k.secret),
            )
            .await?;
    }
    engine.verify("c", None, false, &|_| {}).await?;
    if let Some(m) = mode {
        engine.routing_activate("c", m.parse()?, "test").await?;
    }
    mock.reset_counts();
    let token = engine.relay_token(false).await?;
    let token_text = token.expose().to_string();
    let router = Arc::new(Router::start(engine.clone()));
    let (url, stop, task) = serve_on_loopback(router.clone(), token).await?;
    Ok(Relay {
        mock,
        engine,
        router,
        url,
        token: token_text,
        http: reqwest::Client::new(),
        protocol,
        stop: Some(stop),
        task: Some(task),
        dir,
    })
}

/// A relay serving `router` on a free loopback port: its URL, the sender that stops it, its task.
pub async fn serve_on_loopback(
    router: Arc<Router>,
    token: Secret,
) -> std::io::Result<(String, oneshot::Sender<()>, tokio::task::JoinHandle<std::io::Result<()>>)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(switchyard_relay::serve(listener, router, token, async move {
        let _ = stopped.await;
    }));
    Ok((url, stop, task))
}

impl Relay {
    /// The relay base URL a client of this dialect is configured with.
    pub fn base(&self) -> String {
        match self.protocol {
            "openai" => format!("{}/c/c/v1", self.url),
            _ => format!("{}/c/c", self.url),
        }
    }

    pub fn path(&self) -> &'static str {
        match self.protocol {
            "openai" => "/chat/completions",
            _ => "/v1/messages",
        }
    }

    /// Sends a chat request with these messages (JSON values) and returns the response.
    pub async fn chat(&self, model: &str, messages: Vec<Value>, stream: bool) -> reqwest::Result<reqwest::Response> {
        let body = json!({"model": model, "max_tokens": 16, "messages": messages, "stream": stream});
        self.post(body).await
    }

    pub async fn post(&self, body: Value) -> reqwest::Result<reqwest::Response> {
        let req = self.http.post(format!("{}{}", self.base(), self.path())).json(&body);
        let req = match self.protocol {
            "openai" => req.bearer_auth(&self.token),
            _ => req.header("x-api-key", &self.token).header("anthropic-version", "2023-06-01"),
        };
        req.send().await
    }

    pub fn label_of(&self, id: &str) -> String {
        id.to_string()
    }

    /// Stops the relay and flushes the attempt ledger.
    pub async fn stop(mut self) -> Result<Self, Box<dyn std::error::Error>> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            t.await??;
        }
        Ok(self)
    }

    /// Every file under the data dir as text (to grep for canaries).
    pub fn data_dir_text(&self) -> String {
        let mut text = String::new();
        let mut stack: Vec<PathBuf> = vec![self.dir.path().to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if let Ok(b) = std::fs::read(&p) {
                    text.push_str(&String::from_utf8_lossy(&b));
                }
            }
        }
        text
    }
}

pub fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

pub fn header(resp: &reqwest::Response, name: &str) -> String {
    resp.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_string()
}

/// Waits until `check` holds, polling every 10 ms, for at most 10 s. For effects of another
/// task (a socket noticed closed, a token re-read, a request arrived upstream), never for
/// time to pass: time-dependent behaviour runs on [`relay_stepped`]'s manual clock.
pub async fn eventually<F, Fut>(what: &str, mut check: F) -> Result<(), Box<dyn std::error::Error>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<bool, Box<dyn std::error::Error>>>,
{
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !check().await? {
        if std::time::Instant::now() > deadline {
            return Err(format!("not within 10 s: {what}").into());
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    Ok(())
}
