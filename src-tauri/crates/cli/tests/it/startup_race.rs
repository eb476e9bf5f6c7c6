//! Two `switchyard` processes on one data dir (run under `scripts/with-keychain`): one rotates
//! a credential while the other starts up, whose start-up clean-up must leave the secret the
//! rotation has just written (journaled, not yet committed) alone.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common::{add_legacy, run, TestResult};

const ROUNDS: usize = 50;

fn spawn(dir: &Path, args: &[&str], stdin: Option<&str>) -> Result<Child, Box<dyn std::error::Error>> {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("switchyard"))
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes())?;
    }
    Ok(child)
}

fn finish(child: Child, what: &str) -> TestResult {
    let out = child.wait_with_output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what} succeeds: {stderr}");
    Ok(())
}

#[test]
fn start_up_clean_up_racing_a_rotation_keeps_the_new_secret() -> TestResult {
    let dir = tempfile::tempdir()?;
    let add = add_legacy(dir.path(), "main", "sk-race-round-0\n")?;
    assert_eq!(add.code, 0, "seed connection: {}", add.stderr);
    let mut lost = Vec::new();
    for round in 1..=ROUNDS {
        let secret = format!("sk-race-round-{round}\n");
        let rotate = spawn(dir.path(), &["profile", "rotate", "main", "primary", "--secret-stdin"], Some(&secret))?;
        // Stagger the second start-up over the rotation's ~130 ms (most of it the keychain
        // write, between journal and commit), so its clean-up lands on every step of it.
        std::thread::sleep(Duration::from_millis((round as u64 * 37) % 140));
        let start_up = spawn(dir.path(), &["connection", "list", "--json"], None)?;
        finish(rotate, "profile rotate")?;
        finish(start_up, "a concurrent start-up")?;
        let listed = run(dir.path(), &["--json", "profile", "list", "main"], None)?;
        assert_eq!(listed.code, 0, "profile list: {}", listed.stderr);
        let profiles: serde_json::Value = serde_json::from_str(&listed.stdout)?;
        let credential = profiles[0]["credential"].as_str().unwrap_or_default().to_string();
        if credential != "present" {
            lost.push((round, credential));
        }
    }
    assert!(
        lost.is_empty(),
        "a start-up in another process must never delete the secret a rotation just wrote; \
         lost in {} of {ROUNDS} rounds: {lost:?}",
        lost.len()
    );
    Ok(())
}
