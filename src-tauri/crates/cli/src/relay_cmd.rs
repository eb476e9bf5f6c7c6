//! `switchyard relay serve|token`: binds loopback, prints the listening line first, serves
//! until SIGINT/SIGTERM and drains in-flight responses.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use switchyard_engine::{Engine, EngineError, InvalidInput, Router};

use crate::args::RelayCmd;
use crate::output::{print_listening, Output};

pub async fn run(engine: &Arc<Engine>, cmd: RelayCmd, _json: bool) -> Result<Output, EngineError> {
    match cmd {
        RelayCmd::Token { rotate } => {
            let token = engine.relay_token(rotate).await?;
            Ok(Output::Token(token.expose().to_string()))
        }
        RelayCmd::Serve { listen } => {
            let addr = match listen {
                Some(a) => a,
                None => SocketAddr::from((Ipv4Addr::LOCALHOST, engine.relay_port().await?)),
            };
            if !addr.ip().is_loopback() {
                return Err(EngineError::Invalid(InvalidInput::new(
                    "listen",
                    format!("{addr} is not a loopback address; the relay only listens on 127.0.0.1 or ::1"),
                )));
            }
            let token = engine.relay_token(false).await?;
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| EngineError::Precondition(format!("cannot listen on {addr}: {e}")))?;
            let bound = listener.local_addr().map_err(|e| EngineError::Internal(e.to_string()))?;
            print_listening(bound);
            let router = Arc::new(Router::new(engine.clone()));
            switchyard_relay::serve(listener, router, token, shutdown_signal())
                .await
                .map_err(|e| EngineError::Internal(format!("relay stopped: {e}")))?;
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
