//! `switchyard profile login SLUG PROFILE --kind oauth`: signs an owned ChatGPT login in with a
//! device code (creating the profile when it does not exist): the URL and the one-time code go to
//! stderr, then a progress line while the user approves it; no token is ever printed.
//!
//! `switchyard profile login SLUG PROFILE [-- ARGS]`: signs an external profile in by running
//! the official CLI's own login (Claude Code's `auth login`, Codex's `login`) with the
//! profile's config directory in `CLAUDE_CONFIG_DIR` / `CODEX_HOME`, the terminal attached —
//! the CLI's browser or device flow is its own. Switchyard never sees what the CLI stores; the
//! engine then checks only that the CLI's credential file exists. With `--json` the CLI's own
//! output goes to stderr, so stdout carries only the result.

use std::process::Stdio;

use switchyard_engine::{Engine, EngineError};

use crate::output::{self, Output};
use crate::render::profile::ProfileChanged;

pub async fn run(
    engine: &Engine,
    slug: &str,
    profile: &str,
    extra: &[String],
    json: bool,
) -> Result<Output, EngineError> {
    let launch = engine.profile_login_launch(slug, profile, extra).await?;
    let program = launch.program.display().to_string();
    output::note(&format!(
        "signing '{}' in with {} (its own login, in {}); Switchyard never reads what it stores there",
        launch.label,
        launch.client,
        launch.config_dir.display()
    ));
    let mut cmd = tokio::process::Command::new(&launch.program);
    cmd.args(&launch.args)
        .env(launch.env_var, &launch.config_dir)
        .stdin(Stdio::inherit())
        .stdout(child_stdout(json))
        .stderr(Stdio::inherit());
    let status = cmd.status().await.map_err(|e| EngineError::Precondition(format!("cannot run {program}: {e}")))?;
    if !status.success() {
        let how = status.code().map_or_else(|| "was stopped by a signal".to_string(), |c| format!("exited with {c}"));
        return Err(EngineError::Precondition(format!(
            "the login ({program} {}) {how}; '{}' is unchanged",
            launch.args.join(" "),
            launch.label
        )));
    }
    let profile = engine.profile_login_finished(slug, profile).await?;
    Ok(Output::view(ProfileChanged { verb: "signed in", profile }))
}

/// How long a device code is good for (the issuer's; Codex says 15 minutes).
const DEVICE_CODE_LIFE: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// Signs `slug`'s owned login `new.label` in with a device code.
pub async fn run_owned(engine: &Engine, slug: &str, new: switchyard_engine::NewProfile) -> Result<Output, EngineError> {
    let label = new.label.clone();
    let code = engine.oauth_sign_in_begin(slug, new).await?;
    output::note(&format!(
        "sign '{label}' in with ChatGPT:\n  1. open {}\n  2. enter the code {} (it expires in 15 minutes; never share it)",
        output::terminal_safe(&code.verification_url),
        output::terminal_safe(&code.user_code)
    ));
    let started = std::time::Instant::now();
    loop {
        if let Some(profile) = engine.oauth_sign_in_poll(slug, &label, &code).await? {
            output::note("approved");
            return Ok(Output::view(ProfileChanged { verb: "signed in", profile }));
        }
        let waited = started.elapsed();
        if waited >= DEVICE_CODE_LIFE {
            return Err(EngineError::Precondition(format!(
                "the device code was not approved within 15 minutes; '{label}' is unchanged: run profile login again"
            )));
        }
        output::note(&format!("waiting for approval… {} s", waited.as_secs()));
        tokio::time::sleep(code.interval).await;
    }
}

/// The CLI's stdout: the terminal, or (with `--json`) this process's stderr.
fn child_stdout(json: bool) -> Stdio {
    #[cfg(unix)]
    if json {
        use std::os::fd::AsFd;
        if let Ok(fd) = std::io::stderr().as_fd().try_clone_to_owned() {
            return Stdio::from(fd);
        }
    }
    let _ = json;
    Stdio::inherit()
}
