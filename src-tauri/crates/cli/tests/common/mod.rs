//! Running the built `switchyard` binary on a data dir and keeping what it printed.
#![allow(dead_code)]

use std::path::Path;

use assert_cmd::Command;

pub type TestResult = Result<(), Box<dyn std::error::Error>>;

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// `switchyard --data-dir DIR ARGS…`, with `stdin` written to its standard input.
pub fn run(dir: &Path, args: &[&str], stdin: Option<&str>) -> Result<Run, Box<dyn std::error::Error>> {
    let mut cmd = Command::cargo_bin("switchyard")?;
    cmd.arg("--data-dir").arg(dir).args(args);
    if let Some(input) = stdin {
        cmd.write_stdin(input.to_string());
    }
    let out = cmd.output()?;
    Ok(Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// `connection add SLUG` (openai, https://api.example.com/v1) with `secret` on stdin: a legacy
/// connection whose primary holds `secret`.
pub fn add_legacy(dir: &Path, slug: &str, secret: &str) -> Result<Run, Box<dyn std::error::Error>> {
    let args = [
        "connection",
        "add",
        slug,
        "--protocol",
        "openai",
        "--base-url",
        "https://api.example.com/v1",
        "--secret-stdin",
    ];
    run(dir, &args, Some(secret))
}
