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
            out.push(line(&shown_key(name, &v.total.key), r));
        }
        // The total row alone is written bare: a row keyed like it is quoted by `shown_key`.
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

/// One row of the table; `shown` is the key as [`shown_key`] writes it (the total: as it is).
fn line(shown: &str, r: &UsageRow) -> String {
    let cost = r.cost_usd.map_or_else(|| "unknown".to_string(), |c| format!("{c:.4}"));
    format!(
        "{:<36} {:>8} {:>6} {:>12} {:>12} {:>12} {:>12} {:>12}",
        shown, r.requests, r.errors, r.input_tokens, r.output_tokens, r.cache_read_tokens, r.cache_write_tokens, cost
    )
}

/// A row's key as the table shows it: as it is when it is printable ASCII without a space, a
/// quote or a backslash and is not `total` (the total row's name); else quoted, `"` and `\`
/// escaped and every character outside printable ASCII spelled out (`\u{200b}`). A tag value,
/// a label or a client's model name can then neither read as more columns of its row (spaces,
/// U+2028, NEL), nor hide or reorder what is shown (zero-width, bidi overrides, DEL, C1 and
/// escape sequences), nor pass for the total.
fn shown_key<'k>(key: &'k str, total: &str) -> std::borrow::Cow<'k, str> {
    let plain = !key.is_empty() && key != total && key.chars().all(|c| c.is_ascii_graphic() && c != '"' && c != '\\');
    if plain {
        return std::borrow::Cow::Borrowed(key);
    }
    let mut out = String::with_capacity(key.len() + 2);
    out.push('"');
    for c in key.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ => out.extend(c.escape_default()),
        }
    }
    out.push('"');
    std::borrow::Cow::Owned(out)
}
