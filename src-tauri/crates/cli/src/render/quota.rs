//! `switchyard quota`: the latest limit readings per profile and window. Text is a table per
//! profile: the window (its kind in words; `*` on the one the provider names as binding the
//! account), what is left or used, the provider's status, the reset as a countdown and a time,
//! when it runs out at the last hour's rate, and the reading's age ("unknown" where the
//! provider sent nothing; a window that has reset since is stale and its numbers are not
//! shown). `--json` is the contract's [`QuotaJson`]: `null` where the provider said nothing.

use serde::{Serialize, Serializer};
use switchyard_engine::{QuotaView, QuotaWindowView};

use super::Render;

/// `quota --json` exactly as docs/interface.md fixes it: `{"profiles": [{"id", "windows":
/// [{"name", "kind", "model", "limit", "remaining", "utilization", "status", "resets_at",
/// "exhausts_at", "binding", "seen_at", "age_secs"}]}]}`.
#[derive(Debug, Serialize)]
pub struct QuotaJson<'a> {
    pub profiles: Vec<ProfileQuotaJson<'a>>,
}

#[derive(Debug, Serialize)]
pub struct ProfileQuotaJson<'a> {
    pub id: &'a str,
    pub windows: Vec<WindowJson<'a>>,
}

#[derive(Debug, Serialize)]
pub struct WindowJson<'a> {
    pub name: &'a str,
    pub kind: &'a str,
    pub model: Option<&'a str>,
    pub limit: Option<i32>,
    pub remaining: Option<i32>,
    pub utilization: Option<f64>,
    pub status: Option<&'a str>,
    pub resets_at: Option<&'a str>,
    pub exhausts_at: Option<&'a str>,
    pub binding: bool,
    pub seen_at: &'a str,
    pub age_secs: i32,
}

impl<'a> From<&'a QuotaView> for QuotaJson<'a> {
    fn from(q: &'a QuotaView) -> Self {
        let window = |w: &'a QuotaWindowView| WindowJson {
            name: &w.name,
            kind: &w.kind,
            model: w.model.as_deref(),
            limit: w.limit,
            remaining: w.remaining,
            utilization: w.utilization,
            status: w.status.as_deref(),
            resets_at: w.resets_at.as_deref(),
            exhausts_at: w.exhausts_at.as_deref(),
            binding: w.binding,
            seen_at: &w.seen_at,
            age_secs: w.age_secs,
        };
        QuotaJson {
            profiles: q
                .profiles
                .iter()
                .map(|p| ProfileQuotaJson { id: &p.id, windows: p.windows.iter().map(window).collect() })
                .collect(),
        }
    }
}

/// `switchyard quota`: the engine's view, serialised as [`QuotaJson`].
pub struct Quota(pub QuotaView);

impl Serialize for Quota {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        QuotaJson::from(&self.0).serialize(s)
    }
}

const HEADER: [&str; 6] = ["WINDOW", "LEFT / USED", "STATUS", "RESETS", "RUNS OUT (LAST HOUR'S RATE)", "SEEN"];

impl Render for Quota {
    fn text(&self) -> String {
        let q = &self.0;
        let rows: Vec<[String; 6]> = q.profiles.iter().flat_map(|p| p.windows.iter().map(cells)).collect();
        let mut widths = HEADER.map(str::len);
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[String; 6]| {
            let padded: Vec<String> = cells.iter().zip(widths).map(|(c, w)| format!("{c:<w$}", w = w)).collect();
            format!("  {}", padded.join("  ").trim_end())
        };
        let mut out = vec![format!(
            "connection {}: latest limit readings (times in {}; \"unknown\" where the provider sent nothing)",
            q.slug, q.time_zone
        )];
        let mut rows = rows.iter();
        for p in &q.profiles {
            out.push(format!("profile {} ({})", p.label, p.id));
            if p.windows.is_empty() {
                out.push("  unknown: no answer has reported limits yet".to_string());
                continue;
            }
            out.push(line(&HEADER.map(str::to_string)));
            out.extend(rows.by_ref().take(p.windows.len()).map(line));
        }
        if q.profiles.iter().flat_map(|p| &p.windows).any(|w| w.binding) {
            out.push("* the window the provider names as limiting the account now".to_string());
        }
        out.join("\n")
    }
}

/// The cells of one window: name, left/used, status, reset, run-out, age.
fn cells(w: &QuotaWindowView) -> [String; 6] {
    let seen = format!("as of {} ago", span(i64::from(w.age_secs)));
    let name = label(w);
    if w.stale {
        let ago = w.resets_in_secs.map(|s| format!("reset {} ago", span(-i64::from(s)))).unwrap_or_default();
        return [name, "stale: reading ignored".into(), "-".into(), ago, "-".into(), seen];
    }
    let mut left = match (w.remaining, w.limit) {
        (Some(r), Some(l)) => vec![format!("{r}/{l} left")],
        (Some(r), None) => vec![format!("{r} left (limit unknown)")],
        (None, Some(l)) => vec![format!("remaining unknown of {l}")],
        (None, None) => vec![],
    };
    if let Some(u) = w.utilization {
        left.push(format!("{:.0}% used", u * 100.0));
    }
    let left = match (left.is_empty(), w.kind.as_str()) {
        (true, "overall") => "-".to_string(), // the overall status has no count; its window binds (`*`)
        (true, _) => "unknown".to_string(),
        (false, _) => left.join(", "),
    };
    let status = w.status.clone().unwrap_or_else(|| "-".to_string());
    let at = |local: &Option<String>| local.as_ref().map(|t| format!(" ({t})")).unwrap_or_default();
    let resets = match w.resets_in_secs {
        Some(s) => format!("in {}{}", span(i64::from(s)), at(&w.resets_local)),
        None => "unknown".to_string(),
    };
    let runs_out = match w.exhausts_in_secs {
        Some(s) => format!("in {}{}", span(i64::from(s)), at(&w.exhausts_local)),
        None => "-".to_string(),
    };
    [name, left, status, resets, runs_out, seen]
}

/// The window in words: its kind (`5-hour`, `weekly`, `weekly opus`), or its name for API
/// limits, with its model and, for a Codex window of a length we do not know, that length.
fn label(w: &QuotaWindowView) -> String {
    let mut name = match (w.kind.as_str(), &w.family) {
        ("five_hour", _) => "5-hour".to_string(),
        ("seven_day", _) => "weekly".to_string(),
        ("seven_day_model", Some(f)) => format!("weekly {f}"),
        ("overall", _) => "overall".to_string(),
        ("codex_primary", _) => "codex primary".to_string(),
        ("codex_secondary", _) => "codex secondary".to_string(),
        _ => w.name.replace('_', " "),
    };
    if let Some(m) = &w.model {
        name.push_str(&format!(" [{m}]"));
    }
    if let (Some(minutes), true) = (w.window_minutes, w.kind.starts_with("codex_")) {
        name.push_str(&format!(" ({})", span(i64::from(minutes) * 60)));
    }
    if w.binding {
        name.push_str(" *");
    }
    name
}

/// `42 s`, `3 min`, `2 h 10 min`, `6 d 4 h` (also `status`'s countdowns).
pub(crate) fn span(secs: i64) -> String {
    let secs = secs.max(0);
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs / 60),
        3600..86_400 => match (secs % 3600) / 60 {
            0 => format!("{} h", secs / 3600),
            m => format!("{} h {m} min", secs / 3600),
        },
        _ => match (secs % 86_400) / 3600 {
            0 => format!("{} d", secs / 86_400),
            h => format!("{} d {h} h", secs / 86_400),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchyard_engine::ProfileQuota;

    fn window(stale: bool) -> QuotaWindowView {
        QuotaWindowView {
            name: "requests".into(),
            kind: "requests".into(),
            model: Some("m1".into()),
            family: None,
            limit: Some(50),
            remaining: Some(48),
            utilization: None,
            resets_at: Some("2027-01-15T08:01:00.000Z".into()),
            seen_at: "2027-01-15T08:00:00.000Z".into(),
            status: Some("allowed".into()),
            window_minutes: None,
            age_secs: 180,
            resets_in_secs: Some(if stale { -300 } else { 42 }),
            stale,
            binding: false,
            exhausts_at: None,
            exhausts_in_secs: None,
            resets_local: Some("Fri 08:01".into()),
            exhausts_local: None,
        }
    }

    fn five_hour() -> QuotaWindowView {
        QuotaWindowView {
            name: "unified_5h".into(),
            kind: "five_hour".into(),
            model: None,
            limit: None,
            remaining: None,
            utilization: Some(0.42),
            status: Some("allowed".into()),
            binding: true,
            exhausts_at: Some("2027-01-15T09:40:00.000Z".into()),
            exhausts_in_secs: Some(6_000),
            exhausts_local: Some("Fri 09:40".into()),
            resets_in_secs: Some(8_040),
            resets_local: Some("Fri 10:14".into()),
            ..window(false)
        }
    }

    fn view() -> QuotaView {
        QuotaView {
            slug: "c".into(),
            time_zone: "UTC".into(),
            profiles: vec![
                ProfileQuota { id: "p_a".into(), label: "a".into(), windows: vec![window(false), five_hour()] },
                ProfileQuota { id: "p_b".into(), label: "b".into(), windows: vec![] },
            ],
        }
    }

    #[test]
    fn quota_json_has_exactly_the_contract_fields() -> Result<(), serde_json::Error> {
        let got = serde_json::to_value(Quota(view()))?;
        let want = serde_json::json!({"profiles": [
            {"id": "p_a", "windows": [{
                "name": "requests", "kind": "requests", "model": "m1", "limit": 50, "remaining": 48,
                "utilization": null, "status": "allowed", "resets_at": "2027-01-15T08:01:00.000Z",
                "exhausts_at": null, "binding": false, "seen_at": "2027-01-15T08:00:00.000Z", "age_secs": 180,
            }, {
                "name": "unified_5h", "kind": "five_hour", "model": null, "limit": null, "remaining": null,
                "utilization": 0.42, "status": "allowed", "resets_at": "2027-01-15T08:01:00.000Z",
                "exhausts_at": "2027-01-15T09:40:00.000Z", "binding": true,
                "seen_at": "2027-01-15T08:00:00.000Z", "age_secs": 180,
            }]},
            {"id": "p_b", "windows": []},
        ]});
        assert_eq!(got, want, "docs/interface.md fixes this shape; null where the provider said nothing");
        Ok(())
    }

    #[test]
    fn quota_rows_say_unknown_stale_how_old_and_when_it_runs_out() {
        let live = cells(&window(false));
        assert_eq!(live[1], "48/50 left", "remaining/limit");
        assert_eq!(live[3], "in 42 s (Fri 08:01)", "the reset as a countdown and a time");
        assert_eq!(live[5], "as of 3 min ago", "the reading's age");
        let stale = cells(&window(true));
        assert!(
            stale[1].contains("stale") && !stale.join(" ").contains("48/50"),
            "a reset window's numbers are not shown"
        );
        let nothing =
            QuotaWindowView { limit: None, remaining: None, status: None, resets_in_secs: None, ..window(false) };
        let row = cells(&nothing);
        assert_eq!((row[1].as_str(), row[3].as_str()), ("unknown", "unknown"), "never a guess");
        let sub = cells(&five_hour());
        assert_eq!(sub[0], "5-hour *", "the kind in words, marked binding");
        assert_eq!(sub[1], "42% used", "utilization in percent");
        assert_eq!(sub[4], "in 1 h 40 min (Fri 09:40)", "the forecast");
        let text = Quota(view()).text();
        assert!(text.contains("RUNS OUT") && text.contains("* the window the provider names"), "a table: {text}");
        assert_eq!(
            [span(59), span(61), span(7_200), span(7_260), span(90_000)],
            ["59 s", "1 min", "2 h", "2 h 1 min", "1 d 1 h"]
        );
    }

    #[test]
    fn windows_are_named_by_kind() {
        let opus = QuotaWindowView {
            kind: "seven_day_model".into(),
            family: Some("opus".into()),
            model: None,
            ..window(false)
        };
        assert_eq!(label(&opus), "weekly opus", "a model family's weekly window");
        let codex =
            QuotaWindowView { kind: "codex_primary".into(), model: None, window_minutes: Some(90), ..window(false) };
        assert_eq!(label(&codex), "codex primary (1 h 30 min)", "a Codex window of a length we do not know");
    }
}
