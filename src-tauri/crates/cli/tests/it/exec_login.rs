//! `switchyard exec SLUG [--profile L] [--failover] -- claude …` on external logins (issue 28
//! item 5), with a stub `claude` (bash + curl) that records what it was given, makes one
//! Messages call through the relay with the login in its config directory and the headers exec
//! gave it, and exits 1 when the relay refused it (as `claude -p` does), else `$STUB_EXIT`:
//! - SWRR over launches, weights 2:1, is 6:3 exactly over 9 launches (the position persists
//!   between processes); the child gets its account's `CLAUDE_CONFIG_DIR` and no
//!   `ANTHROPIC_API_KEY`/`ANTHROPIC_AUTH_TOKEN`/`CLAUDE_CODE_OAUTH_TOKEN`; no token in argv;
//! - an account whose 5-hour window the provider rejects (429 with the unified headers; the
//!   relay cools it until the window's reset) is skipped until that reset, then used again;
//! - `--failover` launches again on the next account only after a limit refusal of that launch,
//!   at most once per account, saying so on stderr; any other exit code passes through;
//! - the logins (canaries) are in no output (trace-level logs included), database file,
//!   `attempts --json` or export; Codex gets a login provider in `-c` without `env_key`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use switchyard_mock_provider::{Behaviour, KeyScript, LimitWindow, MockProvider};

use crate::common::{run, TestResult};

/// The stand-in for Claude Code. One line per launch in `$STUB_LOG`: config dir, HTTP status,
/// whether each credential variable was set, its argv.
const STUB: &str = r#"#!/bin/bash
token=$(grep -o '"accessToken":"[^"]*"' "$CLAUDE_CONFIG_DIR/.credentials.json" | cut -d'"' -f4)
hdrs=()
while IFS= read -r line; do [ -n "$line" ] && hdrs+=(-H "$line"); done <<< "$ANTHROPIC_CUSTOM_HEADERS"
status=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$ANTHROPIC_BASE_URL/v1/messages" \
  -H "authorization: Bearer $token" -H "anthropic-version: 2023-06-01" -H "x-app: cli" \
  -H "user-agent: claude-cli/2.1.332 (external, sdk-cli)" -H "content-type: application/json" "${hdrs[@]}" \
  -d '{"model":"m1","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}')
printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$CLAUDE_CONFIG_DIR" "$status" "${ANTHROPIC_API_KEY+set}" \
  "${ANTHROPIC_AUTH_TOKEN+set}" "${CLAUDE_CODE_OAUTH_TOKEN+set}" "$*" >> "$STUB_LOG"
[ "$status" = 200 ] || exit 1
exit "${STUB_EXIT:-0}"
"#;

const PARENT_KEY: &str = "sk-ant-api03-CANARY-parent-env-key";

fn login(label: &str) -> String {
    format!("sk-ant-oat01-CANARY-login-{label}")
}

fn free_port() -> Result<u16, std::io::Error> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

struct Setup {
    mock: MockProvider,
    dir: tempfile::TempDir,
    stub: PathBuf,
    log: PathBuf,
    /// label -> profile id
    ids: Vec<(String, String)>,
}

impl Setup {
    fn d(&self) -> &Path {
        self.dir.path()
    }

    fn label_of(&self, config_dir: &str) -> String {
        self.ids.iter().find(|(_, id)| config_dir.ends_with(id.as_str())).map(|(l, _)| l.clone()).unwrap_or_default()
    }

    /// The launches the stub recorded so far: (label, status, argv).
    fn launches(&self) -> Vec<(String, String, String)> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines()
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                assert_eq!(&f[2..5], ["", "", ""], "no credential variable reaches the child: {l}");
                (self.label_of(f[0]), f[1].to_string(), f.get(5).copied().unwrap_or("").to_string())
            })
            .collect()
    }

    /// `switchyard exec cc [extra] -- <stub> task`, with `env`, on an embedded relay.
    async fn exec(
        &self,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Result<std::process::Output, Box<dyn std::error::Error>> {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("switchyard"));
        cmd.arg("--data-dir").arg(self.d()).arg("exec").arg("cc").args(extra).arg("--").arg(&self.stub).arg("task");
        cmd.env("SWITCHYARD_RELAY_PORT", free_port()?.to_string())
            .env("STUB_LOG", &self.log)
            .env("ANTHROPIC_API_KEY", PARENT_KEY)
            .env("ANTHROPIC_AUTH_TOKEN", PARENT_KEY)
            .env("CLAUDE_CODE_OAUTH_TOKEN", PARENT_KEY)
            .env("SWITCHYARD_LOG", "trace");
        for (k, v) in env {
            cmd.env(k, v);
        }
        Ok(tokio::task::spawn_blocking(move || cmd.output()).await??)
    }
}

/// An anthropic connection `cc` on the mock (an API key primary) with external Claude Code
/// logins `labels` (weights), each signed in with its canary login, and the stub.
async fn setup(accounts: &[(&str, u32, KeyScript)]) -> Result<Setup, Box<dyn std::error::Error>> {
    let mock = MockProvider::start().await?;
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let add = ["connection", "add", "cc", "--protocol", "anthropic", "--base-url", &mock.base_url(), "--model", "m1"];
    let added = run(d, &[&add[..], &["--secret-stdin"]].concat(), Some("sk-ant-api03-canary-exec-login-key"))?;
    assert_eq!(added.code, 0, "connection add: {}", added.stderr);
    let mut ids = Vec::new();
    for (label, weight, script) in accounts {
        mock.set_key(&login(label), script.clone());
        let w = weight.to_string();
        let args =
            ["--json", "profile", "add", "cc", "--label", label, "--kind", "external", "--client", "claude-code"];
        let out = run(d, &[&args[..], &["--weight", &w]].concat(), None)?;
        assert_eq!(out.code, 0, "profile add {label}: {}", out.stderr);
        let view: Value = serde_json::from_str(&out.stdout)?;
        let config_dir = view["config_dir"].as_str().ok_or("config_dir")?;
        let creds = format!(r#"{{"claudeAiOauth":{{"accessToken":"{}","scopes":["user:inference"]}}}}"#, login(label));
        std::fs::write(Path::new(config_dir).join(".credentials.json"), creds)?;
        ids.push((label.to_string(), view["id"].as_str().unwrap_or_default().to_string()));
    }
    let bin = d.join("bin");
    std::fs::create_dir(&bin)?;
    let stub = bin.join("claude");
    std::fs::write(&stub, STUB)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755))?;
    }
    let log = d.join("launches.tsv");
    Ok(Setup { mock, dir, stub, log, ids })
}

/// Every text the data dir's database files hold (not `accounts/`: the CLI's own logins).
fn database_text(d: &Path) -> String {
    std::fs::read_dir(d)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| String::from_utf8_lossy(&std::fs::read(e.path()).unwrap_or_default()).into_owned())
        .collect()
}

fn assert_no_canary(what: &str, text: &str) {
    for leaked in ["CANARY-login", "CANARY-parent"] {
        assert!(!text.contains(leaked), "{what} holds a login or key ({leaked})");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launches_take_turns_by_weight_2_to_1_with_the_account_s_login_only() -> TestResult {
    let s = setup(&[("a", 2, KeyScript::new(["m1"])), ("b", 1, KeyScript::new(["m1"]))]).await?;
    let token = run(s.d(), &["relay", "token"], None)?.stdout.trim().to_string();
    let mut outputs = String::new();
    for i in 0..9 {
        let out = s.exec(&[], &[]).await?;
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "launch {i} ran: {stderr}");
        outputs.push_str(&String::from_utf8_lossy(&out.stdout));
        outputs.push_str(&stderr);
    }
    let launches = s.launches();
    let order: String = launches.iter().map(|(l, _, _)| l.as_str()).collect();
    assert_eq!(order.len(), 9, "nine launches: {launches:?}");
    assert_eq!((order.matches('a').count(), order.matches('b').count()), (6, 3), "2:1 over 9 launches: {order}");
    assert_eq!(order, "abaabaaba", "the smooth order, carried from launch to launch");
    assert!(launches.iter().all(|(_, status, _)| status == "200"), "every launch was served: {launches:?}");
    assert!(launches.iter().all(|(_, _, argv)| argv == "task" && !argv.contains(&token)), "argv as given, no token");
    assert_eq!((s.mock.hits(&login("a")), s.mock.hits(&login("b"))), (6, 3), "each with its own login");
    for r in s.mock.requests() {
        let relay: Vec<&str> = r.headers.keys().map(|n| n.as_str()).filter(|n| n.starts_with("x-switchyard")).collect();
        assert!(relay.is_empty(), "no relay header upstream: {relay:?}");
        assert_eq!(r.header("x-api-key"), None, "no key added to a login's request");
    }
    assert!(!outputs.contains(&token), "the relay token is in no output");
    assert_no_canary("exec's output (trace logs included)", &outputs);
    assert_no_canary("the database files", &database_text(s.d()));
    let attempts = run(s.d(), &["--json", "attempts", "cc", "--limit", "100"], None)?;
    let rows: Vec<Value> = serde_json::from_str(&attempts.stdout)?;
    assert_eq!(rows.len(), 9, "one row per launch's call");
    assert!(rows.iter().all(|r| r["reason"] == "pinned"), "recorded as pinned to the account");
    assert_no_canary("attempts --json", &attempts.stdout);
    let export = run(s.d(), &["export", "cc"], None)?;
    assert_eq!(export.code, 0, "export: {}", export.stderr);
    assert_no_canary("the export", &export.stdout);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_at_its_limit_is_skipped_until_its_reset() -> TestResult {
    // a's provider rejects its 5-hour window once, resetting in 3 s (the relay cools a until then).
    let spent = Behaviour::usage_limit(LimitWindow::FiveHour, 3);
    let limited = KeyScript::new(["m1"]).behaviour(Behaviour::sequence([spent, Behaviour::Ok]));
    let s = setup(&[("a", 1, limited), ("b", 1, KeyScript::new(["m1"]))]).await?;
    let first = s.exec(&[], &[]).await?;
    assert_eq!(first.status.code(), Some(1), "a's launch failed on the limit (no --failover)");
    for i in 0..3 {
        let out = s.exec(&[], &[]).await?;
        assert_eq!(out.status.code(), Some(0), "launch {i}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let order: Vec<(String, String)> = s.launches().into_iter().map(|(l, st, _)| (l, st)).collect();
    let want: Vec<(String, String)> = [("a", "429"), ("b", "200"), ("b", "200"), ("b", "200")]
        .iter()
        .map(|(l, s)| (l.to_string(), s.to_string()))
        .collect();
    assert_eq!(order, want, "while a cools every launch goes to b");
    tokio::time::sleep(Duration::from_millis(4100)).await; // the reset is in whole seconds
    let labels: Vec<String> = {
        for _ in 0..2 {
            let out = s.exec(&[], &[]).await?;
            assert_eq!(out.status.code(), Some(0), "after the reset: {}", String::from_utf8_lossy(&out.stderr));
        }
        s.launches().into_iter().skip(4).map(|(l, _, _)| l).collect()
    };
    assert!(labels.contains(&"a".to_string()), "after its reset a takes launches again: {labels:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failover_relaunches_only_after_a_limit_refusal() -> TestResult {
    let limited = KeyScript::new(["m1"]).behaviour(Behaviour::usage_limit(LimitWindow::FiveHour, 600));
    let s = setup(&[("a", 5, limited), ("b", 1, KeyScript::new(["m1"])), ("c", 1, KeyScript::new(["m1"]))]).await?;
    let out = s.exec(&["--failover"], &[]).await?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "the second account completed the run: {stderr}");
    let runs: Vec<(String, String)> = s.launches().into_iter().map(|(l, st, _)| (l, st)).collect();
    assert_eq!(runs.len(), 2, "two launches: {runs:?}");
    assert_eq!(runs[0], ("a".to_string(), "429".to_string()), "a first (weight 5), refused at its limit");
    assert_eq!(runs[1].1, "200", "then another account served: {runs:?}");
    assert!(
        stderr.contains("account 'a' hit its limit (429 quota_exhausted, cooling until "),
        "which and why: {stderr}"
    );
    assert!(stderr.contains(&format!("running again on account '{}'", runs[1].0)), "and where it goes: {stderr}");
    assert_no_canary("exec's stderr", &stderr);

    // A non-zero exit without a limit refusal passes through, with one launch.
    let before = s.launches().len();
    let out = s.exec(&["--failover", "--profile", "b"], &[("STUB_EXIT", "3")]).await?;
    assert_eq!(out.status.code(), Some(3), "the child's own failure passes through untouched");
    assert_eq!(s.launches().len(), before + 1, "no relaunch without a limit refusal");

    // Every account at its limit: each tried once, then the last exit code.
    for label in ["b", "c"] {
        s.mock.set_key(
            &login(label),
            KeyScript::new(["m1"]).behaviour(Behaviour::usage_limit(LimitWindow::FiveHour, 600)),
        );
    }
    let mut tried = Vec::new();
    let out = s.exec(&["--failover"], &[]).await?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "the last launch's exit code: {stderr}");
    for (label, status, _) in s.launches().into_iter().skip(before + 1) {
        tried.push(label.clone());
        assert_eq!(status, "429", "{label} refused");
    }
    tried.sort();
    assert_eq!(tried, ["b", "c"], "a is cooling and skipped; b and c once each: {stderr}");
    assert!(stderr.contains("no other account to run on"), "and says why it stops: {stderr}");

    // Without external logins --failover is refused.
    let out = run(s.d(), &["exec", "cc", "--failover", "--", "python3", "-c", "pass"], None)?;
    assert_eq!(out.code, 2, "--failover needs a login client: {}", out.stderr);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_gets_a_login_provider_and_its_token_only_in_the_environment() -> TestResult {
    let mock = MockProvider::start().await?;
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let base = format!("{}/v1", mock.base_url());
    let add =
        ["connection", "add", "cx", "--protocol", "openai", "--base-url", &base, "--model", "gpt-x", "--secret-stdin"];
    assert_eq!(run(d, &add, Some("sk-canary-exec-codex-key"))?.code, 0);
    let out = run(
        d,
        &["--json", "profile", "add", "cx", "--label", "plus", "--kind", "external", "--client", "codex"],
        None,
    )?;
    let view: Value = serde_json::from_str(&out.stdout)?;
    let config_dir = view["config_dir"].as_str().ok_or("config_dir")?.to_string();
    std::fs::write(Path::new(&config_dir).join("auth.json"), r#"{"tokens":{"access_token":"x"}}"#)?;
    let bin = d.join("bin");
    std::fs::create_dir(&bin)?;
    let stub = bin.join("codex");
    let seen = d.join("seen.txt");
    let script = format!(
        "#!/bin/bash\nprintf '%s\\n' \"CODEX_HOME=$CODEX_HOME\" \"TOKEN=${{SWITCHYARD_RELAY_TOKEN:+set}}\" \
         \"OPENAI_API_KEY=${{OPENAI_API_KEY+set}}\" \"$@\" > {}\n",
        seen.display()
    );
    std::fs::write(&stub, script)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755))?;
    }
    let token = run(d, &["relay", "token"], None)?.stdout.trim().to_string();
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("switchyard"));
    cmd.arg("--data-dir").arg(d).args(["exec", "cx", "--"]).arg(&stub).args(["exec", "hi"]);
    cmd.env("SWITCHYARD_RELAY_PORT", free_port()?.to_string()).env("OPENAI_API_KEY", "sk-canary-parent-openai");
    let out = tokio::task::spawn_blocking(move || cmd.output()).await??;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let seen = std::fs::read_to_string(&seen)?;
    assert!(seen.contains(&format!("CODEX_HOME={config_dir}")), "the login's CODEX_HOME: {seen}");
    assert!(seen.contains("TOKEN=set") && seen.contains("OPENAI_API_KEY=\n"), "token in env, no API key: {seen}");
    assert!(seen.contains("model_providers.switchyard.requires_openai_auth=true"), "{seen}");
    assert!(seen.contains(&format!("\"x-switchyard-profile\"=\"{}\"", view["id"].as_str().unwrap_or("?"))), "{seen}");
    assert!(!seen.contains("env_key") && !seen.contains(&token), "no env_key, no token in argv: {seen}");
    assert!(seen.ends_with("exec\nhi\n"), "the user's arguments after the overrides: {seen}");
    mock.shutdown().await?;
    Ok(())
}

/// Issue 41 (invariant 29): a limit's refusal is the relay's own, never an account's limit —
/// `exec --failover` does not launch again on another account after one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_s_refusal_never_makes_failover_launch_again() -> TestResult {
    let s = setup(&[("a", 5, KeyScript::new(["m1"])), ("b", 1, KeyScript::new(["m1"]))]).await?;
    let capped = run(s.d(), &["limits", "set", "connection:cc", "--requests", "0", "--per", "day"], None)?;
    assert_eq!(capped.code, 0, "limits set: {}", capped.stderr);
    let out = s.exec(&["--failover"], &[]).await?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let runs: Vec<(String, String)> = s.launches().into_iter().map(|(l, st, _)| (l, st)).collect();
    assert_eq!(runs.len(), 1, "one launch, no failover on a limit's refusal: {runs:?} {stderr}");
    assert_eq!(runs[0].1, "429", "the launch got the limit's 429: {runs:?}");
    assert_ne!(out.status.code(), Some(0), "the child's failure passes through: {stderr}");
    assert!(!stderr.contains("running again on account"), "no relaunch: {stderr}");
    assert_eq!(s.mock.hits(&login("a")) + s.mock.hits(&login("b")), 0, "nothing reached the provider");
    Ok(())
}
