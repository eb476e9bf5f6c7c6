//! Relay journeys over real HTTP: mock provider ← relay ← reqwest client, real keychain,
//! real SQLite (issue 5).

use crate::common;

use std::collections::HashMap;
use std::time::Duration;

use crate::common::{header, relay_keychain as relay_with, relay_stepped, user, Key, TestResult};

/// These journeys keep the whole stack real: the relay's engine is on the real keychain.
async fn relay(
    protocol: &'static str,
    models: &[&str],
    keys: Vec<Key<'_>>,
    mode: Option<&str>,
) -> Result<common::Relay, Box<dyn std::error::Error>> {
    relay_with(protocol, models, &[], keys, mode).await
}
use serde_json::{json, Value};
use switchyard_mock_provider::{Behaviour, KeyScript};

fn key<'a>(label: &'a str, secret: &'a str, weight: i64, script: KeyScript) -> Key<'a> {
    Key { label, secret, weight, script }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weights_5_3_2_over_100_fresh_turns_split_exactly() -> TestResult {
    let r = relay(
        "openai",
        &["m1"],
        vec![
            key("five", "sk-canary-five", 5, KeyScript::new(["m1"])),
            key("three", "sk-canary-three", 3, KeyScript::new(["m1"])),
            key("two", "sk-canary-two", 2, KeyScript::new(["m1"])),
        ],
        Some("balanced"),
    )
    .await?;
    let mut reasons: HashMap<String, usize> = HashMap::new();
    for i in 0..100 {
        let resp = r.chat("m1", vec![user(&format!("question {i}"))], false).await?;
        assert_eq!(resp.status(), 200, "turn {i} is served");
        *reasons.entry(header(&resp, "x-switchyard-reason")).or_default() += 1;
        assert_eq!(header(&resp, "x-switchyard-attempts"), "1", "no failover needed");
        let length = header(&resp, "content-length");
        assert_eq!(length, resp.bytes().await?.len().to_string(), "a routed JSON answer is sent with its length");
    }
    let hits = [r.mock.hits("sk-canary-five"), r.mock.hits("sk-canary-three"), r.mock.hits("sk-canary-two")];
    assert_eq!(hits, [50, 30, 20], "smooth weighted round robin gives exactly 5:3:2 over 100 fresh turns");
    assert_eq!(reasons.get("swrr"), Some(&100), "every fresh turn is an SWRR pick: {reasons:?}");
    let r = r.stop().await?;
    let ledger = r.engine.attempts("c", 1000).await?;
    assert_eq!(ledger.len(), 100, "every physical attempt is recorded");
    assert!(ledger.iter().all(|a| a.reason == "swrr" && a.status == Some(200)), "ledger rows carry reason and status");
    assert!(ledger.iter().all(|a| a.input_tokens.is_some() && a.output_tokens.is_some()), "usage is parsed from JSON");
    assert!(!r.data_dir_text().contains("canary"), "no secret in the DB");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_routed_json_answer_records_its_usage_whether_its_copy_is_queued_or_too_big_to_queue() -> TestResult {
    // A routed JSON answer's usage is read on the ledger's writer from a copy, or on the request
    // path when the answer is bigger than the copy the relay queues (64 KiB): both rows say it.
    let big = KeyScript { reply: Some("lorem ipsum ".repeat(12_000)), ..KeyScript::new(["m1"]) };
    let r = relay(
        "openai",
        &["m1"],
        vec![key("big", "sk-canary-big", 1, big), key("small", "sk-canary-small", 1, KeyScript::new(["m1"]))],
        Some("balanced"),
    )
    .await?;
    let mut sizes = HashMap::new();
    for i in 0..2 {
        let resp = r.chat("m1", vec![user(&format!("question {i}"))], false).await?;
        assert_eq!(resp.status(), 200, "turn {i} is served");
        let profile = header(&resp, "x-switchyard-profile");
        sizes.insert(profile, resp.bytes().await?.len());
    }
    assert_eq!(sizes.len(), 2, "1:1 weights: each key serves one of the two turns");
    let r = r.stop().await?;
    let ledger = r.engine.attempts("c", 10).await?;
    assert_eq!(ledger.len(), 2, "both attempts are recorded");
    let big_row = ledger.iter().find(|a| sizes.get(&a.profile).is_some_and(|&n| n > 64 * 1024));
    let small_row = ledger.iter().find(|a| sizes.get(&a.profile).is_some_and(|&n| n < 64 * 1024));
    let (Some(big_row), Some(small_row)) = (big_row, small_row) else {
        panic!("one answer over 64 KiB and one under: {sizes:?}");
    };
    assert!(
        big_row.input_tokens.is_some() && big_row.input_tokens == small_row.input_tokens,
        "the same prompt size reads the same input tokens, read at once ({:?}) or later ({:?})",
        big_row.input_tokens,
        small_row.input_tokens
    );
    assert!(
        big_row.output_tokens > small_row.output_tokens && small_row.output_tokens.is_some(),
        "each row has its own answer's output tokens: {:?} / {:?}",
        big_row.output_tokens,
        small_row.output_tokens
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_loop_stays_on_its_profile_and_a_new_human_message_is_a_new_turn() -> TestResult {
    let r = relay(
        "openai",
        &["m1"],
        vec![key("a", "sk-a", 1, KeyScript::new(["m1"])), key("b", "sk-b", 1, KeyScript::new(["m1"]))],
        Some("balanced"),
    )
    .await?;
    // Turn affinity: every new turn is a fresh pick (conversation affinity, the default, keeps
    // the conversation's turns on one key: tests/conversations.rs).
    r.engine.set_affinity("c", switchyard_engine::AffinityMode::Turn, None).await?;
    let first = vec![json!({"role": "system", "content": "s"}), user("list the files")];
    let resp = r.chat("m1", first.clone(), false).await?;
    let bound = header(&resp, "x-switchyard-profile");
    let mut looped = first.clone();
    for i in 0..4 {
        looped.push(json!({"role": "assistant", "tool_calls": [{"id": format!("t{i}"), "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}));
        looped.push(json!({"role": "tool", "tool_call_id": format!("t{i}"), "content": "a.txt"}));
        let resp = r.chat("m1", looped.clone(), false).await?;
        assert_eq!(header(&resp, "x-switchyard-profile"), bound, "tool loop step {i} stays on the turn's profile");
        assert_eq!(header(&resp, "x-switchyard-reason"), "sticky", "the binding is reused");
    }
    looped.push(json!({"role": "assistant", "content": "done"}));
    looped.push(user("now something else"));
    let resp = r.chat("m1", looped, false).await?;
    assert_eq!(header(&resp, "x-switchyard-reason"), "swrr", "a new human message starts a new turn (fresh pick)");
    assert_ne!(header(&resp, "x-switchyard-profile"), bound, "with 1:1 weights the next fresh pick is the other key");
    let explicit = r
        .http
        .post(format!("{}{}", r.base(), r.path()))
        .bearer_auth(&r.token)
        .header("x-switchyard-turn", "T-1")
        .json(&json!({"model": "m1", "messages": [user("x")]}))
        .send()
        .await?;
    let again = r
        .http
        .post(format!("{}{}", r.base(), r.path()))
        .bearer_auth(&r.token)
        .header("x-switchyard-turn", "T-1")
        .json(&json!({"model": "m1", "messages": [user("completely different")]}))
        .send()
        .await?;
    assert_eq!(header(&again, "x-switchyard-reason"), "sticky", "an explicit turn header wins over the anchor");
    assert_eq!(
        header(&explicit, "x-switchyard-profile"),
        header(&again, "x-switchyard-profile"),
        "same explicit turn, same profile"
    );
    r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_before_output_fails_over_cools_down_and_returns_through_one_probe() -> TestResult {
    let limited = KeyScript::new(["m1"])
        .listing(Behaviour::Ok)
        .behaviour(Behaviour::sequence([Behaviour::rate_limited(1), Behaviour::slow(600)]));
    let (r, clock) = relay_stepped(
        "openai",
        &["m1"],
        vec![key("first", "sk-first", 1, limited.clone()), key("second", "sk-second", 1, KeyScript::new(["m1"]))],
        Some("priority"),
    )
    .await?;
    r.mock.set_key("sk-first", limited);
    let resp = r.chat("m1", vec![user("hello")], true).await?;
    assert_eq!(resp.status(), 200, "the same request succeeds on another profile");
    assert_eq!(header(&resp, "x-switchyard-attempts"), "2", "two physical attempts");
    assert_eq!(header(&resp, "x-switchyard-reason"), "failover:rate_limited", "the second attempt is a failover");
    let text = resp.text().await?;
    assert!(text.contains("[DONE]"), "the stream from the second profile completes: {text}");

    let resp = r.chat("m1", vec![user("while cooling")], false).await?;
    assert_eq!(r.mock.hits("sk-first"), 1, "a cooling profile gets no traffic");
    assert_eq!(header(&resp, "x-switchyard-reason"), "priority", "the other profile serves by priority");

    clock.step(1200); // past the 1 s Retry-After: the cooldown ends on the engine's clock
    let mut tasks = Vec::new();
    for i in 0..8 {
        let (http, url, token) = (r.http.clone(), format!("{}{}", r.base(), r.path()), r.token.clone());
        tasks.push(tokio::spawn(async move {
            http.post(url)
                .bearer_auth(token)
                .json(&json!({"model": "m1", "messages": [{"role": "user", "content": format!("after {i}")}]}))
                .send()
                .await
        }));
    }
    let mut probes = 0;
    for t in tasks {
        let resp = t.await??;
        assert_eq!(resp.status(), 200, "every request during the probe is served");
        if header(&resp, "x-switchyard-reason") == "probe" {
            probes += 1;
        }
    }
    assert_eq!(probes, 1, "exactly one request probes the recovered profile");
    assert_eq!(r.mock.hits("sk-first"), 2, "the cooled-down key saw exactly one probe");
    let resp = r.chat("m1", vec![user("after the probe")], false).await?;
    assert_eq!(header(&resp, "x-switchyard-reason"), "priority", "after a successful probe the circuit is closed");
    assert_eq!(r.mock.hits("sk-first"), 3, "and the first key serves by priority again");
    let r = r.stop().await?;
    let ledger = r.engine.attempts("c", 100).await?;
    let first_id =
        r.engine.profile_list("c").await?.into_iter().find(|p| p.label == "first").map(|p| p.id).unwrap_or_default();
    assert!(ledger.iter().any(|a| a.reason == "failover:rate_limited"), "the ledger shows the failover");
    assert!(
        ledger.iter().any(|a| a.profile == first_id && a.failure_kind.as_deref() == Some("rate_limited")),
        "and the 429 attempt"
    );
    assert!(
        ledger.iter().any(|a| a.profile == first_id && a.reason == "probe" && a.status == Some(200)),
        "and the successful probe"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_forbidden_on_one_key_leaves_it_serving_other_models() -> TestResult {
    let r = relay(
        "openai",
        &["m1", "m2"],
        vec![
            key("a", "sk-a", 1, KeyScript::new(["m1", "m2"])),
            key("b", "sk-b", 1, KeyScript::new(["m1", "m2"]).model("m2", Behaviour::ModelForbidden)),
        ],
        Some("balanced"),
    )
    .await?;
    let b_id = r.engine.profile_list("c").await?.into_iter().find(|p| p.label == "b").map(|p| p.id).unwrap_or_default();
    let mut failovers = 0;
    for i in 0..4 {
        let resp = r.chat("m2", vec![user(&format!("m2 question {i}"))], false).await?;
        assert_eq!(resp.status(), 200, "m2 is served by the key that may use it");
        assert_ne!(header(&resp, "x-switchyard-profile"), b_id, "b never serves m2 successfully");
        if header(&resp, "x-switchyard-reason") == "failover:model_forbidden" {
            failovers += 1;
        }
    }
    assert_eq!(failovers, 1, "only the first m2 request on b fails over; then b's m2 circuit is open");
    let mut b_served_m1 = 0;
    for i in 0..4 {
        let resp = r.chat("m1", vec![user(&format!("m1 question {i}"))], false).await?;
        if header(&resp, "x-switchyard-profile") == b_id {
            b_served_m1 += 1;
        }
    }
    assert_eq!(b_served_m1, 2, "b keeps its share of m1 (1:1 weights)");
    r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_dies_after_output_ends_with_an_error_event_and_no_second_attempt() -> TestResult {
    for protocol in ["openai", "anthropic"] {
        let dying = KeyScript::new(["m1"]).listing(Behaviour::Ok).behaviour(Behaviour::stream_dies_after(2));
        let r = relay(
            protocol,
            &["m1"],
            vec![key("dies", "sk-dies", 1, dying), key("fine", "sk-fine", 1, KeyScript::new(["m1"]))],
            Some("priority"),
        )
        .await?;
        let resp = r.chat("m1", vec![user("stream please")], true).await?;
        assert_eq!(resp.status(), 200, "{protocol}: the stream started");
        let text = resp.text().await.unwrap_or_default();
        match protocol {
            "openai" => {
                assert!(text.contains("\"stream_interrupted\""), "{protocol}: the client gets an error chunk: {text}");
                assert!(!text.contains("[DONE]"), "{protocol}: never a clean-looking end");
            }
            _ => {
                assert!(text.contains("event: error"), "{protocol}: the client gets an error event: {text}");
                assert!(!text.contains("message_stop"), "{protocol}: never a clean-looking end");
            }
        }
        assert_eq!(
            (r.mock.hits("sk-dies"), r.mock.hits("sk-fine")),
            (1, 0),
            "{protocol}: no second attempt after output"
        );
        let r = r.stop().await?;
        let ledger = r.engine.attempts("c", 10).await?;
        assert_eq!(ledger.len(), 1, "{protocol}: one attempt recorded");
        assert_eq!(ledger[0].failure_kind.as_deref(), Some("network"), "{protocol}: recorded as a broken stream");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_forwards_exact_bytes_and_returns_a_429_as_is() -> TestResult {
    let r = relay("openai", &["m1"], vec![key("only", "sk-canary-legacy", 1, KeyScript::new(["m1"]))], None).await?;
    let raw = "{ \"messages\" :[{\"content\":\"hi\",\"role\":\"user\"}],  \"model\":\"m1\" ,\"zeta\":1}";
    let resp = r
        .http
        .post(format!("{}{}", r.base(), r.path()))
        .bearer_auth(&r.token)
        .header("content-type", "application/json")
        .header("x-custom-trace", "abc123")
        .header("x-switchyard-turn", "t")
        .body(raw)
        .send()
        .await?;
    assert_eq!(resp.status(), 200, "legacy forwards to the primary");
    assert_eq!(header(&resp, "x-switchyard-profile"), "", "no routing headers are added in legacy mode");
    let length = header(&resp, "content-length");
    assert_eq!(header(&resp, "transfer-encoding"), "", "a JSON answer keeps its length, not re-chunked");
    assert_eq!(length, resp.bytes().await?.len().to_string(), "content-length is the provider's, and true");
    let seen = r.mock.requests();
    let last = seen.last().ok_or("nothing reached the provider")?;
    assert_eq!(last.body.as_ref(), raw.as_bytes(), "the upstream body is byte-identical");
    assert_eq!(last.header("x-custom-trace"), Some("abc123"), "client headers are forwarded unchanged");
    assert_eq!(last.header("authorization"), Some("Bearer sk-canary-legacy"), "only the credential is injected");
    assert_eq!(last.header("x-switchyard-turn"), None, "relay controls are not forwarded");

    r.mock.set_key("sk-canary-legacy", KeyScript::new(["m1"]).behaviour(Behaviour::rate_limited(30)));
    r.mock.reset_counts();
    let resp = r.chat("m1", vec![user("again")], false).await?;
    assert_eq!(resp.status(), 429, "the provider's 429 is returned");
    assert_eq!(header(&resp, "retry-after"), "30", "with its own headers");
    let body: Value = resp.json().await?;
    assert_eq!(body["error"]["code"], "rate_limit_exceeded", "and its own body");
    assert_eq!(r.mock.hits("sk-canary-legacy"), 1, "legacy never retries");
    r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_tokens_are_refused_and_nothing_leaks() -> TestResult {
    let r = relay(
        "anthropic",
        &["m1"],
        vec![
            key("a", "sk-canary-ant-a", 1, KeyScript::new(["m1"])),
            key("b", "sk-canary-ant-b", 1, KeyScript::new(["m1"])),
        ],
        Some("balanced"),
    )
    .await?;
    let url = format!("{}{}", r.base(), r.path());
    let body = json!({"model": "m1", "max_tokens": 5, "messages": [user("hi")]});
    for (name, value) in [("x-api-key", "wrong"), ("authorization", "Bearer wrong"), ("x-nothing", "x")] {
        let resp = r.http.post(&url).header(name, value).json(&body).send().await?;
        assert_eq!(resp.status(), 401, "{name}: a wrong or missing token is refused");
    }
    assert_eq!(r.mock.requests().len(), 0, "nothing was forwarded for refused requests");
    let health: Value = r.http.get(format!("{}/healthz", r.url)).send().await?.json().await?;
    assert_eq!(health, json!({"ok": true}), "healthz without token says only ok");
    let health: Value =
        r.http.get(format!("{}/healthz", r.url)).header("x-api-key", &r.token).send().await?.json().await?;
    assert_eq!(health["connections"][0]["mode"], "balanced", "with the token it lists routing state");

    let mut all = String::new();
    for stream in [false, true] {
        let resp = r.chat("m1", vec![user(&format!("s {stream}"))], stream).await?;
        all.push_str(&format!("{:?}", resp.headers()));
        all.push_str(&resp.text().await?);
    }
    let models = r.http.get(format!("{}/v1/models", r.base())).header("x-api-key", &r.token).send().await?;
    let listed: Value = models.json().await?;
    assert_eq!(listed["data"][0]["id"], "m1", "GET /v1/models lists models with current evidence");
    let r = r.stop().await?;
    let ledger = r.engine.attempts("c", 100).await?;
    all.push_str(&serde_json::to_string(&ledger)?);
    all.push_str(&serde_json::to_string(&health)?);
    all.push_str(&r.data_dir_text());
    assert!(!all.contains("canary"), "a secret leaked into a response, the ledger or the data dir");
    assert!(
        ledger.iter().any(|a| a.output_tokens.is_some() && a.input_tokens.is_some()),
        "usage parsed from SSE message_start/message_delta"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_every_key_is_cooling_the_relay_answers_429_with_retry_after() -> TestResult {
    let limited = |s: &str| KeyScript::new(["m1"]).behaviour(Behaviour::rate_limited(40)).reply(s);
    let r = relay(
        "anthropic",
        &["m1"],
        vec![key("a", "sk-a", 1, KeyScript::new(["m1"])), key("b", "sk-b", 1, KeyScript::new(["m1"]))],
        Some("balanced"),
    )
    .await?;
    r.mock.set_key("sk-a", limited("a"));
    r.mock.set_key("sk-b", limited("b"));
    let resp = r.chat("m1", vec![user("one")], false).await?;
    assert_eq!(resp.status(), 429, "both keys answered 429: the last answer is delivered");
    assert_eq!(header(&resp, "x-switchyard-attempts"), "2", "both were tried");
    let resp = r.chat("m1", vec![user("two")], false).await?;
    assert_eq!(resp.status(), 429, "every key is cooling down for rate limits");
    let retry: u64 = header(&resp, "retry-after").parse().unwrap_or(0);
    assert!((35..=40).contains(&retry), "Retry-After is the soonest cooldown end: {retry}");
    let body: Value = resp.json().await?;
    assert_eq!(body["error"]["type"], "rate_limit_error", "in Anthropic's error shape: {body}");
    assert_eq!(r.mock.hits("sk-a") + r.mock.hits("sk-b"), 2, "nothing is sent while all are cooling");
    r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_leaves_mid_probe_releases_the_claim() -> TestResult {
    let script = KeyScript::new(["m1"]).listing(Behaviour::Ok).behaviour(Behaviour::sequence([
        Behaviour::rate_limited(1),
        Behaviour::slow(1500),
        Behaviour::Ok,
    ]));
    let (r, clock) = relay_stepped(
        "openai",
        &["m1"],
        vec![key("first", "sk-first", 1, script.clone()), key("second", "sk-second", 1, KeyScript::new(["m1"]))],
        Some("priority"),
    )
    .await?;
    r.mock.set_key("sk-first", script);
    let resp = r.chat("m1", vec![user("trip the breaker")], false).await?;
    assert_eq!(header(&resp, "x-switchyard-reason"), "failover:rate_limited", "first key cooled down");
    clock.step(1100); // the cooldown ends on the engine's clock
    let impatient = reqwest::Client::builder().timeout(Duration::from_millis(300)).build()?;
    let gone = impatient
        .post(format!("{}{}", r.base(), r.path()))
        .bearer_auth(&r.token)
        .json(&json!({"model": "m1", "messages": [user("probe then leave")]}))
        .send()
        .await;
    assert!(gone.is_err(), "the client gave up during the slow probe");
    let engine = r.engine.clone();
    common::eventually("the abandoned probe is recorded (its claim released with it)", || {
        let engine = engine.clone();
        async move { Ok(engine.attempts("c", 10).await?.iter().any(|a| a.reason == "probe")) }
    })
    .await?;
    let resp = r.chat("m1", vec![user("next one")], false).await?;
    assert_eq!(
        header(&resp, "x-switchyard-reason"),
        "probe",
        "the abandoned probe released its claim, so a new probe is admitted"
    );
    assert_eq!(resp.status(), 200, "and it succeeds");
    r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_drains_an_in_flight_stream() -> TestResult {
    let r = relay(
        "anthropic",
        &["m1"],
        vec![key("a", "sk-a", 1, KeyScript::new(["m1"]).listing(Behaviour::Ok).behaviour(Behaviour::slow(700)))],
        None,
    )
    .await?;
    let (http, url, token) = (r.http.clone(), format!("{}{}", r.base(), r.path()), r.token.clone());
    let inflight = tokio::spawn(async move {
        let resp = http.post(url).header("x-api-key", token).header("anthropic-version", "2023-06-01")
            .json(&json!({"model": "m1", "max_tokens": 8, "stream": true, "messages": [{"role": "user", "content": "slow"}]})).send().await?;
        resp.text().await
    });
    common::eventually("the slow request reached the provider", || async { Ok(r.mock.hits("sk-a") == 1) }).await?;
    let r = r.stop().await?;
    let text = inflight.await??;
    assert!(text.contains("message_stop"), "the stream in flight at shutdown completed: {text}");
    assert_eq!(r.engine.attempts("c", 10).await?.len(), 1, "and its attempt was recorded before exit");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mapped_model_is_renamed_for_every_profile_and_others_pass_unchanged() -> TestResult {
    let r = relay_with(
        "openai",
        &["fast", "m2"],
        &["fast=m1"],
        vec![key("a", "sk-a", 1, KeyScript::new(["m1", "m2"])), key("b", "sk-b", 1, KeyScript::new(["m1", "m2"]))],
        Some("balanced"),
    )
    .await?;
    r.mock.set_recording(true);
    for i in 0..2 {
        let resp = r.chat("fast", vec![user(&format!("fast {i}"))], false).await?;
        assert_eq!(resp.status(), 200, "the client-facing name is served");
    }
    let resp = r.chat("m2", vec![user("unmapped")], false).await?;
    assert_eq!(resp.status(), 200, "an unmapped model is served");
    let models: Vec<Option<String>> =
        r.mock.requests().iter().map(|q| q.json().and_then(|j| j["model"].as_str().map(str::to_string))).collect();
    assert_eq!(
        models,
        vec![Some("m1".into()), Some("m1".into()), Some("m2".into())],
        "mapping renames only `fast`, for both profiles"
    );
    let keys: std::collections::BTreeSet<_> = r.mock.requests().iter().take(2).filter_map(|q| q.key.clone()).collect();
    assert_eq!(keys.len(), 2, "both profiles received the mapped name");
    r.stop().await?;
    Ok(())
}
