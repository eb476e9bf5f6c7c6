//! What a CLI backend run is kept from (issue 39), on `cli_backend.rs`'s stub and relay: the
//! relay's environment (leak canaries set beside the stub) reaches the CLI only through the
//! allow-list; a run's files are owner-only in the data dir and gone after it; a model that
//! reads as an option never reaches argv; a grandchild in its own session dies with the run;
//! the runs a killed relay left are removed at the engine's next start.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use switchyard_engine::Engine;

use crate::cli_backend::{abandoned_run, calls, cli_relay, gone, plain, LEAK_CANARIES, MODEL};
use crate::common::{eventually, TestResult};

/// What the relay's environment may give the CLI (any case; and every `LC_*`) — run.rs's
/// allow-list, restated as the contract this test holds it to.
const PASSED_ENV: [&str; 29] = [
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
    "CLAUDE_CODE_GIT_BASH_PATH",
];

/// The variables a run sets itself (run.rs).
const RUN_ENV: [&str; 9] = [
    "SWITCHYARD_CLI_RUN",
    "CLAUDE_CONFIG_DIR",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
    "MAX_THINKING_TOKENS",
    "CLAUDE_CODE_MAX_RETRIES",
    "TZ",
    "DISABLE_AUTOUPDATER",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
];

/// Whether `name` may reach the CLI: the allow-list (any case), the locale's `LC_*`, or one of
/// the run's own variables.
fn allowed_in_cli_env(name: &str) -> bool {
    PASSED_ENV.iter().any(|p| p.eq_ignore_ascii_case(name))
        || name.starts_with("LC_")
        || RUN_ENV.contains(&name)
        // macOS's CoreFoundation adds its text encoding to a process it starts in.
        || (cfg!(target_os = "macos") && name == "__CF_USER_TEXT_ENCODING")
}

/// Issue 39: the relay's whole environment reached `claude` but for 11 names, so the relay's
/// `OPENAI_API_KEY`, `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY` and a database URL with its password
/// went along; only the allow-list and the run's own variables reach it now.
#[tokio::test]
async fn the_relay_s_environment_reaches_the_cli_only_through_the_allow_list() -> TestResult {
    let relay = cli_relay(&["max-1"], None, Some((true, 2))).await?;
    let dir = relay.dir_of("max-1").to_path_buf();
    let resp = relay.post(plain("hi")).await?;
    assert_eq!(resp.status(), 200, "the CLI served");
    let run = calls(&dir).pop().ok_or("the CLI ran")?;
    let names: Vec<&str> =
        run["env_names"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    assert!(names.contains(&"PATH"), "PATH passes: the CLI finds its runtime with it: {names:?}");
    for (canary, _) in LEAK_CANARIES {
        assert!(std::env::var_os(canary).is_some(), "{canary} is set in the relay's environment");
        assert!(!names.contains(&canary), "{canary} is the relay's, never the CLI's: {names:?}");
    }
    let strays: Vec<&str> = names.iter().copied().filter(|n| !allowed_in_cli_env(n)).collect();
    assert!(strays.is_empty(), "nothing outside the allow-list and the run's own variables: {strays:?}");
    let seen = run.to_string();
    for (name, value) in LEAK_CANARIES {
        assert!(!seen.contains(value), "{name}'s value appears nowhere in what the CLI saw");
    }
    Ok(())
}

/// Issue 39: the run's directory was 0755 and its `system.txt` 0644 in the system's temporary
/// directory, readable by every user; a run now lives in the data dir's `cli-runs`, its
/// directory and working directory 0700, its system prompt 0600, and nothing of it is left
/// after the run.
#[cfg(unix)]
#[tokio::test]
async fn a_run_s_files_are_owner_only_in_the_data_dir_and_gone_after_it() -> TestResult {
    use std::os::unix::fs::PermissionsExt;
    let relay = cli_relay(&["max-1"], None, Some((true, 2))).await?;
    let dir = relay.dir_of("max-1").to_path_buf();
    let resp = relay.post(plain("hi")).await?;
    assert_eq!(resp.status(), 200, "the CLI served");
    let run = calls(&dir).pop().ok_or("the CLI ran")?;
    let modes = &run["modes"];
    assert_eq!(modes["run"].as_i64(), Some(0o700), "the run's directory is the owner's alone: {modes}");
    assert_eq!(modes["cwd"].as_i64(), Some(0o700), "so is its working directory: {modes}");
    assert_eq!(modes["system"].as_i64(), Some(0o600), "and the system prompt file: {modes}");
    let system_path = PathBuf::from(run["system_path"].as_str().ok_or("the system file's path recorded")?);
    let runs = std::path::absolute(relay.dir.path())?.join(switchyard_engine::CLI_RUNS_DIR);
    let run_dir = system_path.parent().ok_or("the system file is in the run's directory")?.to_path_buf();
    assert_eq!(run_dir.parent(), Some(runs.as_path()), "one directory per run in the data dir's cli-runs: {run}");
    let runs_mode = std::fs::metadata(&runs)?.permissions().mode() & 0o777;
    assert_eq!(runs_mode, 0o700, "cli-runs is made owner-only");
    let name = run_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    assert!(name.starts_with(&format!("{}-", std::process::id())), "named after the relay's pid: {name}");
    let mark = run["env"]["SWITCHYARD_CLI_RUN"].as_str();
    assert_eq!(mark, Some(name.as_str()), "the run's mark is its directory's name");
    eventually("the run's directory is removed after the run", || async { Ok(!run_dir.exists()) }).await?;
    Ok(())
}

/// Issue 39: a mapping target starting with '-' reached `claude --model` as an option
/// (`haiku=--dangerously-skip-permissions`); such a model is refused on input (code invalid,
/// never echoed), a request naming one never runs the CLI, and no run's argv has anything
/// starting with '-' where the model goes.
#[tokio::test]
async fn a_model_that_reads_as_an_option_never_reaches_the_cli_s_argv() -> TestResult {
    let relay = cli_relay(&["max-1", "max-2"], Some("balanced"), Some((true, 2))).await?;
    let option = "--dangerously-skip-permissions";
    let edit =
        switchyard_engine::ConnectionEdit { mappings: Some(vec![format!("haiku={option}")]), ..Default::default() };
    let refused = relay.engine.connection_edit("c", edit).await.err();
    assert_eq!(
        refused.as_ref().map(|e| e.code()),
        Some(switchyard_engine::ErrorCode::Invalid),
        "an option is not a model: the mapping is refused"
    );
    assert!(!format!("{refused:?}").contains(option), "the refusal never repeats it: {refused:?}");
    let mut as_model = plain("hi");
    as_model["model"] = json!(option);
    let resp = relay.post(as_model).await?;
    // Refused before any run: by the model gate (no profile serves it) or by the CLI backend.
    assert_ne!(resp.status(), 200, "a request naming an option as its model is not served");
    let all_runs = || relay.profiles.iter().flat_map(|p| calls(&p.2)).collect::<Vec<Value>>();
    assert!(all_runs().is_empty(), "the CLI never ran for it");
    let mut mapped = plain("hi");
    mapped["model"] = json!("haiku");
    let resp = relay.post(mapped).await?;
    assert_eq!(resp.status(), 200, "the mapping as it was still serves");
    let runs = all_runs();
    assert_eq!(runs.len(), 1, "the CLI ran for the mapped request alone: {runs:?}");
    for run in &runs {
        let argv: Vec<&str> =
            run["argv"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let models: Vec<&str> = argv.windows(2).filter(|w| w[0] == "--model").map(|w| w[1]).collect();
        assert_eq!(models, vec![MODEL], "--model is followed by the mapped model, never an option: {argv:?}");
    }
    Ok(())
}

/// Issue 39: a grandchild that started a session of its own (out of the process group's
/// reach) survived a client that went away; every process carrying the run's mark is killed
/// with the run.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_grandchild_in_its_own_session_is_killed_with_the_run() -> TestResult {
    let (_relay, pid, grandchild) = abandoned_run(json!({"sleep": 30, "setsid_grandchild": true})).await?;
    let what = "the CLI and its grandchild in another session are killed";
    let killed = eventually(what, || async { Ok(gone(pid) && gone(grandchild)) }).await;
    if killed.is_err() {
        // Not left sleeping for a minute after this test failed.
        if let Some(p) = i32::try_from(grandchild).ok().and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
        }
    }
    killed
}

/// Whether process `pid` carries `SWITCHYARD_CLI_RUN=<run>` (it has exec'd with it).
#[cfg(target_os = "linux")]
fn carries_mark(pid: u32, run: &str) -> bool {
    let needle = format!("{}={run}", switchyard_engine::CLI_RUN_MARK);
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|environ| environ.split(|b| *b == 0).any(|var| var == needle.as_bytes()))
}

/// Issue 39: a killed relay left its runs — the prompt's system file, the working directory —
/// and whatever they started behind for good; the engine's next start removes every run whose
/// relay runs no more, after killing what still carries its mark, and keeps a live relay's.
#[tokio::test]
async fn runs_a_killed_relay_left_are_removed_at_the_next_start() -> TestResult {
    let dir = tempfile::tempdir()?;
    let runs = dir.path().join(switchyard_engine::CLI_RUNS_DIR);
    // No process has a pid above Linux's pid_max (2^22) or macOS's 99999.
    let left = runs.join("999999999-abc123");
    std::fs::create_dir_all(left.join("cwd"))?;
    std::fs::write(left.join("system.txt"), "Answer in French.")?;
    let live = runs.join(format!("{}-def456", std::process::id()));
    std::fs::create_dir_all(&live)?;
    #[cfg(target_os = "linux")]
    let mut orphan = {
        let child = std::process::Command::new("sleep")
            .arg("60")
            .env(switchyard_engine::CLI_RUN_MARK, "999999999-abc123")
            .spawn()?;
        let pid = child.id();
        let what = "the left run's process is running with its mark";
        eventually(what, || async { Ok(carries_mark(pid, "999999999-abc123")) }).await?;
        child
    };
    let vault = Arc::new(switchyard_vault::MemoryVault::new());
    let engine = Engine::open_with(dir.path(), vault, Arc::new(switchyard_engine::SystemClock)).await?;
    assert!(!left.exists(), "the run of a relay that runs no more is removed, its system prompt with it");
    assert!(live.exists(), "a live relay's run stays");
    #[cfg(target_os = "linux")]
    {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = orphan.try_wait()? {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = orphan.kill();
                let _ = orphan.wait();
                return Err("the left run's process still runs 10 s after the start".into());
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        assert!(!status.success(), "the left run's process was killed, not left to finish: {status:?}");
    }
    drop(engine);
    Ok(())
}
