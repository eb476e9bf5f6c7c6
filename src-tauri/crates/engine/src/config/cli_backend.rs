//! The CLI backend setting of each connection (docs/design.md, "The CLI backend"): off by
//! default; when on, the connection's `external` Claude Code profiles serve plain Messages
//! requests by running the official CLI in print mode with their own config directory, at
//! most `max_concurrent` runs per profile at once (default 2). Kept in `settings`
//! (`cli_backend:<connection id>` = `on:<n>` or `off:<n>`; the cap is kept while off). Which
//! profiles it applies to is [`serves_through_cli`]; what a request may ask of it is
//! `switchyard_providers::claude_cli`. Also where its runs live (`<data dir>/cli-runs/<relay
//! pid>-<random>/`, made by the relay's `cli_backend/run.rs`), the mark every process of a run
//! carries ([`CLI_RUN_MARK`]) and how they are killed by it ([`kill_run_processes`]), and the
//! start-up sweep of the runs a killed relay left (`Context::sweep_cli_runs`).

use std::path::PathBuf;
use std::time::Duration;

use switchyard_core::states::{OfficialClient, ProfileKind};
use switchyard_core::{InvalidInput, Protocol};
use switchyard_providers::dialect;
use switchyard_store::profiles::ProfileRow;

use crate::config::rows::{client_of, credential_facts};
use crate::config::staging::process_alive;
use crate::context::Context;
use crate::error::EngineError;
use crate::settings::CliBackendSetting;
use crate::settings::{Scope, Stored, CLI_BACKEND};
use crate::views::CliBackendView;

pub use crate::settings::values::MAX_CLI_CONCURRENCY;

/// Where the CLI backend's runs live under the data dir (owner-only), one directory each, named
/// `<relay pid>-<random>`: the prompt's system file and the CLI's empty working directory.
pub const CLI_RUNS_DIR: &str = "cli-runs";

/// The variable every process of a run carries as `SWITCHYARD_CLI_RUN=<run's directory name>`:
/// whatever the CLI starts inherits it, even in a session of its own where no process group
/// reaches it, so the run's processes are found by it ([`kill_run_processes`]).
pub const CLI_RUN_MARK: &str = "SWITCHYARD_CLI_RUN";

/// A run older than this is left behind even when a process with its relay's pid runs (the pid
/// was reused): twice the longest first-byte timeout (1 h), which bounds a run and its wait.
const STALE_RUN: Duration = Duration::from_secs(2 * 60 * 60);

/// How many times a run's processes are looked for: each round kills what it finds, and one
/// that forked while the round ran is found by the next; a round that finds none ends it.
#[cfg(target_os = "linux")]
const KILL_ROUNDS: usize = 5;

/// Kills (SIGKILL) every process of this user carrying [`CLI_RUN_MARK`]`=<run>` in its
/// environment; returns how many. Linux reads `/proc/<pid>/environ`; elsewhere nothing is found
/// (the run's process group is still killed by the relay).
pub fn kill_run_processes(run: &str) -> usize {
    #[cfg(target_os = "linux")]
    {
        let needle = format!("{CLI_RUN_MARK}={run}");
        let mut killed = std::collections::BTreeSet::new();
        for _ in 0..KILL_ROUNDS {
            if kill_marked(needle.as_bytes(), &mut killed) == 0 {
                break;
            }
        }
        killed.len()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = run;
        0
    }
}

/// One round: kills the marked processes not killed before (`killed`); returns how many.
#[cfg(target_os = "linux")]
fn kill_marked(needle: &[u8], killed: &mut std::collections::BTreeSet<u32>) -> usize {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    let me = std::process::id();
    let uid = rustix::process::geteuid().as_raw();
    let mut found = 0;
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if pid == me || killed.contains(&pid) || !entry.metadata().is_ok_and(|m| m.uid() == uid) {
            continue;
        }
        // Another user's process cannot be read (nor killed); a zombie's environment reads empty.
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else { continue };
        if !environ.split(|b| *b == 0).any(|var| var == needle) {
            continue;
        }
        let Some(target) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else { continue };
        if rustix::process::kill_process(target, rustix::process::Signal::KILL).is_ok() {
            killed.insert(pid);
            found += 1;
        }
    }
    found
}

/// Whether run directory `name` (`<relay pid>-<random>`) was left behind: its relay runs no
/// more (`alive`), or it is older than any run can be (`age`, when known), or it names no pid
/// (nothing the relay made).
fn run_is_left(name: &str, age: Option<Duration>, alive: impl Fn(i64) -> bool) -> bool {
    match name.split_once('-').and_then(|(pid, _)| pid.parse::<i64>().ok()) {
        None => true,
        Some(pid) => !alive(pid) || age.is_some_and(|a| a > STALE_RUN),
    }
}

/// `on:<n>` / `off:<n>`.
impl Stored for CliBackendSetting {
    fn read(text: &str) -> Option<Self> {
        let (mode, n) = text.split_once(':')?;
        let max_concurrent = n.parse::<u8>().ok()?;
        match mode {
            "on" => Some(CliBackendSetting { enabled: true, max_concurrent }),
            "off" => Some(CliBackendSetting { enabled: false, max_concurrent }),
            _ => None,
        }
    }
    fn write(&self) -> String {
        format!("{}:{}", if self.enabled { "on" } else { "off" }, self.max_concurrent)
    }
}

/// Whether a profile of a `protocol` connection serves through the CLI when the backend is on:
/// an external Claude Code login on an Anthropic connection (a Codex login has no print-mode
/// backend here; API keys and tokens go over HTTP as always).
pub(crate) fn serves_through_cli(protocol: Protocol, row: &ProfileRow) -> bool {
    dialect::of(protocol).has_cli_backend()
        && credential_facts(row).kind == ProfileKind::External
        && client_of(row) == Some(OfficialClient::ClaudeCode)
}

impl Context {
    /// Where the CLI backend's runs live ([`CLI_RUNS_DIR`] of the data dir, absolute: the relay
    /// may run elsewhere than the data dir).
    pub fn cli_runs_dir(&self) -> PathBuf {
        let base = std::path::absolute(self.data_dir()).unwrap_or_else(|_| self.data_dir().to_path_buf());
        base.join(CLI_RUNS_DIR)
    }

    /// Removes the runs a relay that was killed (or crashed) left behind — their prompt's system
    /// file and working directory — after killing the processes still marked with them
    /// (start-up clean-up); returns how many. A live relay's runs stay.
    pub(crate) fn sweep_cli_runs(&self) -> usize {
        let Ok(entries) = std::fs::read_dir(self.cli_runs_dir()) else { return 0 };
        let mut removed = 0;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            let age = entry.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok());
            if !run_is_left(&name, age, process_alive) {
                continue;
            }
            kill_run_processes(&name);
            let path = entry.path();
            // Not followed: a link is removed as a link.
            let gone = match entry.file_type() {
                Ok(t) if t.is_dir() => std::fs::remove_dir_all(&path),
                _ => std::fs::remove_file(&path),
            };
            if gone.is_ok() {
                removed += 1;
            }
        }
        removed
    }

    /// The CLI backend setting of `connection_id` (off when unset or unreadable).
    pub(crate) async fn cli_backend_setting(&self, connection_id: &str) -> Result<CliBackendSetting, EngineError> {
        self.setting(&CLI_BACKEND, Scope::Connection(connection_id)).await
    }

    /// The CLI backend setting of `slug` and the profiles it applies to.
    pub async fn cli_backend(&self, slug: &str) -> Result<CliBackendView, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let setting = self.cli_backend_setting(&connection.id).await?;
        let protocol = crate::views::protocol_of(&connection);
        let rows = {
            let mut conn = self.store.acquire().await?;
            switchyard_store::profiles::for_connection(&mut conn, &connection.id).await?
        };
        Ok(CliBackendView {
            slug: connection.slug.clone(),
            enabled: setting.enabled,
            max_concurrent: i32::from(setting.max_concurrent),
            profiles: rows.iter().filter(|r| serves_through_cli(protocol, r)).map(|r| r.label.clone()).collect(),
        })
    }

    /// Turns the CLI backend of `slug` on or off (`None`: as it is) and, when given, sets its
    /// per-profile cap (1 to 16; otherwise the current cap stays). A running relay uses it
    /// within a second.
    pub async fn set_cli_backend(
        &self,
        slug: &str,
        enabled: Option<bool>,
        max_concurrent: Option<i64>,
    ) -> Result<CliBackendView, EngineError> {
        let cap = match max_concurrent {
            None => None,
            Some(n) => Some(u8::try_from(n).map_err(|_| {
                let why = format!("must be between 1 and {MAX_CLI_CONCURRENCY} (got {n})");
                EngineError::Invalid(InvalidInput::new("max_concurrent", why))
            })?),
        };
        let connection = self.connection_by_slug(slug).await?;
        if enabled == Some(true) && !dialect::of(crate::views::protocol_of(&connection)).has_cli_backend() {
            return Err(EngineError::Precondition(format!(
                "'{slug}' is not an Anthropic connection: the CLI backend runs Claude Code, which serves Messages requests"
            )));
        }
        self.update_setting(&CLI_BACKEND, Scope::Connection(&connection.id), |before| CliBackendSetting {
            enabled: enabled.unwrap_or(before.enabled),
            max_concurrent: cap.unwrap_or(before.max_concurrent),
        })
        .await?;
        self.cli_backend(slug).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_settings_read_back_and_garbage_is_off() {
        let on = CliBackendSetting { enabled: true, max_concurrent: 3 };
        assert_eq!(CLI_BACKEND.parse_stored(&on.write()), on, "a stored setting reads back as written");
        assert_eq!(
            CLI_BACKEND.parse_stored("off:3"),
            CliBackendSetting { enabled: false, max_concurrent: 3 },
            "off keeps the cap"
        );
        assert_eq!(CLI_BACKEND.parse_stored("on:0"), CliBackendSetting::default(), "a cap of 0 is out of range");
        assert_eq!(CLI_BACKEND.parse_stored("on:17"), CliBackendSetting::default(), "past 16 is out of range");
        assert_eq!(CLI_BACKEND.parse_stored("yes:2"), CliBackendSetting::default(), "an unknown mode is the default");
        assert!(!CliBackendSetting::default().enabled, "the CLI backend is off unless turned on");
    }

    /// Issue 39: a killed relay left its runs (and their prompt's system file) behind for good;
    /// the start-up sweep decides which are left by this rule.
    #[test]
    fn a_run_is_left_when_its_relay_is_gone_or_it_is_too_old() {
        let alive = |pid: i64| pid == 42;
        let young = Some(Duration::from_secs(60));
        assert!(run_is_left("7-abc123", young, alive), "its relay runs no more");
        assert!(!run_is_left("42-abc123", young, alive), "a live relay's run in progress stays");
        assert!(!run_is_left("42-abc123", None, alive), "an unknown age does not make it left");
        assert!(run_is_left("42-abc123", Some(STALE_RUN * 2), alive), "no run lasts that long: the pid was reused");
        assert!(run_is_left("stray", young, alive), "a name without a pid is no run of a relay");
    }

    /// Issue 39: a process that left the run's process group (its own session) survived the
    /// run; the mark finds it, and only the processes of that one run.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_mark_finds_a_run_s_processes_and_no_other() -> Result<(), Box<dyn std::error::Error>> {
        let spawn = |run: &str| std::process::Command::new("sleep").arg("60").env(CLI_RUN_MARK, run).spawn();
        let mut ours = spawn("1-unitmark")?;
        let mut other = spawn("1-unitmarkother")?;
        // The child's environment is its own once it has exec'd `sleep`.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let needle = format!("{CLI_RUN_MARK}=1-unitmark");
        while !std::fs::read(format!("/proc/{}/environ", ours.id()))
            .is_ok_and(|e| e.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
        {
            assert!(std::time::Instant::now() < deadline, "sleep started within 5 s");
            std::thread::sleep(Duration::from_millis(10));
        }
        let killed = kill_run_processes("1-unitmark");
        let status = ours.wait()?;
        let _ = other.kill();
        let _ = other.wait();
        assert_eq!(killed, 1, "exactly the process marked with this run");
        assert!(!status.success(), "it was killed, not left to sleep: {status:?}");
        assert_eq!(kill_run_processes("0-nosuchrun"), 0, "no process carries an unknown run's mark");
        Ok(())
    }
}
