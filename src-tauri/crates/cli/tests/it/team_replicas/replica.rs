//! One `switchyard --data-dir D relay serve --listen 127.0.0.1:0` replica on the shared store:
//! its address from its first stdout line, the rest of stdout and all of stderr in files (a
//! full pipe would block the relay), SIGKILL or SIGTERM on demand, SIGKILL on drop.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// What a replica needs besides its data dir: the store and the master key.
pub struct StoreEnv<'a> {
    pub url: &'a str,
    pub key_file: &'a Path,
}

pub struct Replica {
    /// `a`, `b` or `c`: names the data dir and the log files.
    pub name: String,
    /// `127.0.0.1:PORT`, as the replica announced it.
    pub addr: String,
    child: Option<Child>,
    stderr: PathBuf,
}

impl Replica {
    /// Starts a replica in `dir/NAME` (its data dir), logging to `dir/NAME.stderr`, with `extra`
    /// arguments after `relay serve --listen 127.0.0.1:0`; returns once it listens.
    pub fn spawn(dir: &Path, name: &str, store: &StoreEnv<'_>, extra: &[&str]) -> Result<Self, String> {
        let data = dir.join(name);
        let stderr = dir.join(format!("{name}.stderr"));
        let log = std::fs::File::create(&stderr).map_err(|e| format!("replica {name} log: {e}"))?;
        // SIGKILL when the test dies: a replica then has nothing left to drain.
        let mut child = super::tether::command(assert_cmd::cargo::cargo_bin("switchyard"), "KILL")
            .arg("--data-dir")
            .arg(&data)
            .args(["relay", "serve", "--listen", "127.0.0.1:0"])
            .args(extra)
            .env("SWITCHYARD_STORE", store.url)
            .env("SWITCHYARD_MASTER_KEY_FILE", store.key_file)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("replica {name} not spawned: {e}"))?;
        let mut out = BufReader::new(child.stdout.take().ok_or("replica stdout")?);
        let mut first = String::new();
        let _ = out.read_line(&mut first);
        let Some(addr) = first.trim().rsplit_once("http://").map(|(_, a)| a.to_string()) else {
            let _ = child.kill();
            let _ = child.wait();
            let log = std::fs::read_to_string(&stderr).unwrap_or_default();
            return Err(format!("replica {name} did not announce an address (first line {first:?}); stderr:\n{log}"));
        };
        // The rest of stdout goes to a file, so the relay never writes into a full pipe.
        let rest = dir.join(format!("{name}.stdout"));
        std::thread::spawn(move || {
            if let Ok(mut file) = std::fs::File::create(rest) {
                let _ = std::io::copy(&mut out, &mut file);
            }
        });
        Ok(Replica { name: name.to_string(), addr, child: Some(child), stderr })
    }

    /// SIGKILL (`kill -9`): no drain, no ledger flush, no lease release; waits for the exit.
    pub fn kill_9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGTERM and wait: whether it drained, flushed its ledger and exited 0.
    pub fn stop(&mut self) -> bool {
        let Some(mut child) = self.child.take() else { return false };
        let _ = Command::new("kill").arg(child.id().to_string()).status();
        child.wait().map(|s| s.success()).unwrap_or(false)
    }

    /// The last lines of its stderr, for assertion messages.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.kill_9();
    }
}
