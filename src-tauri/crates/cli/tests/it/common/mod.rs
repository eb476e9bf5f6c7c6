//! Running the built `switchyard` binary on a data dir and keeping what it printed.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use assert_cmd::Command;

pub type TestResult = Result<(), Box<dyn std::error::Error>>;

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// `switchyard --data-dir DIR ARGS…`, with `stdin` written to its standard input.
pub fn run(dir: &Path, args: &[&str], stdin: Option<&str>) -> Result<Run, Box<dyn std::error::Error>> {
    run_env(dir, args, stdin, &[])
}

/// [`run`] with extra environment variables for the child.
pub fn run_env(
    dir: &Path,
    args: &[&str],
    stdin: Option<&str>,
    env: &[(&str, &str)],
) -> Result<Run, Box<dyn std::error::Error>> {
    let mut cmd = Command::cargo_bin("switchyard")?;
    cmd.arg("--data-dir").arg(dir).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    finish(cmd, stdin)
}

/// [`run`] on the data dir's own SQLite file even under `scripts/with-postgres` (whose
/// SWITCHYARD_TEST_PG would map the data dir to a Postgres database).
pub fn run_sqlite(dir: &Path, args: &[&str], stdin: Option<&str>) -> Result<Run, Box<dyn std::error::Error>> {
    let mut cmd = Command::cargo_bin("switchyard")?;
    cmd.arg("--data-dir").arg(dir).args(args).env_remove("SWITCHYARD_TEST_PG");
    finish(cmd, stdin)
}

fn finish(mut cmd: Command, stdin: Option<&str>) -> Result<Run, Box<dyn std::error::Error>> {
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

/// `switchyard --data-dir DIR relay serve` on a free loopback port, until [`Served::stop`].
pub struct Served {
    child: Child,
    /// `127.0.0.1:PORT`, as the relay announced it.
    pub addr: String,
}

pub fn serve(dir: &Path) -> Result<Served, Box<dyn std::error::Error>> {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("switchyard"));
    cmd.arg("--data-dir").arg(dir).args(["relay", "serve", "--listen", "127.0.0.1:0"]);
    serve_with(cmd)
}

/// Spawns `cmd` (a `relay serve` command line, possibly wrapped) and reads the address the
/// relay announces on its first stdout line.
pub fn serve_with(mut cmd: std::process::Command) -> Result<Served, Box<dyn std::error::Error>> {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::null()).spawn()?;
    let mut first = String::new();
    BufReader::new(child.stdout.take().ok_or("relay stdout")?).read_line(&mut first)?;
    let addr = first.trim().rsplit("http://").next().ok_or("relay address")?.to_string();
    Ok(Served { child, addr })
}

impl Served {
    /// SIGTERM; whether the relay exited cleanly (it flushes the ledger and quota readings).
    pub fn stop(mut self) -> Result<bool, Box<dyn std::error::Error>> {
        let _ = std::process::Command::new("kill").arg(self.child.id().to_string()).status();
        Ok(self.child.wait()?.success())
    }
}

/// One Anthropic messages call for model `m1` to connection `c` through the relay at `addr`,
/// with `extra` header lines (each ending in CRLF); the raw HTTP answer.
pub fn post_messages(addr: &str, token: &str, extra: &str) -> Result<String, Box<dyn std::error::Error>> {
    let body = r#"{"model":"m1","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}"#;
    let headers = format!("x-api-key: {token}\r\nanthropic-version: 2023-06-01\r\n{extra}");
    post(addr, "/c/c/v1/messages", &headers, body)
}

/// A raw HTTP/1.1 JSON POST of `body` to `path` at `addr` with `headers` (lines ending in
/// CRLF) and `connection: close`, read with a 10 s timeout; the raw answer.
pub fn post(addr: &str, path: &str, headers: &str, body: &str) -> Result<String, Box<dyn std::error::Error>> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    let req = format!(
        "POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n{headers}content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes())?;
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    Ok(answer)
}

/// A master key file's text: 64 hex digits of 32 distinct bytes derived from `seed` (a key file
/// must look random: `MasterKey::from_file` refuses a constant one). Different seeds, different keys.
pub fn master_key_hex(seed: u8) -> String {
    (0u8..32).map(|i| format!("{:02x}", i.wrapping_mul(37).wrapping_add(seed))).collect()
}

/// Every file under `dir`, as text (a canary search over a data dir).
pub fn files_text(dir: &Path) -> String {
    let mut text = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                text.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    text
}
