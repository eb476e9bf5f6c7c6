//! Pools (`pool list`, `pool status`, `routing status POOL`, `pool activate`): members with
//! weight, order, whether each counts and why not, the state, and the shares of conversations
//! and tokens against weights. `--json` is the engine's view.

use serde::Serialize;
use switchyard_core::states::{PoolState, Strategy};
use switchyard_engine::{PoolStatus, PoolView};

use super::Render;

/// `pool list`: every pool (`--json`: a list of `PoolView`).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct PoolList(pub Vec<PoolView>);

/// `pool remove`.
#[derive(Debug, Serialize)]
pub struct Removed {
    pub pool: String,
}

impl Render for Removed {
    fn text(&self) -> String {
        format!("pool {} removed", self.pool)
    }
}

impl Render for PoolList {
    fn text(&self) -> String {
        if self.0.is_empty() {
            return "no pools (add one with `switchyard pool add POOL --protocol P --member CONN[=MODEL][:WEIGHT]...`)"
                .to_string();
        }
        let mut out =
            vec![format!("{:<16} {:<10} {:<9} {:<10} {:<20} MEMBERS", "POOL", "PROTOCOL", "MODE", "STATE", "LAST")];
        for p in &self.0 {
            let members: Vec<String> = p.members.iter().map(|m| format!("{}:{}", m.member, m.weight)).collect();
            out.push(format!(
                "{:<16} {:<10} {:<9} {:<10} {:<20} {}",
                p.name,
                p.protocol,
                p.mode.map_or("-", Strategy::as_str),
                p.state,
                p.last_launched.as_deref().unwrap_or("-"),
                members.join(" ")
            ));
        }
        out.join("\n")
    }
}

impl Render for PoolStatus {
    fn text(&self) -> String {
        let p = &self.pool;
        let mut out = vec![format!(
            "pool {} ({}): {} {}",
            p.name,
            p.protocol,
            p.mode.map_or("(never activated)", Strategy::as_str),
            p.state
        )];
        if let Some(note) = &self.note {
            out.push(format!("  {note}"));
        }
        out.push(format!(
            "{:<28} {:>6} {:>5} {:>7} {:>7} {:>7}  WHY OUT",
            "MEMBER", "WEIGHT", "ORDER", "W_SHARE", "CONV", "TOKENS"
        ));
        for m in &p.members {
            let share = self.shares.iter().find(|s| s.member == m.member);
            let pct = |x: f64| format!("{:.0}%", x * 100.0);
            out.push(format!(
                "{:<28} {:>6} {:>5} {:>7} {:>7} {:>7}  {}",
                m.member,
                m.weight,
                m.order + 1,
                share.map_or("-".into(), |s| pct(s.weight_share)),
                share.map_or("-".into(), |s| pct(s.conversation_share)),
                share.map_or("-".into(), |s| pct(s.token_share)),
                m.why_out.as_deref().unwrap_or("")
            ));
        }
        if self.gates.ok {
            if p.state != PoolState::Active {
                out.push("  gates hold: `switchyard pool activate` turns it on".to_string());
            }
        } else {
            out.extend(self.gates.failures.iter().map(|f| format!("  gate: {f}")));
        }
        out.join("\n")
    }
}
