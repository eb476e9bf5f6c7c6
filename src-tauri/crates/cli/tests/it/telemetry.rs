//! Issue 42 through the binary: `/metrics` scraped by a real Prometheus (Debian's package,
//! started here on loopback in a temp dir) agrees with the ledger; who may read it; bounded
//! labels under 1,000 client-chosen model names; OTLP/HTTP spans received by a small receiver
//! in this test (a failover: the request span and its two attempt children); a dead collector
//! costs nothing but spans; no key, token or prompt text in any of it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use switchyard_mock_provider::{Behaviour, KeyScript, MockProvider};

use crate::common::{post, run, serve_with, Served, TestResult};

const KEY_A: &str = "sk-canary-telemetry-a-4c1e9b";
const KEY_B: &str = "sk-canary-telemetry-b-77d0aa";
const PROMPT: &str = "PROMPT-CANARY-telemetry-91f3";

fn free_port() -> Result<u16, Box<dyn std::error::Error>> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A raw `GET path` with `headers` (lines ending in CRLF); the raw answer.
fn get(addr: &str, path: &str, headers: &str) -> Result<String, Box<dyn std::error::Error>> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.write_all(format!("GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n{headers}connection: close\r\n\r\n").as_bytes())?;
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    Ok(answer)
}

/// One messages call for `model` with the prompt canary.
fn call(addr: &str, token: &str, model: &str) -> Result<String, Box<dyn std::error::Error>> {
    let body = format!(r#"{{"model":"{model}","max_tokens":8,"messages":[{{"role":"user","content":"{PROMPT}"}}]}}"#);
    let headers = format!("x-api-key: {token}\r\nanthropic-version: 2023-06-01\r\n");
    post(addr, "/c/c/v1/messages", &headers, &body)
}

fn relay(d: &Path, extra: &[&str], env: &[(&str, &str)]) -> Result<Served, Box<dyn std::error::Error>> {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("switchyard"));
    cmd.arg("--data-dir").arg(d).args(["relay", "serve", "--listen", "127.0.0.1:0"]).args(extra);
    cmd.env_remove("OTEL_EXPORTER_OTLP_ENDPOINT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    serve_with(cmd)
}

/// A legacy connection `c` (model m1) on the mock, with its key `KEY_A`.
fn legacy(d: &Path, base: &str) -> TestResult {
    let add =
        ["connection", "add", "c", "--protocol", "anthropic", "--base-url", base, "--model", "m1", "--secret-stdin"];
    let added = run(d, &add, Some(KEY_A))?;
    assert_eq!(added.code, 0, "connection added: {}", added.stderr);
    Ok(())
}

/// The mock serving `KEY_A`, a data dir with the legacy connection `c` on it, and the install's
/// relay token.
async fn legacy_with_token() -> Result<(MockProvider, tempfile::TempDir, String), Box<dyn std::error::Error>> {
    let mock = MockProvider::start().await?;
    mock.set_key(KEY_A, KeyScript::new(["m1"]));
    let dir = tempfile::tempdir()?;
    legacy(dir.path(), &mock.base_url())?;
    let install = run(dir.path(), &["relay", "token"], None)?.stdout.trim().to_string();
    Ok((mock, dir, install))
}

fn user(d: &Path, name: &str, role: &str) -> Result<String, Box<dyn std::error::Error>> {
    let out = run(d, &["--json", "relay", "users", "add", name, "--role", role], None)?;
    let token = serde_json::from_str::<Value>(&out.stdout)?["token"].as_str().unwrap_or_default().to_string();
    assert!(token.starts_with("syu_"), "{name}: a user token ({})", out.stderr);
    Ok(token)
}

/// Prometheus from Debian's package on loopback, scraping `target` every second.
struct Prometheus {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    fn start(target: &str) -> Result<Self, Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: switchyard\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )?;
        let port = free_port()?;
        let binary = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .ok_or("prometheus is not installed: run scripts/setup-system --tests")?;
        let child = Command::new(binary)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        Ok(Prometheus { child, url: format!("http://127.0.0.1:{port}"), _dir: dir })
    }

    /// The value of an instant `query` (its first sample), if it has one.
    async fn value(&self, query: &str) -> Option<f64> {
        let url = format!("{}/api/v1/query", self.url);
        let answer = reqwest::Client::new().get(url).query(&[("query", query)]).send().await.ok()?;
        let body: Value = answer.json().await.ok()?;
        body["data"]["result"][0]["value"][1].as_str()?.parse().ok()
    }

    /// The whole answer of an instant `query`.
    async fn answer(&self, query: &str) -> Result<Value, Box<dyn std::error::Error>> {
        let url = format!("{}/api/v1/query", self.url);
        Ok(reqwest::Client::new().get(url).query(&[("query", query)]).send().await?.json().await?)
    }

    /// Waits until `query` equals `want` (scrapes are every second); the last value seen.
    async fn wait_for(&self, query: &str, want: f64) -> Option<f64> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut last = None;
        while Instant::now() < deadline {
            last = self.value(query).await;
            if last == Some(want) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        last
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_reads_what_the_ledger_holds_and_only_admins_read_metrics() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key(KEY_A, KeyScript::new(["m1"]).quota(1000, 900));
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    legacy(d, &mock.base_url())?;
    let (ana, root) = (user(d, "ana", "user")?, user(d, "root", "admin")?);
    let install = run(d, &["relay", "token"], None)?.stdout.trim().to_string();
    let metrics_port = free_port()?;
    let metrics_at = format!("127.0.0.1:{metrics_port}");
    let served = relay(d, &["--metrics-listen", &metrics_at], &[])?;
    let addr = served.addr.clone();

    // Who may read it.
    let none = get(&addr, "/metrics", "")?;
    assert!(none.starts_with("HTTP/1.1 401"), "no token on the relay's port: 401 ({none:.60})");
    let as_user = get(&addr, "/metrics", &format!("authorization: Bearer {ana}\r\n"))?;
    assert!(as_user.starts_with("HTTP/1.1 403"), "a user token never reaches an admin surface ({as_user:.60})");
    let as_admin = get(&addr, "/metrics", &format!("authorization: Bearer {root}\r\n"))?;
    assert!(as_admin.starts_with("HTTP/1.1 200"), "an admin token reads it ({as_admin:.60})");
    assert!(as_admin.contains("application/openmetrics-text"), "in the text format Prometheus reads");
    let as_install = get(&addr, "/metrics", &format!("x-api-key: {install}\r\n"))?;
    assert!(as_install.starts_with("HTTP/1.1 200"), "the install token from loopback reads it ({as_install:.60})");
    let tokenless = get(&metrics_at, "/metrics", "")?;
    assert!(tokenless.starts_with("HTTP/1.1 200"), "--metrics-listen needs no token ({tokenless:.60})");
    let wide = run(d, &["relay", "serve", "--listen", "127.0.0.1:0", "--metrics-listen", "0.0.0.0:0"], None)?;
    assert_ne!(wide.code, 0, "tokenless metrics beyond loopback need TLS: refused ({})", wide.stderr);
    assert!(wide.stderr.contains("metrics-listen"), "saying which flag: {}", wide.stderr);
    let elsewhere = get(&metrics_at, "/c/c/v1/models", &format!("x-api-key: {install}\r\n"))?;
    assert!(elsewhere.starts_with("HTTP/1.1 404"), "the metrics listener serves nothing else ({elsewhere:.60})");

    let prometheus = Prometheus::start(&metrics_at)?;
    assert_eq!(prometheus.wait_for("up", 1.0).await, Some(1.0), "Prometheus scrapes the relay");
    // Spread over a few scrapes, so the dashboard's rates see them arrive.
    let (by_ana, by_install) = (7, 5);
    for i in 0..by_ana + by_install {
        let a = call(&addr, if i < by_ana { &ana } else { &install }, "m1")?;
        assert!(a.starts_with("HTTP/1.1 200"), "served: {a:.80}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let requests = prometheus.wait_for("sum(switchyard_requests_total)", f64::from(by_ana + by_install)).await;
    let ana_requests = prometheus.value("sum(switchyard_user_requests_total{user=\"ana\"})").await;
    let input = prometheus.value("sum(gen_ai_client_token_usage_sum{gen_ai_token_type=\"input\"})").await;
    let output = prometheus.value("sum(gen_ai_client_token_usage_sum{gen_ai_token_type=\"output\"})").await;
    let delivered = prometheus.value("sum(switchyard_requests_total{outcome=\"delivered\",model=\"m1\"})").await;
    let text = get(&metrics_at, "/metrics", "")?;
    dashboard_panels(&prometheus).await?;
    assert!(served.stop()?, "the relay stops cleanly");

    let attempts = run(d, &["--json", "attempts", "c", "--limit", "1000"], None)?;
    assert_eq!(attempts.code, 0, "{}", attempts.stderr);
    let rows: Vec<Value> = serde_json::from_str(&attempts.stdout)?;
    let sum = |k: &str| rows.iter().filter_map(|r| r[k].as_f64()).sum::<f64>();
    let ledger_requests = rows.len() as f64;
    assert_eq!(
        requests,
        Some(ledger_requests),
        "Prometheus counts the requests the ledger holds ({} rows)",
        rows.len()
    );
    assert_eq!(delivered, Some(ledger_requests), "each delivered, on the configured model");
    assert_eq!(ana_requests, Some(f64::from(by_ana)), "ana's own requests");
    assert!(sum("input_tokens") > 0.0, "the mock reports usage");
    assert_eq!(input, Some(sum("input_tokens")), "the input tokens Prometheus sums are the ledger's");
    assert_eq!(output, Some(sum("output_tokens")), "and the output tokens");

    for family in [
        "switchyard_requests_total",
        "switchyard_attempts_total",
        "gen_ai_client_token_usage_bucket",
        "gen_ai_client_operation_duration_seconds_bucket",
        "gen_ai_client_operation_time_to_first_chunk_seconds_bucket",
    ] {
        assert!(text.contains(family), "{family} is exposed:\n{text}");
    }
    assert!(!text.contains("switchyard_limit_remaining"), "no limits: the family is absent, not zero");
    for canary in [KEY_A, ana.as_str(), root.as_str(), install.as_str(), PROMPT] {
        assert!(!text.contains(canary), "no key, token or prompt text in /metrics");
    }
    Ok(())
}

/// Every panel query of docs/team-relay/grafana-dashboard.json runs on Prometheus, and the
/// traffic panels show this run's traffic (a panel naming a metric that does not exist would
/// come back empty). With SWITCHYARD_DASHBOARD_OUT set, the answers are written there.
async fn dashboard_panels(prometheus: &Prometheus) -> TestResult {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../docs/team-relay/grafana-dashboard.json");
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let panels = dashboard["panels"].as_array().ok_or("panels")?;
    assert!(panels.len() >= 10, "the dashboard has its panels");
    // rate() needs two scrapes after the traffic.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut report = String::new();
    for panel in panels {
        let (title, expr) = (panel["title"].as_str().unwrap_or(""), panel["targets"][0]["expr"].as_str().unwrap_or(""));
        let answer = prometheus.answer(expr).await?;
        assert_eq!(answer["status"], "success", "{title}: {expr} is a valid query: {answer}");
        let result = answer["data"]["result"].as_array().cloned().unwrap_or_default();
        let shown: Vec<String> = result.iter().map(|r| format!("{} {}", r["metric"], r["value"][1])).collect();
        report.push_str(&format!("## {title}\n{expr}\n{}\n\n", shown.join("\n")));
        let traffic = [
            "Requests per second",
            "Tokens per second",
            "Operation duration",
            "Time to first chunk",
            "Requests per user",
        ];
        if traffic.iter().any(|t| title.starts_with(t)) {
            let shows = result
                .iter()
                .any(|r| r["value"][1].as_str().and_then(|v| v.parse::<f64>().ok()).is_some_and(|v| v > 0.0));
            assert!(shows, "{title}: {expr} shows this run's traffic: {answer}");
        }
    }
    if let Ok(out) = std::env::var("SWITCHYARD_DASHBOARD_OUT") {
        std::fs::write(out, report)?;
    }
    Ok(())
}

/// Every label value of every series in `text` (the exposition), by family.
fn label_values(text: &str) -> BTreeMap<String, Vec<BTreeMap<String, String>>> {
    let mut out: BTreeMap<String, Vec<BTreeMap<String, String>>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (name, rest) = line.split_once('{').unwrap_or((line.split(' ').next().unwrap_or(""), ""));
        let labels = rest.rsplit_once('}').map_or("", |(l, _)| l);
        let mut set = BTreeMap::new();
        for pair in labels.split("\",").filter(|p| !p.is_empty()) {
            if let Some((k, v)) = pair.split_once("=\"") {
                set.insert(k.trim_start_matches(',').to_string(), v.trim_end_matches('"').to_string());
            }
        }
        set.remove("le");
        out.entry(name.to_string()).or_default().push(set);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_made_up_models_add_one_other_series_per_family() -> TestResult {
    let (_mock, dir, install) = legacy_with_token().await?;
    let d = dir.path();
    let served = relay(d, &[], &[])?;
    let addr = served.addr.clone();
    let auth = format!("x-api-key: {install}\r\n");
    assert!(call(&addr, &install, "m1")?.starts_with("HTTP/1.1 200"), "the configured model is served");
    // The ledger's writer counts within its linger (100 ms).
    tokio::time::sleep(Duration::from_millis(600)).await;
    let before = label_values(&get(&addr, "/metrics", &auth)?);
    let mut made_up = Vec::new();
    for i in 0..1000u32 {
        let model = format!("made-up-{:08x}", i.wrapping_mul(2_654_435_761));
        let a = call(&addr, &install, &model)?;
        assert!(a.starts_with("HTTP/1.1 404"), "the mock knows no such model: {a:.80}");
        made_up.push(model);
    }
    // The ledger's writer counts within its linger (100 ms).
    tokio::time::sleep(Duration::from_millis(600)).await;
    let text = get(&addr, "/metrics", &auth)?;
    assert!(served.stop()?, "the relay stops cleanly");
    for model in &made_up {
        assert!(!text.contains(model.as_str()), "{model}: a client's model name is never a label value");
    }
    let after = label_values(&text);
    for (family, series) in &after {
        let others: BTreeSet<&BTreeMap<String, String>> =
            series.iter().filter(|s| s.values().any(|v| v == "other")).collect();
        let series_before: BTreeSet<&BTreeMap<String, String>> =
            before.get(family).map(|s| s.iter().collect()).unwrap_or_default();
        let new: BTreeSet<_> = series.iter().filter(|s| !series_before.contains(s)).collect();
        assert!(others.len() <= 1, "{family}: at most one `other` series, found {others:?}");
        assert!(new.len() <= 1, "{family}: 1,000 made-up models added at most one series: {new:?}");
        for s in series {
            if let Some(m) = s.get("model").or_else(|| s.get("gen_ai_request_model")) {
                assert!(["m1", "other", ""].contains(&m.as_str()), "{family}: model label {m} is configured or other");
            }
        }
    }
    assert!(
        after
            .get("switchyard_requests_total")
            .is_some_and(|s| s.iter().any(|l| l.get("model").map(String::as_str) == Some("other"))),
        "the made-up models were counted, as `other`"
    );
    Ok(())
}

/// What an OTLP/HTTP receiver got: each request's content type and body.
/// One export request: its content type and body.
type Export = (String, Vec<u8>);

#[derive(Clone, Default)]
pub(crate) struct Received(Arc<Mutex<Vec<Export>>>);

impl Received {
    /// Listens on a free loopback port: answers every POST 200 `{}` and keeps it.
    pub(crate) fn listen(&self) -> Result<u16, Box<dyn std::error::Error>> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let kept = self.0.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let kept = kept.clone();
                std::thread::spawn(move || serve_otlp(stream, &kept));
            }
        });
        Ok(port)
    }

    pub(crate) fn bodies(&self) -> Vec<Export> {
        self.0.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

fn serve_otlp(stream: TcpStream, kept: &Mutex<Vec<Export>>) {
    let Ok(mut writer) = stream.try_clone() else { return };
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let (mut length, mut content_type) = (0usize, String::new());
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((k, v)) = header.split_once(':') {
                match k.trim().to_ascii_lowercase().as_str() {
                    "content-length" => length = v.trim().parse().unwrap_or(0),
                    "content-type" => content_type = v.trim().to_string(),
                    _ => {}
                }
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        if let Ok(mut v) = kept.lock() {
            v.push((content_type, body));
        }
        let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

/// Every span in OTLP/JSON export requests.
fn spans_of(bodies: &[Export]) -> Vec<Value> {
    let mut spans = Vec::new();
    for (_, body) in bodies {
        let Ok(v) = serde_json::from_slice::<Value>(body) else { continue };
        for rs in v["resourceSpans"].as_array().into_iter().flatten() {
            for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
                spans.extend(ss["spans"].as_array().into_iter().flatten().cloned());
            }
        }
    }
    spans
}

/// An attribute's value as text (OTLP/JSON writes an int64 as a string or a number).
fn attribute(span: &Value, key: &str) -> Option<String> {
    let kv = span["attributes"].as_array()?.iter().find(|a| a["key"] == key)?;
    let v = kv["value"].get("stringValue").or_else(|| kv["value"].get("intValue"))?;
    Some(v.as_str().map_or_else(|| v.to_string(), str::to_string))
}

/// Two keys under priority routing; the first answers 429, the second serves.
fn failover_pair(d: &Path, mock: &MockProvider) -> TestResult {
    mock.set_key(KEY_A, KeyScript::new(["m1"]));
    mock.set_key(KEY_B, KeyScript::new(["m1"]));
    legacy(d, &mock.base_url())?;
    let b = run(d, &["profile", "add", "c", "--label", "b", "--secret-stdin"], Some(KEY_B))?;
    assert_eq!(b.code, 0, "{}", b.stderr);
    assert_eq!(run(d, &["verify", "c"], None)?.code, 0, "both keys verified");
    let on = run(d, &["routing", "activate", "c", "priority"], None)?;
    assert_eq!(on.code, 0, "priority routing on: {}", on.stderr);
    mock.set_key(KEY_A, KeyScript::new(["m1"]).behaviour(Behaviour::rate_limited(600)));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failover_is_one_request_span_with_two_attempt_children() -> TestResult {
    let mock = MockProvider::start().await?;
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    failover_pair(d, &mock)?;
    let ana = user(d, "ana", "user")?;
    let received = Received::default();
    let port = received.listen()?;
    let endpoint = format!("http://127.0.0.1:{port}");
    let served = relay(d, &["--otlp-endpoint", &endpoint], &[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")])?;
    let answer = call(&served.addr, &ana, "m1")?;
    assert!(answer.starts_with("HTTP/1.1 200"), "the second key serves: {answer:.80}");
    tokio::time::sleep(Duration::from_millis(400)).await;
    let install = run(d, &["relay", "token"], None)?.stdout.trim().to_string();
    let text = get(&served.addr, "/metrics", &format!("x-api-key: {install}\r\n"))?;
    assert!(served.stop()?, "the relay stops cleanly (its spans flushed)");
    let line = |prefix: &str| text.lines().find(|l| l.starts_with(prefix)).map(str::to_string);
    let moved =
        line("switchyard_failovers_total{connection=\"c\",pool=\"\",kind=\"failover\",reason=\"rate_limited\"}");
    assert!(moved.is_some_and(|l| l.ends_with(" 1")), "one failover for rate_limited:\n{text}");
    let open = text.lines().find(|l| l.starts_with("switchyard_circuit_open{") && l.contains("kind=\"rate_limited\""));
    assert!(open.is_some_and(|l| l.ends_with(" 1.0") || l.ends_with(" 1")), "the first key's circuit is open:\n{text}");

    let bodies = received.bodies();
    assert!(!bodies.is_empty(), "the receiver got an export");
    assert!(bodies.iter().all(|(t, _)| t.starts_with("application/json")), "http/json as asked");
    let spans = spans_of(&bodies);
    let requests: Vec<&Value> = spans.iter().filter(|s| s["kind"] == 2).collect();
    assert_eq!(requests.len(), 1, "one request span (kind server): {spans:#?}");
    let request = requests[0];
    assert_eq!(request["name"], "chat m1", "named {{operation}} {{model}}");
    let children: Vec<&Value> = spans.iter().filter(|s| s["parentSpanId"] == request["spanId"]).collect();
    assert_eq!(children.len(), 2, "one child per attempt: {spans:#?}");
    for c in &children {
        assert_eq!(c["traceId"], request["traceId"], "in the request's trace");
        assert_eq!(c["kind"], 3, "an attempt is a client span");
        assert_eq!(attribute(c, "gen_ai.operation.name"), Some("chat".to_string()));
        assert_eq!(attribute(c, "gen_ai.provider.name"), Some("anthropic".to_string()));
        assert_eq!(attribute(c, "gen_ai.request.model"), Some("m1".to_string()));
        assert_eq!(attribute(c, "switchyard.connection"), Some("c".to_string()));
        assert_eq!(attribute(c, "switchyard.user"), Some("ana".to_string()));
    }
    let second = children.iter().find(|c| attribute(c, "switchyard.attempt") == Some("2".to_string()));
    let second = second.ok_or("an attempt numbered 2")?;
    assert_eq!(attribute(second, "switchyard.reason"), Some("failover:rate_limited".to_string()), "why it moved");
    assert_eq!(attribute(second, "switchyard.profile"), Some("b".to_string()), "the label, never the key");
    let first = children.iter().find(|c| attribute(c, "switchyard.attempt") == Some("1".to_string()));
    assert_eq!(first.and_then(|f| attribute(f, "error.type")), Some("rate_limited".to_string()), "the first failed");
    for key in ["gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.response.model"] {
        assert!(attribute(request, key).is_some(), "the request span carries {key}: {request:#}");
    }
    let all: String = bodies.iter().map(|(_, b)| String::from_utf8_lossy(b).into_owned()).collect();
    for canary in [KEY_A, KEY_B, ana.as_str(), PROMPT] {
        assert!(!all.contains(canary), "no key, token or prompt text in an exported span");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_go_as_protobuf_by_default_and_a_dead_collector_costs_nothing() -> TestResult {
    let (_mock, dir, install) = legacy_with_token().await?;
    let d = dir.path();
    let received = Received::default();
    let port = received.listen()?;
    // The collector named by the standard variable, protobuf (the protocol's default).
    let endpoint = format!("http://127.0.0.1:{port}");
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("switchyard"));
    cmd.arg("--data-dir").arg(d).args(["relay", "serve", "--listen", "127.0.0.1:0"]);
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint).env_remove("OTEL_EXPORTER_OTLP_PROTOCOL");
    let served = serve_with(cmd)?;
    assert!(call(&served.addr, &install, "m1")?.starts_with("HTTP/1.1 200"));
    assert!(served.stop()?);
    let bodies = received.bodies();
    let types: Vec<&str> = bodies.iter().map(|(t, _)| t.as_str()).collect();
    assert!(types.contains(&"application/x-protobuf"), "http/protobuf by default: {types:?}");
    let raw: Vec<u8> = bodies.iter().flat_map(|(_, b)| b.clone()).collect();
    let has = |needle: &str| raw.windows(needle.len()).any(|w| w == needle.as_bytes());
    assert!(has("chat m1") && has("gen_ai.request.model"), "the span's name and attributes are in the export");
    assert!(!has(KEY_A) && !has(PROMPT) && !has(&install), "no key, token or prompt in it");

    // Nobody listens at the endpoint: every request is served all the same.
    let dead = format!("http://127.0.0.1:{}", free_port()?);
    let served = relay(d, &["--otlp-endpoint", &dead], &[])?;
    for _ in 0..20 {
        let a = call(&served.addr, &install, "m1")?;
        assert!(a.starts_with("HTTP/1.1 200"), "served with the collector down: {a:.80}");
    }
    assert!(served.stop()?, "and the relay stops cleanly");
    Ok(())
}
