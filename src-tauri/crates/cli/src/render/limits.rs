//! `limits` and `audit list` as tables (JSON: the views as they are).

use serde::Serialize;
use switchyard_engine::{AuditView, LimitStatusView, LimitView};

use super::Render;

fn amount(measure: &str, v: f64) -> String {
    if measure == "usd" {
        format!("${v:.4}")
    } else {
        format!("{v:.0}")
    }
}

#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Limits(pub Vec<LimitView>);

impl Render for Limits {
    fn text(&self) -> String {
        if self.0.is_empty() {
            return "no limits (set one: switchyard limits set user:NAME --usd 5 --per day)".to_string();
        }
        let mut lines = vec![format!("{:<36} {:<28} {:<12} {:>14} {}", "ID", "SCOPE", "MEASURE", "CAPACITY", "PER")];
        for l in &self.0 {
            let per = l.period.as_deref().unwrap_or("in flight");
            lines.push(format!(
                "{:<36} {:<28} {:<12} {:>14} {per}",
                l.id,
                l.scope,
                l.measure,
                amount(&l.measure, l.capacity)
            ));
        }
        lines.join("\n")
    }
}

#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct LimitsStatus(pub Vec<LimitStatusView>);

impl Render for LimitsStatus {
    fn text(&self) -> String {
        if self.0.is_empty() {
            return "no limits".to_string();
        }
        let mut lines = vec![format!(
            "{:<36} {:<16} {:>12} {:>12} {:>12} {:>12}  {}",
            "ID", "USER", "CAPACITY", "USED", "RESERVED", "REMAINING", "RESETS"
        )];
        for s in &self.0 {
            let m = s.measure.as_str();
            lines.push(format!(
                "{:<36} {:<16} {:>12} {:>12} {:>12} {:>12}  {}",
                s.id,
                if s.subject.is_empty() { "-" } else { &s.subject },
                amount(m, s.capacity),
                amount(m, s.used),
                amount(m, s.reserved),
                amount(m, s.remaining),
                s.resets_at.as_deref().unwrap_or("-")
            ));
        }
        lines.join("\n")
    }
}

#[derive(Debug, Serialize)]
pub struct LimitRemoved {
    pub id: String,
    pub removed: bool,
}

impl Render for LimitRemoved {
    fn text(&self) -> String {
        format!("limit '{}' removed", self.id)
    }
}

#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct Audit(pub Vec<AuditView>);

impl Render for Audit {
    fn text(&self) -> String {
        if self.0.is_empty() {
            return "no admin changes recorded".to_string();
        }
        let mut lines = vec![format!("{:<25} {:<20} {:<14} {:<32} {}", "AT", "WHO", "WHAT", "SUBJECT", "REVISION")];
        for a in &self.0 {
            let rev = |r: Option<i64>| r.map_or("-".to_string(), |r| r.to_string());
            lines.push(format!(
                "{:<25} {:<20} {:<14} {:<32} {} -> {}",
                a.at,
                a.actor,
                a.action,
                a.subject,
                rev(a.revision_before),
                rev(a.revision_after)
            ));
        }
        lines.join("\n")
    }
}
