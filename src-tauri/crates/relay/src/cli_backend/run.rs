//! One `claude -p` process: the flags of seed 004 (checked against Claude Code 2.1.332's
//! `--help` and a run against a local recorder), the request's model and system prompt (a
//! file, so a long one never meets argv's limits or `ps`), the prompt on stdin, the profile's
//! config directory as `CLAUDE_CONFIG_DIR`, the connection's base URL, and an empty working
//! directory (no project settings, hooks, plugins or MCP servers to pick up). Each run has a
//! directory of its own under the data dir's `cli-runs` (`<relay pid>-<random>`, 0700; the
//! working directory 0700, the system file 0600), removed when the run ends; one a killed relay
//! left is removed at the engine's next start (`Context::sweep_cli_runs`).
//!
//! The environment is an allow-list ([`PASSED_ENV`] and `LC_*`: finding programs, a home, a
//! locale, a proxy and its certificates), never the relay's whole one: no API key, token or
//! database URL of the relay's, no variable that would replace the profile's login or move the
//! CLI to another provider, reaches the CLI or what it starts. Then the run's own: `TZ=UTC`
//! makes the CLI name a limit's reset in UTC (`reset.rs` of `claude_cli`),
//! `CLAUDE_CODE_MAX_RETRIES=0` leaves retries to the routing loop, and `SWITCHYARD_CLI_RUN`
//! (`CLI_RUN_MARK`) marks every process of the run, whatever the CLI starts included.
//!
//! The process leads its own process group, killed when the run is dropped (the client went
//! away, the deadline passed) before it ended; then, either way, every process still carrying
//! the run's mark — one in a session of its own, out of the group's reach, too — is killed
//! (Linux; `kill_run_processes`) before the run's directory goes.

use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use switchyard_engine::{kill_run_processes, CLI_RUN_MARK};
use switchyard_providers::claude_cli::CliPrompt;
use tokio::io::AsyncWriteExt;

/// What the CLI's system prompt is when the request has none (print mode otherwise uses
/// Claude Code's own, a coding agent's).
pub(crate) const NEUTRAL_SYSTEM: &str = "You are a helpful assistant.";

/// The variables of the relay's environment the CLI gets (names compared ignoring case, as
/// Windows does; every `LC_*` too): finding programs, a home and a user, a shell, temporary
/// files, the language, a proxy and the CA certificates a company proxy needs, and what Windows
/// needs to start a program. Anything else — `OPENAI_API_KEY`, `GITHUB_TOKEN`, a database URL,
/// `NODE_OPTIONS`, `ANTHROPIC_API_KEY`, a provider switch — stays with the relay.
const PASSED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "LANG",
    "LANGUAGE",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "TEMP",
    "TMP",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "HOMEDRIVE",
    "HOMEPATH",
    // Where Git Bash is when not on PATH: Claude Code on Windows needs it to start.
    "CLAUDE_CODE_GIT_BASH_PATH",
];

/// Whether the relay's variable `name` reaches the CLI ([`PASSED_ENV`], any case, or `LC_*`).
fn passes(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else { return false };
    PASSED_ENV.iter().any(|p| p.eq_ignore_ascii_case(name)) || name.starts_with("LC_")
}

/// How a run ended.
#[derive(Debug)]
pub(crate) enum Ran {
    /// The process exited: its exit code (`None`: killed by a signal) and stdout.
    Exited { code: Option<i32>, stdout: Vec<u8> },
    /// It could not be started (or its I/O failed): why, for the answer's message.
    NotStarted(String),
}

/// What one run needs.
pub(crate) struct RunSpec<'a> {
    pub program: &'a Path,
    pub config_dir: &'a Path,
    /// The connection's base URL (`ANTHROPIC_BASE_URL`).
    pub base_url: &'a str,
    pub prompt: &'a CliPrompt,
    /// Where the run makes its directory (the data dir's `cli-runs`, absolute).
    pub runs_dir: &'a Path,
}

/// Runs the CLI once and waits for it. Dropping the future kills the process group; the run's
/// marked processes and its directory go when it ends either way.
pub(crate) async fn run_cli(spec: RunSpec<'_>) -> Ran {
    let dir = match make_run_dir(spec.runs_dir) {
        Ok(d) => d,
        Err(e) => return Ran::NotStarted(format!("cannot make the run's directory: {e}")),
    };
    // Its name is the run's mark: unique among the runs of every relay on this data dir.
    let mark = dir.path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let cwd = dir.path().join("cwd");
    let system_file = dir.path().join("system.txt");
    let mut guard = RunGuard::new(mark.clone(), dir);
    let system = spec.prompt.system.as_deref().unwrap_or(NEUTRAL_SYSTEM);
    if let Err(e) = make_private_dir(&cwd).and_then(|()| write_private(&system_file, system)) {
        return Ran::NotStarted(format!("cannot prepare the run's directory: {e}"));
    }
    let mut cmd = tokio::process::Command::new(spec.program);
    cmd.arg("-p")
        .arg("--model")
        .arg(&spec.prompt.model)
        .args(["--output-format", "json", "--tools", "", "--strict-mcp-config", "--setting-sources", "project"])
        .args(["--no-session-persistence", "--disable-slash-commands", "--system-prompt-file"])
        .arg(&system_file)
        .current_dir(&cwd)
        // The allow-list first: every variable below is the run's own, never the relay's.
        .env_clear()
        .envs(std::env::vars_os().filter(|(name, _)| passes(name)))
        .env(CLI_RUN_MARK, &mark)
        .env("CLAUDE_CONFIG_DIR", spec.config_dir)
        .env("ANTHROPIC_BASE_URL", spec.base_url)
        .env("CLAUDE_CODE_MAX_OUTPUT_TOKENS", spec.prompt.max_tokens.to_string())
        .env("MAX_THINKING_TOKENS", "0")
        .env("CLAUDE_CODE_MAX_RETRIES", "0")
        .env("TZ", "UTC")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Ran::NotStarted(format!("cannot start {}: {e}", spec.program.display())),
    };
    guard.started(&child);
    let stdin = child.stdin.take();
    let prompt = spec.prompt.prompt.as_bytes();
    let write = async move {
        if let Some(mut stdin) = stdin {
            // A CLI that exits without reading its input is judged by its output, not this.
            let _ = stdin.write_all(prompt).await;
            let _ = stdin.shutdown().await;
        }
    };
    let (_, waited) = tokio::join!(write, child.wait_with_output());
    guard.exited();
    drop(guard);
    match waited {
        Ok(out) => Ran::Exited { code: out.status.code(), stdout: out.stdout },
        Err(e) => Ran::NotStarted(format!("lost the CLI's output: {e}")),
    }
}

/// The run's own directory under `runs_dir` (made owner-only when missing): `<relay
/// pid>-<random>`, 0700, so the engine's next start can tell whose it is.
fn make_run_dir(runs_dir: &Path) -> std::io::Result<tempfile::TempDir> {
    make_private_dir_all(runs_dir)?;
    let prefix = format!("{}-", std::process::id());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder.tempdir_in(runs_dir)
}

/// `dir` and its missing parents, owner-only (0700) where made.
fn make_private_dir_all(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// A new directory, owner-only (0700).
fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// A new file holding `text`, owner-only (0600) from the moment it exists.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(text.as_bytes())
}

/// What a run leaves to clean up: its process group while it runs (killed when dropped before
/// the run ended: `kill_on_drop` reaches only the process itself), and in any case the
/// processes carrying its mark and its directory, on a blocking thread (the mark is looked for
/// in `/proc`), the processes first so none writes into a directory being removed.
struct RunGuard {
    #[cfg(unix)]
    leader: Option<rustix::process::Pid>,
    /// The run's mark and directory (`None` once handed to the clean-up).
    run: Option<(String, tempfile::TempDir)>,
}

impl RunGuard {
    fn new(mark: String, dir: tempfile::TempDir) -> Self {
        RunGuard {
            #[cfg(unix)]
            leader: None,
            run: Some((mark, dir)),
        }
    }

    /// The CLI runs as `child`, the leader of its process group.
    fn started(&mut self, child: &tokio::process::Child) {
        #[cfg(unix)]
        {
            self.leader = child.id().and_then(|id| i32::try_from(id).ok()).and_then(rustix::process::Pid::from_raw);
        }
        #[cfg(not(unix))]
        let _ = child;
    }

    /// The CLI exited and was reaped: its group is not killed by id any more (the id may be
    /// reused from now on); what it left carries the mark.
    fn exited(&mut self) {
        #[cfg(unix)]
        {
            self.leader = None;
        }
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(leader) = self.leader.take() {
            let _ = rustix::process::kill_process_group(leader, rustix::process::Signal::KILL);
        }
        let Some((mark, dir)) = self.run.take() else { return };
        let clean_up = move || {
            kill_run_processes(&mark);
            drop(dir);
        };
        match tokio::runtime::Handle::try_current() {
            // Detached: nobody waits for it; a relay killed meanwhile leaves it to the sweep.
            Ok(runtime) => drop(runtime.spawn_blocking(clean_up)),
            Err(_) => clean_up(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 39: the relay's whole environment reached `claude` but for 11 names; only the
    /// allow-list (and the locale's `LC_*`) passes now.
    #[test]
    fn only_the_allow_list_passes() {
        for name in ["PATH", "HOME", "https_proxy", "Path", "LC_ALL", "LC_CTYPE", "SystemRoot", "NODE_EXTRA_CA_CERTS"] {
            assert!(passes(OsStr::new(name)), "{name} is needed to find, start or connect the CLI");
        }
        for name in [
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "DATABASE_URL",
            "NODE_OPTIONS",
            "ANTHROPIC_API_KEY",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "CLAUDE_CODE_USE_BEDROCK",
            "SWITCHYARD_CLI_RUN",
            "PATHS",
            "XPATH",
            "",
        ] {
            assert!(!passes(OsStr::new(name)), "{name} is the relay's, never the CLI's");
        }
    }

    /// Issue 39: the run's directory was 0755 and `system.txt` 0644 (the system prompt readable
    /// by every user); both are owner-only now, the directory named after the relay's pid.
    #[cfg(unix)]
    #[test]
    fn a_run_s_directory_and_system_file_are_owner_only() -> std::io::Result<()> {
        fn mode(p: &Path) -> std::io::Result<u32> {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(p).map(|m| m.permissions().mode() & 0o777)
        }
        let data = tempfile::tempdir()?;
        let runs = data.path().join("cli-runs");
        let dir = make_run_dir(&runs)?;
        assert_eq!(mode(&runs)?, 0o700, "the runs' directory is made owner-only");
        assert_eq!(mode(dir.path())?, 0o700, "a run's directory is owner-only");
        let name = dir.path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        assert!(name.starts_with(&format!("{}-", std::process::id())), "named after the relay's pid: {name}");
        make_private_dir(&dir.path().join("cwd"))?;
        assert_eq!(mode(&dir.path().join("cwd"))?, 0o700, "the working directory is owner-only");
        let system = dir.path().join("system.txt");
        write_private(&system, "Answer in French.")?;
        assert_eq!(mode(&system)?, 0o600, "the system prompt is the owner's alone");
        assert_eq!(std::fs::read_to_string(&system)?, "Answer in French.", "written whole");
        assert!(write_private(&system, "x").is_err(), "never written through an existing file (or link)");
        Ok(())
    }
}
