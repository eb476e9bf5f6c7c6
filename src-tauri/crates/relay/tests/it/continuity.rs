//! Account-bound state never crosses accounts (docs/design.md invariant 16), through the relay
//! against a mock provider that enforces it per account: a `previous_response_id` chain stays
//! on the profile that produced it (or fails with the continuity error, sending nothing to
//! another key), and a forced move drops encrypted reasoning / signed thinking so the new
//! account does not refuse the request — which the mock shows it would otherwise do.

use crate::common::{header, relay, Key, Relay, TestResult};
use serde_json::{json, Value};
use switchyard_mock_provider::{Behaviour, KeyScript};

const KEYS: [&str; 2] = ["sk-cont-a", "sk-cont-b"];

async fn two_keys(protocol: &'static str, script: KeyScript) -> Result<Relay, Box<dyn std::error::Error>> {
    let key = |label, secret| Key { label, secret, weight: 1, script: script.clone() };
    relay(protocol, &["m1"], vec![key("a", KEYS[0]), key("b", KEYS[1])], Some("balanced")).await
}

async fn responses(r: &Relay, body: &Value) -> Result<reqwest::Response, Box<dyn std::error::Error>> {
    let req = r.http.post(format!("{}/responses", r.base())).bearer_auth(&r.token);
    Ok(req.header("x-switchyard-conversation", "conv-1").json(body).send().await?)
}

/// The `data` JSON of every event of an SSE body.
fn events(text: &str) -> Vec<Value> {
    text.lines().filter_map(|l| l.strip_prefix("data: ")).filter_map(|d| serde_json::from_str(d).ok()).collect()
}

/// The key whose hit count is `n` (exactly one).
fn key_with_hits(r: &Relay, n: u64) -> Result<&'static str, Box<dyn std::error::Error>> {
    let found: Vec<&str> = KEYS.into_iter().filter(|k| r.mock.hits(k) == n).collect();
    match found.as_slice() {
        [k] => Ok(k),
        _ => Err(format!("expected exactly one key with {n} hits: {:?}", KEYS.map(|k| r.mock.hits(k))).into()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_previous_response_chain_stays_on_its_profile_or_fails_with_continuity() -> TestResult {
    let r = two_keys("openai", KeyScript::new(["m1"])).await?;
    // Each key its own account: another account's response id is refused with 400.
    r.mock.set_key(KEYS[0], KeyScript::new(["m1"]).account("org-a"));
    r.mock.set_key(KEYS[1], KeyScript::new(["m1"]).account("org-b"));

    let resp = responses(&r, &json!({"model": "m1", "input": "first", "stream": true})).await?;
    assert_eq!(resp.status(), 200, "the first call is served");
    let home = header(&resp, "x-switchyard-profile");
    let text = resp.text().await?;
    let created = events(&text).into_iter().find(|e| e["type"] == "response.created").ok_or("a created event")?;
    let mut previous = created["response"]["id"].as_str().ok_or("the response has an id")?.to_string();
    let home_key = key_with_hits(&r, 1)?;
    let other_key = KEYS.into_iter().find(|k| *k != home_key).ok_or("two keys")?;

    for call in 2..=3 {
        let body = json!({"model": "m1", "input": format!("call {call}"), "previous_response_id": previous});
        let resp = responses(&r, &body).await?;
        assert_eq!(resp.status(), 200, "call {call} continues the chain (another account would answer 400)");
        assert_eq!(header(&resp, "x-switchyard-reason"), "continuity", "call {call} is pinned by its response id");
        assert_eq!(header(&resp, "x-switchyard-profile"), home, "call {call} stays on the profile of the first");
        let answer: Value = resp.json().await?;
        previous = answer["id"].as_str().ok_or("a JSON answer has an id")?.to_string();
    }
    assert_eq!(
        (r.mock.hits(home_key), r.mock.hits(other_key)),
        (3, 0),
        "SWRR would have alternated; the chain did not"
    );

    // The home key starts refusing: its 429 comes back as it is, never the other key.
    r.mock.set_key(home_key, KeyScript::new(["m1"]).account("org-a").behaviour(Behaviour::rate_limited(60)));
    let body = json!({"model": "m1", "input": "call 4", "previous_response_id": previous});
    let resp = responses(&r, &body).await?;
    assert_eq!(resp.status(), 429, "the pinned key's own answer is delivered (no failover to another account)");
    // Now it cools down: the relay answers itself.
    let resp = responses(&r, &body).await?;
    assert_eq!(resp.status(), 503, "the pinned profile cannot serve now");
    assert_eq!(header(&resp, "x-switchyard-reason"), "continuity", "the reason says why");
    assert!(!header(&resp, "retry-after").is_empty(), "the cooldown's end is told");
    let error: Value = resp.json().await?;
    assert_eq!(error["error"]["code"], "switchyard_continuity", "OpenAI error shape with its own code: {error}");
    assert_eq!(error["error"]["param"], "previous_response_id", "it names the field");
    assert_eq!(r.mock.hits(other_key), 0, "nothing was ever sent to the other account");

    // An id the relay never saw (e.g. from before a restart) routes normally.
    let plain = json!({"model": "m1", "input": "fresh", "previous_response_id": "resp_unknown"});
    r.mock.set_key(home_key, KeyScript::new(["m1"]));
    r.mock.set_key(other_key, KeyScript::new(["m1"]));
    let resp = responses(&r, &plain).await?;
    assert_eq!(resp.status(), 200, "an unknown response id is not pinned");
    assert_ne!(header(&resp, "x-switchyard-reason"), "continuity", "it was routed as usual");
    r.stop().await?;
    Ok(())
}

/// The second call of a Codex-like conversation: the first call's output (reasoning item
/// with its encrypted content, then the message) appended, then a new user message.
fn codex_followup(reasoning: &Value) -> Value {
    json!({"model": "m1", "store": false, "stream": true, "include": ["reasoning.encrypted_content"], "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "first"}]},
        reasoning,
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "second"}]},
    ]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forced_move_drops_encrypted_reasoning_and_the_ledger_says_so() -> TestResult {
    let r = two_keys("openai", KeyScript::new(["m1"]).reasoning()).await?;
    let first = json!({"model": "m1", "store": false, "stream": true, "include": ["reasoning.encrypted_content"],
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "first"}]}]});
    let resp = responses(&r, &first).await?;
    assert_eq!(resp.status(), 200, "the first call is served");
    let text = resp.text().await?;
    let reasoning = events(&text)
        .into_iter()
        .find(|e| e["type"] == "response.output_item.done" && e["item"]["type"] == "reasoning")
        .map(|e| e["item"].clone())
        .ok_or("the answer carries an encrypted reasoning item")?;
    let home_key = key_with_hits(&r, 1)?;
    let other_key = KEYS.into_iter().find(|k| *k != home_key).ok_or("two keys")?;

    // Without the relay's help the other account refuses the follow-up.
    let followup = codex_followup(&reasoning);
    let direct = r.http.post(format!("{}/v1/responses", r.mock.base_url())).bearer_auth(other_key).json(&followup);
    let direct = direct.send().await?;
    assert_eq!(direct.status(), 400, "another account cannot read the encrypted reasoning");
    let error: Value = direct.json().await?;
    assert_eq!(error["error"]["code"], "invalid_encrypted_content", "the provider's account-mismatch error");
    r.mock.reset_counts();

    // The bound key refuses before output: failover to the other account, reasoning dropped.
    r.mock.set_key(home_key, KeyScript::new(["m1"]).reasoning().behaviour(Behaviour::rate_limited(30)));
    let resp = responses(&r, &followup).await?;
    assert_eq!(resp.status(), 200, "the new account accepts the request (no invalid_encrypted_content)");
    assert_eq!(header(&resp, "x-switchyard-reason"), "failover:rate_limited", "served by failover");
    let _ = resp.text().await?;
    let sent: Vec<_> = r.mock.requests().into_iter().filter(|q| q.path.ends_with("/responses")).collect();
    let to_home = sent.iter().find(|q| q.key.as_deref() == Some(home_key)).ok_or("the bound key was tried")?;
    assert_eq!(to_home.body, serde_json::to_vec(&followup)?, "the own key's attempt carries the client's bytes");
    let to_other = sent.iter().find(|q| q.key.as_deref() == Some(other_key)).ok_or("the other key served")?;
    let input = to_other.json().and_then(|j| j["input"].as_array().cloned()).ok_or("an input list")?;
    assert_eq!(input.len(), 3, "only the reasoning item was dropped: {input:?}");
    assert!(input.iter().all(|i| i["type"] != "reasoning"), "no reasoning item reached the other account");

    let r = r.stop().await?;
    let mut ledger = r.engine.attempts("c", 10).await?;
    ledger.reverse();
    let moved: Vec<Option<&str>> = ledger.iter().map(|a| a.moved.as_deref()).collect();
    assert_eq!(moved, [None, None, Some("dropped_account_state")], "only the failover attempt records the drop");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forced_move_drops_signed_thinking_blocks() -> TestResult {
    let r = two_keys("anthropic", KeyScript::new(["m1"]).reasoning()).await?;
    let user = |t: &str| json!({"role": "user", "content": t});
    let resp = r.chat("m1", vec![user("first")], false).await?;
    assert_eq!(resp.status(), 200, "the first call is served");
    let answer: Value = resp.json().await?;
    assert_eq!(answer["content"][0]["type"], "thinking", "the answer starts with a signed thinking block");
    let home_key = key_with_hits(&r, 1)?;
    let other_key = KEYS.into_iter().find(|k| *k != home_key).ok_or("two keys")?;
    let messages = vec![user("first"), json!({"role": "assistant", "content": answer["content"]}), user("second")];
    let body = json!({"model": "m1", "max_tokens": 16, "messages": messages});

    let direct = r.http.post(format!("{}/v1/messages", r.mock.base_url())).header("x-api-key", other_key);
    let direct = direct.header("anthropic-version", "2023-06-01").json(&body).send().await?;
    assert_eq!(direct.status(), 400, "another account refuses the signature");
    assert!(direct.text().await?.contains("signature"), "the error names the signature");

    r.mock.set_key(home_key, KeyScript::new(["m1"]).reasoning().behaviour(Behaviour::rate_limited(30)));
    let resp = r.post(body).await?;
    assert_eq!(resp.status(), 200, "after failover the new account accepts the conversation");
    assert_eq!(header(&resp, "x-switchyard-reason"), "failover:rate_limited", "served by failover");
    r.stop().await?;
    Ok(())
}
