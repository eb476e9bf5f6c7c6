//! Issue 39: one canary sweep over the team relay's surfaces at trace level (runs under
//! `scripts/with-postgres`, skipped without SWITCHYARD_TEST_PG). Four canaries — an Anthropic
//! key, a Gemini key, a relay user's token and the Postgres URL's password — go through a team
//! store (sealed), a `relay serve` logging at `trace`, calls with the token in each place a client
//! puts it (a header, Gemini's `?key=`, a wrong one, none), `/readyz` and `/healthz`, a limit's
//! refusal and `/v1/switchyard/me`, the audit and `limits status` (issue 41), `--help`
//! with the store variable set, the CLI's reports and errors, and `pg_dump`; none of them comes
//! out anywhere but where it belongs (the keys upstream to the provider, sealed in the store).
//! The CLI backend's child environment and files are swept by the relay suite
//! (`cli_backend.rs`: the allow-list and the run's owner-only files), where the stub CLI runs.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::Value;
use switchyard_mock_provider::{KeyScript, MockProvider};

use crate::common::{files_text, post, run_env, TestResult};
use crate::store_postgres::{database, master_key};

const ANTHROPIC_KEY: &str = "sk-ant-api03-canarySweep7c41e0";
const GEMINI_KEY: &str = "AIzaSyCanarySweep5b2d9f0e1a77";
const PG_PASSWORD: &str = "pgCANARYsweep93";

/// GET `path` on `addr`, the raw answer.
fn get(addr: &str, path: &str, headers: &str) -> Result<String, Box<dyn std::error::Error>> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr)?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    s.write_all(format!("GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n{headers}connection: close\r\n\r\n").as_bytes())?;
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    Ok(answer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_canary_leaves_the_team_relay_at_trace_level() -> TestResult {
    let Ok(server) = std::env::var("SWITCHYARD_TEST_PG") else { return Ok(()) };
    let plain = database(&server, "sy_cli_canary_sweep")?;
    // Trust auth takes any password: the URL carries one, as a team's would.
    let url = plain.replacen("://postgres@", &format!("://postgres:{PG_PASSWORD}@"), 1);
    assert!(url.contains(PG_PASSWORD), "the store URL carries the password canary: the server URL is {server}");
    let mock = MockProvider::start().await?;
    mock.set_key(ANTHROPIC_KEY, KeyScript::new(["m1"]));
    mock.set_key(GEMINI_KEY, KeyScript::new(["gemini-2.5-flash"]));
    let (admin, replica, keys) = (tempfile::tempdir()?, tempfile::tempdir()?, tempfile::tempdir()?);
    let key = master_key(keys.path())?.display().to_string();
    let env = [("SWITCHYARD_STORE", url.as_str()), ("SWITCHYARD_MASTER_KEY_FILE", key.as_str())];
    let cli = |args: &[&str], stdin: Option<&str>| run_env(admin.path(), args, stdin, &env);
    let base = mock.base_url();
    let added = cli(
        &["connection", "add", "c", "--protocol", "anthropic", "--base-url", &base, "--model", "m1", "--secret-stdin"],
        Some(ANTHROPIC_KEY),
    )?;
    assert_eq!(added.code, 0, "{}", added.stderr);
    let gem = ["connection", "add", "g", "--protocol", "gemini", "--base-url", &base, "--model", "gemini-2.5-flash"];
    let added = cli(&[&gem[..], &["--secret-stdin"]].concat(), Some(GEMINI_KEY))?;
    assert_eq!(added.code, 0, "{}", added.stderr);
    let user = cli(&["--json", "relay", "users", "add", "ana"], None)?;
    let ana = serde_json::from_str::<Value>(&user.stdout)?["token"].as_str().unwrap_or_default().to_string();
    assert!(ana.starts_with("syu_"), "a user token: {}", user.stderr);
    let admin_user = cli(&["--json", "relay", "users", "add", "root", "--role", "admin"], None)?;
    let root = serde_json::from_str::<Value>(&admin_user.stdout)?["token"].as_str().unwrap_or_default().to_string();
    assert!(root.starts_with("syu_"), "an admin token: {}", admin_user.stderr);
    // Issue 42's surfaces: spans to a receiver, /metrics, status.
    let spans = crate::telemetry::Received::default();
    let otlp = format!("http://127.0.0.1:{}", spans.listen()?);
    // Issue 41's surfaces: a scope edit and a limit (audit rows), a refusal, `/v1/switchyard/me`.
    for args in [
        &["relay", "users", "edit", "ana", "--models", "m1,gemini-*"][..],
        &["limits", "set", "user:ana", "--requests", "2", "--per", "minute"],
    ] {
        let done = cli(args, None)?;
        assert_eq!(done.code, 0, "{args:?}: {}", done.stderr);
    }

    // The relay at trace level, stdout and stderr kept whole.
    let logs = tempfile::tempdir()?;
    let (out_file, err_file) = (logs.path().join("stdout"), logs.path().join("stderr"));
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("switchyard"))
        .arg("--data-dir")
        .arg(replica.path())
        .args(["relay", "serve", "--listen", "127.0.0.1:0", "--otlp-endpoint", &otlp])
        .envs(env)
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env("SWITCHYARD_LOG", "trace")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&err_file)?)
        .spawn()?;
    let mut out = BufReader::new(child.stdout.take().ok_or("relay stdout")?);
    let mut first = String::new();
    out.read_line(&mut first)?;
    let addr = first.trim().rsplit("http://").next().ok_or("relay address")?.to_string();
    let copier = std::thread::spawn({
        let out_file = out_file.clone();
        move || std::fs::File::create(out_file).map(|mut f| std::io::copy(&mut out, &mut f))
    });

    let anthropic_body =
        r#"{"model":"m1","max_tokens":8,"messages":[{"role":"user","content":"PROMPT-CANARY-sweep-5d1c"}]}"#;
    let gemini_body = r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;
    let bearer = format!("authorization: Bearer {ana}\r\nanthropic-version: 2023-06-01\r\n");
    let answers = [
        ("a user's call", post(&addr, "/c/c/v1/messages", &bearer, anthropic_body)?, "200"),
        (
            "a wrong token",
            post(&addr, "/c/c/v1/messages", "authorization: Bearer syu_wrong\r\n", anthropic_body)?,
            "401",
        ),
        ("no token", post(&addr, "/c/c/v1/messages", "", anthropic_body)?, "401"),
        (
            "Gemini's ?key=",
            post(&addr, &format!("/c/g/v1beta/models/gemini-2.5-flash:generateContent?key={ana}"), "", gemini_body)?,
            "200",
        ),
        (
            "?key= on an Anthropic route",
            post(&addr, &format!("/c/c/v1/messages?key={ana}"), "anthropic-version: 2023-06-01\r\n", anthropic_body)?,
            "401",
        ),
        ("/readyz", get(&addr, "/readyz", "")?, "200"),
        ("/readyz with a token", get(&addr, "/readyz", &format!("authorization: Bearer {ana}\r\n"))?, "200"),
        ("/healthz", get(&addr, "/healthz", &format!("authorization: Bearer {ana}\r\n"))?, "200"),
        ("a call over ana's limit", post(&addr, "/c/c/v1/messages", &bearer, anthropic_body)?, "429"),
        ("/v1/switchyard/me", get(&addr, "/v1/switchyard/me", &format!("authorization: Bearer {ana}\r\n"))?, "200"),
        ("/metrics for an admin", get(&addr, "/metrics", &format!("authorization: Bearer {root}\r\n"))?, "200"),
        ("/metrics for a user", get(&addr, "/metrics", &format!("authorization: Bearer {ana}\r\n"))?, "403"),
    ];
    let _ = Command::new("kill").arg(child.id().to_string()).status();
    let stopped = child.wait()?;
    let _ = copier.join();
    assert!(stopped.success(), "the relay stopped cleanly: {stopped}");
    for (what, answer, status) in &answers {
        assert_eq!(answer.split(' ').nth(1), Some(*status), "{what}: {answer:.200}");
    }

    // What the CLI shows and writes, errors included, with the store variable set.
    let mut shown = Vec::new();
    for args in [
        &["--help"][..],
        &["relay", "serve", "--help"],
        &["store", "copy", "--help"],
        &["--json", "attempts", "c"],
        &["--json", "attempts", "g"],
        &["usage", "c", "--by", "user"],
        &["export"],
        &["--json", "connection", "show", "c"],
        &["relay", "users", "list"],
        &["--json", "audit", "list"],
        &["--json", "limits", "status"],
        &["status"],
        &["--json", "status"],
        &["status", "--line"],
        &["connection", "show", "nope"],
        &["--store", "postgres://postgres:pgCANARYsweep93@127.0.0.1:1/none", "connection", "list"],
    ] {
        let r = cli(args, None)?;
        shown.push((format!("switchyard {}", args.join(" ")), format!("{}{}", r.stdout, r.stderr)));
    }
    let rows = &shown[3].1;
    assert!(rows.contains("\"ana\""), "the ledger has the user's calls (the sweep reads real rows): {rows:.300}");
    let audit = &shown[9].1;
    assert!(
        audit.contains("user.edit") && audit.contains("limit.set"),
        "the audit has the admin changes: {audit:.300}"
    );

    let dump = Command::new("pg_dump").args(["--dbname", &plain]).output()?;
    assert!(dump.status.success(), "pg_dump: {}", String::from_utf8_lossy(&dump.stderr));
    let dump = String::from_utf8_lossy(&dump.stdout).into_owned();
    assert!(dump.contains("sealed_secrets") && dump.contains("ana"), "the dump is of this store");

    let log = format!("{}{}", std::fs::read_to_string(&out_file)?, std::fs::read_to_string(&err_file)?);
    assert!(log.contains("TRACE"), "the relay logged at trace level (the sweep reads real logs)");
    let upstream: Vec<String> = mock.requests().iter().map(|r| format!("{r:?}")).collect();
    assert!(upstream.len() >= 2, "calls reached the provider: {}", upstream.len());

    let exported: String = spans.bodies().iter().map(|(_, b)| String::from_utf8_lossy(b).into_owned()).collect();
    assert!(exported.contains("gen_ai.request.model"), "spans were exported (the sweep reads real spans)");
    let metrics = &answers.iter().find(|(w, _, _)| *w == "/metrics for an admin").ok_or("metrics")?.1;
    assert!(metrics.contains("switchyard_requests_total"), "/metrics was read (the sweep reads real metrics)");
    let mut places: Vec<(String, String)> =
        vec![("the trace log".into(), log), ("pg_dump".into(), dump), ("the exported spans".into(), exported)];
    places.extend(answers.iter().map(|(what, answer, _)| (format!("the answer to {what}"), answer.clone())));
    places.extend(shown);
    places.push(("the replica's data dir".into(), files_text(replica.path())));
    places.push(("the admin's data dir".into(), files_text(admin.path())));
    for (place, text) in &places {
        for (canary, what) in [
            (ANTHROPIC_KEY, "the Anthropic key"),
            (GEMINI_KEY, "the Gemini key"),
            (ana.as_str(), "the user's token"),
            (root.as_str(), "the admin's token"),
            (PG_PASSWORD, "the store's password"),
        ] {
            assert!(!text.contains(canary), "{what} is in {place}");
        }
    }
    // Telemetry carries no content either (invariant 32): not the prompt's text.
    for (place, text) in places.iter().filter(|(p, _)| {
        p == "the exported spans"
            || p.contains("/metrics")
            || p.starts_with("switchyard status")
            || p.starts_with("switchyard --json status")
    }) {
        assert!(!text.contains("PROMPT-CANARY-sweep-5d1c"), "the prompt's text is in {place}");
    }
    for request in &upstream {
        assert!(!request.contains(&ana), "the user's token never goes upstream: {request:.300}");
        assert!(!request.contains(PG_PASSWORD), "nor the store's password");
    }
    mock.shutdown().await?;
    Ok(())
}
