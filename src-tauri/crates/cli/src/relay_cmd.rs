//! `switchyard relay serve|token|users` and `vault rotate-master-key`: hosts the relay through
//! `switchyard_relay::Service` (the same one the desktop app uses), prints the listening line
//! first, serves until SIGINT/SIGTERM and drains every in-flight response, flushes the ledger
//! and exits 0. Beyond loopback only with TLS (`--tls-cert`, `--tls-key`); SIGHUP reads the
//! certificate files again.

use std::sync::Arc;
use switchyard_core::states::RelayState;

use switchyard_engine::{
    Engine, EngineError, MasterKey, RelayUserInput, RouterOptions, Sharing, Telemetry, TelemetryOptions, UserGrant,
};
use switchyard_relay::{check_listen, Listen, Service, TlsFiles};

use crate::args::{RelayCmd, UsersCmd, VaultCmd};
use crate::output::{print_listening, Output};
use crate::render::relay_users::{MasterKeyRotated, NewUserToken, RelayUsers, UserRevoked};
use crate::render::token::RelayToken;

pub async fn run(engine: &Arc<Engine>, cmd: RelayCmd, _json: bool) -> Result<Output, EngineError> {
    match cmd {
        RelayCmd::Token { rotate } => {
            let token = engine.relay_token(rotate).await?;
            Ok(Output::view(RelayToken { token: token.expose().to_string() }))
        }
        RelayCmd::Users(cmd) => users(engine, cmd).await,
        RelayCmd::Serve {
            listen,
            tls_cert,
            tls_key,
            probe_lease_secs,
            limit_lease_secs,
            metrics_listen,
            otlp_endpoint,
            no_metrics,
            console,
        } => {
            if console && !switchyard_relay::console_built() {
                return Err(EngineError::Precondition(
                    "this binary was built without the web console: run `npm run build:console` in ui/, then build again"
                        .into(),
                ));
            }
            let tls = match (tls_cert, tls_key) {
                (Some(cert), Some(key)) => Some(TlsFiles { cert, key }),
                _ => None,
            };
            let listen = match listen {
                Some(addr) => {
                    check_listen(addr, tls.is_some())?;
                    Listen::Addr(addr)
                }
                None => Listen::Setting,
            };
            // A replica that cannot serve (store, migrations, master key) does not start.
            engine.ready().await?;
            // The CLI waits for every in-flight response on shutdown (no drain bound).
            // On a team store the replicas share their routing state; a probe's lease lasts as asked.
            let sharing = if engine.on_team_store() {
                Sharing::Shared { probe_lease: std::time::Duration::from_secs(probe_lease_secs) }
            } else {
                Sharing::Local
            };
            let telemetry = TelemetryOptions {
                metrics: !no_metrics,
                otlp_endpoint: otlp_endpoint.filter(|url| !url.trim().is_empty()),
            };
            let options = RouterOptions {
                sharing,
                slot_lease: std::time::Duration::from_secs(limit_lease_secs),
                telemetry: Arc::new(Telemetry::start(&telemetry)?),
            };
            let service = Service::with_options(engine.clone(), listen, None, options)
                .with_tls(tls)
                .with_metrics_listen(metrics_listen)
                .with_console(console);
            let service = Arc::new(service);
            let status = service.start().await;
            let Some(url) = status.url.clone().filter(|_| status.state == RelayState::Listening) else {
                let why = status.error.unwrap_or_else(|| "the relay did not start".to_string());
                return Err(EngineError::Precondition(why));
            };
            // SIGHUP is taken over before the listening line: from then on a reload signal never
            // hits its default action (ending the process).
            let reloads = tokio::spawn(reload_on_hangup(service.clone(), hangups()));
            print_listening(&url);
            shutdown_signal().await;
            reloads.abort();
            service.stop().await;
            service.router().telemetry().flush_spans();
            Ok(Output::Done)
        }
    }
}

async fn users(engine: &Arc<Engine>, cmd: UsersCmd) -> Result<Output, EngineError> {
    match cmd {
        UsersCmd::Add { name, grant } => {
            let token = engine.relay_user_add_with(&name, &user_grant(grant, false)?).await?;
            Ok(Output::view(NewUserToken { user: name, token: token.expose().to_string() }))
        }
        UsersCmd::Edit { name, grant, no_expiry, if_revision } => {
            let view = engine.relay_user_edit(&name, &user_grant(grant, no_expiry)?, if_revision).await?;
            Ok(Output::view(RelayUsers(vec![view])))
        }
        UsersCmd::Rotate { name } => {
            let token = engine.relay_user_rotate(&name).await?;
            Ok(Output::view(NewUserToken { user: name, token: token.expose().to_string() }))
        }
        UsersCmd::List => Ok(Output::view(RelayUsers(engine.relay_user_list().await?))),
        UsersCmd::Revoke { name } => {
            engine.relay_user_revoke(&name).await?;
            Ok(Output::view(UserRevoked { user: name, revoked: true }))
        }
    }
}

/// `--role`, `--connections`, `--models`, `--expires` (`--no-expiry`) as the engine takes them
/// (the desktop's and the console's forms give the same input: `RelayUserInput::grant`).
fn user_grant(a: crate::args::GrantArgs, no_expiry: bool) -> Result<UserGrant, EngineError> {
    RelayUserInput { role: a.role, connections: a.connections, models: a.models, expires: a.expires, no_expiry }.grant()
}

/// `switchyard vault rotate-master-key --new-key-file FILE`.
pub async fn vault(engine: &Arc<Engine>, cmd: VaultCmd) -> Result<Output, EngineError> {
    match cmd {
        VaultCmd::RotateMasterKey { new_key_file } => {
            let new = MasterKey::from_file(&new_key_file)?;
            let from = engine.sealed_key_id().map(str::to_string);
            let resealed = engine.rotate_master_key(&new).await?;
            Ok(Output::view(MasterKeyRotated {
                resealed: i64::try_from(resealed).unwrap_or(i64::MAX),
                from_key_id: from.unwrap_or_default(),
                to_key_id: new.id().to_string(),
            }))
        }
    }
}

/// On every SIGHUP, reads the TLS certificate and key again (a renewed certificate is served
/// to new connections without a restart; a failed reload keeps the old one and says why).
async fn reload_on_hangup(service: Arc<Service>, hangups: Hangups) {
    #[cfg(unix)]
    {
        let Some(mut hangups) = hangups else { return };
        while hangups.recv().await.is_some() {
            match service.reload_tls().await {
                Ok(true) => tracing::info!("TLS certificate reloaded"),
                Ok(false) => tracing::info!("SIGHUP: no TLS certificate to reload"),
                Err(why) => tracing::warn!(%why, "TLS certificate not reloaded; the previous one is still served"),
            }
        }
    }
    #[cfg(not(unix))]
    drop((service, hangups));
}

#[cfg(unix)]
type Hangups = Option<tokio::signal::unix::Signal>;
#[cfg(not(unix))]
type Hangups = ();

/// The SIGHUP stream, registered now (synchronously, on the caller's runtime).
fn hangups() -> Hangups {
    #[cfg(unix)]
    {
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok()
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
