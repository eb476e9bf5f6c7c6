//! Gemini through the relay (issue 30), mock provider ← relay ← reqwest client: the
//! `/c/SLUG/v1beta/models/{model}:method` routes with the relay token in `x-goog-api-key` or
//! `?key=` (stripped), the profile's key only in the upstream `x-goog-api-key` header, the model
//! read from the path (mapping rewrites the path), legacy byte for byte, balanced conversations,
//! and the structured quota refusals: per minute cools (key, model) for the retry delay, per day
//! until the next Pacific midnight (across a DST change), a bare `RESOURCE_EXHAUSTED` never fails
//! over. No key reaches a URL the mock saw or a trace-level log line.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{json, Value};
use switchyard_mock_provider::{Behaviour, GeminiRefusal, KeyScript};

use crate::common::{header, relay, relay_stepped, relay_stepped_at, relay_with, Key, Relay, TestResult};

const FLASH: &str = "gemini-2.5-flash";
const PRO: &str = "gemini-2.5-pro";

fn key<'a>(label: &'a str, secret: &'a str, script: KeyScript) -> Key<'a> {
    Key { label, secret, weight: 1, script }
}

/// A `generateContent` body: a system instruction and `contents`.
fn body(contents: Vec<Value>) -> Value {
    json!({"systemInstruction": {"parts": [{"text": "You are a coding agent."}]}, "contents": contents})
}

fn user(text: &str) -> Value {
    json!({"role": "user", "parts": [{"text": text}]})
}

/// POSTs `body` to `/c/c/v1beta/models/{model}:{method_and_query}` with the relay token in
/// `x-goog-api-key`.
async fn call(r: &Relay, model: &str, method_and_query: &str, body: &Value) -> reqwest::Result<reqwest::Response> {
    r.http
        .post(format!("{}/c/c/v1beta/models/{model}:{method_and_query}", r.url))
        .header("x-goog-api-key", &r.token)
        .json(body)
        .send()
        .await
}

/// The label of the profile that served (`x-switchyard-profile` is its id).
async fn served_by(r: &Relay, resp: &reqwest::Response) -> Result<String, Box<dyn std::error::Error>> {
    let id = header(resp, "x-switchyard-profile");
    let profiles = r.engine.profile_list("c").await?;
    Ok(profiles.into_iter().find(|p| p.id == id).map(|p| p.label).unwrap_or_default())
}

/// The quota view's learned windows: (label, kind, model, reset), written to the store first.
async fn learned(
    r: &Relay,
) -> Result<Vec<(String, String, Option<String>, Option<String>)>, Box<dyn std::error::Error>> {
    r.router.flush_quota().await;
    let view = r.engine.quota("c").await?;
    Ok(view
        .profiles
        .into_iter()
        .flat_map(|p| {
            let label = p.label.clone();
            p.windows.into_iter().map(move |w| {
                assert_eq!(w.status.as_deref(), Some("rejected"), "a learned window is a spent one");
                (label.clone(), w.kind, w.model, w.resets_at)
            })
        })
        .collect())
}

/// Every request the mock saw presented a profile key in `x-goog-api-key`, none in its URL,
/// and never the relay token.
fn assert_keys_only_in_headers(r: &Relay, profile_keys: &[&str]) {
    assert!(r.mock.keys_seen_in_urls().is_empty(), "no key ever reached the provider in a URL");
    for req in r.mock.requests() {
        let sent = req.header("x-goog-api-key").unwrap_or_default().to_string();
        assert!(
            profile_keys.contains(&sent.as_str()),
            "{}: the profile's key in x-goog-api-key, got {sent:?}",
            req.path
        );
        assert!(!req.query.as_deref().unwrap_or("").contains("key="), "{}: no key in the query", req.path);
        for (name, value) in &req.headers {
            assert!(
                !value.as_bytes().windows(r.token.len()).any(|w| w == r.token.as_bytes()),
                "the relay token never goes upstream ({name})"
            );
        }
    }
}

/// `bytes` with the mock's per-answer counter in `"responseId":"mock-gemini-N"` blanked (two
/// answers differ only there).
fn without_response_ids(bytes: &[u8]) -> Vec<u8> {
    let marker = b"mock-gemini-";
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(marker) {
            out.extend_from_slice(marker);
            i += marker.len();
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            out.push(b'#');
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_passes_every_gemini_call_byte_for_byte_with_the_profile_key_in_the_header() -> TestResult {
    let r = relay("gemini", &[FLASH], vec![key("a", "g-canary-legacy-a", KeyScript::new([FLASH]))], None).await?;
    let request = body(vec![user("hello")]);
    for method in ["generateContent", "streamGenerateContent", "streamGenerateContent?alt=sse", "countTokens"] {
        let relayed = call(&r, FLASH, method, &request).await?;
        let status = relayed.status();
        let content_type = header(&relayed, "content-type");
        let relayed = relayed.bytes().await?;
        let direct = r
            .http
            .post(format!("{}/v1beta/models/{FLASH}:{method}", r.mock.base_url()))
            .header("x-goog-api-key", "g-canary-legacy-a")
            .json(&request)
            .send()
            .await?;
        assert_eq!(status, direct.status(), "{method}: the provider's status");
        assert_eq!(content_type, header(&direct, "content-type"), "{method}: the provider's content type");
        assert_eq!(
            without_response_ids(&relayed),
            without_response_ids(&direct.bytes().await?),
            "{method}: legacy relays the answer byte for byte (but the mock's per-answer responseId)"
        );
    }
    let sent: Vec<_> = r.mock.requests().into_iter().map(|q| (q.path.clone(), q.body.clone())).collect();
    assert!(
        sent.iter().all(|(_, b)| serde_json::from_slice::<Value>(b).ok() == Some(request.clone())),
        "the body went upstream as the client sent it"
    );
    assert_eq!(r.mock.hits_for("g-canary-legacy-a", FLASH), 8, "four through the relay, four direct");
    assert_keys_only_in_headers(&r, &["g-canary-legacy-a"]);
    let r = r.stop().await?;
    let ledger = r.engine.attempts("c", 100).await?;
    assert_eq!(ledger.len(), 4, "one row per relayed call");
    assert!(ledger.iter().all(|a| a.model.as_deref() == Some(FLASH)), "the ledger's model comes from the path");
    let generated = ledger.iter().filter(|a| a.output_tokens.is_some()).count();
    assert_eq!(generated, 3, "usageMetadata read from the JSON answer, the JSON-array and the SSE stream");
    assert!(!r.data_dir_text().contains("canary"), "no key in the data dir");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_relay_token_in_a_key_query_is_accepted_and_stripped_before_upstream() -> TestResult {
    let r = relay("gemini", &[FLASH], vec![key("a", "g-canary-query-a", KeyScript::new([FLASH]))], None).await?;
    let url = format!("{}/c/c/v1beta/models/{FLASH}:streamGenerateContent?alt=sse&key={}", r.url, r.token);
    let resp = r.http.post(url).json(&body(vec![user("hi")])).send().await?;
    assert_eq!(resp.status(), 200, "?key= carries the relay token");
    assert!(resp.text().await?.contains("data:"), "the SSE stream came through");
    let wrong = format!("{}/c/c/v1beta/models/{FLASH}:generateContent?key=sy_wrong", r.url);
    let refused = r.http.post(wrong).json(&body(vec![user("hi")])).send().await?;
    assert_eq!(refused.status(), 401, "a wrong ?key= is refused like a wrong header");
    let seen = r.mock.requests();
    assert_eq!(seen.len(), 1, "only the accepted call went upstream");
    assert_eq!(seen[0].query.as_deref(), Some("alt=sse"), "the query went upstream without its key");
    assert_keys_only_in_headers(&r, &["g-canary-query-a"]);
    r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mapped_model_rewrites_the_path_and_leaves_the_body_alone() -> TestResult {
    let r = relay_with(
        "gemini",
        &["fast", PRO],
        &["fast=gemini-2.5-flash"],
        vec![key("a", "g-map-a", KeyScript::new([FLASH, PRO])), key("b", "g-map-b", KeyScript::new([FLASH, PRO]))],
        Some("balanced"),
    )
    .await?;
    let request = body(vec![user("hello")]);
    let resp = call(&r, "fast", "generateContent", &request).await?;
    assert_eq!(resp.status(), 200, "the client's name is mapped: {}", resp.text().await?);
    let seen = r.mock.requests();
    assert_eq!(seen.len(), 1, "one attempt");
    assert_eq!(seen[0].path, format!("/v1beta/models/{FLASH}:generateContent"), "the path names the mapped model");
    assert_eq!(seen[0].json(), Some(request), "the body is untouched");
    let listed: Value = r
        .http
        .get(format!("{}/c/c/v1beta/models", r.url))
        .header("x-goog-api-key", &r.token)
        .send()
        .await?
        .json()
        .await?;
    let names: Vec<&str> =
        listed["models"].as_array().into_iter().flatten().filter_map(|m| m["name"].as_str()).collect();
    assert!(
        names.contains(&"models/gemini-2.5-pro"),
        "a routed connection lists its models in Gemini's shape: {listed}"
    );
    r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn balanced_spreads_conversations_and_keeps_each_on_its_key() -> TestResult {
    let r = relay(
        "gemini",
        &[FLASH],
        vec![key("a", "g-bal-a", KeyScript::new([FLASH])), key("b", "g-bal-b", KeyScript::new([FLASH]))],
        Some("balanced"),
    )
    .await?;
    let mut first = Vec::new();
    for i in 0..10 {
        let resp = call(&r, FLASH, "streamGenerateContent?alt=sse", &body(vec![user(&format!("task {i}"))])).await?;
        assert_eq!(resp.status(), 200, "conversation {i} starts");
        first.push(served_by(&r, &resp).await?);
        resp.bytes().await?;
    }
    let on_a = first.iter().filter(|l| *l == "a").count();
    assert_eq!(on_a, 5, "1:1 weights spread ten conversations 5:5: {first:?}");
    for (i, label) in first.iter().enumerate() {
        let contents = vec![
            user(&format!("task {i}")),
            json!({"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]}),
            json!({"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"files": ["a.rs"]}}}]}),
        ];
        let resp = call(&r, FLASH, "streamGenerateContent", &body(contents)).await?;
        assert_eq!(&served_by(&r, &resp).await?, label, "conversation {i}'s tool round stays on its key");
        resp.bytes().await?;
    }
    r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_per_minute_quota_fails_over_before_output_and_cools_only_that_model_for_the_retry_delay() -> TestResult {
    let limited = KeyScript::new([FLASH, PRO])
        .model(FLASH, Behaviour::Gemini(GeminiRefusal::QuotaPerMinute { retry_delay_secs: 30 }));
    let keys = vec![key("a", "g-min-a", limited), key("b", "g-min-b", KeyScript::new([FLASH, PRO]))];
    let (r, clock) = relay_stepped("gemini", &[FLASH, PRO], keys, Some("priority")).await?;
    let resp = call(&r, FLASH, "streamGenerateContent?alt=sse", &body(vec![user("one")])).await?;
    assert_eq!(resp.status(), 200, "served by the other key");
    assert_eq!(header(&resp, "x-switchyard-reason"), "failover:rate_limited", "a per-minute quota is a rate limit");
    assert_eq!(served_by(&r, &resp).await?, "b");
    resp.bytes().await?;
    let cooling: Vec<_> = r
        .engine
        .routing_status("c")
        .await?
        .profiles
        .into_iter()
        .find(|p| p.label == "a")
        .map(|p| {
            p.health.into_iter().filter(|h| h.state != switchyard_engine::CircuitState::Closed).collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let circuits: Vec<(Option<&str>, Option<&str>, Option<&str>)> =
        cooling.iter().map(|h| (h.model.as_deref(), h.kind.as_deref(), h.until.as_deref())).collect();
    assert_eq!(
        circuits,
        [(Some(FLASH), Some("rate_limited"), Some("2025-01-01T00:00:30.000Z"))],
        "only (a, flash) cools, for RetryInfo's 30 s"
    );
    assert_eq!(
        learned(&r).await?,
        [(
            "a".to_string(),
            "per_minute".to_string(),
            Some(FLASH.to_string()),
            Some("2025-01-01T00:00:30.000Z".to_string())
        )],
        "the quota view shows the per-minute state learned from the refusal; b's quota is unknown (no reading)"
    );
    let pro = call(&r, PRO, "generateContent", &body(vec![user("pro")])).await?;
    assert_eq!(
        (served_by(&r, &pro).await?.as_str(), header(&pro, "x-switchyard-attempts").as_str()),
        ("a", "1"),
        "a still serves pro"
    );
    let again = call(&r, FLASH, "generateContent", &body(vec![user("two")])).await?;
    assert_eq!(served_by(&r, &again).await?, "b", "flash avoids a while it cools");
    assert_eq!(r.mock.hits_for("g-min-a", FLASH), 1, "a was asked for flash once");
    r.mock.set_key("g-min-a", KeyScript::new([FLASH, PRO]));
    clock.step(31_000);
    let back = call(&r, FLASH, "generateContent", &body(vec![user("three")])).await?;
    assert_eq!(served_by(&r, &back).await?, "a", "after the retry delay a serves flash again");
    r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_per_day_quota_cools_until_the_next_pacific_midnight_across_a_dst_change() -> TestResult {
    // 2026-03-08 01:30 PST (09:30Z): clocks spring forward at 02:00, so the next Pacific
    // midnight is 2026-03-09 00:00 PDT = 07:00Z, 21.5 hours later (a fixed -8 h would say 08:00Z).
    let start = 1_772_962_200_000;
    let daily = KeyScript::new([FLASH, PRO]).model(FLASH, Behaviour::Gemini(GeminiRefusal::QuotaPerDay));
    let keys = vec![key("a", "g-day-a", daily), key("b", "g-day-b", KeyScript::new([FLASH, PRO]))];
    let (r, clock) = relay_stepped_at(start, "gemini", &[FLASH, PRO], keys, Some("priority")).await?;
    let resp = call(&r, FLASH, "generateContent", &body(vec![user("one")])).await?;
    assert_eq!(resp.status(), 200, "served by the other key");
    assert_eq!(header(&resp, "x-switchyard-reason"), "failover:quota_exhausted", "a per-day quota is exhausted");
    let status = r.engine.routing_status("c").await?;
    let a = status.profiles.into_iter().find(|p| p.label == "a").ok_or("a is listed")?;
    let circuits: Vec<(Option<String>, Option<String>)> = a
        .health
        .into_iter()
        .filter(|h| h.state != switchyard_engine::CircuitState::Closed)
        .map(|h| (h.model, h.until))
        .collect();
    assert_eq!(
        circuits,
        [(Some(FLASH.to_string()), Some("2026-03-09T07:00:00.000Z".to_string()))],
        "(a, flash) cools until midnight Pacific daylight time; a keeps its other models"
    );
    assert_eq!(
        learned(&r).await?,
        [(
            "a".to_string(),
            "per_day".to_string(),
            Some(FLASH.to_string()),
            Some("2026-03-09T07:00:00.000Z".to_string())
        )],
        "the quota view shows the per-day state with its Pacific-midnight reset"
    );
    r.mock.set_key("g-day-a", KeyScript::new([FLASH, PRO]));
    clock.step(21 * 3_600_000 + 29 * 60_000);
    let before = call(&r, FLASH, "generateContent", &body(vec![user("a minute before")])).await?;
    assert_eq!(served_by(&r, &before).await?, "b", "a minute before the reset a still cools");
    clock.step(2 * 60_000);
    let mut after = Vec::new();
    for i in 0..2 {
        let resp = call(&r, FLASH, "generateContent", &body(vec![user(&format!("after {i}"))])).await?;
        after.push(served_by(&r, &resp).await?);
    }
    assert!(after.contains(&"a".to_string()), "past Pacific midnight a serves flash again: {after:?}");
    r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_resource_exhausted_never_fails_over_and_reaches_the_client() -> TestResult {
    let bare = KeyScript::new([FLASH]).behaviour(Behaviour::Gemini(GeminiRefusal::ResourceExhausted));
    let keys = vec![key("a", "g-bare-a", bare), key("b", "g-bare-b", KeyScript::new([FLASH]))];
    let (r, _clock) = relay_stepped("gemini", &[FLASH], keys, Some("priority")).await?;
    let resp = call(&r, FLASH, "generateContent", &body(vec![user("one")])).await?;
    assert_eq!(resp.status(), 429, "the provider's answer is passed on");
    assert_eq!(header(&resp, "x-switchyard-attempts"), "1", "no second attempt");
    let text = resp.text().await?;
    assert!(text.contains("RESOURCE_EXHAUSTED"), "in Gemini's shape: {text}");
    assert_eq!(r.mock.hits("g-bare-b"), 0, "the other key was never tried: the refusal is ambiguous");
    let status = r.engine.routing_status("c").await?;
    assert!(
        status.profiles.iter().all(|p| p.health.iter().all(|h| h.state == switchyard_engine::CircuitState::Closed)),
        "no circuit opened"
    );
    r.stop().await?;
    Ok(())
}

/// A writer every relay log line goes to (the test binary's global subscriber, at trace).
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn trace_logs() -> &'static Captured {
    static LOGS: OnceLock<Captured> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Captured::default();
        let writer = logs.clone();
        let _ = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .try_init();
        logs
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_key_reaches_a_trace_log_line_or_an_upstream_url() -> TestResult {
    let logs = trace_logs();
    let keys = vec![
        key(
            "a",
            "g-canary-trace-a",
            KeyScript::new([FLASH])
                .model(FLASH, Behaviour::Gemini(GeminiRefusal::QuotaPerMinute { retry_delay_secs: 5 })),
        ),
        key("b", "g-canary-trace-b", KeyScript::new([FLASH])),
    ];
    let r = relay("gemini", &[FLASH], keys, Some("priority")).await?;
    for method in ["generateContent", "streamGenerateContent", "streamGenerateContent?alt=sse"] {
        let resp = call(&r, FLASH, method, &body(vec![user(method)])).await?;
        assert_eq!(resp.status(), 200, "{method} served");
        resp.bytes().await?;
    }
    let by_query = format!("{}/c/c/v1beta/models/{FLASH}:generateContent?key={}", r.url, r.token);
    assert_eq!(r.http.post(by_query).json(&body(vec![user("q")])).send().await?.status(), 200);
    assert_keys_only_in_headers(&r, &["g-canary-trace-a", "g-canary-trace-b"]);
    let r = r.stop().await?;
    let text = String::from_utf8_lossy(&logs.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)).to_string();
    assert!(text.contains("TRACE"), "the relay logged at trace level (the test reads real lines)");
    assert!(!text.contains("g-canary-trace"), "no profile key in any log line");
    assert!(!text.contains(&r.token), "nor the relay token (it came in a ?key= query too)");
    assert!(!r.data_dir_text().contains("g-canary-trace"), "nor in the data dir");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_breaks_after_output_ends_in_gemini_s_error_shape() -> TestResult {
    let dying = KeyScript::new([FLASH]).behaviour(Behaviour::stream_dies_after(2));
    let r = relay(
        "gemini",
        &[FLASH],
        vec![key("a", "g-die-a", dying), key("b", "g-die-b", KeyScript::new([FLASH]))],
        Some("priority"),
    )
    .await?;
    let sse = call(&r, FLASH, "streamGenerateContent?alt=sse", &body(vec![user("sse")])).await?;
    assert_eq!(header(&sse, "x-switchyard-attempts"), "1", "output started: no failover after it");
    let text = String::from_utf8_lossy(&sse.bytes().await.unwrap_or_default()).to_string();
    let last = text.trim_end().rsplit("data:").next().unwrap_or_default().trim().to_string();
    let event: Value = serde_json::from_str(&last).map_err(|e| format!("last event {last:?}: {e}"))?;
    assert!(event["error"]["status"].is_string(), "the SSE stream ends with Gemini's error shape: {text}");

    let array = call(&r, FLASH, "streamGenerateContent", &body(vec![user("array")])).await?;
    let bytes = array.bytes().await.unwrap_or_default();
    let parsed: Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", String::from_utf8_lossy(&bytes)))?;
    let items = parsed.as_array().ok_or("a JSON array")?;
    assert!(items.len() >= 2, "the chunks before the break are kept: {parsed}");
    assert!(
        items.last().is_some_and(|e| e["error"]["status"].is_string()),
        "the array is closed with one more element in Gemini's error shape, so it parses and says why: {parsed}"
    );
    assert_eq!(r.mock.hits("g-die-b"), 0, "a turn that has output never moves");
    r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thought_signatures_go_to_the_key_that_made_them_and_are_dropped_on_a_failover() -> TestResult {
    let limited =
        KeyScript::new([FLASH]).behaviour(Behaviour::Gemini(GeminiRefusal::QuotaPerMinute { retry_delay_secs: 30 }));
    let keys = vec![key("a", "g-sig-a", limited), key("b", "g-sig-b", KeyScript::new([FLASH]))];
    let (r, _clock) = relay_stepped("gemini", &[FLASH], keys, Some("priority")).await?;
    let contents = vec![
        user("list the files"),
        json!({"role": "model", "parts": [
            {"text": "thinking done", "thoughtSignature": "sig-from-a-1"},
            {"functionCall": {"name": "ls", "args": {}}, "thoughtSignature": "sig-from-a-2"}]}),
        json!({"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"files": ["a.rs"]}}}]}),
    ];
    let resp = call(&r, FLASH, "generateContent", &body(contents)).await?;
    assert_eq!(resp.status(), 200, "served after the failover");
    assert_eq!(header(&resp, "x-switchyard-reason"), "failover:rate_limited");
    let seen = r.mock.requests();
    let by = |k: &str| {
        seen.iter().find(|q| q.key.as_deref() == Some(k)).map(|q| String::from_utf8_lossy(&q.body).to_string())
    };
    let to_a = by("g-sig-a").ok_or("a was tried first")?;
    assert!(
        to_a.contains("sig-from-a-1") && to_a.contains("sig-from-a-2"),
        "the first attempt sends the client's bytes"
    );
    let to_b = by("g-sig-b").ok_or("b served")?;
    assert!(!to_b.contains("sig-from-a"), "no signature of another key reaches b: {to_b}");
    assert!(
        to_b.contains("skip_thought_signature_validator"),
        "the signed function call keeps Gemini's documented placeholder: {to_b}"
    );
    r.stop().await?;
    Ok(())
}
