//! `switchyard usage`: the sums as a table (by profile: each profile's label, `(removed)` for
//! one removed since) where an unknown cost reads "unknown", never a number; `--json` is the
//! `UsageView` (`{"slug", "by", "since", "time_zone", "rows", "total", "complete"}`, rows keyed
//! by profile id).

use switchyard_engine::{UsageRow, UsageView};

use super::attempts::REMOVED;
use super::Render;

impl Render for UsageView {
    fn text(&self) -> String {
        let v = self;
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
        let by_profile = v.by == "profile";
        for r in &v.rows {
            let name = if by_profile { r.label.as_deref().unwrap_or(REMOVED) } else { r.key.as_str() };
            out.push(line(name, r));
        }
        out.push(line(&v.total.key, &v.total));
        if !v.complete {
            out.push(
                "incomplete: some attempts have no known price (cost \"unknown\"); add one with `switchyard prices set \
                 MODEL --input USD --output USD` (per million tokens)"
                    .to_string(),
            );
        }
        out.join("\n")
    }
}

fn line(name: &str, r: &UsageRow) -> String {
    let cost = r.cost_usd.map_or_else(|| "unknown".to_string(), |c| format!("{c:.4}"));
    format!(
        "{:<36} {:>8} {:>6} {:>12} {:>12} {:>12} {:>12} {:>12}",
        shown_key(name),
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
/// a quote or a backslash (a tag value, a label or a client's model name with spaces would
/// otherwise read as more columns of the row).
fn shown_key(key: &str) -> std::borrow::Cow<'_, str> {
    let plain = !key.is_empty() && !key.chars().any(|c| c.is_whitespace() || c.is_control() || c == '"' || c == '\\');
    if plain {
        std::borrow::Cow::Borrowed(key)
    } else {
        std::borrow::Cow::Owned(serde_json::to_string(key).unwrap_or_default())
    }
}
