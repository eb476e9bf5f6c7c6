//! Relays on a manual clock (no sleeping in time-dependent tests): the clock, an engine on it
//! with the memory vault and a priority connection `c` of keys `a` (primary, first) and `b`,
//! and the relay served over that engine.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use switchyard_engine::{Clock, Engine, NewConnection, NewProfile, ProfileEdit, Router, Secret};
use switchyard_mock_provider::MockProvider;
use switchyard_vault::MemoryVault;

/// 2025-01-01T00:00:00Z: far from the machine's time, so a mixed-up clock shows.
pub const JAN_2025: i64 = 1_735_689_600_000;

/// Wall time that moves only when stepped; monotonic time moves with it.
#[derive(Debug)]
pub struct ManualClock {
    ms: AtomicI64,
    origin: i64,
    start: Instant,
}

impl ManualClock {
    /// A clock at [`JAN_2025`].
    pub fn new() -> Arc<Self> {
        Self::at(JAN_2025)
    }

    /// A clock at `ms` (unix milliseconds).
    pub fn at(ms: i64) -> Arc<Self> {
        Arc::new(ManualClock { ms: AtomicI64::new(ms), origin: ms, start: Instant::now() })
    }

    pub fn step(&self, ms: i64) {
        self.ms.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.ms.load(Ordering::SeqCst)
    }

    fn monotonic(&self) -> Instant {
        self.start + Duration::from_millis(u64::try_from(self.ms.load(Ordering::SeqCst) - self.origin).unwrap_or(0))
    }
}

/// An engine on `clock` (memory vault) with the OpenAI connection `c` on `mock`: key `a`
/// (`secret_a`, primary, priority 0) and `b` (`secret_b`, priority 1), verified, priority routing.
pub async fn priority_pair(
    clock: &Arc<ManualClock>,
    mock: &MockProvider,
    secret_a: &str,
    secret_b: &str,
) -> Result<(tempfile::TempDir, Arc<Engine>), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let engine = Arc::new(Engine::open_with(dir.path(), Arc::new(MemoryVault::new()), clock.clone()).await?);
    let conn = NewConnection {
        slug: "c".into(),
        protocol: "openai".into(),
        base_url: format!("{}/v1", mock.base_url()),
        models: vec!["m1".into()],
        ..Default::default()
    };
    engine.connection_add(conn, Some(Secret::new(secret_a))).await?;
    engine.profile_edit("c", "primary", ProfileEdit { label: Some("a".into()), ..Default::default() }).await?;
    let b = NewProfile { label: "b".into(), weight: Some(1), priority: Some(1) };
    engine.profile_add("c", b, Secret::new(secret_b)).await?;
    engine.verify("c", None, false, &|_| {}).await?;
    engine.routing_activate("c", switchyard_engine::Strategy::Priority, "test").await?;
    Ok((dir, engine))
}

/// The relay over `engine` on 127.0.0.1:0.
pub struct Served {
    /// `…/c/c/v1/chat/completions`.
    pub url: String,
    pub bearer: String,
    pub router: Arc<Router>,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Served {
    pub async fn start(engine: &Arc<Engine>) -> Result<Self, Box<dyn std::error::Error>> {
        let token = engine.relay_token(false).await?;
        let bearer = token.expose().to_string();
        let router = Arc::new(Router::start(engine.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/c/c/v1/chat/completions", listener.local_addr()?);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(switchyard_relay::serve(listener, router.clone(), token, async move {
            let _ = stopped.await;
        }));
        Ok(Served { url, bearer, router, stop, task })
    }

    /// Stops the relay (in-flight answers drain, the ledger flushes).
    pub async fn stop(self) -> Result<(), Box<dyn std::error::Error>> {
        let _ = self.stop.send(());
        self.task.await??;
        Ok(())
    }
}
