//! Pools across connections (issue 29, invariant 24) through real HTTP to three mock
//! providers on different ports, on a manual clock (so nothing reloads or expires between
//! calls and every choice is deterministic): a balanced pool spreads new conversations by
//! weight and keeps each on one member; a member whose keys are all rate-limited before output
//! hands the turn to the next member with the model mapped (`pool:rate_limited`); a stream
//! that dies after output never hands off; signed thinking is dropped and a
//! `previous_response_id` is kept on its member or refused when the member changes; the
//! ledger shows pool and member; legacy connections are untouched.

use std::sync::Arc;

use crate::common::clock::{ManualClock, Served};
use serde_json::{json, Value};
use switchyard_engine::{Engine, NewConnection, NewProfile, Secret};
use switchyard_mock_provider::{Behaviour, GeminiRefusal, KeyScript, MockProvider};
use switchyard_vault::MemoryVault;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The members: connection, its mock's key, the model the member is asked for, its weight.
const MEMBERS: [(&str, &str, &str, u32); 3] =
    [("ga", "sk-ga", "ma", 3), ("kb", "sk-kb", "mb", 2), ("dc", "sk-dc", "mc", 1)];

struct Trio {
    mocks: Vec<MockProvider>,
    engine: Arc<Engine>,
    _clock: Arc<ManualClock>,
    _dir: tempfile::TempDir,
}

/// Three legacy connections of `protocol` on three mocks (`scripts` per member's key; `ga`
/// gets a second key `sk-ga2` and balanced routing when `ga_two_keys`), verified, and the
/// balanced pool `fleet` over them (`ga=ma:3`, `kb=mb:2`, `dc=mc:1`), activated.
async fn trio(protocol: &str, scripts: [KeyScript; 3], ga_two_keys: bool) -> Result<Trio, Box<dyn std::error::Error>> {
    let clock = ManualClock::new();
    let dir = tempfile::tempdir()?;
    let engine = Arc::new(Engine::open_with(dir.path(), Arc::new(MemoryVault::new()), clock.clone()).await?);
    let mut mocks = Vec::new();
    for ((slug, key, model, _), script) in MEMBERS.into_iter().zip(scripts) {
        let mock = MockProvider::start().await?;
        mock.set_key(key, script.clone());
        let base = if protocol == "openai" { format!("{}/v1", mock.base_url()) } else { mock.base_url() };
        let conn = NewConnection {
            slug: slug.into(),
            protocol: protocol.into(),
            base_url: base,
            models: vec![model.into()],
            ..Default::default()
        };
        engine.connection_add(conn, Some(Secret::new(key))).await?;
        if slug == "ga" && ga_two_keys {
            mock.set_key("sk-ga2", script);
            let p = NewProfile { label: "ga2".into(), weight: Some(1), priority: Some(1) };
            engine.profile_add("ga", p, Secret::new("sk-ga2")).await?;
        }
        engine.verify(slug, None, false, &|_| {}).await?;
        mocks.push(mock);
    }
    if ga_two_keys {
        engine.routing_activate("ga", switchyard_engine::Strategy::Balanced, "test").await?;
    }
    let members: Vec<String> = MEMBERS.iter().map(|(s, _, m, w)| format!("{s}={m}:{w}")).collect();
    engine.pool_add("fleet", protocol, &members).await?;
    let on = engine.pool_activate("fleet", switchyard_engine::Strategy::Balanced).await?;
    assert_eq!(
        on.pool.state,
        switchyard_engine::PoolState::Active,
        "every member has current evidence: {:?}",
        on.gates.failures
    );
    for m in &mocks {
        m.reset_counts();
    }
    Ok(Trio { mocks, engine, _clock: clock, _dir: dir })
}

fn header(r: &reqwest::Response, name: &str) -> String {
    r.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string()
}

/// One chat call to `/c/{path}` in conversation `conversation`, for the client's model.
async fn chat(
    relay: &Served,
    path: &str,
    conversation: &str,
    turn: &str,
    stream: bool,
) -> reqwest::Result<reqwest::Response> {
    chat_for(relay, path, "client-model", conversation, turn, stream).await
}

async fn chat_for(
    relay: &Served,
    path: &str,
    model: &str,
    conversation: &str,
    turn: &str,
    stream: bool,
) -> reqwest::Result<reqwest::Response> {
    let body = json!({"model": model, "stream": stream, "messages": [{"role": "user", "content": turn}]});
    reqwest::Client::new()
        .post(relay.url.replace("/c/c/", &format!("/c/{path}/")))
        .bearer_auth(&relay.bearer)
        .header("x-switchyard-conversation", conversation)
        .header("x-switchyard-turn", turn)
        .json(&body)
        .send()
        .await
}

fn models_seen(mock: &MockProvider, path_end: &str) -> Vec<Option<String>> {
    mock.requests().into_iter().filter(|r| r.path.ends_with(path_end)).map(|r| r.model).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_balanced_pool_spreads_conversations_by_weight_each_on_one_member() -> TestResult {
    let t = trio("openai", [KeyScript::new(["ma"]), KeyScript::new(["mb"]), KeyScript::new(["mc"])], false).await?;
    let relay = Served::start(&t.engine).await?;
    let mut served: Vec<(String, String)> = Vec::new();
    // Sequential on purpose: SWRR over conversations is a sequence; each conversation's two
    // turns go one after the other.
    for c in 0..12 {
        let conversation = format!("conv-{c}");
        let first = chat(&relay, "fleet", &conversation, &format!("{conversation} turn 1"), false).await?;
        assert_eq!(first.status(), 200, "{conversation}: served");
        let member = header(&first, "x-switchyard-connection");
        let second = chat(&relay, "fleet", &conversation, &format!("{conversation} turn 2"), false).await?;
        assert_eq!(
            header(&second, "x-switchyard-connection"),
            member,
            "{conversation}: a warm conversation stays on its member"
        );
        served.push((conversation, member));
    }
    let count = |slug: &str| served.iter().filter(|(_, m)| m == slug).count();
    assert_eq!(
        (count("ga"), count("kb"), count("dc")),
        (6, 4, 2),
        "weights 3:2:1 hold over 12 new conversations exactly: {served:?}"
    );
    let hits: Vec<u64> = MEMBERS.iter().zip(&t.mocks).map(|((_, key, _, _), m)| m.hits(key)).collect();
    assert_eq!(hits, vec![12, 8, 4], "each mock got its conversations' two turns");
    assert_eq!(models_seen(&t.mocks[1], "/chat/completions")[0].as_deref(), Some("mb"), "each member's own model");
    relay.stop().await?;
    let rows = t.engine.attempts("fleet", 100).await?;
    assert_eq!(rows.len(), 24, "attempts POOL lists every row of the pool");
    assert!(rows.iter().all(|r| r.pool.as_deref() == Some("fleet")), "each row names the pool");
    assert!(
        rows.iter().any(|r| r.member.as_deref() == Some("kb=mb") && r.connection == "kb"),
        "and the member that served"
    );
    let usage = t.engine.usage("fleet", None, switchyard_engine::UsageBy::Member).await?;
    let keys: Vec<(&str, i64)> = usage.rows.iter().map(|r| (r.key.as_str(), r.requests)).collect();
    assert_eq!(keys, vec![("dc=mc", 4), ("ga=ma", 12), ("kb=mb", 8)], "usage POOL --by member");
    let status = t.engine.pool_status("fleet").await?;
    let conv: Vec<i32> = status.shares.iter().map(|s| s.conversations).collect();
    assert_eq!(conv, vec![6, 4, 2], "routing status POOL: conversations per member against weights 3:2:1");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_whose_keys_are_all_rate_limited_hands_the_turn_over_with_the_model_mapped() -> TestResult {
    let limited = KeyScript::new(["ma"]).model("ma", Behaviour::rate_limited(30));
    let t = trio("openai", [limited, KeyScript::new(["mb"]), KeyScript::new(["mc"])], true).await?;
    let relay = Served::start(&t.engine).await?;
    let first = chat(&relay, "fleet", "conv-1", "one", false).await?;
    assert_eq!(first.status(), 200, "both keys of ga answer 429 before output: the turn completes on another member");
    assert_eq!(header(&first, "x-switchyard-connection"), "kb", "handed to the next member by weight");
    assert_eq!(header(&first, "x-switchyard-reason"), "pool:rate_limited", "recorded with why");
    assert_eq!(t.mocks[0].hits("sk-ga") + t.mocks[0].hits("sk-ga2"), 2, "each key of ga was tried once first");
    assert_eq!(models_seen(&t.mocks[1], "/chat/completions"), vec![Some("mb".to_string())], "kb is asked for mb");
    let again = chat(&relay, "fleet", "conv-1", "two", false).await?;
    assert_eq!(header(&again, "x-switchyard-connection"), "kb", "the conversation stays where it was handed");
    assert_eq!(t.mocks[0].hits("sk-ga") + t.mocks[0].hits("sk-ga2"), 2, "nothing more reached the cooling member");
    relay.stop().await?;
    let rows = t.engine.attempts("fleet", 50).await?;
    let handed: Vec<_> = rows.iter().filter(|r| r.reason == "pool:rate_limited").collect();
    assert_eq!(handed.len(), 1, "one hand-off row: {rows:?}");
    assert_eq!(handed[0].member.as_deref(), Some("kb=mb"), "on member kb");
    assert_eq!(handed[0].model.as_deref(), Some("mb"), "with the member's model");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_dies_after_output_never_hands_off() -> TestResult {
    let dies = KeyScript::new(["ma"]).model("ma", Behaviour::stream_error(2));
    let t = trio("openai", [dies, KeyScript::new(["mb"]), KeyScript::new(["mc"])], false).await?;
    let relay = Served::start(&t.engine).await?;
    let resp = chat(&relay, "fleet", "conv-1", "one", true).await?;
    assert_eq!(resp.status(), 200, "the stream started on ga");
    assert_eq!(header(&resp, "x-switchyard-connection"), "ga", "served by the first member");
    let text = resp.text().await?;
    assert!(text.contains("error"), "the in-stream error reaches the client: {text}");
    assert_eq!(t.mocks[1].hits("sk-kb") + t.mocks[2].hits("sk-dc"), 0, "after output no other member is asked");
    relay.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_off_drops_signed_thinking_the_new_member_could_not_read() -> TestResult {
    let s = |m: &str| KeyScript::new([m]).reasoning();
    let t = trio("anthropic", [s("ma"), s("mb"), s("mc")], false).await?;
    let relay = Served::start(&t.engine).await?;
    let url = relay.url.replace("/c/c/v1/chat/completions", "/c/fleet/v1/messages");
    let post = |body: Value| {
        reqwest::Client::new()
            .post(&url)
            .bearer_auth(&relay.bearer)
            .header("x-switchyard-conversation", "conv-1")
            .header("anthropic-version", "2023-06-01")
            .json(&body)
            .send()
    };
    let user = |t: &str| json!({"role": "user", "content": t});
    let first = post(json!({"model": "client-model", "max_tokens": 16, "messages": [user("first")]})).await?;
    assert_eq!(first.status(), 200, "served");
    assert_eq!(header(&first, "x-switchyard-connection"), "ga", "the first conversation goes to the heaviest member");
    let answer: Value = first.json().await?;
    assert_eq!(answer["content"][0]["type"], "thinking", "the answer starts with a signed thinking block");
    let messages = vec![user("first"), json!({"role": "assistant", "content": answer["content"]}), user("second")];
    let body = json!({"model": "client-model", "max_tokens": 16, "messages": messages});
    // Another member's account would refuse the signature (the mock checks it per account).
    let mut as_kb = body.clone();
    as_kb["model"] = json!("mb");
    let direct =
        reqwest::Client::new().post(format!("{}/v1/messages", t.mocks[1].base_url())).header("x-api-key", "sk-kb");
    let direct = direct.header("anthropic-version", "2023-06-01").json(&as_kb).send().await?;
    assert_eq!(direct.status(), 400, "kb's account refuses ga's signature");

    t.mocks[0].set_key("sk-ga", KeyScript::new(["ma"]).reasoning().behaviour(Behaviour::rate_limited(30)));
    let resp = post(body).await?;
    assert_eq!(resp.status(), 200, "after the hand-off the new member accepts the conversation");
    assert_eq!(header(&resp, "x-switchyard-connection"), "kb", "on kb");
    assert_eq!(header(&resp, "x-switchyard-reason"), "pool:rate_limited", "handed off");
    relay.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_previous_response_stays_on_its_member_or_is_refused() -> TestResult {
    let s = |m: &str| KeyScript::new([m]).account(format!("org-{m}"));
    let t = trio("openai", [s("ma"), s("mb"), s("mc")], false).await?;
    let relay = Served::start(&t.engine).await?;
    let url = relay.url.replace("/c/c/v1/chat/completions", "/c/fleet/v1/responses");
    let post = |body: Value, conversation: &'static str| {
        reqwest::Client::new()
            .post(&url)
            .bearer_auth(&relay.bearer)
            .header("x-switchyard-conversation", conversation)
            .json(&body)
            .send()
    };
    let first = post(json!({"model": "client-model", "input": "first"}), "conv-1").await?;
    assert_eq!(first.status(), 200, "served");
    let home = header(&first, "x-switchyard-connection");
    let answer: Value = first.json().await?;
    let previous = answer["id"].as_str().ok_or("a response id")?.to_string();
    // Another conversation key (a client that sends none would get an anchor): the response
    // id alone pins the member.
    let body = json!({"model": "client-model", "input": "second", "previous_response_id": previous});
    let kept = post(body.clone(), "conv-other").await?;
    assert_eq!(kept.status(), 200, "the continued response is served by the account that holds it");
    assert_eq!(header(&kept, "x-switchyard-connection"), home, "on the same member");
    let idx = MEMBERS.iter().position(|(s, ..)| *s == home).ok_or("a member")?;
    let (_, key, model, _) = MEMBERS[idx];
    t.mocks[idx].set_key(key, KeyScript::new([model]).behaviour(Behaviour::rate_limited(30)));
    let limited = post(body.clone(), "conv-other").await?;
    assert_eq!(limited.status(), 429, "the member's own answer comes back: no other account could read the id");
    let refused = post(body, "conv-other").await?;
    assert_eq!(refused.status(), 503, "the member is cooling: refused, not moved");
    assert_eq!(header(&refused, "x-switchyard-reason"), "continuity", "with the continuity reason");
    let others: u64 =
        MEMBERS.iter().zip(&t.mocks).filter(|((s, ..), _)| *s != home).map(|((_, k, ..), m)| m.hits(k)).sum();
    assert_eq!(others, 0, "nothing was sent to another member");
    relay.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_connections_are_untouched_and_a_pinned_member_or_an_inactive_pool_answers_clearly() -> TestResult {
    let t = trio("openai", [KeyScript::new(["ma"]), KeyScript::new(["mb"]), KeyScript::new(["mc"])], false).await?;
    let relay = Served::start(&t.engine).await?;
    let legacy = chat_for(&relay, "ga", "ma", "conv-1", "one", false).await?;
    assert_eq!(legacy.status(), 200, "a member's own connection still serves directly");
    assert!(
        legacy.headers().keys().all(|k| !k.as_str().starts_with("x-switchyard")),
        "legacy answers pass unchanged: {:?}",
        legacy.headers()
    );
    let pinned = chat(&relay, "fleet@dc=mc", "conv-2", "two", false).await?;
    assert_eq!(header(&pinned, "x-switchyard-connection"), "dc", "a path naming the member goes there");
    assert_eq!(models_seen(&t.mocks[2], "/chat/completions"), vec![Some("mc".to_string())], "with its model");
    let unknown = chat(&relay, "fleet@zz", "conv-3", "three", false).await?;
    assert_eq!(unknown.status(), 503, "no such member");
    assert_eq!(header(&unknown, "x-switchyard-reason"), "pool_unavailable", "pool_unavailable");
    t.engine.pool_deactivate("fleet").await?;
    t._clock.step(2_000);
    let off = chat(&relay, "fleet", "conv-4", "four", false).await?;
    assert_eq!(off.status(), 503, "an inactive pool routes nothing");
    assert_eq!(header(&off, "x-switchyard-reason"), "pool_unavailable", "and says so");
    relay.stop().await
}

const FLASH: &str = "gemini-2.5-flash";
const PRO: &str = "gemini-2.5-pro";

/// Two Gemini connections on two mocks — `gf` (key `g-pool-f`, serving flash) and `gp`
/// (`g-pool-p`, serving pro) — verified, and the balanced pool `gem` over them: `gf=FLASH:2`
/// maps the client's model to flash, `gp:1` sends the client's own model. Activated.
async fn gemini_pair(scripts: [KeyScript; 2]) -> Result<Trio, Box<dyn std::error::Error>> {
    let clock = ManualClock::new();
    let dir = tempfile::tempdir()?;
    let engine = Arc::new(Engine::open_with(dir.path(), Arc::new(MemoryVault::new()), clock.clone()).await?);
    let mut mocks = Vec::new();
    for ((slug, key, model), script) in [("gf", "g-pool-f", FLASH), ("gp", "g-pool-p", PRO)].into_iter().zip(scripts) {
        let mock = MockProvider::start().await?;
        mock.set_key(key, script);
        let conn = NewConnection {
            slug: slug.into(),
            protocol: "gemini".into(),
            base_url: mock.base_url(),
            models: vec![model.into()],
            ..Default::default()
        };
        engine.connection_add(conn, Some(Secret::new(key))).await?;
        engine.verify(slug, None, false, &|_| {}).await?;
        mocks.push(mock);
    }
    engine.pool_add("gem", "gemini", &[format!("gf={FLASH}:2"), "gp:1".to_string()]).await?;
    let on = engine.pool_activate("gem", switchyard_engine::Strategy::Balanced).await?;
    assert_eq!(
        on.pool.state,
        switchyard_engine::PoolState::Active,
        "both Gemini members have current evidence: {:?}",
        on.gates.failures
    );
    for m in &mocks {
        m.reset_counts();
    }
    Ok(Trio { mocks, engine, _clock: clock, _dir: dir })
}

/// One `models/{PRO}:{method}` call to the pool `gem` in `conversation`, the relay token in
/// `x-goog-api-key`; returns the answer and the body sent.
async fn gemini_call(
    relay: &Served,
    method: &str,
    conversation: &str,
    turn: &str,
) -> Result<(reqwest::Response, Value), reqwest::Error> {
    let body = json!({"contents": [{"role": "user", "parts": [{"text": turn}]}]});
    let url = relay.url.replace("/c/c/v1/chat/completions", &format!("/c/gem/v1beta/models/{PRO}:{method}"));
    let resp = reqwest::Client::new()
        .post(url)
        .header("x-goog-api-key", &relay.bearer)
        .header("x-switchyard-conversation", conversation)
        .json(&body)
        .send()
        .await?;
    Ok((resp, body))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_pool_spreads_by_weight_and_names_each_member_s_model_in_the_path() -> TestResult {
    let t = gemini_pair([KeyScript::new([FLASH]), KeyScript::new([PRO])]).await?;
    let relay = Served::start(&t.engine).await?;
    let mut served = Vec::new();
    for c in 0..6 {
        let conversation = format!("conv-{c}");
        let method = if c % 2 == 0 { "generateContent" } else { "streamGenerateContent?alt=sse" };
        let (first, _) = gemini_call(&relay, method, &conversation, &format!("{conversation} turn 1")).await?;
        let member = header(&first, "x-switchyard-connection");
        let (status, text) = (first.status(), first.text().await?);
        assert_eq!(status, 200, "{conversation}: served: {text}");
        let (second, _) = gemini_call(&relay, method, &conversation, &format!("{conversation} turn 2")).await?;
        assert_eq!(header(&second, "x-switchyard-connection"), member, "{conversation}: stays on its member");
        second.bytes().await?;
        served.push(member);
    }
    let count = |slug: &str| served.iter().filter(|m| *m == slug).count();
    assert_eq!((count("gf"), count("gp")), (4, 2), "weights 2:1 over six new conversations: {served:?}");
    let paths = |m: &MockProvider| m.requests().into_iter().map(|r| r.path).collect::<Vec<_>>();
    let (to_f, to_p) = (paths(&t.mocks[0]), paths(&t.mocks[1]));
    assert_eq!((to_f.len(), to_p.len()), (8, 4), "each conversation's two turns reached its member");
    assert!(
        to_f.iter().all(|p| p.starts_with(&format!("/v1beta/models/{FLASH}:"))),
        "gf's mapped model is in the path: {to_f:?}"
    );
    assert!(
        to_p.iter().all(|p| p.starts_with(&format!("/v1beta/models/{PRO}:"))),
        "gp, unmapped, gets the client's model: {to_p:?}"
    );
    let (resp, sent) = gemini_call(&relay, "generateContent", "conv-0", "body check").await?;
    assert_eq!(header(&resp, "x-switchyard-connection"), "gf", "conv-0 is on gf");
    resp.bytes().await?;
    let last = t.mocks[0].requests().pop().ok_or("gf saw the call")?;
    assert_eq!(last.json(), Some(sent), "the body goes to the mapped member untouched (no model field added)");
    let listed: Value = reqwest::Client::new()
        .get(relay.url.replace("/c/c/v1/chat/completions", "/c/gem/v1beta/models"))
        .header("x-goog-api-key", &relay.bearer)
        .send()
        .await?
        .json()
        .await?;
    let names: Vec<&str> =
        listed["models"].as_array().into_iter().flatten().filter_map(|m| m["name"].as_str()).collect();
    assert!(!names.is_empty() && names.iter().all(|n| n.starts_with("models/")), "Gemini's listing shape: {listed}");
    relay.stop().await?;
    let rows = t.engine.attempts("gem", 100).await?;
    assert!(
        rows.iter().any(|r| r.member.as_deref() == Some(&format!("gf={FLASH}")) && r.model.as_deref() == Some(FLASH)),
        "the ledger names the member and the model sent: {rows:?}"
    );
    // `pool add` takes Gemini members of one protocol only.
    let oa = NewConnection {
        slug: "oa".into(),
        protocol: "openai".into(),
        base_url: format!("{}/v1", t.mocks[0].base_url()),
        models: vec!["m1".into()],
        ..Default::default()
    };
    t.engine.connection_add(oa, Some(Secret::new("sk-oa"))).await?;
    let mixed = t.engine.pool_add("mixed", "gemini", &["gf".to_string(), "oa".into()]).await;
    let Err(refused) = mixed else { return Err("a Gemini pool with an OpenAI member must be refused".into()) };
    assert!(refused.to_string().contains("'oa' speaks openai"), "the refusal names the member: {refused}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_per_minute_quota_before_output_hands_the_turn_to_the_other_member() -> TestResult {
    let limited =
        KeyScript::new([FLASH]).model(FLASH, Behaviour::Gemini(GeminiRefusal::QuotaPerMinute { retry_delay_secs: 30 }));
    let t = gemini_pair([limited, KeyScript::new([PRO])]).await?;
    let relay = Served::start(&t.engine).await?;
    let (first, _) = gemini_call(&relay, "streamGenerateContent?alt=sse", "conv-1", "one").await?;
    assert_eq!(first.status(), 200, "gf's quota refusal came before output: the turn completes on gp");
    assert_eq!(header(&first, "x-switchyard-connection"), "gp", "handed to the other member");
    assert_eq!(header(&first, "x-switchyard-reason"), "pool:rate_limited", "a per-minute quota is a rate limit");
    assert!(first.text().await?.contains("data:"), "gp's SSE stream reaches the client");
    assert_eq!(t.mocks[0].hits_for("g-pool-f", FLASH), 1, "gf was asked for its mapped model first");
    let to_p: Vec<String> = t.mocks[1].requests().into_iter().map(|r| r.path).collect();
    assert_eq!(to_p, vec![format!("/v1beta/models/{PRO}:streamGenerateContent")], "gp's own model in the path");
    let (again, _) = gemini_call(&relay, "generateContent", "conv-1", "two").await?;
    assert_eq!(header(&again, "x-switchyard-connection"), "gp", "the conversation stays where it was handed");
    assert_eq!(t.mocks[0].hits("g-pool-f"), 1, "nothing more reached the cooling member");
    relay.stop().await?;
    let rows = t.engine.attempts("gem", 50).await?;
    let handed: Vec<_> = rows.iter().filter(|r| r.reason == "pool:rate_limited").collect();
    assert_eq!(handed.len(), 1, "one hand-off row: {rows:?}");
    assert_eq!(handed[0].member.as_deref(), Some("gp"), "on member gp");
    assert_eq!(handed[0].model.as_deref(), Some(PRO), "with the model gp was sent");
    Ok(())
}

/// Issue 39, defect 1: a pool forwarded `?key=<token>` to the provider in the request line (a
/// connection's route stripped it). Every route strips every `key` pair before anything is sent
/// or logged: the plain pool path, a named member, a streaming query with `alt=sse` before the
/// key, and a relay user's `syu_…` token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_never_forwards_the_token_a_client_put_in_its_query() -> TestResult {
    let t = gemini_pair([KeyScript::new([FLASH]), KeyScript::new([PRO])]).await?;
    let user = t.engine.relay_user_add("ana").await?;
    let relay = Served::start(&t.engine).await?;
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    let base = relay.url.replace("/c/c/v1/chat/completions", "");
    let calls = [
        (format!("{base}/c/gem/v1beta/models/{PRO}:generateContent?key={}", relay.bearer), relay.bearer.clone()),
        (
            format!("{base}/c/gem/v1beta/models/{PRO}:streamGenerateContent?alt=sse&key={}", relay.bearer),
            relay.bearer.clone(),
        ),
        (format!("{base}/c/gem@gp/v1beta/models/{PRO}:generateContent?key={}", relay.bearer), relay.bearer.clone()),
        (format!("{base}/c/gem/v1beta/models/{PRO}:generateContent?key={}", user.expose()), user.expose().to_string()),
    ];
    for (i, (url, token)) in calls.iter().enumerate() {
        let resp = reqwest::Client::new()
            .post(url)
            .header("x-switchyard-conversation", format!("q-{i}"))
            .json(&body)
            .send()
            .await?;
        assert_eq!(resp.status(), 200, "call {i}: the ?key= token is accepted on a Gemini pool");
        resp.bytes().await?;
        let sent: Vec<_> = t.mocks.iter().flat_map(|m| m.requests()).collect();
        for r in &sent {
            let line = format!("{}?{}", r.path, r.query.as_deref().unwrap_or(""));
            assert!(!line.contains(token.as_str()), "call {i}: the token is not in the upstream request line: {line}");
            assert!(!line.contains("key="), "call {i}: no key pair reaches the provider: {line}");
        }
    }
    assert_eq!(t.mocks.iter().map(|m| m.requests().len()).sum::<usize>(), calls.len(), "every call went upstream once");
    relay.stop().await?;
    Ok(())
}
