//! `switchyard attempts`: the ledger as a table naming each profile by its label, with the
//! prompt-cache lines under it; `--json` is the list of `Attempt` rows (ids, no labels).

use switchyard_engine::AttemptView;

use super::{cache, Render};

/// What a table shows for a profile that has been removed since the attempt.
pub const REMOVED: &str = "(removed)";

/// The attempt's profile as people know it: its label now, or [`REMOVED`].
pub fn label_of(a: &AttemptView) -> &str {
    a.label.as_deref().unwrap_or(REMOVED)
}

impl Render for Vec<AttemptView> {
    fn text(&self) -> String {
        if self.is_empty() {
            return "no attempts recorded yet".to_string();
        }
        let mut out = vec![format!(
            "{:<24} {:<20} {:<3} {:<20} {:<14} {:>6} {:<16} {:>7} {:>9} {:>7}",
            "AT", "PROFILE", "#", "REASON", "MODEL", "STATUS", "FAILURE", "TTFB_MS", "TOKENS", "CACHE"
        )];
        for a in self {
            out.push(line(a));
        }
        out.extend(cache::summary(self));
        out.join("\n")
    }
}

fn line(a: &AttemptView) -> String {
    let tokens = match (a.input_tokens, a.output_tokens) {
        (None, None) => String::new(),
        (i, o) => format!("{}/{}", i.unwrap_or(0), o.unwrap_or(0)),
    };
    let reason = match &a.moved {
        Some(why) => format!("{} (moved: {why})", a.reason),
        None => a.reason.clone(),
    };
    // A row made on another connection than the one listed (a fallback hop, a pool's member)
    // names that connection: `spare/key1`.
    let profile = if a.origin.is_some() || a.pool.is_some() {
        format!("{}/{}", a.connection, label_of(a))
    } else {
        label_of(a).to_string()
    };
    format!(
        "{:<24} {:<20} {:<3} {:<20} {:<14} {:>6} {:<16} {:>7} {:>9} {:>7}",
        a.at,
        profile,
        a.attempt,
        reason,
        a.model.as_deref().unwrap_or("-"),
        a.status.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
        a.failure_kind.as_deref().unwrap_or(""),
        a.ttfb_ms.map(|s| s.to_string()).unwrap_or_default(),
        tokens,
        cache::attempt_ratio(a)
    )
}
