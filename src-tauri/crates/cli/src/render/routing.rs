//! `routing status` (and every command that answers with it: activate, deactivate, affinity,
//! quota-aware, `health reset`): mode, state, who activated, affinity, quota-aware selection,
//! the gate report (naming `expired`/`missing` credentials among the reasons) and each
//! profile's kind, credential health, readiness, circuit health and cache hit ratio. `routing status`
//! itself adds the fallback chain ([`RoutingReport`]).

use serde::Serialize;
use switchyard_core::states::{CircuitState, CredentialPresence};
use switchyard_engine::{FallbackStatus, GateView, ProfileReadiness, RoutingStatus};

use super::{cache, fallback, Render};

impl Render for RoutingStatus {
    fn text(&self) -> String {
        lines(self).join("\n")
    }
}

/// `routing status`: the status with its fallback chain, `"fallback": {…}` in JSON.
#[derive(Serialize)]
pub struct RoutingReport {
    #[serde(flatten)]
    pub routing: RoutingStatus,
    pub fallback: FallbackStatus,
}

impl Render for RoutingReport {
    fn text(&self) -> String {
        let mut out = lines(&self.routing);
        out.extend(fallback::lines(&self.fallback));
        out.join("\n")
    }
}

pub fn lines(r: &RoutingStatus) -> Vec<String> {
    let by = match (&r.activated_at, &r.activated_by) {
        (Some(at), Some(by)) => format!(", activated {at} by {by}"),
        _ => String::new(),
    };
    let mut out = vec![format!("connection {}: {} ({}){by}", r.slug, r.mode, r.state)];
    if let Some(pending) = &r.pending_mode {
        out.push(format!("  {pending} routing is pending (from an import): add credentials, enable the profiles and verify; it switches on when the gates hold"));
    }
    if let Some(note) = &r.note {
        out.push(format!("  {note}"));
    }
    out.push(match r.affinity.mode.as_str() {
        "conversation" => {
            format!("  affinity: conversation ({} min window; balanced routing only)", r.affinity.window_min)
        }
        mode => format!("  affinity: {mode} (balanced routing only)"),
    });
    out.push(if r.quota_aware.enabled {
        format!(
            "  quota-aware: on ({} % reserve; keys with a spent window are skipped until its reset)",
            r.quota_aware.reserve_pct
        )
    } else {
        "  quota-aware: off".to_string()
    });
    out.extend(gates(&r.gates));
    out.push(format!(
        "{:<20} {:>6} {:<8} {:<8} {:<10} {:<9} {:>7} HEALTH",
        "PROFILE", "WEIGHT", "ENABLED", "KIND", "CREDENTIAL", "EVIDENCE", "CACHE"
    ));
    out.extend(r.profiles.iter().map(profile_line));
    out.extend(r.profiles.iter().filter_map(|p| {
        let why = p.credential_health.reason.as_deref()?;
        Some(format!("  {}: credential {}: {why}", p.label, p.credential_health.state))
    }));
    out
}

fn profile_line(p: &ProfileReadiness) -> String {
    let health: Vec<String> = p
        .health
        .iter()
        .filter(|h| h.state != CircuitState::Closed || h.model.is_none())
        .map(|h| {
            let scope = h.model.as_deref().unwrap_or("key");
            let kind = h.kind.as_deref().map(|k| format!(" {k}")).unwrap_or_default();
            let until = h.until.as_deref().map(|u| format!(" until {u}")).unwrap_or_default();
            format!("{scope}: {}{kind}{until}", h.state)
        })
        .collect();
    let evidence = match &p.evidence_detail {
        Some(d) => match &d.stale_reason {
            Some(why) => format!("stale ({why})"),
            None => format!("{} ({})", p.evidence, d.outcome),
        },
        None => p.evidence.to_string(),
    };
    // The credential column: its health, or `unknown` when the keychain could not be asked.
    let credential =
        if p.credential == CredentialPresence::Unknown { "unknown" } else { p.credential_health.state.as_str() };
    format!(
        "{:<20} {:>6} {:<8} {:<8} {:<10} {:<9} {:>7} {}",
        p.label,
        p.weight,
        if p.enabled { "yes" } else { "no" },
        p.kind,
        credential,
        evidence,
        cache::ratio(p.cache.read_tokens, p.cache.input_tokens),
        health.join("; ")
    )
}

/// The gate report: ok or why not, then per model who can serve it and who not (by label).
pub fn gates(g: &GateView) -> Vec<String> {
    let mut out =
        vec![if g.ok { "gates: ok".to_string() } else { format!("gates: not met: {}", g.failures.join("; ")) }];
    for m in &g.models {
        let excluded: Vec<String> = m.excluded.iter().map(|e| format!("{} ({})", e.label, e.reason)).collect();
        let eligible = if m.eligible_labels.is_empty() { "none".to_string() } else { m.eligible_labels.join(", ") };
        let others = if excluded.is_empty() { String::new() } else { format!("; not: {}", excluded.join(", ")) };
        out.push(format!("  model {}: {eligible}{others}", m.model));
    }
    out
}
