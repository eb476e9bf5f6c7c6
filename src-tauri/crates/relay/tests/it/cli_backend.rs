//! The CLI backend (docs/design.md, "The CLI backend"; issue 28 item 6) with a stub `claude`:
//! a python script, named by `SWITCHYARD_CLAUDE_BIN` for the whole test binary, that records
//! its arguments, environment, working directory, system prompt file and stdin in the
//! profile's config directory, counts how many runs are in flight there (under a lock), and
//! prints the result its `stub.json` says (a success like Claude Code 2.1.332's by default).
//! Journeys: a text request answered in the Messages shape (JSON and stream) with the CLI's
//! usage and reference cost in the ledger; tools refused with `not_supported_by_cli_backend`,
//! the CLI never run, no failover; the per-profile cap under ten parallel requests; off by
//! default; a usage limit cools that account until the reset the CLI named and the next one
//! serves; a client that goes away and a run past the timeout kill the process group. What a run
//! is kept from (issue 39) is in `cli_backend_isolation.rs`, on these helpers.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{json, Value};
use switchyard_engine::{Engine, NewConnection, NewCredential, NewProfile, Router};
use tokio::sync::oneshot;

use crate::common::{eventually, header, TestResult};

pub(crate) const MODEL: &str = "claude-haiku-4-5";
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
pub(crate) const LEAK_CANARIES: [(&str, &str); 5] = [
    ("OPENAI_API_KEY", "sk-proj-CANARY-env-leak-openai"),
    ("GITHUB_TOKEN", "CANARY-env-leak-github-token"),
    ("AWS_SECRET_ACCESS_KEY", "CANARY-env-leak-aws-secret"),
    ("DATABASE_URL", "postgres://relay:CANARY-env-leak-pw@db.internal/switchyard"),
    ("NODE_OPTIONS", "--require /tmp/CANARY-env-leak.js"),
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

pub(crate) struct CliRelay {
    pub(crate) engine: Arc<Engine>,
    pub(crate) url: String,
    pub(crate) token: String,
    pub(crate) http: reqwest::Client,
    /// (label, profile id, config dir) of each external profile.
    pub(crate) profiles: Vec<(String, String, PathBuf)>,
    pub(crate) stop: Option<oneshot::Sender<()>>,
    pub(crate) task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    pub(crate) dir: tempfile::TempDir,
}

/// A connection `c` (Anthropic, nothing listening at its base URL) with one external Claude
/// Code profile per label, signed in (a canary credential file), verified, in `mode` when
/// given, the CLI backend set to `backend` (on, cap) when given, and a relay serving it.
pub(crate) async fn cli_relay(
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
    pub(crate) async fn post(&self, body: Value) -> reqwest::Result<reqwest::Response> {
        self.http
            .post(format!("{}/c/c/v1/messages", self.url))
            .header("x-api-key", &self.token)
            .header("anthropic-version", "2023-06-01")
            .json(&body)
            .send()
            .await
    }

    pub(crate) fn dir_of(&self, label: &str) -> &Path {
        self.profiles.iter().find(|p| p.0 == label).map(|p| p.2.as_path()).unwrap_or(Path::new("/nonexistent"))
    }

    pub(crate) fn id_of(&self, label: &str) -> String {
        self.profiles.iter().find(|p| p.0 == label).map(|p| p.1.clone()).unwrap_or_default()
    }

    /// Stops the relay (flushing the ledger) and returns the attempts as `attempts --json`
    /// prints them, oldest first.
    pub(crate) async fn stop_and_ledger(mut self) -> Result<(Vec<Value>, Self), Box<dyn std::error::Error>> {
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
pub(crate) fn calls(dir: &Path) -> Vec<Value> {
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

pub(crate) fn script(dir: &Path, behaviour: Value) -> TestResult {
    std::fs::write(dir.join("stub.json"), behaviour.to_string())?;
    Ok(())
}

pub(crate) fn plain(text: &str) -> Value {
    json!({"model": MODEL, "max_tokens": 256, "system": "Answer in French.", "messages": [{"role": "user", "content": text}]})
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet: it runs no more).
pub(crate) fn gone(pid: i64) -> bool {
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

/// A relay whose CLI (scripted with `behaviour`, which starts a grandchild) is still running
/// when its client gives up after 1.5 s; the run's pid and its grandchild's.
pub(crate) async fn abandoned_run(behaviour: Value) -> Result<(CliRelay, i64, i64), Box<dyn std::error::Error>> {
    let relay = cli_relay(&["max-1"], None, Some((true, 2))).await?;
    let dir = relay.dir_of("max-1").to_path_buf();
    script(&dir, behaviour)?;
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
    Ok((relay, pid, grandchild))
}

#[tokio::test]
async fn a_client_that_goes_away_kills_the_run() -> TestResult {
    let (_relay, pid, grandchild) = abandoned_run(json!({"sleep": 30, "grandchild": true})).await?;
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
