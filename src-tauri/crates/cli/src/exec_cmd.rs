//! `switchyard exec SLUG [--profile LABEL] [--failover] -- CMD [ARGS...]`: runs CMD with its
//! environment pointed at the relay for SLUG. A Switchyard relay of this data dir already
//! listening on the configured port is used — it must answer a fresh `/healthz` challenge with
//! the proof only the relay token and that port give (`switchyard_relay::is_own_relay`); the
//! token is never sent to find out, so another process on the port learns nothing. Otherwise an
//! embedded relay on a free loopback port serves for the child's lifetime and stops with it.
//! SIGINT/SIGTERM are passed on to the child; its exit code comes back (128 + signal number
//! when a signal ended it). The token travels in the environment only, never in argv or output
//! (docs/design.md, "exec").
//!
//! When CMD is Claude Code or Codex and the connection has external logins of that client (or
//! `--profile` names one), the CLI runs on one of those logins instead (`exec_login.rs`): the
//! engine picks the account (`Engine::exec_account`), the relay passes the CLI's own credential
//! through, and `--failover` launches again on the next account after a limit refusal.

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use switchyard_engine::{Engine, EngineError, InvalidInput};
use switchyard_relay::{Listen, Service};

use crate::output::Output;

/// The environment variable holding the relay token for Codex (`env_key`, or its
/// `env_http_headers` with an external login) and for scripts.
pub const TOKEN_ENV: &str = "SWITCHYARD_RELAY_TOKEN";

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The connection whose relay URL the command gets.
    pub slug: String,
    /// Run the official CLI on this external login (label or id) instead of picking the next one.
    #[arg(long, value_name = "LABEL")]
    pub profile: Option<String>,
    /// When the CLI exits non-zero after its account hit a limit, run it again on the next
    /// account (at most once per account). For non-interactive runs such as `claude -p`.
    #[arg(long)]
    pub failover: bool,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// The relay the child talks to: its URL root for the connection, and the embedded one to stop.
pub(crate) struct RelayFor {
    pub root: String,
    pub embedded: Option<Arc<Service>>,
}

impl RelayFor {
    pub(crate) async fn stop(self) {
        if let Some(s) = self.embedded {
            s.stop().await;
        }
    }

    /// Writes what an embedded relay recorded so far (a relay in another process writes its
    /// ledger within a moment by itself).
    pub(crate) async fn flush(&self) {
        if let Some(s) = &self.embedded {
            s.flush().await;
        }
    }
}

pub async fn run(engine: &Arc<Engine>, a: ExecArgs) -> Result<Output, EngineError> {
    let detail = match engine.connection_show(&a.slug).await {
        Err(EngineError::NotFound { .. }) if engine.is_pool(&a.slug).await? => {
            return crate::exec_pool::run(engine, a).await;
        }
        other => other?,
    };
    let protocol = detail.connection.protocol.clone();
    let slug = detail.connection.slug.clone();
    let program = a.command[0].clone();
    let login = crate::exec_login::wanted(engine, &slug, &protocol, &program, &a).await?;
    if login.is_none() && a.failover {
        return Err(EngineError::Invalid(InvalidInput::new(
            "failover",
            format!("needs external logins of the command's client on '{slug}' (profile add --kind external)"),
        )));
    }
    if program_name(&program) == Some("codex") && protocol != "openai" {
        return Err(EngineError::Invalid(InvalidInput::new(
            "slug",
            format!("codex speaks the OpenAI Responses API; connection '{slug}' is {protocol}"),
        )));
    }
    let relay = relay_for(engine, &slug).await?;
    if let Some(client) = login {
        return crate::exec_login::run(engine, &a, client, relay).await;
    }
    let token = engine.relay_token(false).await?;
    let root = relay.root.clone();
    let client = client_command(&a.command, &root, &protocol, &token);
    drop(token);
    let code = run_child(&client.program, client.cmd).await;
    relay.stop().await;
    code.map(Output::Exit)
}

/// A client process ready to start.
pub(crate) struct ClientCommand {
    pub(crate) program: String,
    pub(crate) cmd: tokio::process::Command,
}

/// The command `argv` with its client environment pointed at the relay URL `root` (a
/// connection's, or a pool member's), the token in the environment only.
pub(crate) fn client_command(
    argv: &[String],
    root: &str,
    protocol: &str,
    token: &switchyard_engine::Secret,
) -> ClientCommand {
    let mut argv = argv.to_vec();
    let program = argv.remove(0);
    let mut cmd = tokio::process::Command::new(&program);
    if program_name(&program) == Some("codex") {
        // Codex reads providers from config; `-c` overrides add one without touching ~/.codex.
        // The token is not among them: `env_key` names the variable that carries it.
        // The base URL holds a pool member's name (`/c/POOL@CONN=MODEL`): written as a TOML
        // string, escaped, so no name can end the string and add keys (issue 39).
        for kv in [
            "model_provider=\"switchyard\"".to_string(),
            "model_providers.switchyard.name=\"Switchyard\"".to_string(),
            format!("model_providers.switchyard.base_url={}", toml_string(&format!("{root}/v1"))),
            format!("model_providers.switchyard.env_key=\"{TOKEN_ENV}\""),
            "model_providers.switchyard.wire_api=\"responses\"".to_string(),
        ] {
            cmd.arg("-c").arg(kv);
        }
    }
    cmd.args(&argv);
    cmd.env(TOKEN_ENV, token.expose()).env("SWITCHYARD_RELAY_URL", root);
    if protocol == "anthropic" {
        cmd.env("ANTHROPIC_BASE_URL", root).env("ANTHROPIC_AUTH_TOKEN", token.expose()).env_remove("ANTHROPIC_API_KEY");
    } else if protocol == "gemini" {
        // Gemini CLI's variables. Its auth choice stays the user's (`security.auth.selectedType`
        // in its settings): system defaults are read only from root-owned files (docs/clients.md).
        cmd.env("GOOGLE_GEMINI_BASE_URL", root)
            .env("GEMINI_API_KEY", token.expose())
            .env_remove("GOOGLE_API_KEY")
            .env_remove("GOOGLE_GENAI_USE_VERTEXAI");
    } else {
        cmd.env("OPENAI_BASE_URL", format!("{root}/v1")).env("OPENAI_API_KEY", token.expose());
    }
    ClientCommand { program, cmd }
}

/// The relay of this data dir when one proves itself on the configured port, else an embedded
/// one on a free loopback port.
pub(crate) async fn relay_for(engine: &Arc<Engine>, slug: &str) -> Result<RelayFor, EngineError> {
    let token = engine.relay_token(false).await?;
    let port = match Service::port_from_env() {
        Some(p) => p,
        None => engine.relay_port().await?,
    };
    let mut embedded = None;
    let port = if switchyard_relay::is_own_relay(port, &token).await {
        port
    } else {
        let service = Arc::new(Service::with(
            engine.clone(),
            Listen::Addr((Ipv4Addr::LOCALHOST, 0).into()),
            Some(Duration::from_secs(5)),
        ));
        let status = service.start().await;
        let Some(bound) = status.bound_port.and_then(|p| u16::try_from(p).ok()) else {
            let why = status.error.unwrap_or_else(|| "the embedded relay did not start".into());
            return Err(EngineError::Precondition(why));
        };
        tracing::info!(
            port = bound,
            "no relay of this data dir proved itself on port {port}; an embedded relay serves this command"
        );
        embedded = Some(service);
        bound
    };
    Ok(RelayFor { root: format!("http://127.0.0.1:{port}/c/{slug}"), embedded })
}

/// The program's file name (`claude`, `codex`, …).
pub(crate) fn program_name(program: &str) -> Option<&str> {
    std::path::Path::new(program).file_name().and_then(|n| n.to_str())
}

/// Runs the child to its end, passing SIGINT/SIGTERM on; its exit code (127: not found, 126:
/// not runnable).
pub(crate) async fn run_child(program: &str, mut cmd: tokio::process::Command) -> Result<u8, EngineError> {
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let shown = switchyard_engine::echo_safe(program).unwrap_or(switchyard_engine::NOT_SHOWN).to_string();
            let code = if e.kind() == std::io::ErrorKind::NotFound { 127 } else { 126 };
            tracing::error!("cannot run {shown}: {e}");
            return Ok(code);
        }
    };
    let forward = forward_signals(child.id());
    let status = child.wait().await;
    forward.abort();
    let status = status.map_err(|e| EngineError::Internal(format!("waiting for the command: {e}")))?;
    Ok(exit_code(&status))
}

/// The child's exit code, or 128 + the signal that ended it.
fn exit_code(status: &std::process::ExitStatus) -> u8 {
    if let Some(code) = status.code() {
        return u8::try_from(code & 0xff).unwrap_or(1);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return u8::try_from(128 + sig).unwrap_or(255);
        }
    }
    1
}

/// Passes SIGINT and SIGTERM on to the child (`exec` itself keeps waiting for it).
fn forward_signals(pid: Option<u32>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        #[cfg(unix)]
        {
            use rustix::process::{kill_process, Pid, Signal};
            use tokio::signal::unix::{signal, SignalKind};
            let (Ok(mut int), Ok(mut term)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) else {
                return;
            };
            let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()).and_then(Pid::from_raw) else { return };
            loop {
                let sig = tokio::select! {
                    _ = int.recv() => Signal::INT,
                    _ = term.recv() => Signal::TERM,
                };
                let _ = kill_process(pid, sig);
            }
        }
        #[cfg(not(unix))]
        {
            let _ = pid;
        }
    })
}

/// `text` as a TOML basic string: quoted, `"` and `\` escaped, every control character as `\uXXXX`.
pub(crate) fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod toml_tests {
    use super::toml_string;

    /// Issue 39: `exec POOL -- codex` put the member name unescaped inside a TOML string.
    #[test]
    fn a_config_string_cannot_be_ended_by_what_it_holds() {
        assert_eq!(toml_string("http://127.0.0.1:1/c/p@c/v1"), "\"http://127.0.0.1:1/c/p@c/v1\"", "plain text as is");
        assert_eq!(toml_string("a\"b"), "\"a\\\"b\"", "a quote is escaped");
        assert_eq!(toml_string("a\\b"), "\"a\\\\b\"", "a backslash too");
        assert_eq!(toml_string("a\nb"), "\"a\\u000Ab\"", "a line break never ends the line");
    }
}
