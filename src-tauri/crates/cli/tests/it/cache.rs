//! Prompt-cache accounting in `switchyard attempts` and `routing status` (docs/interface.md,
//! "Cache accounting"): the whole prompt per attempt counted per dialect — Anthropic's
//! `input_tokens` leaves the cache tokens out, OpenAI's includes them — the hit ratio per
//! profile over the ledger (`--json` `cache`, `null` ratio without tokens) and per profile and
//! conversation under the attempts table. Rows are written into the real SQLite ledger.

use crate::common;

use crate::common::{run, TestResult};
use serde_json::{json, Value};
use switchyard_store::attempts::{self, AttemptRow};
use switchyard_store::Store;

const CANARY: &str = "sk-canary-cli-cache-77c1";

/// A successful attempt of `conversation` with these counts (as the provider stated them).
fn row(connection: &str, profile: &str, conversation: &str, counts: (i64, i64, i64), status: i64) -> AttemptRow {
    let (input, read, write) = counts;
    AttemptRow {
        at_ms: 1_795_000_000_000,
        connection_id: connection.into(),
        turn: format!("t-{conversation}"),
        attempt: 1,
        profile_id: profile.into(),
        reason: "legacy_primary".into(),
        model: Some("m1".into()),
        status: Some(status),
        ttfb_ms: Some(1),
        duration_ms: Some(2),
        input_tokens: Some(input),
        output_tokens: Some(1),
        conversation: Some(conversation.into()),
        cache_read_tokens: Some(read),
        cache_write_tokens: Some(write),
        ..Default::default()
    }
}

/// (connection id, primary profile id) of `slug`.
fn ids(d: &std::path::Path, slug: &str) -> Result<(String, String), Box<dyn std::error::Error>> {
    let shown: Value = serde_json::from_str(&run(d, &["--json", "connection", "show", slug], None)?.stdout)?;
    let id = |v: &Value| v.as_str().map(str::to_string).ok_or("an id");
    Ok((id(&shown["connection"]["id"])?, id(&shown["profiles"][0]["id"])?))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hit_ratios_count_the_whole_prompt_per_dialect() -> TestResult {
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let anthropic = ["connection", "add", "a", "--protocol", "anthropic", "--base-url", "https://api.example.com"];
    assert_eq!(run(d, &[&anthropic[..], &["--secret-stdin"]].concat(), Some(CANARY))?.code, 0, "anthropic added");
    assert_eq!(common::add_legacy(d, "o", CANARY)?.code, 0, "openai added");
    let (a_conn, a_key) = ids(d, "a")?;
    let (o_conn, o_key) = ids(d, "o")?;
    let fresh = run(d, &["--json", "routing", "status", "a"], None)?;
    let fresh: Value = serde_json::from_str(&fresh.stdout)?;
    assert_eq!(
        fresh["profiles"][0]["cache"],
        json!({"read_tokens": 0, "input_tokens": 0, "hit_ratio": null}),
        "no attempts yet: zero tokens and a null ratio, not 0"
    );

    let store = Store::open(&d.join("switchyard.db")).await?;
    let rows = [
        // Anthropic: input excludes the cache: prompts of 1000 (write 900) and 1000 (read 950).
        row(&a_conn, &a_key, "conv-1", (100, 0, 900), 200),
        row(&a_conn, &a_key, "conv-1", (50, 950, 0), 200),
        row(&a_conn, &a_key, "conv-2", (400, 600, 0), 200),
        // A failed attempt counts nothing.
        row(&a_conn, &a_key, "conv-2", (5000, 0, 0), 529),
        // OpenAI: the prompt includes the cached tokens (800 of 1000).
        row(&o_conn, &o_key, "conv-3", (1000, 800, 0), 200),
    ];
    attempts::insert_batch(&mut *store.acquire().await?, rows.to_vec()).await?;
    store.close().await;

    let status: Value = serde_json::from_str(&run(d, &["--json", "routing", "status", "a"], None)?.stdout)?;
    assert_eq!(
        status["profiles"][0]["cache"],
        json!({"read_tokens": 1550, "input_tokens": 3000, "hit_ratio": 1550.0 / 3000.0}),
        "Anthropic: prompt = input + cache read + cache write, failed attempts left out"
    );
    let status: Value = serde_json::from_str(&run(d, &["--json", "routing", "status", "o"], None)?.stdout)?;
    assert_eq!(
        status["profiles"][0]["cache"],
        json!({"read_tokens": 800, "input_tokens": 1000, "hit_ratio": 0.8}),
        "OpenAI: the prompt tokens already include the cached ones"
    );
    let listed: Value = serde_json::from_str(&run(d, &["--json", "attempts", "a"], None)?.stdout)?;
    let prompts: Vec<Option<i64>> =
        listed.as_array().ok_or("an array")?.iter().map(|r| r["prompt_tokens"].as_i64()).collect();
    assert_eq!(prompts, [Some(5000), Some(1000), Some(1000), Some(1000)], "each row's whole prompt, newest first");
    let openai: Value = serde_json::from_str(&run(d, &["--json", "attempts", "o"], None)?.stdout)?;
    assert_eq!(openai[0]["prompt_tokens"], json!(1000), "OpenAI's prompt is its input count");

    let human = run(d, &["attempts", "a"], None)?;
    assert_eq!(human.code, 0, "{}", human.stderr);
    for line in [
        "profile primary: 51.7 % (1550 of 3000)".to_string(),
        "conversation conv-1: 47.5 % (950 of 2000)".to_string(),
        "conversation conv-2: 60.0 % (600 of 1000)".to_string(),
    ] {
        assert!(human.stdout.contains(&line), "the table ends with `{line}`: {}", human.stdout);
    }
    let table = run(d, &["routing", "status", "a"], None)?;
    assert!(table.stdout.contains("CACHE") && table.stdout.contains("51.7 %"), "people see it: {}", table.stdout);
    assert!(!format!("{}{}", human.stdout, table.stdout).contains("canary"), "no secret in the output");
    Ok(())
}
