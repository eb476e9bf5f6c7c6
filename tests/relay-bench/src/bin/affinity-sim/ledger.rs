//! What the relay recorded for one run, read back from `switchyard --json attempts`, and the
//! table it makes: the cache-read share of input tokens, the cost at Anthropic's list-price
//! ratios, each key's share of conversations and of tokens against its weight. Nothing here
//! reads the mock.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;

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
}

impl Summary {
    /// `profiles`: `profile list --json`; `rows`: `attempts --json`, newest first.
    pub fn from_ledger(name: &str, profiles: &[Value], rows: &[Value]) -> Summary {
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
        for row in rows.iter().rev() {
            let n = |k: &str| row[k].as_i64().unwrap_or(0);
            if !row["status"].as_i64().is_some_and(|s| (200..300).contains(&s)) {
                summary.failed += 1;
            }
            let (input, write, read) = (n("input_tokens"), n("cache_write_tokens"), n("cache_read_tokens"));
            summary.input += input;
            summary.write += write;
            summary.read += read;
            summary.output += n("output_tokens");
            *summary.reasons.entry(row["reason"].as_str().unwrap_or("?").to_owned()).or_default() += 1;
            summary.moved += usize::from(!row["moved"].is_null());
            let Some(&key) = row["profile"].as_str().and_then(|p| index.get(p)) else { continue };
            keys[key].tokens += input + write + read;
            let conversation = row["conversation"].as_str().or_else(|| row["session"].as_str()).unwrap_or("");
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

    /// Cost in relative units (uncached input token = 1).
    pub fn cost(&self) -> f64 {
        let (input, write, read, output) = PRICE;
        self.input as f64 * input + self.write as f64 * write + self.read as f64 * read + self.output as f64 * output
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
            "attempts {} (failed {}), conversations {}; reasons: {}; moved {}\n\n",
            self.attempts,
            self.failed,
            self.conversations(),
            reasons.join(", "),
            self.moved
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
