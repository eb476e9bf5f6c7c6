//! The CLI backend (docs/design.md, "The CLI backend"; issue 28 item 6) with a stub `claude`:
//! a python script, named by `SWITCHYARD_CLAUDE_BIN` for the whole test binary, that records
//! its arguments, environment, working directory, system prompt file and stdin in the
//! profile's config directory, counts how many runs are in flight there (under a lock), and
//! prints the result its `stub.json` says (a success like Claude Code 2.1.332's by default).
//! Journeys: a text request answered in the Messages shape (JSON and stream) with the CLI's
//! usage and reference cost in the ledger; tools refused with `not_supported_by_cli_backend`,
//! the CLI never run, no failover; the per-profile cap under ten parallel requests; off by
//! default; a usage limit cools that account until the reset the CLI named and the next one
//! serves; a client that goes away and a run past the timeout kill the process group. Issue
//! 39: the relay's environment (leak canaries set beside the stub) reaches the CLI only through
//! the allow-list; a run's files are owner-only in the data dir and gone after it; a model that
//! reads as an option never reaches argv; a grandchild in its own session dies with the run;
//! the runs a killed relay left are removed at the engine's next start.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{json, Value};
use switchyard_engine::{Engine, NewConnection, NewCredential, NewProfile, Router};
use tokio::sync::oneshot;

use crate::common::{eventually, header, TestResult};

const MODEL: &str = "claude-haiku-4-5";
const CANARY: &str = "sk-ant-oat01-CANARY-cli-backend-3f9a";

const STUB: &str = r#"#!/usr/bin/env python3
import fcntl, json, os, subprocess, sys, time
d = os.environ.get("CLAUDE_CONFIG_DIR", "")
try:
    script = json.load(open(os.path.join(d, "stub.json")))
except Exception:
    script = {}
stdin = sys.stdin.read()
def bump(delta):
    with open(os.path.join(d, "running.lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = os.path.join(d, "running.json")
        try:
            st = json.load(open(path))
        except Exception:
            st = {"now": 0, "max": 0, "runs": 0}
        st["now"] += delta
        st["runs"] += 1 if delta > 0 else 0
        st["max"] = max(st["max"], st["now"])
        json.dump(st, open(path + ".tmp", "w"))
        os.replace(path + ".tmp", path)
bump(1)
try:
    argv = sys.argv[1:]
    system = None
    system_path = None
    modes = {}
    if "--system-prompt-file" in argv:
        system_path = argv[argv.index("--system-prompt-file") + 1]
        system = open(system_path).read()
        modes = {"run": os.stat(os.path.dirname(system_path)).st_mode & 0o777,
                 "cwd": os.stat(".").st_mode & 0o777, "system": os.stat(system_path).st_mode & 0o777}
    names = ["CLAUDE_CONFIG_DIR", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_MAX_OUTPUT_TOKENS", "MAX_THINKING_TOKENS",
             "CLAUDE_CODE_MAX_RETRIES", "TZ", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
             "SWITCHYARD_CLI_RUN"]
    grandchild = None
    if script.get("grandchild"):
        grandchild = subprocess.Popen(["sleep", "60"]).pid
    if script.get("setsid_grandchild"):
        grandchild = subprocess.Popen(["sleep", "60"], start_new_session=True).pid
    record = {"argv": argv, "stdin": stdin, "system": system, "cwd_entries": os.listdir("."),
              "env": {n: os.environ.get(n) for n in names}, "pid": os.getpid(), "grandchild": grandchild,
              "env_names": sorted(os.environ.keys()), "system_path": system_path, "modes": modes}
    os.makedirs(os.path.join(d, "calls"), exist_ok=True)
    with open(os.path.join(d, "calls", "%d.json" % os.getpid()), "w") as f:
        json.dump(record, f)
    time.sleep(script.get("sleep", 0))
    result = script.get("result")
    if script.get("limit"):
        reset = time.strftime("%I:%M%p", time.gmtime(time.time() + script["limit"])).lstrip("0").lower()
        result = {"type": "result", "subtype": "success", "is_error": True, "api_error_status": 429,
                  "api_error_type": "rate_limit_error", "api_error": "usage_limit_reached",
                  "result": "You've hit your 5-hour limit \u00b7 resets %s (UTC)" % reset, "total_cost_usd": 0,
                  "usage": {"input_tokens": 0, "output_tokens": 0}}
    if result is None:
        model = argv[argv.index("--model") + 1]
        result = {"type": "result", "subtype": "success", "is_error": False, "stop_reason": "end_turn",
                  "result": "stub says: " + stdin, "total_cost_usd": 0.0123,
                  "usage": {"input_tokens": 408, "output_tokens": 7, "cache_creation_input_tokens": 11,
                            "cache_read_input_tokens": 22},
                  "modelUsage": {model: {"inputTokens": 408}}, "uuid": "0f0e0d0c-0b0a-0908-0706-050403020100"}
    print(json.dumps(result))
finally:
    bump(-1)
sys.exit(script.get("exit", 0))
"#;

/// Variables of the test process (the relay's environment) that must never reach the CLI: the
/// relay's own keys, tokens and database URL, and a Node option that would load code into it.
const LEAK_CANARIES: [(&str, &str); 5] = [
    ("OPENAI_API_KEY", "sk-proj-CANARY-env-leak-openai"),
    ("GITHUB_TOKEN", "CANARY-env-leak-github-token"),
    ("AWS_SECRET_ACCESS_KEY", "CANARY-env-leak-aws-secret"),
    ("DATABASE_URL", "postgres://relay:CANARY-env-leak-pw@db.internal/switchyard"),
    ("NODE_OPTIONS", "--require /tmp/CANARY-env-leak.js"),
];

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

/// The stub, written once and named by `SWITCHYARD_CLAUDE_BIN` for the whole binary (the
/// same value for every test, set before any relay of this module reads it), with the leak
/// canaries set beside it in the test process's environment.
fn stub() -> &'static Path {
    static STUB_PATH: OnceLock<PathBuf> = OnceLock::new();
    STUB_PATH.get_or_init(|| {
        let dir = tempfile::tempdir().expect("stub dir").keep();
        let path = dir.join("claude");
        // The interpreter itself, not a launcher on PATH: a pyenv shim is a shell script that
        // adds variables of its own (PYENV_*, PWD, SHLVL) to the environment the stub records.
        let python = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .ok()
            .and_then(|out| String::from_utf8(out.stdout).ok())
            .map(|p| p.trim().to_string())
            .filter(|p| p.starts_with('/') && !p.contains(char::is_whitespace));
        let text = match python {
            Some(p) => STUB.replacen("#!/usr/bin/env python3", &format!("#!{p}"), 1),
            None => STUB.to_string(),
        };
        std::fs::write(&path, text).expect("stub written");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("stub executable");
        }
        std::env::set_var("SWITCHYARD_CLAUDE_BIN", &path);
        for (name, value) in LEAK_CANARIES {
            std::env::set_var(name, value);
        }
        path
    })
}

struct CliRelay {
    engine: Arc<Engine>,
    url: String,
    token: String,
    http: reqwest::Client,
    /// (label, profile id, config dir) of each external profile.
    profiles: Vec<(String, String, PathBuf)>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    dir: tempfile::TempDir,
}

/// A connection `c` (Anthropic, nothing listening at its base URL) with one external Claude
/// Code profile per label, signed in (a canary credential file), verified, in `mode` when
/// given, the CLI backend set to `backend` (on, cap) when given, and a relay serving it.
async fn cli_relay(
    labels: &[&str],
    mode: Option<&str>,
    backend: Option<(bool, i64)>,
) -> Result<CliRelay, Box<dyn std::error::Error>> {
    stub();
    let dir = tempfile::tempdir()?;
    let vault = Arc::new(switchyard_vault::MemoryVault::new());
    let engine = Arc::new(Engine::open_with(dir.path(), vault, Arc::new(switchyard_engine::SystemClock)).await?);
    let conn = NewConnection {
        slug: "c".into(),
        protocol: "anthropic".into(),
        base_url: "http://127.0.0.1:9".into(),
        models: vec![MODEL.into()],
        mappings: vec![format!("haiku={MODEL}")],
        ..Default::default()
    };
    engine.connection_add(conn, None).await?;
    let mut profiles = Vec::new();
    for label in labels {
        let credential =
            NewCredential { kind: Some("external".into()), client: Some("claude-code".into()), expires_at: None };
        let new = NewProfile { label: (*label).into(), weight: Some(1), priority: None };
        let view = engine.profile_add_kind("c", new, credential, None).await?;
        let config_dir = PathBuf::from(view.config_dir.ok_or("an external profile has a config dir")?);
        let login = json!({"claudeAiOauth": {"accessToken": CANARY, "scopes": ["user:inference"]}});
        std::fs::write(config_dir.join(".credentials.json"), login.to_string())?;
        profiles.push((label.to_string(), view.id, config_dir));
    }
    engine.verify("c", None, false, &|_| {}).await?;
    if let Some(m) = mode {
        engine.routing_activate("c", m.parse()?, "test").await?;
    }
    if let Some((on, cap)) = backend {
        engine.set_cli_backend("c", Some(on), Some(cap)).await?;
    }
    let token = engine.relay_token(false).await?;
    let token_text = token.expose().to_string();
    let router = Arc::new(Router::start(engine.clone()));
    let (url, stop, task) = crate::common::serve_on_loopback(router, token).await?;
    Ok(CliRelay {
        engine,
        url,
        token: token_text,
        http: reqwest::Client::new(),
        profiles,
        stop: Some(stop),
        task: Some(task),
        dir,
    })
}

impl CliRelay {
    async fn post(&self, body: Value) -> reqwest::Result<reqwest::Response> {
        self.http
            .post(format!("{}/c/c/v1/messages", self.url))
            .header("x-api-key", &self.token)
            .header("anthropic-version", "2023-06-01")
            .json(&body)
            .send()
            .await
    }

    fn dir_of(&self, label: &str) -> &Path {
        self.profiles.iter().find(|p| p.0 == label).map(|p| p.2.as_path()).unwrap_or(Path::new("/nonexistent"))
    }

    fn id_of(&self, label: &str) -> String {
        self.profiles.iter().find(|p| p.0 == label).map(|p| p.1.clone()).unwrap_or_default()
    }

    /// Stops the relay (flushing the ledger) and returns the attempts as `attempts --json`
    /// prints them, oldest first.
    async fn stop_and_ledger(mut self) -> Result<(Vec<Value>, Self), Box<dyn std::error::Error>> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            t.await??;
        }
        let mut rows: Vec<Value> =
            serde_json::from_str(&serde_json::to_string(&self.engine.attempts("c", 100).await?)?)?;
        rows.reverse();
        Ok((rows, self))
    }
}

/// The runs the stub recorded in `dir`.
fn calls(dir: &Path) -> Vec<Value> {
    let mut out: Vec<Value> = std::fs::read_dir(dir.join("calls"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read(e.path()).ok())
        .filter_map(|b| serde_json::from_slice(&b).ok())
        .collect();
    out.sort_by_key(|c| c["pid"].as_i64());
    out
}

fn script(dir: &Path, behaviour: Value) -> TestResult {
    std::fs::write(dir.join("stub.json"), behaviour.to_string())?;
    Ok(())
}

fn plain(text: &str) -> Value {
    json!({"model": MODEL, "max_tokens": 256, "system": "Answer in French.", "messages": [{"role": "user", "content": text}]})
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet: it runs no more).
fn gone(pid: i64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(')').next().map(str::trim_start).is_some_and(|rest| rest.starts_with('Z')),
    }
}

#[tokio::test]
async fn a_text_request_is_answered_in_the_messages_shape_with_the_cli_s_usage_recorded() -> TestResult {
    let relay = cli_relay(&["max-1", "max-2"], Some("balanced"), Some((true, 2))).await?;
    // Conversation affinity keeps both requests on the account the first one went to.
    let resp = relay.post(plain("bonjour?")).await?;
    assert_eq!(resp.status(), 200, "the CLI served it");
    let served = header(&resp, "x-switchyard-profile");
    let label =
        relay.profiles.iter().find(|p| p.1 == served).map(|p| p.0.clone()).ok_or("an external profile served")?;
    let dir = relay.dir_of(&label).to_path_buf();
    assert!(header(&resp, "content-type").starts_with("application/json"), "a JSON answer");
    let body: Value = resp.json().await?;
    assert_eq!(body["type"], "message", "the Messages shape: {body}");
    assert_eq!(body["role"], "assistant");
    assert_eq!(body["model"], MODEL, "the model that answered");
    assert_eq!(body["content"][0], json!({"type": "text", "text": "stub says: bonjour?"}), "the CLI's result, whole");
    assert_eq!(body["stop_reason"], "end_turn");
    assert_eq!(body["id"], "msg_0f0e0d0c0b0a09080706050403020100", "msg_ and the result's uuid");
    let want = json!({"input_tokens": 408, "output_tokens": 7, "cache_creation_input_tokens": 11, "cache_read_input_tokens": 22});
    assert_eq!(body["usage"], want, "the CLI's usage, as Messages counts");

    let run = calls(&dir);
    assert_eq!(run.len(), 1, "one process for one request");
    let run = &run[0];
    let argv: Vec<&str> =
        run["argv"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let want_flags = [
        "-p",
        "--model",
        MODEL,
        "--output-format",
        "json",
        "--tools",
        "",
        "--strict-mcp-config",
        "--setting-sources",
        "project",
        "--no-session-persistence",
        "--disable-slash-commands",
        "--system-prompt-file",
    ];
    assert_eq!(&argv[..want_flags.len()], want_flags, "seed 004's flags, the request's model: {argv:?}");
    assert_eq!(argv.len(), want_flags.len() + 1, "then the system prompt file, nothing else: {argv:?}");
    assert_eq!(run["stdin"], "bonjour?", "the user turn on stdin, as sent");
    assert_eq!(run["system"], "Answer in French.", "the request's system prompt, as sent");
    assert_eq!(run["cwd_entries"], json!([]), "an empty working directory");
    let env = &run["env"];
    assert_eq!(env["CLAUDE_CONFIG_DIR"].as_str().map(PathBuf::from), Some(dir.clone()), "the profile's own login");
    assert_eq!(env["ANTHROPIC_BASE_URL"], "http://127.0.0.1:9", "the connection's base URL");
    assert_eq!(env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"], "256", "max_tokens carried");
    assert_eq!(env["MAX_THINKING_TOKENS"], "0", "no thinking: the request asked for none");
    assert_eq!(env["CLAUDE_CODE_MAX_RETRIES"], "0", "retries are the routing loop's");
    assert_eq!(env["TZ"], "UTC", "resets are named in UTC");
    for name in ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"] {
        assert_eq!(env[name], Value::Null, "{name} would replace the login: never set");
    }

    // The mapping names the model the CLI is asked for; a stream is the same answer as events.
    let mut streamed = plain("encore");
    streamed["model"] = json!("haiku");
    streamed["stream"] = json!(true);
    let resp = relay.post(streamed).await?;
    assert_eq!(resp.status(), 200);
    assert!(header(&resp, "content-type").starts_with("text/event-stream"), "a stream was asked for");
    let text = resp.text().await?;
    let names: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("event: ")).collect();
    let want = [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ];
    assert_eq!(names, want, "the Messages event sequence of the finished answer: {text}");
    assert!(text.contains("stub says: encore"), "with the text: {text}");
    let second: Vec<Value> = relay.profiles.iter().flat_map(|p| calls(&p.2)).collect();
    assert_eq!(second.len(), 2, "a second process");
    assert!(
        second.iter().any(|c| c["argv"][2] == MODEL && c["stdin"] == "encore"),
        "haiku maps to {MODEL}: {second:?}"
    );

    let (rows, relay) = relay.stop_and_ledger().await?;
    assert_eq!(rows.len(), 2, "one ledger row per request: {rows:?}");
    let row = &rows[0];
    assert_eq!(row["status"], 200);
    assert_eq!(row["profile"], served, "the account that served");
    assert_eq!((row["input_tokens"].as_i64(), row["output_tokens"].as_i64()), (Some(408), Some(7)), "usage: {row}");
    assert_eq!(
        (row["cache_read_tokens"].as_i64(), row["cache_write_tokens"].as_i64()),
        (Some(22), Some(11)),
        "cache: {row}"
    );
    assert_eq!(row["reference_cost_usd"].as_f64(), Some(0.0123), "the CLI's list-price figure, as a reference: {row}");
    assert_eq!(rows[1]["model"], "haiku", "the row names the model as asked: {}", rows[1]);
    let everything = format!("{rows:?}");
    assert!(!everything.contains(CANARY), "the login never reaches the ledger");
    let mut db = std::fs::read(relay.dir.path().join(switchyard_engine::DB_FILE))?;
    db.extend(std::fs::read(relay.dir.path().join(format!("{}-wal", switchyard_engine::DB_FILE))).unwrap_or_default());
    assert!(!db.windows(CANARY.len()).any(|w| w == CANARY.as_bytes()), "nor the database");
    Ok(())
}

#[tokio::test]
async fn a_request_with_tools_is_refused_and_the_cli_never_runs() -> TestResult {
    let relay = cli_relay(&["max-1", "max-2"], Some("balanced"), Some((true, 2))).await?;
    let mut body = plain("read the file");
    body["tools"] = json!([{"name": "Read", "description": "read", "input_schema": {"type": "object"}}]);
    let resp = relay.post(body).await?;
    assert_eq!(resp.status(), 400, "refused");
    assert_eq!(header(&resp, "x-switchyard-reason"), "not_supported_by_cli_backend", "with its reason");
    assert_eq!(header(&resp, "x-switchyard-attempts"), "1", "never failed over to the other account");
    let err: Value = resp.json().await?;
    assert_eq!(err["type"], "error", "Anthropic's error shape: {err}");
    assert_eq!(err["error"]["type"], "invalid_request_error");
    assert!(err["error"]["message"].as_str().unwrap_or_default().contains("tools"), "it says what: {err}");
    let mut history = plain("and then?");
    history["messages"] = json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]);
    let resp = relay.post(history).await?;
    assert_eq!(resp.status(), 400, "a history print mode cannot carry is refused too");
    assert_eq!(header(&resp, "x-switchyard-reason"), "not_supported_by_cli_backend");
    for label in ["max-1", "max-2"] {
        assert!(calls(relay.dir_of(label)).is_empty(), "{label}: the CLI never ran");
    }
    let (rows, _relay) = relay.stop_and_ledger().await?;
    assert_eq!(rows.len(), 2, "one attempt per request: {rows:?}");
    for row in &rows {
        assert_eq!(
            (row["status"].as_i64(), &row["failure_kind"], &row["scope"]),
            (Some(400), &json!("bad_request"), &json!("request")),
            "{row}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn the_cap_holds_under_ten_parallel_requests() -> TestResult {
    let relay = Arc::new(cli_relay(&["max-1"], None, Some((true, 2))).await?);
    let dir = relay.dir_of("max-1").to_path_buf();
    script(&dir, json!({"sleep": 0.3}))?;
    let mut tasks = Vec::new();
    for i in 0..10 {
        let relay = relay.clone();
        tasks.push(tokio::spawn(async move { relay.post(plain(&format!("q{i}"))).await.map(|r| r.status().as_u16()) }));
    }
    for t in tasks {
        assert_eq!(t.await??, 200, "every request is served, in turn");
    }
    let running: Value = serde_json::from_slice(&std::fs::read(dir.join("running.json"))?)?;
    assert_eq!(running["runs"], 10, "ten processes ran: {running}");
    assert_eq!(running["max"], 2, "never more than two at once: {running}");
    assert_eq!(running["now"], 0, "and none is left: {running}");
    Ok(())
}

#[tokio::test]
async fn the_backend_is_off_by_default() -> TestResult {
    let relay = cli_relay(&["max-1"], None, None).await?;
    let dir = relay.dir_of("max-1").to_path_buf();
    let shown = relay.engine.cli_backend("c").await?;
    assert!(!shown.enabled, "off unless turned on");
    assert_eq!(shown.max_concurrent, 2, "two runs per profile by default");
    assert_eq!(shown.profiles, vec!["max-1".to_string()], "it would apply to the external Claude Code profile");
    let resp = relay.post(plain("hi")).await?;
    // The client rule (core `may_serve`): an external login serves only requests naming it,
    // unless the CLI backend is on; legacy refuses such a primary as another client's.
    assert_eq!(resp.status(), 403, "an external login has no key of its own to send: nothing serves a plain request");
    assert_eq!(header(&resp, "x-switchyard-reason"), "client_not_allowed");
    assert!(calls(&dir).is_empty(), "the CLI never ran");
    relay.engine.set_cli_backend("c", Some(true), None).await?;
    eventually("the relay's snapshot sees the backend on", || async {
        Ok(relay.post(plain("hi")).await?.status() == 200)
    })
    .await?;
    assert_eq!(calls(&dir).len(), 1, "once on, the CLI serves (legacy routing: the primary)");
    Ok(())
}

#[tokio::test]
async fn a_usage_limit_cools_that_account_until_its_reset_and_the_next_one_serves() -> TestResult {
    let relay = cli_relay(&["max-1", "max-2"], Some("priority"), Some((true, 2))).await?;
    script(relay.dir_of("max-1"), json!({"limit": 7200, "exit": 1}))?;
    let resp = relay.post(plain("hi")).await?;
    assert_eq!(resp.status(), 200, "the other account served");
    assert_eq!(header(&resp, "x-switchyard-profile"), relay.id_of("max-2"), "max-2");
    assert_eq!(header(&resp, "x-switchyard-attempts"), "2", "after max-1's limit");
    let status = relay.engine.routing_status("c").await?;
    let max1 = status.profiles.iter().find(|p| p.label == "max-1").ok_or("max-1 listed")?;
    let json = serde_json::to_value(max1)?;
    let until = json["health"]
        .as_array()
        .and_then(|h| h.iter().find_map(|c| c["until"].as_str()))
        .ok_or(format!("a cooldown: {json}"))?;
    let until_ms = until.parse::<jiff::Timestamp>()?.as_millisecond();
    let expect = relay.engine.now_ms() + 7_200_000;
    assert!((until_ms - expect).abs() < 120_000, "cooling until the reset the CLI named (±2 min): {until} vs {expect}");
    let again = relay.post(plain("hi")).await?;
    assert_eq!(
        header(&again, "x-switchyard-profile"),
        relay.id_of("max-2"),
        "the next request skips the cooling account"
    );
    assert_eq!(header(&again, "x-switchyard-attempts"), "1", "without trying it");
    assert_eq!(calls(relay.dir_of("max-1")).len(), 1, "max-1's CLI ran once");
    let (rows, _relay) = relay.stop_and_ledger().await?;
    let limited = &rows[0];
    assert_eq!(
        (limited["status"].as_i64(), &limited["failure_kind"], &limited["scope"]),
        (Some(429), &json!("rate_limited"), &json!("credential")),
        "classified like the API's 429: {limited}"
    );
    Ok(())
}

#[tokio::test]
async fn a_lone_account_at_its_limit_answers_429_with_retry_after() -> TestResult {
    let relay = cli_relay(&["max-1"], None, Some((true, 2))).await?;
    script(relay.dir_of("max-1"), json!({"limit": 3600, "exit": 1}))?;
    let resp = relay.post(plain("hi")).await?;
    assert_eq!(resp.status(), 429, "the API's status for a used-up window");
    let retry: i64 = header(&resp, "retry-after").parse()?;
    assert!((3540..=3600).contains(&retry), "Retry-After = the reset the CLI named: {retry}");
    let err: Value = resp.json().await?;
    assert_eq!(err["error"]["type"], "rate_limit_error", "{err}");
    assert!(err["error"]["message"].as_str().unwrap_or_default().contains("5-hour limit"), "the CLI's sentence: {err}");
    Ok(())
}

#[tokio::test]
async fn a_client_that_goes_away_kills_the_run() -> TestResult {
    let relay = cli_relay(&["max-1"], None, Some((true, 2))).await?;
    let dir = relay.dir_of("max-1").to_path_buf();
    script(&dir, json!({"sleep": 30, "grandchild": true}))?;
    let client = reqwest::Client::builder().timeout(Duration::from_millis(1500)).build()?;
    let sent = client
        .post(format!("{}/c/c/v1/messages", relay.url))
        .header("x-api-key", &relay.token)
        .json(&plain("slow"))
        .send()
        .await;
    assert!(sent.is_err(), "the client gave up first");
    let run = calls(&dir).pop().ok_or("the CLI started")?;
    let (pid, grandchild) = (run["pid"].as_i64().unwrap_or(0), run["grandchild"].as_i64().unwrap_or(0));
    assert!(pid > 0 && grandchild > 0, "pids recorded: {run}");
    eventually("the CLI and what it started are killed", || async { Ok(gone(pid) && gone(grandchild)) }).await?;
    Ok(())
}

#[tokio::test]
async fn a_run_past_the_connection_s_timeout_is_killed_and_answered_504() -> TestResult {
    let relay = cli_relay(&["max-1"], None, Some((true, 2))).await?;
    relay.engine.set_first_byte_timeout("c", 1).await?;
    let dir = relay.dir_of("max-1").to_path_buf();
    script(&dir, json!({"sleep": 30}))?;
    let started = std::time::Instant::now();
    let resp = relay.post(plain("slow")).await?;
    assert_eq!(resp.status(), 504, "no answer within the connection's timeout");
    assert_eq!(header(&resp, "x-switchyard-reason"), "upstream_timeout");
    assert!(started.elapsed() < Duration::from_secs(10), "answered at the timeout, not when the CLI ended");
    let pid = calls(&dir).pop().and_then(|c| c["pid"].as_i64()).ok_or("the CLI started")?;
    eventually("the run is killed", || async { Ok(gone(pid)) }).await?;
    Ok(())
}

/// A request naming its external login (`exec`'s pass-through: the official CLI's own
/// credential) goes to the connection's base URL over HTTP even while the CLI backend is on:
/// the backend never serves a request that carries a login of its own. Nothing listens at the
/// base URL here, so the pass-through answers 502 and the stub CLI must not have run.
#[tokio::test]
async fn a_request_naming_its_login_passes_through_even_with_the_backend_on() -> TestResult {
    let relay = cli_relay(&["max-1"], None, Some((true, 2))).await?;
    let dir = relay.dir_of("max-1").to_path_buf();
    let id = relay.id_of("max-1");
    let resp = relay
        .http
        .post(format!("{}/c/c/v1/messages", relay.url))
        .header("x-switchyard-token", &relay.token)
        .header("x-switchyard-profile", &id)
        .header("authorization", "Bearer sk-ant-oat01-client-own-login")
        .header("user-agent", "claude-cli/2.1.332 (external, sdk-cli)")
        .header("anthropic-version", "2023-06-01")
        .json(&plain("hi"))
        .send()
        .await?;
    assert_eq!(resp.status(), 502, "passed through over HTTP to a base URL where nothing listens");
    assert_eq!(header(&resp, "x-switchyard-reason"), "upstream_unreachable", "the pass-through's own failure");
    assert!(calls(&dir).is_empty(), "the CLI backend did not take the named request");
    let plain_resp = relay.post(plain("hi")).await?;
    assert_eq!(plain_resp.status(), 200, "an unnamed request still goes to the backend");
    assert_eq!(calls(&dir).len(), 1, "and the CLI ran once, for it alone");
    Ok(())
}

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
    let relay = cli_relay(&["max-1"], None, Some((true, 2))).await?;
    let dir = relay.dir_of("max-1").to_path_buf();
    script(&dir, json!({"sleep": 30, "setsid_grandchild": true}))?;
    let client = reqwest::Client::builder().timeout(Duration::from_millis(1500)).build()?;
    let sent = client
        .post(format!("{}/c/c/v1/messages", relay.url))
        .header("x-api-key", &relay.token)
        .json(&plain("slow"))
        .send()
        .await;
    assert!(sent.is_err(), "the client gave up first");
    let run = calls(&dir).pop().ok_or("the CLI started")?;
    let (pid, grandchild) = (run["pid"].as_i64().unwrap_or(0), run["grandchild"].as_i64().unwrap_or(0));
    assert!(pid > 0 && grandchild > 0, "pids recorded: {run}");
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
