//! Conversation affinity through the relay (docs/design.md invariant 15): a balanced
//! connection keeps each conversation's turns on one key, SWRR assigns new conversations so
//! the weights hold over conversations, turn affinity restores per-turn picks, and a warm
//! conversation leaves an ineligible key only at a turn boundary, with the cause recorded;
//! a key carrying far more than its share of the tokens gives a conversation away at a turn
//! boundary (cause `balance`) without changing how new conversations are assigned.

use std::collections::{BTreeSet, HashMap};

use crate::common::{eventually, header, relay, user, Key, Relay, TestResult};
use serde_json::{json, Value};
use switchyard_mock_provider::{Behaviour, KeyScript, PromptCache};

const KEYS: [&str; 3] = ["sk-conv-a", "sk-conv-b", "sk-conv-c"];

async fn two_one_one() -> Result<Relay, Box<dyn std::error::Error>> {
    let key = |label, secret, weight| Key { label, secret, weight, script: KeyScript::new(["m1"]) };
    relay("openai", &["m1"], vec![key("a", KEYS[0], 2), key("b", KEYS[1], 1), key("c", KEYS[2], 1)], Some("balanced"))
        .await
}

/// Turn `turn` (0-based) of conversation `i`: the even ones carry a Claude Code session id
/// (and all share one opening), the odd ones have no id and a first message of their own.
/// Every turn adds a new human message.
async fn send_turn(r: &Relay, i: usize, turn: usize) -> Result<reqwest::Response, Box<dyn std::error::Error>> {
    let opening =
        if i.is_multiple_of(2) { "help me with this repo".to_string() } else { format!("question number {i}") };
    let mut messages = vec![json!({"role": "system", "content": "you are a coding agent"}), user(&opening)];
    for t in 1..=turn {
        messages.push(json!({"role": "assistant", "content": format!("answer {t}")}));
        messages.push(user(&format!("follow-up {t}")));
    }
    let body = json!({"model": "m1", "max_tokens": 16, "messages": messages});
    let mut req = r.http.post(format!("{}{}", r.base(), r.path())).bearer_auth(&r.token).json(&body);
    if i.is_multiple_of(2) {
        req = req.header("x-claude-code-session-id", format!("session-{i}"));
    }
    Ok(req.send().await?)
}

/// 40 conversations of three turns, one after another (an interleaved order would give every
/// conversation the same SWRR slot each turn, 40 being a multiple of the cycle): the profile
/// of each call per conversation and the reasons seen per turn.
async fn workload(r: &Relay) -> Result<(Vec<Vec<String>>, Vec<HashMap<String, usize>>), Box<dyn std::error::Error>> {
    let mut profiles = vec![Vec::new(); 40];
    let mut reasons = vec![HashMap::new(); 3];
    for (i, seen) in profiles.iter_mut().enumerate() {
        for (turn, counts) in reasons.iter_mut().enumerate() {
            let resp = send_turn(r, i, turn).await?;
            assert_eq!(resp.status(), 200, "conversation {i} turn {turn} is served");
            *counts.entry(header(&resp, "x-switchyard-reason")).or_insert(0) += 1;
            seen.push(header(&resp, "x-switchyard-profile"));
        }
    }
    Ok((profiles, reasons))
}

fn hits(r: &Relay) -> [u64; 3] {
    KEYS.map(|k| r.mock.hits(k))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forty_three_turn_conversations_each_stay_on_one_key_and_split_2_1_1() -> TestResult {
    let r = two_one_one().await?;
    let status = r.engine.routing_status("c").await?;
    assert_eq!(
        (status.affinity.mode.as_str(), status.affinity.window_min),
        ("conversation", 10),
        "balanced connections default to conversation affinity with a 10-minute window"
    );
    let (profiles, reasons) = workload(&r).await?;
    for (i, seen) in profiles.iter().enumerate() {
        let keys: BTreeSet<&String> = seen.iter().collect();
        assert_eq!(keys.len(), 1, "conversation {i} touches exactly one key over its three turns: {seen:?}");
    }
    assert_eq!(reasons[0].get("swrr"), Some(&40), "every new conversation is assigned by SWRR: {:?}", reasons[0]);
    for (turn, counts) in reasons.iter().enumerate().skip(1) {
        assert_eq!(
            counts.get("conversation"),
            Some(&40),
            "turn {turn} of every warm conversation goes to its key: {counts:?}"
        );
    }
    assert_eq!(hits(&r), [60, 30, 30], "40 conversations split 20/10/10 by 2:1:1, three calls each");

    let r = r.stop().await?;
    let ledger = r.engine.attempts("c", 1000).await?;
    assert_eq!(ledger.len(), 120, "every physical attempt is recorded");
    let mut by_conversation: HashMap<String, BTreeSet<String>> = HashMap::new();
    for a in &ledger {
        let conversation = a.conversation.clone().ok_or("every routed attempt names its conversation")?;
        by_conversation.entry(conversation).or_default().insert(a.profile.clone());
    }
    assert_eq!(by_conversation.len(), 40, "40 distinct conversation keys in the ledger");
    assert!(by_conversation.values().all(|p| p.len() == 1), "the ledger agrees: one key per conversation");
    assert!(ledger.iter().all(|a| a.moved.is_none()), "nothing was ineligible, so nothing moved");
    assert!(
        by_conversation.keys().all(|k| !k.contains("session-") && !k.contains("question")),
        "the ledger holds conversation hashes, never raw ids or text"
    );
    let rows = serde_json::to_value(&ledger)?;
    let first = rows.get(0).and_then(Value::as_object).ok_or("attempts --json rows are objects")?;
    for column in ["conversation", "session", "cache_read_tokens", "cache_write_tokens", "moved"] {
        assert!(first.contains_key(column), "attempts --json rows carry `{column}` (docs/interface.md)");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_turn_affinity_the_same_workload_touches_more_keys() -> TestResult {
    let r = two_one_one().await?;
    let status = r.engine.set_affinity("c", switchyard_engine::AffinityMode::Turn, None).await?;
    assert_eq!(status.affinity.mode, switchyard_engine::AffinityMode::Turn, "the setting is shown at once");
    let (profiles, reasons) = workload(&r).await?;
    let touched: usize = profiles.iter().map(|seen| seen.iter().collect::<BTreeSet<_>>().len()).sum();
    assert!(
        touched > 40,
        "under turn affinity every turn is a fresh pick, so the 40 conversations touch more than 40 (conversation, key) pairs: {touched}"
    );
    for (turn, counts) in reasons.iter().enumerate() {
        assert_eq!(counts.get("swrr"), Some(&40), "turn {turn}: every turn is an SWRR pick: {counts:?}");
    }
    assert_eq!(hits(&r), [60, 30, 30], "SWRR over 120 fresh turns still splits 2:1:1");
    r.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ineligible_key_moves_the_conversation_at_the_next_turn_with_the_cause_recorded() -> TestResult {
    let r = two_one_one().await?;
    let resp = send_turn(&r, 0, 0).await?;
    assert_eq!(header(&resp, "x-switchyard-reason"), "swrr", "a new conversation is assigned");
    let home = header(&resp, "x-switchyard-profile");
    let home_key = KEYS.into_iter().find(|k| r.mock.hits(k) == 1).ok_or("exactly one key served the first turn")?;
    r.mock.set_key(home_key, KeyScript::new(["m1"]).behaviour(Behaviour::rate_limited(60)));

    let resp = send_turn(&r, 0, 1).await?;
    assert_eq!(resp.status(), 200, "the turn is served by another key");
    assert_eq!(header(&resp, "x-switchyard-attempts"), "2", "its key was tried first (still eligible), then failover");
    assert_eq!(header(&resp, "x-switchyard-reason"), "failover:rate_limited", "a failover, not a move");
    let relief = header(&resp, "x-switchyard-profile");
    assert_ne!(relief, home, "another key served the failover");

    let resp = send_turn(&r, 0, 2).await?;
    assert_eq!(resp.status(), 200, "the next turn is served");
    assert_eq!(header(&resp, "x-switchyard-attempts"), "1", "the cooling key is not tried again");
    let moved_to = header(&resp, "x-switchyard-profile");
    assert_ne!(moved_to, home, "at the turn boundary the conversation leaves its cooling key");
    assert_eq!(header(&resp, "x-switchyard-reason"), "swrr", "the new key is an SWRR pick");

    let resp = send_turn(&r, 0, 3).await?;
    assert_eq!(header(&resp, "x-switchyard-profile"), moved_to, "the moved conversation stays on its new key");
    assert_eq!(header(&resp, "x-switchyard-reason"), "conversation", "kept as a warm conversation");

    let r = r.stop().await?;
    let mut ledger = r.engine.attempts("c", 100).await?;
    ledger.reverse();
    let moved: Vec<(usize, Option<&str>)> = ledger.iter().enumerate().map(|(i, a)| (i, a.moved.as_deref())).collect();
    assert_eq!(ledger.len(), 5, "1 + 2 + 1 + 1 physical attempts");
    let cause = ledger[3].moved.as_deref().ok_or("the third turn's attempt records the move")?;
    assert!(cause.starts_with("excluded:"), "the cause names the exclusion of the old key: {cause}");
    assert!(
        moved.iter().filter(|(i, _)| *i != 3).all(|(_, m)| m.is_none()),
        "only the turn that moved records a move (failover does not): {moved:?}"
    );
    assert_eq!(ledger[1].profile, home, "the failing attempt went to the conversation's key");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explicit_conversation_header_groups_turns_and_never_goes_upstream() -> TestResult {
    let r = two_one_one().await?;
    let mut served = Vec::new();
    for (i, text) in ["first task", "an unrelated opening", "a third opening"].into_iter().enumerate() {
        let resp = r
            .http
            .post(format!("{}{}", r.base(), r.path()))
            .bearer_auth(&r.token)
            .header("x-switchyard-conversation", "conv-canary-7")
            .json(&json!({"model": "m1", "messages": [user(text)]}))
            .send()
            .await?;
        assert_eq!(resp.status(), 200, "call {i} is served");
        let want = if i == 0 { "swrr" } else { "conversation" };
        assert_eq!(header(&resp, "x-switchyard-reason"), want, "call {i}: one explicit conversation, one key");
        served.push(header(&resp, "x-switchyard-profile"));
    }
    assert!(served.windows(2).all(|w| w[0] == w[1]), "every call of the conversation went to one key: {served:?}");
    let requests = r.mock.requests();
    assert_eq!(requests.len(), 3, "three upstream calls");
    for req in &requests {
        assert!(
            req.headers.keys().all(|n| !n.as_str().starts_with("x-switchyard-")),
            "no x-switchyard-* header is forwarded upstream: {:?}",
            req.headers.keys().collect::<Vec<_>>()
        );
    }
    let r = r.stop().await?;
    assert!(!r.data_dir_text().contains("conv-canary-7"), "the raw conversation id is never stored");
    Ok(())
}

/// Turn `turn` of Anthropic conversation `name` (a Claude Code session), its human messages
/// `size` bytes each.
fn anthropic_turn(name: &str, turn: usize, size: usize) -> Value {
    let mut messages = vec![user(&format!("{name}: {}", "x".repeat(size)))];
    for t in 1..=turn {
        messages.push(json!({"role": "assistant", "content": format!("answer {t}")}));
        messages.push(user(&format!("{name} follow-up {t}: {}", "y".repeat(size))));
    }
    json!({"model": "m1", "max_tokens": 16, "system": "you are a coding agent", "messages": messages})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_far_over_its_token_share_gives_a_conversation_away_at_a_turn_boundary() -> TestResult {
    // The mock counts 10 000 tokens per 4 bytes, as Anthropic with its cache counts.
    let cache = PromptCache { ttl_secs: 300, account: None, scale: 10_000 };
    let script = || KeyScript { prompt_cache: Some(cache.clone()), ..KeyScript::new(["m1"]) };
    let keys = vec![
        Key { label: "a", secret: KEYS[0], weight: 1, script: script() },
        Key { label: "b", secret: KEYS[1], weight: 1, script: script() },
    ];
    let r = relay("anthropic", &["m1"], keys, Some("balanced")).await?;
    let send = |name: &'static str, turn: usize, size: usize| {
        let req = r
            .http
            .post(format!("{}{}", r.base(), r.path()))
            .header("x-api-key", &r.token)
            .header("anthropic-version", "2023-06-01")
            .header("x-claude-code-session-id", format!("session-{name}"))
            .json(&anthropic_turn(name, turn, size));
        async move {
            let resp = req.send().await?;
            let route =
                (resp.status().as_u16(), header(&resp, "x-switchyard-profile"), header(&resp, "x-switchyard-reason"));
            let _ = resp.bytes().await?;
            Ok::<_, Box<dyn std::error::Error>>(route)
        }
    };
    let recorded = |n: usize| {
        let engine = r.engine.clone();
        async move { Ok::<_, Box<dyn std::error::Error>>(engine.attempts("c", 100).await?.len() >= n) }
    };
    // A heavy conversation (millions of tokens a call) and a light one, one per key.
    let (status, heavy_home, reason) = send("heavy", 0, 2_000).await?;
    assert_eq!((status, reason.as_str()), (200, "swrr"), "a new conversation is assigned by SWRR");
    let (_, light_home, reason) = send("light", 0, 10).await?;
    assert_eq!(reason, "swrr", "so is the second");
    assert_ne!(light_home, heavy_home, "1:1 weights: the two new conversations take both keys");
    eventually("both attempts are recorded (their tokens learned)", || recorded(2)).await?;

    let (status, moved_to, reason) = send("heavy", 1, 2_000).await?;
    assert_eq!(status, 200, "the heavy conversation's next turn is served");
    assert_eq!(
        moved_to, light_home,
        "its key carries ~99 % of the tokens for a 50 % weight: it moves at the turn boundary"
    );
    assert_eq!(reason, "swrr", "a move's reason is swrr, its cause is in the ledger");
    eventually("the move is recorded", || recorded(3)).await?;

    // New conversations are still SWRR's: the third goes where the cycle says, the first key.
    let (_, third, reason) = send("third", 0, 10).await?;
    assert_eq!((third.as_str(), reason.as_str()), (heavy_home.as_str(), "swrr"), "SWRR did not advance for the move");

    let r = r.stop().await?;
    let mut ledger = r.engine.attempts("c", 100).await?;
    ledger.reverse();
    let moved: Vec<Option<&str>> = ledger.iter().map(|a| a.moved.as_deref()).collect();
    assert_eq!(
        moved,
        [None, None, Some("balance"), None],
        "only the heavy conversation's second turn moved, for balance"
    );
    let uncached = ledger[2].input_tokens.unwrap_or(0) + ledger[2].cache_write_tokens.unwrap_or(0);
    assert!(uncached > 1_000_000, "the moved turn re-sent its context uncached to the new key: {uncached} tokens");
    Ok(())
}
