//! A connection's fallback chain (`routing fallback`, `fallback-activate`, `-deactivate`,
//! and under `routing status`): the hops in order, whether it is in use, and its gates.

use switchyard_engine::FallbackStatus;

use super::Render;

impl Render for FallbackStatus {
    fn text(&self) -> String {
        lines(self).join("\n")
    }
}

pub fn lines(f: &FallbackStatus) -> Vec<String> {
    if f.chain.is_empty() {
        return vec!["fallback: none".to_string()];
    }
    let hops: Vec<String> = f
        .chain
        .iter()
        .map(|h| match &h.model {
            Some(m) => format!("{}={m}", h.slug),
            None => h.slug.clone(),
        })
        .collect();
    let state = match (f.active, f.activated) {
        (true, _) => "active",
        (false, true) => "suspended",
        (false, false) => "inactive",
    };
    let mut out = vec![format!("fallback: {} ({state})", hops.join(" -> "))];
    if let Some(note) = &f.note {
        out.push(format!("  {note}"));
    }
    if !f.gates.ok {
        out.extend(f.gates.failures.iter().map(|why| format!("  gate: {why}")));
    } else if !f.activated {
        out.push("  gates hold: `switchyard routing fallback-activate` turns it on".to_string());
    }
    out
}
