//! `switchyard relay serve|token`: hosts the relay through `switchyard_relay::Service` (the
//! same one the desktop app uses), prints the listening line first, serves until
//! SIGINT/SIGTERM and drains every in-flight response.

use std::sync::Arc;

use switchyard_engine::{Engine, EngineError};
use switchyard_relay::{check_loopback, Listen, Service};

use crate::args::RelayCmd;
use crate::output::{print_listening, Output};
use crate::render::token::RelayToken;

pub async fn run(engine: &Arc<Engine>, cmd: RelayCmd, _json: bool) -> Result<Output, EngineError> {
    match cmd {
        RelayCmd::Token { rotate } => {
            let token = engine.relay_token(rotate).await?;
            Ok(Output::view(RelayToken { token: token.expose().to_string() }))
        }
        RelayCmd::Serve { listen } => {
            let listen = match listen {
                Some(addr) => {
                    check_loopback(addr)?;
                    Listen::Addr(addr)
                }
                None => Listen::Setting,
            };
            // The CLI waits for every in-flight response on shutdown (no drain bound).
            let service = Arc::new(Service::with(engine.clone(), listen, None));
            let status = service.start().await;
            let bound = status.url.as_deref().and_then(|u| u.strip_prefix("http://")).and_then(|a| a.parse().ok());
            let Some(bound) = bound.filter(|_| status.state == "listening") else {
                let why = status.error.unwrap_or_else(|| "the relay did not start".to_string());
                return Err(EngineError::Precondition(why));
            };
            print_listening(bound);
            shutdown_signal().await;
            service.stop().await;
            Ok(Output::Done)
        }
    }
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("relay shutting down; draining in-flight responses");
}
