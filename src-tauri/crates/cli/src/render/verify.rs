//! `switchyard verify`: one line per key (outcome, failure kind, detail), then the routing
//! status. When an enabled key did not end verified the process exits [`NOT_VERIFIED`], so
//! `switchyard verify SLUG && …` stops there (docs/interface.md, "Exit codes").

use switchyard_engine::VerifyReport;

use super::{routing, Render, Shortfall};

/// The exit code of a `verify` after which an enabled profile is `auth_invalid` or
/// `unverified`; the report is printed as usual.
pub const NOT_VERIFIED: u8 = 7;

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

    fn shortfall(&self) -> Option<Shortfall> {
        let missing = self.not_verified();
        if missing.is_empty() {
            return None;
        }
        let named: Vec<String> = missing
            .iter()
            .map(|v| match &v.failure_kind {
                Some(kind) if kind != v.outcome.as_str() => format!("{} ({} [{kind}])", v.label, v.outcome),
                _ => format!("{} ({})", v.label, v.outcome),
            })
            .collect();
        Some(Shortfall {
            code: NOT_VERIFIED,
            message: format!("not verified, so routing cannot use: {}", named.join(", ")),
        })
    }
}
