//! Which attempts the official Claude Code CLI serves instead of an HTTP call (docs/design.md,
//! "The CLI backend"): with the connection's CLI backend on, every attempt on an external
//! Claude Code profile. The engine decides it here, once per snapshot — the profiles, their
//! config directories, the program, the per-profile cap and where runs live — and says so in the attempt's
//! [`Target::cli`](crate::Target); the relay runs the process. Such a profile has no secret
//! in the keychain (its login is the CLI's own, never read): its attempts carry an empty one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use switchyard_core::states::OfficialClient;
use switchyard_core::Protocol;
use switchyard_store::profiles::ProfileRow;
use switchyard_vault::Secret;

use crate::config::accounts::find_program;
use crate::config::cli_backend::serves_through_cli;
use crate::context::Context;
use crate::error::EngineError;
use crate::router::{Router, Snapshot};

/// A connection's CLI backend while it is on.
#[derive(Debug)]
pub struct CliBackend {
    pub max_concurrent: u32,
    /// The CLI (`SWITCHYARD_CLAUDE_BIN`, else `claude` on PATH), or why there is none.
    program: Result<PathBuf, String>,
    /// The config directory of each profile that serves through the CLI, by profile id.
    dirs: HashMap<String, PathBuf>,
    /// Where the runs live (`Context::cli_runs_dir`, absolute).
    runs_dir: PathBuf,
}

/// What the transport needs to run the CLI for one attempt.
#[derive(Debug, Clone, Copy)]
pub struct CliTarget<'a> {
    /// The program, or why none was found (the attempt then fails without running anything).
    pub program: Result<&'a Path, &'a str>,
    /// `CLAUDE_CONFIG_DIR` of the attempt's profile.
    pub config_dir: &'a Path,
    /// Runs of one profile at once; more wait for a turn.
    pub max_concurrent: u32,
    /// Where the run makes its directory (owner-only): the data dir's `cli-runs`, swept at the
    /// engine's next start when a killed relay left one.
    pub runs_dir: &'a Path,
}

impl Snapshot {
    /// How the CLI serves `profile_id`'s attempts, when it does.
    pub fn cli_target(&self, profile_id: &str) -> Option<CliTarget<'_>> {
        let cli = self.cli.as_ref()?;
        let config_dir = cli.dirs.get(profile_id)?;
        Some(CliTarget {
            program: cli.program.as_deref().map_err(String::as_str),
            config_dir,
            max_concurrent: cli.max_concurrent,
            runs_dir: &cli.runs_dir,
        })
    }
}

impl Context {
    /// The CLI backend of a connection for its snapshot: `None` while off (or when no profile
    /// serves through it).
    pub(crate) async fn load_cli_backend(
        &self,
        connection_id: &str,
        protocol: Protocol,
        rows: &[ProfileRow],
    ) -> Result<Option<CliBackend>, EngineError> {
        let setting = self.cli_backend_setting(connection_id).await?;
        if !setting.enabled {
            return Ok(None);
        }
        let dirs: HashMap<String, PathBuf> = rows
            .iter()
            .filter(|r| serves_through_cli(protocol, r))
            .map(|r| (r.id.clone(), self.config_dir(&r.id)))
            .collect();
        if dirs.is_empty() {
            return Ok(None);
        }
        let program = find_program(OfficialClient::ClaudeCode).map_err(|e| e.to_string());
        let runs_dir = self.cli_runs_dir();
        Ok(Some(CliBackend { max_concurrent: u32::from(setting.max_concurrent), program, dirs, runs_dir }))
    }
}

impl Router {
    /// The secret an attempt on `snap`'s profile `index` is sent with: an empty one for a
    /// profile the CLI serves (it signs in by itself), an owned login's access token (renewed
    /// first when due; `router/login.rs`), else the keychain's.
    pub(crate) async fn attempt_secret(
        &self,
        snap: &Snapshot,
        index: usize,
    ) -> Result<crate::router::attempt::AttemptSecret, EngineError> {
        use crate::router::attempt::AttemptSecret;
        if snap.cli_target(&snap.rows[index].id).is_some() {
            return Ok(AttemptSecret::Ready(Arc::new(Secret::new(String::new())), None));
        }
        if snap.profiles[index].credential.kind == switchyard_core::states::ProfileKind::Oauth {
            // Boxed: an owned login's renewal is kilobytes of future every key's attempt would carry.
            return Box::pin(self.login_credential(snap, index)).await;
        }
        Ok(match self.secrets.get(&self.engine, &snap.rows[index]).await? {
            Some(secret) => AttemptSecret::Ready(secret, None),
            None => AttemptSecret::Missing,
        })
    }
}
