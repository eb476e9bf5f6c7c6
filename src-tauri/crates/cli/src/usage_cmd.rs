//! `switchyard usage`: one engine call (`Engine::usage`), rendered here as the JSON the
//! contract fixes (`{"rows": [...], "complete"}`, plus `by`, `since`, `time_zone`, `total`)
//! and as a table where an unknown cost reads "unknown", never a number, and a key with
//! white space is quoted (it cannot pass for more columns).

use clap::Args;
use switchyard_engine::{Engine, EngineError, UsageBy, UsageRow, UsageView};

use crate::output::Output;

#[derive(Debug, Args)]
pub struct UsageArgs {
    pub slug: String,
    /// Count from this time: RFC 3339, or Nd for the last N calendar days (today included)
    /// in the time zone of `settings time-zone`. Default: the whole ledger.
    #[arg(long, value_name = "RFC3339|Nd")]
    pub since: Option<String>,
    /// What each row sums: a profile (id), a model, a day (YYYY-MM-DD) or a tag (name=value).
    #[arg(long, default_value = "profile", value_parser = ["profile", "model", "day", "tag"])]
    pub by: String,
}

pub async fn run(engine: &Engine, args: UsageArgs) -> Result<Output, EngineError> {
    let by = UsageBy::parse(&args.by)?;
    let view = engine.usage(&args.slug, args.since.as_deref(), by).await?;
    Ok(Output::Rendered { json: json(&view), text: text(&view) })
}

fn json(v: &UsageView) -> String {
    let doc = serde_json::json!({
        "rows": v.rows,
        "complete": v.complete,
        "total": v.total,
        "by": v.by,
        "since": v.since,
        "time_zone": v.time_zone,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

fn text(v: &UsageView) -> String {
    let since = v.since.as_deref().map_or_else(|| "the whole ledger".to_string(), |s| format!("since {s}"));
    let mut out = vec![format!("connection {}: usage by {}, {since} (days in {})", v.slug, v.by, v.time_zone)];
    if v.rows.is_empty() {
        out.push("no attempts recorded in this range".to_string());
        return out.join("\n");
    }
    out.push(format!(
        "{:<36} {:>8} {:>6} {:>12} {:>12} {:>12} {:>12} {:>12}",
        v.by.to_uppercase(),
        "REQUESTS",
        "ERRORS",
        "INPUT",
        "OUTPUT",
        "CACHE_READ",
        "CACHE_WRITE",
        "COST_USD"
    ));
    for r in v.rows.iter().chain([&v.total]) {
        out.push(line(r));
    }
    if !v.complete {
        out.push(
            "incomplete: some attempts have no known price (cost \"unknown\"); add one with `switchyard prices set MODEL \
             --input USD --output USD` (per million tokens)"
                .to_string(),
        );
    }
    out.join("\n")
}

fn line(r: &UsageRow) -> String {
    let cost = r.cost_usd.map_or_else(|| "unknown".to_string(), |c| format!("{c:.4}"));
    format!(
        "{:<36} {:>8} {:>6} {:>12} {:>12} {:>12} {:>12} {:>12}",
        shown_key(&r.key),
        r.requests,
        r.errors,
        r.input_tokens,
        r.output_tokens,
        r.cache_read_tokens,
        r.cache_write_tokens,
        cost
    )
}

/// A row's key as the table shows it: as it is, or as a JSON string when it holds white space,
/// a quote or a backslash (a tag value or a client's model name with spaces would otherwise
/// read as more columns of the row).
fn shown_key(key: &str) -> std::borrow::Cow<'_, str> {
    let plain = !key.is_empty() && !key.chars().any(|c| c.is_whitespace() || c.is_control() || c == '"' || c == '\\');
    if plain {
        std::borrow::Cow::Borrowed(key)
    } else {
        std::borrow::Cow::Owned(serde_json::to_string(key).unwrap_or_default())
    }
}
