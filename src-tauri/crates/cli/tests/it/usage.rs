//! `switchyard usage`, `prices`, `attempts --format jsonl` and the new settings across
//! processes: `relay serve` records tagged calls to the mock provider, later commands read
//! the ledger — `usage --json` in the contract's shape with `cost_usd: null` and `complete:
//! false` until a price is set, sums by tag, JSON lines past the old 10 000-row cap — and no
//! output carries the key.

use crate::common;

use crate::common::{post_messages, run, TestResult};
use serde_json::Value;
use switchyard_mock_provider::{KeyScript, MockProvider};
use switchyard_store::attempts::{self, AttemptRow};
use switchyard_store::Store;

const CANARY: &str = "sk-canary-cli-usage-8f2d41";

fn keys_of(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    k.sort();
    k
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_prices_and_the_export_read_what_the_relay_recorded() -> TestResult {
    let mock = MockProvider::start().await?;
    mock.set_key(CANARY, KeyScript::new(["m1"]).quota(30, 29));
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let base = mock.base_url();
    let add =
        ["connection", "add", "c", "--protocol", "anthropic", "--base-url", &base, "--model", "m1", "--secret-stdin"];
    assert_eq!(run(d, &add, Some(CANARY))?.code, 0, "connection added (legacy)");
    assert_eq!(run(d, &["settings", "time-zone", "Europe/Berlin"], None)?.code, 0, "a zone by IANA name");
    let bad_zone = run(d, &["settings", "time-zone", "Nowhere/Atlantis"], None)?;
    assert_eq!(bad_zone.code, 2, "an unknown zone is invalid input: {}", bad_zone.stderr);

    let token = run(d, &["relay", "token"], None)?.stdout.trim().to_string();
    let relay = common::serve(d)?;
    let addr = relay.addr.clone();
    let tagged = "x-switchyard-tag-job: nightly\r\n";
    let answers = [
        post_messages(&addr, &token, tagged)?,
        post_messages(&addr, &token, tagged)?,
        post_messages(&addr, &token, "")?,
    ];
    let refused = post_messages(&addr, &token, &format!("x-switchyard-tag-job: {CANARY}\r\n"))?;
    assert!(relay.stop()?, "SIGTERM stops the relay, flushing the ledger");
    for a in &answers {
        assert!(a.starts_with("HTTP/1.1 200"), "each call is served: {a:.80}");
    }
    assert!(refused.starts_with("HTTP/1.1 400"), "a tag value that looks like a key is refused: {refused:.80}");
    assert!(refused.contains("invalid_tag"), "with its reason");

    let unpriced = run(d, &["--json", "usage", "c", "--by", "tag"], None)?;
    assert_eq!(unpriced.code, 0, "usage succeeds: {}", unpriced.stderr);
    let body: Value = serde_json::from_str(&unpriced.stdout)?;
    for k in ["rows", "complete"] {
        assert!(body.get(k).is_some(), "the contract's {k} is there: {body}");
    }
    let row = &body["rows"][1];
    assert_eq!(
        keys_of(row),
        [
            "cache_read_tokens",
            "cache_write_tokens",
            "cost_usd",
            "errors",
            "input_tokens",
            "key",
            "output_tokens",
            "requests"
        ],
        "a row has the contract's fields (and errors)"
    );
    assert_eq!((row["key"].as_str(), row["requests"].as_i64()), (Some("job=nightly"), Some(2)), "summed by tag");
    assert_eq!(row["cost_usd"], Value::Null, "no price: cost is null, not 0");
    assert_eq!(body["complete"], Value::Bool(false), "no price: incomplete");
    let human = run(d, &["usage", "c"], None)?;
    assert!(human.stdout.contains("unknown") && human.stdout.contains("incomplete"), "{}", human.stdout);

    let set = run(d, &["prices", "set", "m1", "--input", "3", "--output", "15", "--cache-read", "0.3"], None)?;
    assert_eq!(set.code, 0, "price set: {}", set.stderr);
    assert!(set.stdout.contains("m1"), "the table is printed: {}", set.stdout);
    let bad = run(d, &["prices", "set", "m1", "--input", "-1", "--output", "15"], None)?;
    assert_eq!(bad.code, 2, "a negative price is invalid");
    let priced = run(d, &["--json", "usage", "c", "--since", "1d"], None)?;
    let body: Value = serde_json::from_str(&priced.stdout)?;
    assert_eq!(body["complete"], Value::Bool(true), "priced: complete: {body}");
    assert!(body["rows"][0]["cost_usd"].as_f64().is_some_and(|c| c > 0.0), "a number: {body}");
    assert_eq!(body["rows"][0]["requests"].as_i64(), Some(3), "three attempts today");
    let prices = run(d, &["--json", "prices"], None)?;
    let table: Value = serde_json::from_str(&prices.stdout)?;
    assert_eq!(table["prices"][0]["cache_write"], Value::Null, "a cache price not given stays null");

    let listed = run(d, &["--json", "attempts", "c"], None)?;
    let rows: Value = serde_json::from_str(&listed.stdout)?;
    assert_eq!(rows[0]["connection"].as_str(), Some("c"), "attempts --json rows name the connection");
    assert_eq!(rows[2]["tags"], serde_json::json!({"job": "nightly"}), "and carry the tags (oldest is tagged)");
    assert_eq!(rows[0]["tags"], serde_json::json!({}), "an untagged row has an empty object");

    let lines = run(d, &["attempts", "c", "--format", "jsonl"], None)?;
    let parsed: Vec<Value> = lines.stdout.lines().map(serde_json::from_str).collect::<Result<_, _>>()?;
    assert_eq!(parsed.len(), 3, "one line per attempt");
    assert_eq!(parsed[0]["tags"]["job"].as_str(), Some("nightly"), "oldest first");

    let quota = run(d, &["quota", "c"], None)?;
    let all = [&unpriced, &human, &set, &priced, &prices, &listed, &lines, &quota]
        .iter()
        .map(|r| format!("{}{}", r.stdout, r.stderr))
        .collect::<String>();
    assert!(!all.contains("canary"), "no secret in quota, usage, prices or export output");
    mock.shutdown().await?;
    Ok(())
}

/// Adds legacy connection `c` (key [`CANARY`]) and returns its id and its primary's id, for
/// rows seeded straight into the ledger.
fn legacy_ids(d: &std::path::Path) -> Result<(String, String), Box<dyn std::error::Error>> {
    assert_eq!(common::add_legacy(d, "c", CANARY)?.code, 0);
    let shown: Value = serde_json::from_str(&run(d, &["--json", "connection", "show", "c"], None)?.stdout)?;
    Ok((
        shown["connection"]["id"].as_str().unwrap_or_default().to_string(),
        shown["profiles"][0]["id"].as_str().unwrap_or_default().to_string(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonl_streams_every_row_past_the_old_listing_cap() -> TestResult {
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let (connection_id, profile) = legacy_ids(d)?;
    const N: i64 = 12_345;
    let store = Store::open(&d.join("switchyard.db")).await?;
    let rows: Vec<AttemptRow> = (0..N)
        .map(|i| AttemptRow {
            at_ms: 1_795_000_000_000 + i,
            connection_id: connection_id.clone(),
            turn: format!("t{i}"),
            attempt: 1,
            profile_id: profile.clone(),
            reason: "primary".into(),
            model: Some("m1".into()),
            status: Some(200),
            ttfb_ms: Some(1),
            duration_ms: Some(2),
            input_tokens: Some(i),
            output_tokens: Some(1),
            ..Default::default()
        })
        .collect();
    attempts::insert_batch(&mut *store.acquire().await?, rows.to_vec()).await?;
    store.close().await;

    let started = std::time::Instant::now();
    let out = run(d, &["attempts", "c", "--format", "jsonl"], None)?;
    let took = started.elapsed();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let inputs: Vec<i64> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).map(|v| v["input_tokens"].as_i64().unwrap_or(-1)))
        .collect::<Result<_, _>>()?;
    assert_eq!(inputs.len() as i64, N, "every row, past the 10 000 the listing stops at ({took:?})");
    assert!(inputs.iter().copied().eq(0..N), "oldest first, each row once");
    let capped: Value = serde_json::from_str(&run(d, &["--json", "attempts", "c", "--limit", "20000"], None)?.stdout)?;
    assert_eq!(capped.as_array().map(Vec::len), Some(10_000), "the listing keeps its cap");
    assert!(!out.stdout.contains("canary"), "no secret in the export");
    let set = run(d, &["settings", "ledger-retention-rows", "5000"], None)?;
    assert_eq!(set.code, 0, "{}", set.stderr);
    let settings: Value = serde_json::from_str(&run(d, &["--json", "settings"], None)?.stdout)?;
    assert_eq!(settings["ledger_retention_rows"].as_i64(), Some(5000), "the cap is a setting");
    assert_eq!(run(d, &["settings", "ledger-retention-rows", "10"], None)?.code, 2, "under 1 000 is refused");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tag_value_with_spaces_cannot_fake_columns_in_the_usage_table() -> TestResult {
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let (connection_id, profile) = legacy_ids(d)?;
    // A caller chose a value that reads as the rest of a row: 999 requests, 0 errors, …
    let fake = "x                                   999      0 1 1 1 1 1.0000";
    let row = |turn: &str, tags: Option<String>| AttemptRow {
        at_ms: 1_795_000_000_000,
        connection_id: connection_id.clone(),
        turn: turn.into(),
        attempt: 1,
        profile_id: profile.clone(),
        reason: "primary".into(),
        model: Some("m1".into()),
        status: Some(200),
        input_tokens: Some(5),
        output_tokens: Some(1),
        tags,
        ..Default::default()
    };
    let tags = serde_json::json!({ "job": fake }).to_string();
    let store = Store::open(&d.join("switchyard.db")).await?;
    attempts::insert_batch(&mut *store.acquire().await?, vec![row("t1", Some(tags)), row("t2", None)]).await?;
    store.close().await;

    let out = run(d, &["usage", "c", "--by", "tag"], None)?;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let line = out.stdout.lines().find(|l| l.contains("job=")).unwrap_or_default().to_string();
    let quoted = serde_json::to_string(&format!("job={fake}"))?;
    assert!(
        line.starts_with(&quoted),
        "a key with spaces is quoted, so its columns cannot pass for the row's: {line:?}"
    );
    let requests_column: Vec<&str> = line[quoted.len()..].split_whitespace().collect();
    assert_eq!(requests_column.first().copied(), Some("1"), "the row's own count follows the quoted key: {line:?}");
    let plain = out.stdout.lines().find(|l| l.starts_with("(untagged)")).unwrap_or_default();
    assert!(!plain.starts_with('"'), "a key without spaces stays as it is: {plain:?}");
    Ok(())
}

/// A table line's key as written (quoted or bare) and the rest of the line.
fn split_key(line: &str) -> (&str, &str) {
    let Some(rest) = line.strip_prefix('"') else { return line.split_once(' ').unwrap_or((line, "")) };
    let mut escaped = false;
    for (i, c) in rest.char_indices() {
        match (escaped, c) {
            (true, _) => escaped = false,
            (false, '\\') => escaped = true,
            (false, '"') => return (&line[..i + 2], &rest[i + 1..]),
            _ => {}
        }
    }
    (line, "")
}

/// Issue 39: a stored tag value (or a client's model name) with a zero-width, bidi-override, NEL,
/// C1 (CSI) or DEL character reached the terminal raw — hiding text, reordering a line, starting
/// an escape sequence — and a model named `total` passed for the total row. Fails on the code
/// before: those characters were printed as they are and `"total"` was not quoted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invisible_and_control_characters_in_a_key_are_spelled_out_in_the_usage_table() -> TestResult {
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let (connection_id, profile) = legacy_ids(d)?;
    let values = ["a\u{200b}b", "x\u{202e}0 0 999", "x\u{85}999 0 1 1 1 1 1", "x\u{9b}2J", "x\u{7f}y", "ab"];
    let row = |turn: usize, model: &str, tags: Option<String>| AttemptRow {
        at_ms: 1_795_000_000_000 + turn as i64,
        connection_id: connection_id.clone(),
        turn: format!("t{turn}"),
        attempt: 1,
        profile_id: profile.clone(),
        reason: "primary".into(),
        model: Some(model.into()),
        status: Some(200),
        input_tokens: Some(5),
        output_tokens: Some(1),
        tags,
        ..Default::default()
    };
    let mut rows: Vec<AttemptRow> = values
        .iter()
        .enumerate()
        .map(|(i, v)| row(i, "m1", Some(serde_json::json!({ "job": v }).to_string())))
        .collect();
    rows.push(row(values.len(), "total", None));
    let store = Store::open(&d.join("switchyard.db")).await?;
    attempts::insert_batch(&mut *store.acquire().await?, rows).await?;
    store.close().await;

    let out = run(d, &["usage", "c", "--by", "tag"], None)?;
    assert_eq!(out.code, 0, "{}", out.stderr);
    for l in out.stdout.lines() {
        assert!(l.chars().all(|c| c == ' ' || c.is_ascii_graphic()), "every line is printable ASCII: {l:?}");
    }
    let header = out.stdout.lines().find(|l| l.starts_with("TAG")).unwrap_or_default();
    let columns = header.split_whitespace().count();
    assert_eq!(columns, 8, "the header names the key and seven numbers: {header:?}");
    let mut keys = vec![];
    for l in out.stdout.lines().filter(|l| l.starts_with("job=") || l.starts_with("\"job=")) {
        let (key, rest) = split_key(l);
        let numbers: Vec<&str> = rest.split_whitespace().collect();
        assert_eq!(numbers.len(), columns - 1, "the key is followed by the header's number columns only: {l:?}");
        assert_eq!(numbers.first().copied(), Some("1"), "the row's own count follows its key: {l:?}");
        keys.push(key.to_string());
    }
    keys.sort();
    let mut want = [
        r#""job=a\u{200b}b""#,
        r#""job=x\u{202e}0 0 999""#,
        r#""job=x\u{85}999 0 1 1 1 1 1""#,
        r#""job=x\u{9b}2J""#,
        r#""job=x\u{7f}y""#,
        "job=ab",
    ];
    want.sort_unstable();
    assert_eq!(keys, want, "one line per tag value, characters outside printable ASCII spelled out, a plain one bare");

    let out = run(d, &["usage", "c", "--by", "model"], None)?;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let totals = out.stdout.lines().filter(|l| l.split_whitespace().next() == Some("total")).count();
    assert_eq!(totals, 1, "only the total row reads as the total:\n{}", out.stdout);
    assert!(out.stdout.lines().any(|l| l.starts_with("\"total\" ")), "a model named total is quoted:\n{}", out.stdout);
    Ok(())
}

#[test]
fn prices_set_refuses_a_key_shaped_model_name_and_never_repeats_it() -> TestResult {
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    for model in ["sk-proj-canary-7c41d2e9", "AKIAIOSFODNN7EXAMPLE", "canaryAbCdEfGhIjKlMnOp0123456789xyz"] {
        let out = run(d, &["prices", "set", model, "--input", "1", "--output", "2"], None)?;
        assert_eq!(out.code, 2, "{model}: refused as invalid input: {}", out.stderr);
        assert!(!out.stdout.contains(model) && !out.stderr.contains(model), "{model}: the refusal does not repeat it");
    }
    let table = run(d, &["--json", "prices"], None)?;
    assert!(!table.stdout.contains("canary") && !table.stdout.contains("AKIA"), "nothing was stored: {}", table.stdout);
    let ok = run(d, &["prices", "set", "claude-sonnet-4-5-20250929", "--input", "3", "--output", "15"], None)?;
    assert_eq!(ok.code, 0, "an ordinary model name is fine: {}", ok.stderr);
    Ok(())
}
