//! What a limit window is, as the contract names it (`quota --json` `kind`, docs/interface.md):
//! the subscription windows (`five_hour`, `seven_day`, `seven_day_model`, and a Codex window
//! whose length is not one we know: `codex_primary`/`codex_secondary`), the account's overall
//! subscription status (`overall`), and the per-minute API limits (`requests`, `tokens`), and the quotas Gemini refusals teach
//! (`per_minute`, `per_day`: `gemini/learned.rs`). A
//! Codex window is classified by its stated length, not by the slot it came in
//! ([`codex_by_length`]); two readings whose resets are less than [`SAME_WINDOW_MS`] apart are
//! the same window ([`same_window`]). Pure data and functions.

use crate::dialect;
use crate::quota::window::WindowKind;
use switchyard_core::connection::Protocol;

/// Resets less than this far apart belong to the same window: a reset sent as a countdown
/// runs from our clock (jitter of a second or two between answers), and an absolute one is
/// rounded to seconds. Further apart, the window has rolled over (or it is another window).
pub const SAME_WINDOW_MS: i64 = 60_000;

/// Whether two readings' resets say they are of the same window (same period): both known and
/// less than [`SAME_WINDOW_MS`] apart. Unknown resets tell nothing: `None`.
pub fn same_window(a_ms: Option<i64>, b_ms: Option<i64>) -> Option<bool> {
    Some(a_ms?.abs_diff(b_ms?) < SAME_WINDOW_MS.unsigned_abs())
}

/// The Codex windows we know by their length: (minutes, window name, kind). A window of
/// another length (or none stated) keeps its slot's name and kind.
pub const CODEX_LENGTHS: &[(u32, &str, WindowKind)] =
    &[(300, "codex_5h", WindowKind::FiveHour), (10_080, "codex_7d", WindowKind::SevenDay)];

/// A Codex window's name and kind by its stated length; `None` when the length is not one
/// of [`CODEX_LENGTHS`] (then the slot decides).
pub fn codex_by_length(window_minutes: Option<u32>) -> Option<(&'static str, WindowKind)> {
    let minutes = window_minutes?;
    CODEX_LENGTHS.iter().find(|(m, _, _)| *m == minutes).map(|(_, name, kind)| (*name, *kind))
}

/// The kind of a stored window by its name (any dialect's table, or a Codex length name);
/// a Codex slot name is classified by `window_minutes` first. `None` for a name no table has.
pub fn kind_of(name: &str, window_minutes: Option<u32>) -> Option<WindowKind> {
    if let Some(kind) = crate::gemini::learned::kind_of_name(name) {
        return Some(kind);
    }
    if let Some((_, _, kind)) = CODEX_LENGTHS.iter().find(|(_, n, _)| *n == name) {
        return Some(*kind);
    }
    let row = [Protocol::Anthropic, Protocol::Openai]
        .into_iter()
        .flat_map(|p| dialect::of(p).quota_rows().iter())
        .find(|r| r.name == name)?;
    if row.kind == WindowKind::CodexPrimary || row.kind == WindowKind::CodexSecondary {
        if let Some((_, kind)) = codex_by_length(window_minutes) {
            return Some(kind);
        }
    }
    Some(row.kind)
}

/// A stored window's identity by its name: (the table's `&'static` name, per model, family) — any
/// dialect's table, a Codex length name, or a learned Gemini window. `None` for a name no table
/// has (a reading of a newer build: left alone).
pub fn window_named(name: &str) -> Option<(&'static str, bool, Option<&'static str>)> {
    for learned in [crate::gemini::learned::PER_MINUTE, crate::gemini::learned::PER_DAY] {
        if learned == name {
            return Some((learned, true, None));
        }
    }
    if let Some((_, n, _)) = CODEX_LENGTHS.iter().find(|(_, n, _)| *n == name) {
        return Some((n, false, None));
    }
    [Protocol::Anthropic, Protocol::Openai]
        .into_iter()
        .flat_map(|p| dialect::of(p).quota_rows().iter())
        .find(|r| r.name == name)
        .map(|r| (r.name, r.per_model, r.family))
}

/// The model family a stored window holds for (`opus` for `unified_7d_opus`), if it is one's.
pub fn family_of(name: &str) -> Option<&'static str> {
    window_named(name).and_then(|(_, _, family)| family)
}

/// The window a representative claim names (`five_hour` → `unified_5h`), if we know the word.
pub fn claimed_window(claim: &str) -> Option<&'static str> {
    crate::quota::anthropic::CLAIMS.iter().find(|(c, _)| *c == claim).map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_windows_are_known_by_their_length_only() {
        assert_eq!(codex_by_length(Some(300)), Some(("codex_5h", WindowKind::FiveHour)), "300 minutes: 5 hours");
        assert_eq!(codex_by_length(Some(10_080)), Some(("codex_7d", WindowKind::SevenDay)), "10 080 minutes: a week");
        for other in [None, Some(299), Some(301), Some(1_440), Some(43_200)] {
            assert_eq!(codex_by_length(other), None, "{other:?}: not a length we know, the slot decides");
        }
    }

    #[test]
    fn stored_names_give_their_kind() {
        let cases = [
            ("unified_5h", None, Some(WindowKind::FiveHour)),
            ("unified_7d", None, Some(WindowKind::SevenDay)),
            ("unified_7d_opus", None, Some(WindowKind::SevenDayModel)),
            ("unified", None, Some(WindowKind::Overall)),
            ("codex_5h", None, Some(WindowKind::FiveHour)),
            ("codex_7d", None, Some(WindowKind::SevenDay)),
            ("codex_primary", Some(10_080), Some(WindowKind::SevenDay)),
            ("codex_secondary", Some(300), Some(WindowKind::FiveHour)),
            ("codex_secondary", Some(90), Some(WindowKind::CodexSecondary)),
            ("codex_primary", None, Some(WindowKind::CodexPrimary)),
            ("requests", None, Some(WindowKind::Requests)),
            ("output_tokens", None, Some(WindowKind::Tokens)),
            ("made_up", None, None),
        ];
        for (name, minutes, want) in cases {
            assert_eq!(kind_of(name, minutes), want, "{name} ({minutes:?} min)");
        }
    }

    #[test]
    fn claims_and_families_name_table_windows() {
        assert_eq!(claimed_window("seven_day_opus"), Some("unified_7d_opus"), "the Opus weekly window");
        assert_eq!(claimed_window("seven_day_overage_included"), None, "a claim we do not read");
        for (claim, name) in crate::quota::anthropic::CLAIMS {
            assert!(kind_of(name, None).is_some(), "{claim} names a window of the table: {name}");
        }
        assert_eq!(family_of("unified_7d_sonnet"), Some("sonnet"), "a family window");
        assert_eq!(family_of("unified_7d"), None, "the account's window");
    }

    #[test]
    fn resets_under_a_minute_apart_are_one_window() {
        assert_eq!(same_window(Some(1_000_000), Some(1_059_999)), Some(true), "59.999 s apart: jitter");
        assert_eq!(same_window(Some(1_059_999), Some(1_000_000)), Some(true), "either order");
        assert_eq!(same_window(Some(1_000_000), Some(1_060_000)), Some(false), "a minute apart: another window");
        assert_eq!(same_window(None, Some(1)), None, "an unknown reset tells nothing");
    }

    #[test]
    fn kinds_have_distinct_contract_names() {
        let mut names: Vec<&str> = WindowKind::ALL.iter().map(|k| k.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), WindowKind::ALL.len(), "one name per kind");
    }
}

#[cfg(test)]
mod window_named_tests {
    use super::*;

    #[test]
    fn every_table_name_and_learned_name_comes_back_with_its_static_identity() {
        for p in [Protocol::Anthropic, Protocol::Openai] {
            for r in dialect::of(p).quota_rows() {
                let (name, per_model, family) = window_named(r.name).expect("a table's own name is known");
                assert_eq!(
                    (name, per_model, family),
                    (r.name, r.per_model, r.family),
                    "{} read back as stored",
                    r.name
                );
            }
        }
        assert_eq!(window_named("codex_7d").map(|w| w.0), Some("codex_7d"), "a Codex length name");
        assert_eq!(window_named("gemini_per_day").map(|w| w.1), Some(true), "learned Gemini windows are per model");
        assert_eq!(window_named("made_up_window"), None, "an unknown name is left alone");
    }
}
