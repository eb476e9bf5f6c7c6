//! What the relay recorded for one run, read straight from its ledger (the `attempts` table of
//! the run's SQLite file, opened read-only, so no listing cap applies), and the table it
//! makes: the cache-read share of input tokens, the cost at Anthropic's list-price ratios,
//! each key's share of conversations and of tokens against its weight. Nothing here reads
//! the mock.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use anyhow::Result;
use serde_json::Value;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Row as _};

/// One attempt as the ledger holds it (Anthropic counts: `input` excludes cache tokens).
#[derive(Debug, Clone, Default)]
pub struct Row {
    pub profile: String,
    pub status: Option<i64>,
    pub input: Option<i64>,
    pub output: Option<i64>,
    pub read: Option<i64>,
    pub write: Option<i64>,
    pub reason: String,
    pub moved: Option<String>,
    pub conversation: Option<String>,
    pub session: Option<String>,
}

/// Every attempt in the ledger at `db`, oldest first, and how many there are.
pub async fn read_rows(db: &Path) -> Result<Vec<Row>> {
    let mut conn = SqliteConnectOptions::new().filename(db).read_only(true).connect().await?;
    let rows = sqlx::query(
        "SELECT profile_id, status, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, \
         reason, moved, conversation, session FROM attempts ORDER BY id",
    )
    .fetch_all(&mut conn)
    .await?;
    let rows = rows
        .iter()
        .map(|r| Row {
            profile: r.get(0),
            status: r.get(1),
            input: r.get(2),
            output: r.get(3),
            read: r.get(4),
            write: r.get(5),
            reason: r.get(6),
            moved: r.get(7),
            conversation: r.get(8),
            session: r.get(9),
        })
        .collect();
    Ok(rows)
}

/// Relative list prices per token: uncached input, cache write, cache read, output.
const PRICE: (f64, f64, f64, f64) = (1.0, 1.25, 0.1, 5.0);

/// One key's part of a run.
#[derive(Debug, Clone, Default)]
pub struct KeyPart {
    pub label: String,
    pub weight: u64,
    /// Conversations whose first request it served.
    pub conversations: usize,
    /// Input tokens (uncached + written + read) it served.
    pub tokens: i64,
}

/// One run, from its ledger rows.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub name: String,
    pub attempts: usize,
    pub failed: usize,
    pub input: i64,
    pub write: i64,
    pub read: i64,
    pub output: i64,
    pub keys: Vec<KeyPart>,
    pub reasons: BTreeMap<String, usize>,
    pub moved: usize,
    /// Moves made for token balance (`moved` = `balance`).
    pub balance_moves: usize,
    /// The cost with each key's tokens at its own relative price (a pool over providers).
    pub priced_cost: Option<f64>,
}

impl Summary {
    /// `profiles`: `profile list --json`; `rows`: the ledger, oldest first.
    pub fn from_ledger(name: &str, profiles: &[Value], rows: &[Row]) -> Summary {
        let mut keys: Vec<KeyPart> = profiles
            .iter()
            .map(|p| KeyPart {
                label: p["label"].as_str().unwrap_or("?").to_owned(),
                weight: p["weight"].as_u64().unwrap_or(0),
                ..KeyPart::default()
            })
            .collect();
        let index: HashMap<&str, usize> =
            profiles.iter().enumerate().filter_map(|(i, p)| Some((p["id"].as_str()?, i))).collect();
        let mut summary = Summary { name: name.to_owned(), attempts: rows.len(), ..Summary::default() };
        let mut opened: HashSet<String> = HashSet::new();
        for row in rows {
            if !row.status.is_some_and(|s| (200..300).contains(&s)) {
                summary.failed += 1;
            }
            let (input, write, read) = (row.input.unwrap_or(0), row.write.unwrap_or(0), row.read.unwrap_or(0));
            summary.input += input;
            summary.write += write;
            summary.read += read;
            summary.output += row.output.unwrap_or(0);
            *summary.reasons.entry(row.reason.clone()).or_default() += 1;
            summary.moved += usize::from(row.moved.is_some());
            summary.balance_moves += usize::from(row.moved.as_deref().is_some_and(|m| m.starts_with("balance")));
            let Some(&key) = index.get(row.profile.as_str()) else { continue };
            keys[key].tokens += input + write + read;
            let conversation = row.conversation.as_deref().or(row.session.as_deref()).unwrap_or("");
            if opened.insert(conversation.to_owned()) {
                keys[key].conversations += 1;
            }
        }
        summary.keys = keys;
        summary
    }

    pub fn total_input(&self) -> i64 {
        self.input + self.write + self.read
    }

    pub fn read_share(&self) -> f64 {
        self.read as f64 / (self.total_input().max(1)) as f64
    }

    /// Cost in relative units (uncached input token = 1), at each key's price when priced.
    pub fn cost(&self) -> f64 {
        if let Some(c) = self.priced_cost {
            return c;
        }
        let (input, write, read, output) = PRICE;
        self.input as f64 * input + self.write as f64 * write + self.read as f64 * read + self.output as f64 * output
    }

    /// The run priced per key: `factor` of a profile id times the list-price ratios (1 when absent).
    pub fn priced(mut self, rows: &[Row], factor: &HashMap<String, f64>) -> Summary {
        let (pi, pw, pr, po) = PRICE;
        let cost = rows
            .iter()
            .map(|r| {
                let f = factor.get(&r.profile).copied().unwrap_or(1.0);
                let v = |x: Option<i64>| x.unwrap_or(0) as f64;
                f * (v(r.input) * pi + v(r.write) * pw + v(r.read) * pr + v(r.output) * po)
            })
            .sum();
        self.priced_cost = Some(cost);
        self
    }

    pub fn conversations(&self) -> usize {
        self.keys.iter().map(|k| k.conversations).sum()
    }

    /// Each key's (weight share, conversation share, token share), as fractions.
    pub fn shares(&self) -> Vec<(f64, f64, f64)> {
        let weights: u64 = self.keys.iter().map(|k| k.weight).sum();
        let tokens: i64 = self.keys.iter().map(|k| k.tokens).sum();
        let frac = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        self.keys
            .iter()
            .map(|k| {
                (
                    frac(k.weight as f64, weights as f64),
                    frac(k.conversations as f64, self.conversations() as f64),
                    frac(k.tokens as f64, tokens as f64),
                )
            })
            .collect()
    }

    /// The run's markdown: totals, then one row per key.
    pub fn table(&self, baseline_cost: Option<f64>) -> String {
        let mut out = format!("### {}\n\n", self.name);
        let vs = baseline_cost
            .map_or(String::new(), |b| format!(" ({:+.1} % vs single key)", 100.0 * (self.cost() / b - 1.0)));
        let reasons: Vec<String> = self.reasons.iter().map(|(r, n)| format!("{r} {n}")).collect();
        out += &format!(
            "attempts {} (failed {}), conversations {}; reasons: {}; moved {} (for balance {})\n\n",
            self.attempts,
            self.failed,
            self.conversations(),
            reasons.join(", "),
            self.moved,
            self.balance_moves
        );
        out += "| input tokens | uncached | cache write | cache read | cache-read share | output | cost (M units) |\n";
        out += "|---|---|---|---|---|---|---|\n";
        out += &format!(
            "| {} | {} | {} | {} | {:.1} % | {} | {:.1}{vs} |\n\n",
            self.total_input(),
            self.input,
            self.write,
            self.read,
            100.0 * self.read_share(),
            self.output,
            self.cost() / 1e6
        );
        out += "| key | weight | weight share | conversations | conv. share | input tokens | token share | token share / weight share |\n";
        out += "|---|---|---|---|---|---|---|---|\n";
        for (key, (w, c, t)) in self.keys.iter().zip(self.shares()) {
            out += &format!(
                "| {} | {} | {:.1} % | {} | {:.1} % | {} | {:.1} % | {:+.1} % |\n",
                key.label,
                key.weight,
                100.0 * w,
                key.conversations,
                100.0 * c,
                key.tokens,
                100.0 * t,
                100.0 * (t / w - 1.0)
            );
        }
        out
    }
}
