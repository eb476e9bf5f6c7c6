//! How a moved key is left out of the kept original yet put back byte for byte: its literal is
//! replaced by [`PLACEHOLDER`] and the manifest keeps a *recipe* of how the literal was written —
//! the quotes, and per character of the key either `.` (written as is) or the escape used
//! (`\u` with the case of each hex digit, `\U`, `\x`, or a short escape such as `\n`). The
//! recipe holds none of the key's characters (a short escape names one, and keys have none);
//! restore applies it to the profile's secret. A literal the recipe cannot rebuild exactly is
//! refused before anything is written. A bare literal (a `.env` value) has the empty quote.

use crate::backup::MOVED_KEY;

/// What a kept original holds where a moved key's literal was.
pub(crate) const PLACEHOLDER: &str = "\"__switchyard_moved_key__\"";

/// The quotes a literal may be written with, longest first; the empty one last is a bare value
/// (a `.env` line's `NAME=value`), rebuilt only when it is exactly the key.
const QUOTES: [&str; 5] = ["\"\"\"", "'''", "\"", "'", ""];

/// The recipe of the literal `raw` (quotes included) whose decoded value is `value`; `None`
/// when the recipe would not rebuild `raw` from `value`.
pub(crate) fn recipe_of(raw: &str, value: &str) -> Option<String> {
    let quote = QUOTES.iter().find(|q| raw.len() >= 2 * q.len() && raw.starts_with(**q) && raw.ends_with(**q))?;
    let body = &raw[quote.len()..raw.len() - quote.len()];
    let mut out = String::from(*quote);
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' || quote.is_empty() || quote.starts_with('\'') {
            out.push('.');
            continue;
        }
        let e = chars.next()?;
        out.push('\\');
        out.push(e);
        let digits = match e {
            'u' => 4,
            'U' => 8,
            'x' => 2,
            _ => 0,
        };
        for _ in 0..digits {
            let d = chars.next()?;
            out.push(if d.is_ascii_uppercase() { 'A' } else { 'a' });
        }
    }
    out.push_str(quote);
    (rebuild(&out, value).as_deref() == Some(raw)).then_some(out)
}

/// The literal `recipe` describes, written for `value`; `None` when they do not fit.
pub(crate) fn rebuild(recipe: &str, value: &str) -> Option<String> {
    let quote = QUOTES.iter().find(|q| recipe.starts_with(**q) && recipe.ends_with(**q))?;
    let body = recipe.get(quote.len()..recipe.len().checked_sub(quote.len())?)?;
    let mut out = String::from(*quote);
    let mut steps = body.chars().peekable();
    for c in value.chars() {
        match steps.next()? {
            '.' => out.push(c),
            '\\' => match steps.next()? {
                'u' if u32::from(c) > 0xFFFF => {
                    let mut units = [0u16; 2];
                    c.encode_utf16(&mut units);
                    out.push_str(&hex_with_case(u32::from(units[0]), &mut steps, 4, "\\u")?);
                    if steps.next()? != '\\' || steps.next()? != 'u' {
                        return None;
                    }
                    out.push_str(&hex_with_case(u32::from(units[1]), &mut steps, 4, "\\u")?);
                }
                'u' => out.push_str(&hex_with_case(u32::from(c), &mut steps, 4, "\\u")?),
                'U' => out.push_str(&hex_with_case(u32::from(c), &mut steps, 8, "\\U")?),
                'x' => out.push_str(&hex_with_case(u32::from(c), &mut steps, 2, "\\x")?),
                short => {
                    out.push('\\');
                    out.push(short);
                }
            },
            _ => return None,
        }
    }
    (steps.next().is_none()).then_some(())?;
    out.push_str(quote);
    Some(out)
}

/// `prefix` and `n` hex digits of `v`, each in the case its mark in `marks` says.
fn hex_with_case(v: u32, marks: &mut impl Iterator<Item = char>, n: usize, prefix: &str) -> Option<String> {
    let hex = format!("{v:0n$x}");
    if hex.len() != n {
        return None;
    }
    let mut out = String::from(prefix);
    for d in hex.chars() {
        out.push(if marks.next()? == 'A' { d.to_ascii_uppercase() } else { d });
    }
    Some(out)
}

/// Puts `secret` back where a legacy kept original (before recipes) holds [`MOVED_KEY`].
pub(crate) fn rebuild_legacy(original: &str, secret: &str) -> String {
    original.replace(MOVED_KEY, secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipes_rebuild_each_way_a_key_can_be_written_and_hold_none_of_it() {
        let key = "sk-ant-api03-\u{1F511}Zz";
        for raw in [
            "\"sk-ant-api03-\u{1F511}Zz\"",
            "\"\\u0073k-ant-api03-\\uD83D\\uDD11\\u005a\\u007A\"",
            "'sk-ant-api03-\u{1F511}Zz'",
            "\"\\U00000073k-ant-api03-\u{1F511}Zz\"",
        ] {
            let recipe = recipe_of(raw, key);
            let Some(recipe) = recipe else { panic!("{raw}: a recipe") };
            assert!(!recipe.contains("sk") && !recipe.contains("ant") && !recipe.contains("73"), "{recipe}");
            assert_eq!(rebuild(&recipe, key).as_deref(), Some(raw), "{raw}: rebuilt byte for byte");
        }
        assert_eq!(recipe_of("\"sk-a\"", "sk-b"), None, "a literal that is not the value has no recipe");
        assert_eq!(rebuild("\"...\"", "toolong"), None, "a recipe fits one length");
    }
}
