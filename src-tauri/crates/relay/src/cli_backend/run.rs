//! One `claude -p` process: the flags of seed 004 (checked against Claude Code 2.1.332's
//! `--help` and a run against a local recorder), the request's model and system prompt (a
//! file, so a long one never meets argv's limits or `ps`), the prompt on stdin, the profile's
//! config directory as `CLAUDE_CONFIG_DIR`, the connection's base URL, and an empty temporary
//! working directory (no project settings, hooks, plugins or MCP servers to pick up). The
//! environment loses every variable that would replace the profile's own login or move the
//! CLI to another provider; `TZ=UTC` makes the CLI name a limit's reset in UTC (`reset.rs` of
//! `claude_cli`), `CLAUDE_CODE_MAX_RETRIES=0` leaves retries to the routing loop. The process
//! leads its own process group, and the whole group is killed when the run is dropped (the
//! client went away, the deadline passed) before it ended.

use std::path::Path;
use std::process::Stdio;

use switchyard_providers::claude_cli::CliPrompt;
use tokio::io::AsyncWriteExt;

/// What the CLI's system prompt is when the request has none (print mode otherwise uses
/// Claude Code's own, a coding agent's).
pub(crate) const NEUTRAL_SYSTEM: &str = "You are a helpful assistant.";

/// Variables of the relay's environment the CLI never gets: each would replace the profile's
/// login (API keys, tokens, a token file descriptor), add headers, or send it to another
/// provider.
const DROPPED_ENV: [&str; 11] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR",
    "ANTHROPIC_CUSTOM_HEADERS",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
    "CLAUDE_SECURESTORAGE_CONFIG_DIR",
    "ANTHROPIC_MODEL",
    "CLAUDE_CODE_SUBAGENT_MODEL",
];

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
}

/// Runs the CLI once and waits for it. Dropping the future kills the process group.
pub(crate) async fn run_cli(spec: RunSpec<'_>) -> Ran {
    let dir = match tempfile::Builder::new().prefix("switchyard-cli-").tempdir() {
        Ok(d) => d,
        Err(e) => return Ran::NotStarted(format!("cannot make a working directory: {e}")),
    };
    let cwd = dir.path().join("cwd");
    let system_file = dir.path().join("system.txt");
    let system = spec.prompt.system.as_deref().unwrap_or(NEUTRAL_SYSTEM);
    if let Err(e) = std::fs::create_dir(&cwd).and_then(|()| std::fs::write(&system_file, system)) {
        return Ran::NotStarted(format!("cannot prepare the working directory: {e}"));
    }
    let mut cmd = tokio::process::Command::new(spec.program);
    cmd.arg("-p")
        .arg("--model")
        .arg(&spec.prompt.model)
        .args(["--output-format", "json", "--tools", "", "--strict-mcp-config", "--setting-sources", "project"])
        .args(["--no-session-persistence", "--disable-slash-commands", "--system-prompt-file"])
        .arg(&system_file)
        .current_dir(&cwd)
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
    for name in DROPPED_ENV {
        cmd.env_remove(name);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Ran::NotStarted(format!("cannot start {}: {e}", spec.program.display())),
    };
    let group = ProcessGroup::of(&child);
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
    group.disarm();
    drop(dir);
    match waited {
        Ok(out) => Ran::Exited { code: out.status.code(), stdout: out.stdout },
        Err(e) => Ran::NotStarted(format!("lost the CLI's output: {e}")),
    }
}

/// Kills the run's process group when dropped before the run ended (`kill_on_drop` reaches
/// only the process itself, not what it started).
struct ProcessGroup {
    #[cfg(unix)]
    leader: Option<rustix::process::Pid>,
}

impl ProcessGroup {
    fn of(child: &tokio::process::Child) -> Self {
        #[cfg(unix)]
        {
            let leader = child.id().and_then(|id| i32::try_from(id).ok()).and_then(rustix::process::Pid::from_raw);
            ProcessGroup { leader }
        }
        #[cfg(not(unix))]
        {
            let _ = child;
            ProcessGroup {}
        }
    }

    /// The run ended: nothing to kill (its id may be reused from now on).
    fn disarm(mut self) {
        #[cfg(unix)]
        {
            self.leader = None;
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(leader) = self.leader.take() {
            let _ = rustix::process::kill_process_group(leader, rustix::process::Signal::KILL);
        }
    }
}
