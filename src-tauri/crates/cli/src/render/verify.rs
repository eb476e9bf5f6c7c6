//! `switchyard verify`: one line per key (outcome, failure kind, detail), then the routing
//! status.

use switchyard_engine::VerifyReport;

use super::{routing, Render};

impl Render for VerifyReport {
    fn text(&self) -> String {
        let mut out: Vec<String> = self
            .results
            .iter()
            .map(|v| {
                let kind = v.failure_kind.as_deref().map(|k| format!(" [{k}]")).unwrap_or_default();
                format!("{:<20} {:<12}{kind} {}", v.label, v.outcome, v.detail)
            })
            .collect();
        out.push(String::new());
        out.extend(self.routing_restored.clone());
        out.extend(routing::lines(&self.routing));
        out.join("\n")
    }
}
