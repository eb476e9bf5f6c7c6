//! Codex windows by their length, not their slot: a window read from the `x-codex-primary-*`
//! or `-secondary-*` headers whose stated length is one `kind::CODEX_LENGTHS` knows takes that
//! length's name and kind (`codex_5h`/`five_hour`, `codex_7d`/`seven_day`), so the same window
//! keeps one name (one reading, one history) whichever slot it arrives in. A window of another
//! length, or of none, keeps its slot's name and kind (the fallback). When both slots state the
//! same length they are one window unless their resets are a minute or more apart
//! ([`same_window`]): the first (primary) is kept; if they are two, both keep their slots.

use crate::quota::kind::{codex_by_length, same_window};
use crate::quota::window::{QuotaWindow, WindowKind};

/// Renames the Codex slot windows of `windows` by their length (see the module doc); other
/// windows are left as they are, in order.
pub(crate) fn classify_by_length(windows: &mut Vec<QuotaWindow>) {
    let is_slot = |w: &QuotaWindow| matches!(w.kind, WindowKind::CodexPrimary | WindowKind::CodexSecondary);
    if !windows.iter().any(is_slot) {
        return; // API-key answers: nothing to classify, nothing allocated
    }
    let named: Vec<Option<(&'static str, WindowKind)>> =
        windows.iter().map(|w| if is_slot(w) { codex_by_length(w.window_minutes) } else { None }).collect();
    let mut drop = vec![false; windows.len()];
    let mut keep_slot = vec![false; windows.len()];
    for (i, a) in named.iter().enumerate() {
        for (j, b) in named.iter().enumerate().skip(i + 1) {
            if a.is_some() && a == b && !drop[i] {
                match same_window(windows[i].resets_at_ms, windows[j].resets_at_ms) {
                    Some(false) => (keep_slot[i], keep_slot[j]) = (true, true),
                    Some(true) | None => drop[j] = true,
                }
            }
        }
    }
    let mut i = 0;
    windows.retain_mut(|w| {
        let here = i;
        i += 1;
        if drop[here] {
            return false;
        }
        if let (Some((name, kind)), false) = (named[here], keep_slot[here]) {
            (w.name, w.kind) = (name, kind);
        }
        true
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(kind: WindowKind, minutes: Option<u32>, reset: Option<i64>) -> QuotaWindow {
        let name = if kind == WindowKind::CodexPrimary { "codex_primary" } else { "codex_secondary" };
        QuotaWindow {
            name,
            kind,
            per_model: false,
            family: None,
            limit: None,
            remaining: None,
            utilization: Some(0.5),
            resets_at_ms: reset,
            status: None,
            window_minutes: minutes,
            claim: None,
        }
    }

    fn names(ws: &[QuotaWindow]) -> Vec<(&str, &str)> {
        ws.iter().map(|w| (w.name, w.kind.as_str())).collect()
    }

    #[test]
    fn slots_do_not_decide_a_known_length_does() {
        let mut ws = vec![
            slot(WindowKind::CodexPrimary, Some(10_080), Some(9_000_000)),
            slot(WindowKind::CodexSecondary, Some(300), Some(1_000_000)),
        ];
        classify_by_length(&mut ws);
        assert_eq!(
            names(&ws),
            [("codex_7d", "seven_day"), ("codex_5h", "five_hour")],
            "the weekly window in the primary slot is still the weekly window"
        );
    }

    #[test]
    fn an_unknown_length_falls_back_to_the_slot() {
        let mut ws =
            vec![slot(WindowKind::CodexPrimary, None, Some(1)), slot(WindowKind::CodexSecondary, Some(1_440), Some(2))];
        classify_by_length(&mut ws);
        assert_eq!(
            names(&ws),
            [("codex_primary", "codex_primary"), ("codex_secondary", "codex_secondary")],
            "no length, or a day (not one we know): by slot"
        );
    }

    #[test]
    fn one_length_twice_is_one_window_unless_the_resets_say_two() {
        let mut jitter = vec![
            slot(WindowKind::CodexPrimary, Some(300), Some(1_000_000)),
            slot(WindowKind::CodexSecondary, Some(300), Some(1_059_000)),
        ];
        classify_by_length(&mut jitter);
        assert_eq!(names(&jitter), [("codex_5h", "five_hour")], "resets 59 s apart: the same window, kept once");
        let mut two = vec![
            slot(WindowKind::CodexPrimary, Some(300), Some(1_000_000)),
            slot(WindowKind::CodexSecondary, Some(300), Some(1_060_000)),
        ];
        classify_by_length(&mut two);
        assert_eq!(
            names(&two),
            [("codex_primary", "codex_primary"), ("codex_secondary", "codex_secondary")],
            "resets a minute apart: two windows of one length, each keeps its slot"
        );
    }
}
