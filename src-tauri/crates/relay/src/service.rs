//! Hosting the relay, for the CLI (`relay serve`) and the desktop app alike: where it listens
//! (the port setting, `SWITCHYARD_RELAY_PORT`, or an explicit loopback address; 0 = any free
//! port), start with a bind retry, stop gracefully (in-flight responses drain — within a bound
//! for the desktop, fully for the CLI — and the attempt ledger is flushed), restart when the
//! token rotates or the port changes, and a status a front end shows. A port that is taken
//! becomes an `error` status with the reason; the caller keeps running. The token never enters
//! [`RelayStatus`]. An address beyond loopback is served only with TLS (`tls.rs`; invariant
//! 27): without a certificate it is refused before anything binds.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use switchyard_core::states::{PortSource, RelayState};

use serde::Serialize;
use specta::Type;
use switchyard_engine::{
    Engine, EngineError, InvalidInput, ReverifyTask, Router, RouterOptions, Secret, REVERIFY_POLL,
};
use tokio::sync::oneshot;

use crate::tls::{Certificate, TlsFiles};
use tokio::task::JoinHandle;

/// Environment variable that overrides the relay port setting (0 = any free port).
pub const PORT_ENV: &str = "SWITCHYARD_RELAY_PORT";
/// How long a desktop stop waits for in-flight responses before it cuts them off.
pub const DESKTOP_DRAIN: Duration = Duration::from_secs(5);

/// Where the relay listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listen {
    /// 127.0.0.1 on the port setting (default 4141).
    Setting,
    /// 127.0.0.1 on this port (`SWITCHYARD_RELAY_PORT`).
    Env(u16),
    /// This address (`relay serve --listen`): loopback, or any with TLS.
    Addr(SocketAddr),
}

/// Whether the relay serves, and where. Crosses IPC; never carries the token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct RelayStatus {
    pub state: RelayState,
    /// `http://127.0.0.1:PORT` (`https://…` with TLS) while listening.
    pub url: Option<String>,
    /// The port asked for (0 = any free port).
    pub port: i32,
    /// The port actually bound, while listening.
    pub bound_port: Option<i32>,
    /// `settings`, `env` (SWITCHYARD_RELAY_PORT) or `listen` (an address given).
    pub port_source: PortSource,
    /// Why the relay is not listening, in plain words.
    pub error: Option<String>,
}

impl RelayStatus {
    fn new(state: RelayState, port: u16, source: PortSource) -> Self {
        RelayStatus { state, url: None, port: i32::from(port), bound_port: None, port_source: source, error: None }
    }
}

struct Running {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
    /// The `--metrics-listen` listener's stop and task.
    metrics: Option<(oneshot::Sender<()>, JoinHandle<()>)>,
    /// Keys whose evidence is half its max age are re-verified while the relay runs
    /// (listing only; `switchyard_engine::ReverifyTask`, stopped when dropped).
    _reverify: ReverifyTask,
}

type Notify = Box<dyn Fn(&RelayStatus) + Send + Sync>;

/// One relay for the host's lifetime; restarts keep the same router (SWRR state, bindings,
/// secret cache and ledger writer).
pub struct Service {
    engine: Arc<Engine>,
    router: Arc<Router>,
    listen: Listen,
    /// `None`: a stop waits for every in-flight response.
    drain: Option<Duration>,
    status: Mutex<RelayStatus>,
    running: tokio::sync::Mutex<Option<Running>>,
    notify: Mutex<Option<Notify>>,
    /// The certificate and key every connection is served with (`None`: plain HTTP, loopback only).
    tls: Option<TlsFiles>,
    /// The certificate read from `tls` at the last start ([`Service::reload_tls`] reads it again).
    certificate: Mutex<Option<Arc<Certificate>>>,
    /// Where `/metrics` is also served without a token (`relay serve --metrics-listen`).
    metrics_listen: Option<SocketAddr>,
    /// The web console at `/console/` (`relay serve --console`).
    console: bool,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service").field("status", &self.status()).finish_non_exhaustive()
    }
}

impl Service {
    /// The desktop's relay: `port_override` (from [`Service::port_from_env`]) wins over the
    /// port setting; a stop drains for at most [`DESKTOP_DRAIN`]. Call inside the tokio
    /// runtime (the router starts its ledger writer there).
    pub fn new(engine: Arc<Engine>, port_override: Option<u16>) -> Self {
        let listen = port_override.map_or(Listen::Setting, Listen::Env);
        Self::with(engine, listen, Some(DESKTOP_DRAIN))
    }

    /// A stopped relay listening as `listen`, draining for at most `drain` (`None`: until every
    /// in-flight response finished).
    pub fn with(engine: Arc<Engine>, listen: Listen, drain: Option<Duration>) -> Self {
        let options = RouterOptions::for_engine(&engine);
        Self::with_options(engine, listen, drain, options)
    }

    /// [`Service::with`], with the router started as `options` say (`relay serve` on a team
    /// store shares its routing state with the other replicas, with its probe lease).
    pub fn with_options(engine: Arc<Engine>, listen: Listen, drain: Option<Duration>, options: RouterOptions) -> Self {
        let router = Arc::new(Router::start_with(engine.clone(), options));
        Service {
            engine,
            router,
            listen,
            drain,
            status: Mutex::new(RelayStatus::new(RelayState::Stopped, 0, PortSource::Settings)),
            running: tokio::sync::Mutex::new(None),
            notify: Mutex::new(None),
            tls: None,
            certificate: Mutex::new(None),
            metrics_listen: None,
            console: false,
        }
    }

    /// Serves the web console at `/console/` (admins only; `relay serve --console`).
    pub fn with_console(mut self, on: bool) -> Self {
        self.console = on;
        self
    }

    /// Also serves `GET /metrics` without a token on `addr` (loopback, or any with TLS: the
    /// relay's certificate serves it too).
    pub fn with_metrics_listen(mut self, addr: Option<SocketAddr>) -> Self {
        self.metrics_listen = addr;
        self
    }

    /// The router every request of this relay goes through.
    pub fn router(&self) -> &Arc<Router> {
        &self.router
    }

    /// Serves every connection with TLS from `files` (`relay serve --tls-cert --tls-key`).
    pub fn with_tls(mut self, files: Option<TlsFiles>) -> Self {
        self.tls = files;
        self
    }

    /// Reads the TLS certificate and key files again (`relay serve` on SIGHUP): new connections
    /// get the new certificate, open ones keep theirs. `Ok(false)`: no TLS is being served. On
    /// an error the certificate served so far stays (the message names the file).
    pub async fn reload_tls(&self) -> Result<bool, String> {
        let certificate = self.certificate.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let Some(certificate) = certificate else { return Ok(false) };
        certificate.reload().await?;
        Ok(true)
    }

    /// `SWITCHYARD_RELAY_PORT` when set to a port number.
    pub fn port_from_env() -> Option<u16> {
        std::env::var(PORT_ENV).ok().and_then(|v| v.trim().parse().ok())
    }

    /// Calls `f` with every new status (the app emits it as an event).
    pub fn on_change(&self, f: impl Fn(&RelayStatus) + Send + Sync + 'static) {
        *self.notify.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(f));
    }

    pub fn status(&self) -> RelayStatus {
        self.status.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn set_status(&self, status: RelayStatus) {
        *self.status.lock().unwrap_or_else(PoisonError::into_inner) = status.clone();
        if let Some(f) = self.notify.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
            f(&status);
        }
    }

    /// Starts the relay unless it runs; a failure is kept in the status (and returned).
    pub async fn start(self: &Arc<Self>) -> RelayStatus {
        let mut running = self.running.lock().await;
        if running.is_some() {
            return self.status();
        }
        let (addr, source) = match self.listen {
            Listen::Addr(a) => (a, PortSource::Listen),
            Listen::Env(p) => (SocketAddr::from((Ipv4Addr::LOCALHOST, p)), PortSource::Env),
            Listen::Setting => match self.engine.relay_port().await {
                Ok(p) => (SocketAddr::from((Ipv4Addr::LOCALHOST, p)), PortSource::Settings),
                Err(e) => {
                    return self.fail(0, PortSource::Settings, format!("cannot read the relay port setting: {e}"))
                }
            },
        };
        let port = addr.port();
        if let Err(e) = check_listen(addr, self.tls.is_some()) {
            return self.fail(port, source, e.to_string());
        }
        let certificate = match &self.tls {
            Some(files) => match Certificate::load(files).await {
                Ok(c) => Some(c),
                Err(why) => return self.fail(port, source, why),
            },
            None => None,
        };
        let tls = match certificate.as_ref().map(Certificate::acceptor).transpose() {
            Ok(tls) => tls,
            Err(why) => return self.fail(port, source, why),
        };
        *self.certificate.lock().unwrap_or_else(PoisonError::into_inner) = certificate;
        self.set_status(RelayStatus::new(RelayState::Starting, port, source));
        let token = match self.engine.relay_token(false).await {
            Ok(t) => t,
            Err(e) => return self.fail(port, source, format!("cannot read the relay token: {e}")),
        };
        let listener = match bind(addr).await {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                let why = format!("port {port} is already in use by another program; free it or choose another port");
                return self.fail(port, source, why);
            }
            Err(e) => return self.fail(port, source, format!("cannot listen on {addr}: {e}")),
        };
        let metrics = match self.metrics_listen {
            Some(at) => {
                if let Err(e) = check_listen(at, tls.is_some()) {
                    return self.fail(port, source, format!("--metrics-listen: {e}"));
                }
                match bind(at).await {
                    Ok(l) => Some(l),
                    Err(e) => return self.fail(port, source, format!("cannot listen for metrics on {at}: {e}")),
                }
            }
            None => None,
        };
        let bound = listener.local_addr().map(|a| a.port()).unwrap_or(port);
        let scheme = if tls.is_some() { "https" } else { "http" };
        let mut started = self.spawn(listener, token, tls.clone());
        if let Some(listener) = metrics {
            if let Ok(at) = listener.local_addr() {
                tracing::info!(%at, "metrics listening");
            }
            let (stop, stopped) = oneshot::channel::<()>();
            let router = self.router.clone();
            let task = tokio::spawn(async move {
                let shutdown = async move {
                    let _ = stopped.await;
                };
                if let Err(e) = crate::serve_metrics(listener, router, tls, shutdown).await {
                    tracing::warn!(error = %e, "metrics listener stopped with an error");
                }
            });
            started.metrics = Some((stop, task));
        }
        *running = Some(started);
        let mut status = RelayStatus::new(RelayState::Listening, port, source);
        status.url = Some(format!("{scheme}://{}", SocketAddr::new(addr.ip(), bound)));
        status.bound_port = Some(i32::from(bound));
        self.set_status(status.clone());
        tracing::info!(port = bound, "relay listening");
        status
    }

    fn spawn(
        self: &Arc<Self>,
        listener: tokio::net::TcpListener,
        token: Secret,
        tls: Option<tokio_rustls::TlsAcceptor>,
    ) -> Running {
        let (stop, stopped) = oneshot::channel::<()>();
        let router = self.router.clone();
        let console = self.console;
        let me = Arc::downgrade(self);
        let task = tokio::spawn(async move {
            let shutdown = async move {
                let _ = stopped.await;
            };
            if let Err(e) = crate::serve_tls(listener, router, token, tls, console, shutdown).await {
                tracing::warn!(error = %e, "relay stopped with an error");
                if let Some(me) = me.upgrade() {
                    let s = me.status();
                    me.set_status(RelayStatus {
                        state: RelayState::Error,
                        url: None,
                        bound_port: None,
                        error: Some(format!("the relay stopped: {e}")),
                        ..s
                    });
                }
            }
        });
        let reverify = ReverifyTask::start(self.engine.clone(), REVERIFY_POLL);
        Running { stop, task, metrics: None, _reverify: reverify }
    }

    fn fail(&self, port: u16, source: PortSource, why: String) -> RelayStatus {
        tracing::warn!(%why, "relay not started");
        let mut status = RelayStatus::new(RelayState::Error, port, source);
        status.error = Some(why);
        self.set_status(status.clone());
        status
    }

    /// Stops accepting, lets in-flight responses finish (within the drain bound, if any),
    /// flushes the attempt ledger.
    pub async fn stop(&self) {
        let taken = self.running.lock().await.take();
        if let Some(Running { stop, mut task, metrics, .. }) = taken {
            if let Some((stop, task)) = metrics {
                let _ = stop.send(());
                let _ = task.await;
            }
            let _ = stop.send(());
            match self.drain {
                Some(drain) => {
                    if tokio::time::timeout(drain, &mut task).await.is_err() {
                        tracing::warn!("relay did not drain in time; cutting off in-flight responses");
                        task.abort();
                    }
                }
                None => {
                    let _ = (&mut task).await;
                }
            }
        }
        self.router.flush().await;
        tracing::info!("relay stopped; attempt ledger flushed");
        let s = self.status();
        if s.state == RelayState::Listening || s.state == RelayState::Starting {
            self.set_status(RelayStatus { state: RelayState::Stopped, url: None, bound_port: None, error: None, ..s });
        }
    }

    /// Writes what the relay recorded so far — the attempt ledger, the quota readings — without
    /// stopping it (`exec --failover` reads a launch's rows before the next launch).
    pub async fn flush(&self) {
        self.router.flush().await;
    }

    /// Stops, then starts again (a new token or port takes effect).
    pub async fn restart(self: &Arc<Self>) -> RelayStatus {
        self.stop().await;
        self.start().await
    }

    /// The relay token; `rotate` replaces it and restarts the relay so only the new one is
    /// accepted at once (a running relay would also pick it up within a second).
    pub async fn token(self: &Arc<Self>, rotate: bool) -> Result<Secret, EngineError> {
        let token = self.engine.relay_token(rotate).await?;
        if rotate {
            self.restart().await;
        }
        Ok(token)
    }

    /// Saves the port setting and restarts the relay on it.
    pub async fn set_port(self: &Arc<Self>, port: i32) -> Result<RelayStatus, EngineError> {
        self.engine.set_relay_port(i64::from(port)).await?;
        Ok(self.restart().await)
    }
}

/// Refuses a non-loopback `--listen` address before anything starts.
pub fn check_loopback(addr: SocketAddr) -> Result<(), EngineError> {
    check_listen(addr, false)
}

/// Refuses a `--listen` address beyond loopback unless the relay serves TLS (invariant 27).
pub fn check_listen(addr: SocketAddr, tls: bool) -> Result<(), EngineError> {
    if tls || addr.ip().is_loopback() {
        return Ok(());
    }
    Err(EngineError::Invalid(InvalidInput::new(
        "listen",
        format!(
            "{addr} is not a loopback address; beyond loopback the relay listens only with TLS \
             (--tls-cert FILE --tls-key FILE) and answers only per-user tokens (relay users add NAME)"
        ),
    )))
}

/// Binds `addr`; right after a restart the old listener may take a moment to close.
async fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let mut tries = 0;
    loop {
        match tokio::net::TcpListener::bind(addr).await {
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && tries < 5 && addr.port() != 0 => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            other => return other,
        }
    }
}
