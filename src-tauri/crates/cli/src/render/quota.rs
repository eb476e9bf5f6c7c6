//! `switchyard quota`: the latest limit readings per profile and window. Text shows what is
//! left or used, the reset countdown and the reading's age ("unknown" where the provider sent
//! nothing; a window that has reset since is stale and its numbers are not shown). `--json`
//! is the contract's [`QuotaJson`]: `null` where the provider said nothing.

use serde::{Serialize, Serializer};
use switchyard_engine::{QuotaView, QuotaWindowView};

use super::Render;

/// `quota --json` exactly as docs/interface.md fixes it: `{"profiles": [{"id", "windows":
/// [{"name", "model", "limit", "remaining", "utilization", "resets_at", "seen_at"}]}]}`.
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
    pub model: Option<&'a str>,
    pub limit: Option<i32>,
    pub remaining: Option<i32>,
    pub utilization: Option<f64>,
    pub resets_at: Option<&'a str>,
    pub seen_at: &'a str,
}

impl<'a> From<&'a QuotaView> for QuotaJson<'a> {
    fn from(q: &'a QuotaView) -> Self {
        let window = |w: &'a QuotaWindowView| WindowJson {
            name: &w.name,
            model: w.model.as_deref(),
            limit: w.limit,
            remaining: w.remaining,
            utilization: w.utilization,
            resets_at: w.resets_at.as_deref(),
            seen_at: &w.seen_at,
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

impl Render for Quota {
    fn text(&self) -> String {
        let q = &self.0;
        let mut out =
            vec![format!("connection {}: latest limit readings (\"unknown\" where the provider sent nothing)", q.slug)];
        for p in &q.profiles {
            out.push(format!("profile {} ({})", p.label, p.id));
            if p.windows.is_empty() {
                out.push("  unknown: no answer has reported limits yet".to_string());
            }
            out.extend(p.windows.iter().map(|w| format!("  {}", window_line(w))));
        }
        out.join("\n")
    }
}

/// One window: what is left or used, when it resets, how old the reading is. A reading whose
/// window has reset since is shown as stale, without its numbers.
fn window_line(w: &QuotaWindowView) -> String {
    let mut name = match &w.model {
        Some(m) => format!("{} [{m}]", w.name),
        None => w.name.clone(),
    };
    if let Some(minutes) = w.window_minutes {
        name.push_str(&format!(" ({} window)", span(i64::from(minutes) * 60)));
    }
    let seen = format!("as of {} ago", span(i64::from(w.age_secs)));
    if w.stale {
        let ago = w.resets_in_secs.map(|s| format!(" {} ago", span(-i64::from(s)))).unwrap_or_default();
        return format!("{name:<32} stale: the window reset{ago}; reading ignored  {seen}");
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
    if let Some(status) = &w.status {
        left.push(status.clone());
    }
    let left = if left.is_empty() { "unknown".to_string() } else { left.join(", ") };
    let resets = match w.resets_in_secs {
        Some(s) => format!("resets in {}", span(i64::from(s))),
        None => "reset unknown".to_string(),
    };
    format!("{name:<32} {left:<28} {resets:<22} {seen}")
}

/// `42 s`, `3 min`, `2 h 10 min`, `6 d 4 h`.
fn span(secs: i64) -> String {
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
            model: Some("m1".into()),
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
        }
    }

    fn view() -> QuotaView {
        QuotaView {
            slug: "c".into(),
            profiles: vec![
                ProfileQuota { id: "p_a".into(), label: "a".into(), windows: vec![window(false)] },
                ProfileQuota { id: "p_b".into(), label: "b".into(), windows: vec![] },
            ],
        }
    }

    #[test]
    fn quota_json_has_exactly_the_contract_fields() -> Result<(), serde_json::Error> {
        let got = serde_json::to_value(Quota(view()))?;
        let want = serde_json::json!({"profiles": [
            {"id": "p_a", "windows": [{
                "name": "requests", "model": "m1", "limit": 50, "remaining": 48, "utilization": null,
                "resets_at": "2027-01-15T08:01:00.000Z", "seen_at": "2027-01-15T08:00:00.000Z",
            }]},
            {"id": "p_b", "windows": []},
        ]});
        assert_eq!(got, want, "docs/interface.md fixes this shape; null where the provider said nothing");
        Ok(())
    }

    #[test]
    fn quota_lines_say_unknown_stale_and_how_old() {
        let live = window_line(&window(false));
        assert!(
            live.contains("48/50 left") && live.contains("resets in 42 s"),
            "remaining/limit and countdown: {live}"
        );
        assert!(live.contains("as of 3 min ago"), "the reading's age: {live}");
        let stale = window_line(&window(true));
        assert!(stale.contains("stale") && !stale.contains("48/50"), "a reset window's numbers are not shown: {stale}");
        let nothing =
            QuotaWindowView { limit: None, remaining: None, status: None, resets_in_secs: None, ..window(false) };
        let line = window_line(&nothing);
        assert!(line.contains("unknown") && line.contains("reset unknown"), "never a guess: {line}");
        assert_eq!(
            [span(59), span(61), span(7_200), span(7_260), span(90_000)],
            ["59 s", "1 min", "2 h", "2 h 1 min", "1 d 1 h"]
        );
    }
}
