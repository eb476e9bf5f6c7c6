//! The prompt-cache figures in text: the hit ratio (cache reads over the whole prompt,
//! `AttemptView::prompt_tokens`) of one attempt, of a profile in `routing status`, and the
//! lines under `switchyard attempts`' table per profile (by label) and per conversation over
//! the listed attempts (docs/interface.md, "Cache accounting").

use std::collections::BTreeMap;

use switchyard_engine::AttemptView;

use super::attempts::label_of;

/// `95.2 %`, or `-` when nothing was counted.
pub fn ratio(read: i64, prompt: i64) -> String {
    if prompt > 0 {
        format!("{:.1} %", 100.0 * read as f64 / prompt as f64)
    } else {
        "-".to_string()
    }
}

/// One attempt's hit ratio (`-` without a prompt count).
pub fn attempt_ratio(a: &AttemptView) -> String {
    match a.prompt_tokens {
        Some(p) => ratio(i64::from(a.cache_read_tokens.unwrap_or(0)), i64::from(p)),
        None => "-".to_string(),
    }
}

/// (read, prompt) sums of successful attempts with a prompt count, by `key`, with the
/// first such attempt of each key.
fn tally<'a>(
    list: &'a [AttemptView],
    key: impl Fn(&'a AttemptView) -> Option<&'a str>,
) -> BTreeMap<&'a str, (&'a AttemptView, i64, i64)> {
    let mut out: BTreeMap<&str, (&AttemptView, i64, i64)> = BTreeMap::new();
    for a in list.iter().filter(|a| a.status.is_some_and(|s| (200..300).contains(&s))) {
        let (Some(k), Some(p)) = (key(a), a.prompt_tokens) else { continue };
        let e = out.entry(k).or_insert((a, 0, 0));
        e.1 += i64::from(a.cache_read_tokens.unwrap_or(0));
        e.2 += i64::from(p);
    }
    out
}

/// The per-profile and per-conversation lines (none when no attempt reported a prompt).
pub fn summary(list: &[AttemptView]) -> Vec<String> {
    let profiles = tally(list, |a| Some(a.profile.as_str()));
    if profiles.is_empty() {
        return Vec::new();
    }
    let mut lines = vec!["cache hit ratio (cache read / prompt tokens, listed attempts):".to_string()];
    for (a, read, prompt) in profiles.values() {
        lines.push(format!("  profile {}: {} ({read} of {prompt})", label_of(a), ratio(*read, *prompt)));
    }
    for (c, (_, read, prompt)) in tally(list, |a| a.conversation.as_deref()) {
        lines.push(format!("  conversation {c}: {} ({read} of {prompt})", ratio(read, prompt)));
    }
    lines
}
