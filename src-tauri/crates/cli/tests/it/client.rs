//! `switchyard client setup|status|restore` on a temp HOME: dry run writes nothing, setup
//! prints the diff and writes, `--json` shapes, exit codes (malformed file 2, nothing to
//! restore 4, wrong protocol 2), the relay token never printed. Then the hardening of issue 27
//! (`client/hardening.rs`): every case greps what was printed and kept for a canary key.

#[path = "client/hardening.rs"]
mod hardening;

use std::path::Path;

use crate::common::{run, TestResult};
use assert_cmd::Command;
use serde_json::Value;

const SETTINGS: &str = "{\n  \"theme\": \"dark\"\n}\n";

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn client(data: &Path, home: &Path, args: &[&str]) -> Result<Out, Box<dyn std::error::Error>> {
    client_env(data, home, args, &[])
}

/// [`client`] with more environment (`SWITCHYARD_RELAY_PORT` is 4777 unless `env` sets it); a
/// run that takes over 60 s (a FIFO read that blocks) fails.
fn client_env(
    data: &Path,
    home: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<Out, Box<dyn std::error::Error>> {
    let mut cmd = Command::cargo_bin("switchyard")?;
    cmd.arg("--data-dir")
        .arg(data)
        .args(args)
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("GEMINI_CLI_HOME")
        .env("SWITCHYARD_RELAY_PORT", "4777")
        .timeout(std::time::Duration::from_secs(60));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output()?;
    Ok(Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

#[test]
fn setup_previews_writes_reports_and_restores_with_exit_codes() -> TestResult {
    let data = tempfile::tempdir()?;
    let home = tempfile::tempdir()?;
    let (d, h) = (data.path(), home.path());
    let add = [
        "connection",
        "add",
        "cc",
        "--protocol",
        "anthropic",
        "--base-url",
        "https://api.anthropic.com",
        "--secret-stdin",
    ];
    assert_eq!(run(d, &add, Some("sk-ant-cli-client-01"))?.code, 0, "connection add");
    let token = run(d, &["relay", "token"], None)?.stdout.trim().to_string();
    let settings = h.join(".claude/settings.json");
    std::fs::create_dir_all(h.join(".claude"))?;
    std::fs::write(&settings, SETTINGS)?;

    let dry = client(d, h, &["client", "setup", "claude-code", "cc", "--dry-run"])?;
    assert_eq!(dry.code, 0, "dry run: {}", dry.stderr);
    assert!(
        dry.stdout.contains("+    \"ANTHROPIC_BASE_URL\": \"http://127.0.0.1:4777/c/cc\""),
        "the diff: {}",
        dry.stdout
    );
    assert!(dry.stdout.contains("(dry run: nothing written)"), "says it wrote nothing: {}", dry.stdout);
    assert_eq!(std::fs::read_to_string(&settings)?, SETTINGS, "a dry run writes nothing");

    let set = client(d, h, &["--json", "client", "setup", "claude-code"])?;
    assert_eq!(set.code, 0, "setup with the only anthropic connection: {}", set.stderr);
    let report: Value = serde_json::from_str(&set.stdout)?;
    assert_eq!(report["written"], true, "written: {report}");
    assert_eq!(report["preview"]["slug"], "cc", "the only anthropic connection was chosen");
    assert!(report["backup"].as_str().is_some_and(|b| b.contains("client-backups")), "backup dir: {report}");
    assert!(std::fs::read_to_string(&settings)?.contains(&token), "the file holds the relay token");
    for out in [&dry, &set] {
        assert!(!out.stdout.contains(&token) && !out.stderr.contains(&token), "the relay token is never printed");
    }

    let status: Value = serde_json::from_str(&client(d, h, &["--json", "client", "status", "claude-code"])?.stdout)?;
    let keys: Vec<&str> = status.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    assert_eq!(
        keys,
        ["client", "exists", "path", "plain_keys", "pointed", "port", "restorable", "slug", "token_current"],
        "the status shape"
    );
    assert_eq!(
        (status["pointed"].as_bool(), status["slug"].as_str(), status["port"].as_i64()),
        (Some(true), Some("cc"), Some(4777))
    );

    let restored = client(d, h, &["client", "restore", "claude-code"])?;
    assert_eq!(restored.code, 0, "restore: {}", restored.stderr);
    assert_eq!(std::fs::read_to_string(&settings)?, SETTINGS, "byte-identical");
    let nothing = client(d, h, &["--json", "client", "restore", "claude-code"])?;
    assert_eq!(nothing.code, 4, "nothing kept to restore: {}", nothing.stdout);

    std::fs::write(&settings, "{ \"theme\": }")?;
    let bad = client(d, h, &["--json", "client", "setup", "claude-code", "cc"])?;
    assert_eq!(bad.code, 2, "a malformed file exits 2: {}", bad.stdout);
    let err: Value = serde_json::from_str(&bad.stdout)?;
    assert_eq!(err["error"]["code"], "invalid", "code invalid: {err}");
    assert_eq!(std::fs::read_to_string(&settings)?, "{ \"theme\": }", "nothing written");

    let wrong = client(d, h, &["client", "setup", "codex", "cc"])?;
    assert_eq!(wrong.code, 2, "codex on an anthropic connection is refused: {}", wrong.stderr);
    assert!(!h.join(".codex").exists(), "and nothing was written");
    Ok(())
}

/// `client setup|status|restore gemini-cli` on a gemini connection: `~/.gemini/.env` gains the
/// relay's base URL and token, status names the connection, restore removes the file it created.
#[test]
fn gemini_cli_is_set_up_status_read_and_restored() -> TestResult {
    let data = tempfile::tempdir()?;
    let home = tempfile::tempdir()?;
    let (d, h) = (data.path(), home.path());
    let add = [
        "connection",
        "add",
        "gem",
        "--protocol",
        "gemini",
        "--base-url",
        "https://generativelanguage.googleapis.com",
        "--secret-stdin",
    ];
    let added = run(d, &add, Some("g-cli-setup-canary-01"))?;
    assert_eq!(added.code, 0, "connection add: {}", added.stderr);
    let set = client(d, h, &["client", "setup", "gemini-cli", "gem"])?;
    assert_eq!(set.code, 0, "set-up: {}{}", set.stdout, set.stderr);
    let env = std::fs::read_to_string(h.join(".gemini/.env"))?;
    assert!(
        env.contains("GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:4777/c/gem\n"),
        "the relay's base, no version:\n{env}"
    );
    assert!(env.contains("GEMINI_API_KEY=sy_"), "the relay token as Gemini CLI's key");
    let status = client(d, h, &["--json", "client", "status", "gemini-cli"])?;
    let view: Value = serde_json::from_str(&status.stdout)?;
    assert_eq!((view["pointed"].as_bool(), view["slug"].as_str()), (Some(true), Some("gem")), "status: {view}");
    let restored = client(d, h, &["client", "restore", "gemini-cli"])?;
    assert_eq!(restored.code, 0, "restore: {}", restored.stderr);
    assert!(!h.join(".gemini/.env").exists(), "a file set-up created is removed again");
    for out in [&set, &status, &restored] {
        assert!(
            !out.stdout.contains("g-cli-setup-canary") && !out.stderr.contains("g-cli-setup-canary"),
            "no key printed"
        );
    }
    Ok(())
}
