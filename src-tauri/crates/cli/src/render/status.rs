//! `switchyard status`: a table of connections (mode, keys ok/cooling/expired with the soonest
//! cooldown, the binding window with its reset, today's spend against the daily cap) and one of
//! pools; `--line` the one line of `switchyard_engine::status_line` (`{"line"}` with `--json`).

use serde::Serialize;
use switchyard_engine::StatusView;

use super::quota::span;
use super::Render;

#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Status(pub StatusView);

#[derive(Debug, Serialize)]
pub struct StatusLine {
    pub line: String,
}

impl Render for StatusLine {
    fn text(&self) -> String {
        self.line.clone()
    }
}

impl Render for Status {
    fn text(&self) -> String {
        let v = &self.0;
        if v.connections.is_empty() && v.pools.is_empty() {
            return "no connections".to_string();
        }
        let mut rows: Vec<[String; 5]> = vec![["CONNECTION", "MODE", "KEYS", "WINDOW", "TODAY"].map(str::to_string)];
        for c in &v.connections {
            let mut keys = format!("{}/{} ok", c.keys.ok, c.keys.total);
            if c.keys.cooling > 0 {
                keys.push_str(&format!(", {} cooling", c.keys.cooling));
                if let Some(s) = c.cooling_in_secs {
                    keys.push_str(&format!(" ({})", span(i64::from(s))));
                }
            }
            if c.keys.expired > 0 {
                keys.push_str(&format!(", {} expired", c.keys.expired));
            }
            if c.keys.disabled > 0 {
                keys.push_str(&format!(", {} disabled", c.keys.disabled));
            }
            let window = c.window.as_ref().map_or_else(
                || "-".to_string(),
                |w| {
                    let reset =
                        w.resets_in_secs.map(|s| format!(", resets in {}", span(i64::from(s)))).unwrap_or_default();
                    format!("{} {} {:.0}%{reset}", w.profile, w.name, w.utilization * 100.0)
                },
            );
            let today = match (c.spend_today_usd, c.cap_today_usd) {
                (Some(s), Some(cap)) => format!("${s:.2} of ${cap:.2}"),
                (Some(s), None) => format!("${s:.2}"),
                (None, Some(cap)) => format!("unknown of ${cap:.2}"),
                (None, None) => "unknown (unpriced)".to_string(),
            };
            rows.push([c.slug.clone(), c.mode.clone(), keys, window, today]);
        }
        let mut out = table(&rows);
        if !v.pools.is_empty() {
            let mut pools: Vec<[String; 5]> = vec![["POOL", "MODE", "STATE", "MEMBERS", ""].map(str::to_string)];
            for p in &v.pools {
                let mode = p.mode.map_or("-", |m| m.as_str()).to_string();
                pools.push([p.name.clone(), mode, p.state.as_str().to_string(), p.members.to_string(), String::new()]);
            }
            out.push_str("\n\n");
            out.push_str(&table(&pools));
        }
        out
    }
}

fn table(rows: &[[String; 5]]) -> String {
    let mut widths = [0usize; 5];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
