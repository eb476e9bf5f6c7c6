//! The processes of one run: a fresh mock provider whose keys model Anthropic's prompt cache
//! and a fresh `switchyard relay serve` over a fresh data dir, set up through the CLI as a
//! user would. Nothing here measures anything.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{bail, Context, Result};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

/// The mock's keys and their weights (2:1:1); the first is the connection's primary.
pub const KEYS: [(&str, &str, u64); 3] = [("primary", "sim-key-1", 2), ("k2", "sim-key-2", 1), ("k3", "sim-key-3", 1)];
pub const SLUG: &str = "sim";
/// The mock's prompt-cache TTL (Anthropic's default 5 minutes).
const TTL_SECS: u64 = 300;

/// How the connection routes.
#[derive(Debug, Clone, Copy)]
pub enum Setup {
    /// Balanced over the three keys with this affinity (`turn` or `conversation`).
    Balanced(&'static str),
    /// Legacy: the primary key only.
    Single,
    /// A pool `sim` over three legacy connections (`POOL_MEMBERS`), one key each, balanced.
    Pool,
}

/// The pool run's members: connection, its key (index into `KEYS`), weight, relative price.
pub const POOL_MEMBERS: [(&str, usize, u64, f64); 3] = [("pa", 0, 2, 1.0), ("pb", 1, 1, 0.6), ("pc", 2, 1, 0.3)];

pub struct Stack {
    mock: Child,
    relay: Option<Child>,
    pub relay_url: String,
    pub token: String,
    bin: PathBuf,
    /// The run's data dir (its ledger is `switchyard.db` in it).
    pub data: PathBuf,
}

impl Stack {
    /// Starts the mock and the relay in `dir` (fresh) and sets the connection up.
    pub async fn start(bin: &Path, dir: &Path, setup: Setup, scale: u64) -> Result<Self> {
        std::fs::create_dir_all(dir)?;
        let script = dir.join("script.json");
        let keys: serde_json::Map<String, serde_json::Value> = KEYS
            .iter()
            .map(|(_, key, _)| {
                let entry = json!({"models": ["m1"], "prompt_cache": {"ttl_secs": TTL_SECS, "scale": scale}});
                ((*key).to_owned(), entry)
            })
            .collect();
        std::fs::write(&script, json!({"keys": keys}).to_string())?;
        let mut mock_cmd = Command::new(bin.join("mock-provider"));
        mock_cmd.args(["--no-record", "--script"]).arg(&script).stderr(Stdio::null());
        let (mock, mock_url) = spawn_announcing(&mut mock_cmd).await?;
        let data = dir.join("data");
        let mut stack =
            Stack { mock, relay: None, relay_url: String::new(), token: String::new(), bin: bin.to_path_buf(), data };
        let (_, primary, weight) = KEYS[0];
        if let Setup::Pool = setup {
            let mut members = Vec::new();
            for (slug, key, weight, _) in POOL_MEMBERS {
                let add =
                    ["connection", "add", slug, "--protocol", "anthropic", "--base-url", &mock_url, "--model", "m1"];
                stack.cli(&[&add[..], &["--secret-stdin"]].concat(), Some(KEYS[key].1)).await?;
                stack.cli(&["verify", slug], None).await?;
                members.push(format!("{slug}:{weight}"));
            }
            let mut add = vec!["pool", "add", SLUG, "--protocol", "anthropic"];
            for m in &members {
                add.extend(["--member", m.as_str()]);
            }
            stack.cli(&add, None).await?;
            stack.cli(&["pool", "activate", SLUG, "balanced"], None).await?;
        } else {
            let add = ["connection", "add", SLUG, "--protocol", "anthropic", "--base-url", &mock_url, "--model", "m1"];
            stack.cli(&[&add[..], &["--secret-stdin"]].concat(), Some(primary)).await?;
        }
        if let Setup::Balanced(affinity) = setup {
            stack.cli(&["profile", "edit", SLUG, "primary", "--weight", &weight.to_string()], None).await?;
            for (label, key, weight) in &KEYS[1..] {
                let weight = weight.to_string();
                let args = ["profile", "add", SLUG, "--label", label, "--weight", &weight, "--secret-stdin"];
                stack.cli(&args, Some(key)).await?;
            }
            stack.cli(&["verify", SLUG], None).await?;
            stack.cli(&["routing", "activate", SLUG, "balanced"], None).await?;
            stack.cli(&["routing", "affinity", SLUG, affinity], None).await?;
        }
        stack.token = stack.cli(&["relay", "token"], None).await?;
        let mut relay_cmd = Command::new(stack.bin.join("switchyard"));
        relay_cmd
            .env("SWITCHYARD_DATA_DIR", &stack.data)
            .args(["relay", "serve", "--listen", "127.0.0.1:0"])
            .stderr(std::fs::File::create(dir.join("relay.log"))?);
        let (relay, relay_url) = spawn_announcing(&mut relay_cmd).await?;
        stack.relay = Some(relay);
        stack.relay_url = relay_url;
        Ok(stack)
    }

    /// Runs `switchyard ARGS` on this run's data dir (the secret, if any, on stdin); its stdout.
    pub async fn cli(&self, args: &[&str], secret: Option<&str>) -> Result<String> {
        let mut child = Command::new(self.bin.join("switchyard"))
            .env("SWITCHYARD_DATA_DIR", &self.data)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        if let (Some(secret), Some(mut stdin)) = (secret, child.stdin.take()) {
            stdin.write_all(secret.as_bytes()).await?;
        }
        let out = child.wait_with_output().await?;
        if !out.status.success() {
            bail!("switchyard {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Stops the relay and the mock.
    pub async fn stop(mut self) {
        for child in self.relay.iter_mut().chain([&mut self.mock]) {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }
}

/// Spawns a server that prints `… listening on URL` first; its child and URL.
async fn spawn_announcing(cmd: &mut Command) -> Result<(Child, String)> {
    let mut child = cmd.stdout(Stdio::piped()).kill_on_drop(true).spawn()?;
    let stdout = child.stdout.take().context("stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next_line().await?.context("no announcement")?;
    let url = first.split("listening on ").nth(1).context("no URL in the first line")?.to_owned();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((child, url))
}
