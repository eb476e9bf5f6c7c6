//! `affinity-sim --bin-dir target/release [--seed N] [--conversations N] [--scale N]
//! [--active N]`: the measurement of conversation affinity (issue 14). Replays one
//! deterministic agent workload (`workload.rs`) through a real `switchyard relay serve`
//! against the mock provider modelling Anthropic's prompt cache per key, three times on fresh
//! data dirs — balanced over 3 keys weighted 2:1:1 with `turn` affinity, with `conversation`
//! affinity, and a single key (legacy) — and prints, from the relay's own ledger, each run's
//! cache-read share, cost at list-price ratios and the keys' shares against their weights.
//! Run it inside `scripts/with-keychain`.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod ledger;
mod stack;
mod workload;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::Value;

use ledger::Summary;
use stack::{Setup, Stack, SLUG};
use workload::{plan, Rng};

struct Options {
    bin_dir: PathBuf,
    seed: u64,
    conversations: usize,
    scale: u64,
    active: usize,
    /// Measure a pool over three providers against one of them alone instead.
    pool: bool,
}

fn main() -> Result<()> {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?.block_on(simulate())
}

fn options() -> Result<Options> {
    let mut o = Options {
        bin_dir: PathBuf::from("target/release"),
        seed: 14,
        conversations: 200,
        scale: 10,
        active: 8,
        pool: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--bin-dir" => o.bin_dir = PathBuf::from(value()?),
            "--seed" => o.seed = value()?.parse()?,
            "--conversations" => o.conversations = value()?.parse()?,
            // Tokens per 4 body bytes (the mock's estimate times this).
            "--scale" => o.scale = value()?.parse::<u64>()?.max(1),
            // Conversations in flight at once (their requests interleave in seeded order).
            "--active" => o.active = value()?.parse::<usize>()?.max(1),
            "--pool" => o.pool = true,
            other => bail!("unknown argument {other}"),
        }
    }
    Ok(o)
}

async fn simulate() -> Result<()> {
    let o = options()?;
    let conversations = plan(o.seed, o.conversations);
    let requests: usize = conversations.iter().map(|c| c.requests()).sum();
    let turns: usize = conversations.iter().map(|c| c.turns.len()).sum();
    println!(
        "Workload: seed {}, {} conversations, {turns} turns, {requests} requests; {} conversations in flight; \
         bodies at {} tokens per 4 bytes.\n",
        o.seed, o.conversations, o.active, o.scale
    );
    let work = std::env::temp_dir().join(format!("switchyard-affinity-sim-{}", std::process::id()));
    let runs: Vec<(&str, Setup)> = if o.pool {
        vec![
            ("(d) one member alone (legacy, price 1.0)", Setup::Single),
            ("(e) pool 2:1:1 over three providers priced 1 : 0.6 : 0.3", Setup::Pool),
        ]
    } else {
        vec![
            ("(a) balanced 2:1:1, turn affinity", Setup::Balanced("turn")),
            ("(b) balanced 2:1:1, conversation affinity", Setup::Balanced("conversation")),
            ("(c) single key (legacy)", Setup::Single),
        ]
    };
    let mut summaries = Vec::new();
    for (i, (name, setup)) in runs.into_iter().enumerate() {
        let started = Instant::now();
        let stack = Stack::start(&o.bin_dir, &work.join(format!("run-{i}")), setup, o.scale).await?;
        let sent = replay(&stack, conversations.clone(), &o).await;
        let summary = match sent {
            Ok(sent) => read_ledger(&stack, name, sent, setup).await,
            Err(e) => Err(e),
        };
        stack.stop().await;
        let summary = summary?;
        eprintln!("{name}: {:.1} s", started.elapsed().as_secs_f64());
        summaries.push(summary);
    }
    let _ = std::fs::remove_dir_all(&work);
    if o.pool {
        let alone = summaries.first().map(Summary::cost);
        for s in &summaries {
            println!("{}", s.table(alone));
        }
        if let [alone, pool] = &summaries[..] {
            println!(
                "### Pool against one member alone\n\n- cache-read share: alone {:.1} %, pool {:.1} %\n- cost: alone {:.1} M, pool {:.1} M ({:+.1} %)",
                100.0 * alone.read_share(),
                100.0 * pool.read_share(),
                alone.cost() / 1e6,
                pool.cost() / 1e6,
                100.0 * (pool.cost() / alone.cost() - 1.0)
            );
        }
        return Ok(());
    }
    let single = summaries.get(2).map(Summary::cost);
    for s in &summaries {
        println!("{}", s.table(single));
    }
    print_targets(&summaries);
    Ok(())
}

/// Sends every conversation's requests, `active` conversations at a time, picking which one
/// speaks next with a seeded generator; one request at a time, so the relay sees the same
/// order every run. Returns how many requests were sent.
async fn replay(stack: &Stack, conversations: Vec<workload::Conversation>, o: &Options) -> Result<usize> {
    let client = reqwest::Client::builder().tcp_nodelay(true).build()?;
    let url = format!("{}/c/{SLUG}/v1/messages?beta=true", stack.relay_url);
    let mut waiting = conversations.into_iter();
    let mut active: Vec<_> = waiting.by_ref().take(o.active).collect();
    let mut pick = Rng::new(o.seed ^ 0x00C0_FFEE);
    let (mut sent, mut failed) = (0usize, 0usize);
    while !active.is_empty() {
        let i = usize::try_from(pick.range(0, active.len() as u64 - 1))?;
        let Some(body) = active[i].next_request(o.scale) else {
            match waiting.next() {
                Some(next) => active[i] = next,
                None => {
                    active.remove(i);
                }
            }
            continue;
        };
        let resp = client
            .post(&url)
            .header("x-api-key", &stack.token)
            .header("anthropic-version", "2023-06-01")
            .header("x-claude-code-session-id", &active[i].session)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await?;
        let ok = resp.status().is_success();
        let _ = resp.bytes().await?;
        sent += 1;
        failed += usize::from(!ok);
        if sent % 1000 == 0 {
            eprintln!("  {sent} requests ({failed} failed)");
        }
    }
    Ok(sent)
}

/// The run's ledger once every request's attempt is written (the relay writes in batches),
/// read from its SQLite file (read-only; every row, no listing cap).
async fn read_ledger(stack: &Stack, name: &str, sent: usize, setup: Setup) -> Result<Summary> {
    // A pool's "keys" are its members (one key each), labelled by connection, priced apart.
    let mut factor = std::collections::HashMap::new();
    let profiles: Vec<Value> = match setup {
        Setup::Pool => {
            let mut all = Vec::new();
            for (slug, _, weight, price) in stack::POOL_MEMBERS {
                let list: Vec<Value> =
                    serde_json::from_str(&stack.cli(&["--json", "profile", "list", slug], None).await?)?;
                for mut p in list {
                    factor.insert(p["id"].as_str().unwrap_or_default().to_string(), price);
                    p["label"] = Value::from(slug);
                    p["weight"] = Value::from(weight);
                    all.push(p);
                }
            }
            all
        }
        _ => serde_json::from_str(&stack.cli(&["--json", "profile", "list", SLUG], None).await?)?,
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let db = stack.data.join("switchyard.db");
    loop {
        let rows = ledger::read_rows(&db).await?;
        if rows.len() >= sent || Instant::now() > deadline {
            if rows.len() < sent {
                eprintln!("{name}: the ledger holds {} attempts of {sent} requests", rows.len());
            }
            let summary = Summary::from_ledger(name, &profiles, &rows);
            return Ok(if factor.is_empty() { summary } else { summary.priced(&rows, &factor) });
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Issue 14's targets against runs (a), (b), (c).
fn print_targets(s: &[Summary]) {
    let [turn, conv, single] = s else { return };
    println!("### Targets\n");
    let vs = 100.0 * (conv.cost() / single.cost() - 1.0);
    let met = |ok: bool| if ok { "met" } else { "missed" };
    println!("- `conversation` cost within 5 % of the single key: {vs:+.1} % — {}", met(vs.abs() <= 5.0));
    println!(
        "- (for reference) `turn` cost vs single key: {:+.1} %; cache-read share turn {:.1} %, conversation {:.1} %, single {:.1} %",
        100.0 * (turn.cost() / single.cost() - 1.0),
        100.0 * turn.read_share(),
        100.0 * conv.read_share(),
        100.0 * single.read_share()
    );
    let shares = conv.shares();
    let exact = conv
        .keys
        .iter()
        .zip(&shares)
        .all(|(k, (w, _, _))| (k.conversations as f64 - w * conv.conversations() as f64).abs() < 1e-9);
    let conv_line: Vec<String> = conv.keys.iter().map(|k| format!("{} {}", k.label, k.conversations)).collect();
    println!(
        "- conversations per key equal to the weights (`conversation`): {} — {}",
        conv_line.join(", "),
        met(exact)
    );
    let within = shares.iter().all(|(w, _, t)| (t / w - 1.0).abs() <= 0.15);
    let token_line: Vec<String> = conv
        .keys
        .iter()
        .zip(&shares)
        .map(|(k, (w, _, t))| format!("{} {:+.1} %", k.label, 100.0 * (t / w - 1.0)))
        .collect();
    println!("- token share within ±15 % of the weight (`conversation`): {} — {}", token_line.join(", "), met(within));
}
