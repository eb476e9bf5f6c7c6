//! `.env` files as dotenv reads them (Gemini CLI's `~/.gemini/.env`): one `NAME=value` per line,
//! an optional `export ` before the name, blank lines and `#` comments, a value bare (up to a
//! ` #` comment, trimmed) or quoted with `'`, `"` or `` ` `` on its line. Edits are minimal: a set
//! replaces only the value's bytes of every line naming it (dotenv lets the last one win; all of
//! them say the same after set-up) or appends one line; a removal drops the whole line. Every
//! other byte — comments, order, blank lines, line endings — stays.

use std::ops::Range;

use crate::config_file::Literal;

/// One `NAME=value` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub name: String,
    pub name_span: Range<usize>,
    /// The value as written (quotes included).
    pub value_span: Range<usize>,
    /// The value as dotenv reads it (quotes taken off).
    pub value: String,
    /// The whole line, its line ending included.
    pub line_span: Range<usize>,
}

/// Every assignment of `text`, in order.
pub(crate) fn entries(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i + 1);
        if let Some(entry) = entry(text, start, end) {
            out.push(entry);
        }
        start = end;
    }
    out
}

fn entry(text: &str, start: usize, end: usize) -> Option<Entry> {
    let line = text[start..end].trim_end_matches(['\n', '\r']);
    let indent = line.len() - line.trim_start().len();
    let mut at = start + indent;
    let rest = &text[at..start + line.len()];
    if rest.starts_with('#') {
        return None;
    }
    let rest = match rest.strip_prefix("export ") {
        Some(after) => {
            let skipped = rest.len() - after.len() + (after.len() - after.trim_start().len());
            at += skipped;
            after.trim_start()
        }
        None => rest,
    };
    let name_len = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')).count();
    if name_len == 0 {
        return None;
    }
    let name_span = at..at + name_len;
    let after_name = &rest[name_len..];
    let eq = after_name.trim_start();
    let eq = eq.strip_prefix('=')?;
    let value_text = eq.trim_start();
    let value_start = start + line.len() - value_text.len();
    let (value_len, value) = match value_text.chars().next() {
        Some(q @ ('"' | '\'' | '`')) => match value_text[1..].find(q) {
            Some(close) => (close + 2, value_text[1..=close].to_string()),
            // An unclosed quote: dotenv reads the rest of the line as it is.
            None => (value_text.len(), value_text.to_string()),
        },
        _ => {
            let bare = value_text.find(" #").map_or(value_text, |i| &value_text[..i]).trim_end();
            (bare.len(), bare.to_string())
        }
    };
    Some(Entry {
        name: rest[..name_len].to_string(),
        name_span,
        value_span: value_start..value_start + value_len,
        value,
        line_span: start..end,
    })
}

/// The first line of `text` that dotenv (the `dotenv` package Gemini CLI parses `.env` with)
/// would read otherwise than [`entries`] does — so set-up would read or edit one value and
/// Gemini CLI use another — as the byte offset of where it goes wrong and why; `None` when every
/// line reads the same. dotenv reads `NAME: value`, a quoted value running onto later lines,
/// what follows a closing quote, a value cut at a `#` and `\n` expanded in double quotes.
pub(crate) fn unreadable(text: &str) -> Option<(usize, &'static str)> {
    let mut start = 0;
    while start < text.len() {
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i + 1);
        if let Some(fault) = line_fault(text, start, end) {
            return Some(fault);
        }
        start = end;
    }
    None
}

fn line_fault(text: &str, start: usize, end: usize) -> Option<(usize, &'static str)> {
    let line = text[start..end].trim_end_matches(['\n', '\r']);
    for (i, c) in line.char_indices() {
        let why = match c {
            '\t' => continue,
            '\r' | '\u{2028}' | '\u{2029}' => "a line break inside a line (Gemini CLI starts a new line there)",
            c if c.is_control() => "a control character",
            _ => continue,
        };
        return Some((start + i, why));
    }
    let indent = line.len() - line.trim_start().len();
    let Some(e) = entry(text, start, end) else {
        let why = "a variable Gemini CLI reads but set-up cannot; write it NAME=value";
        return dotenv_reads(line).then_some((start + indent, why));
    };
    let value_end = start + line.len();
    let written = &text[e.value_span.start..value_end];
    match written.chars().next() {
        Some(q @ ('"' | '\'' | '`')) => {
            let Some(close) = written[1..].find(q) else {
                return Some((e.value_span.start, "an unclosed quote (Gemini CLI reads on into the next lines)"));
            };
            let after = written[close + 2..].trim_start();
            if !after.is_empty() && !after.starts_with('#') {
                return Some((e.value_span.start + close + 2, "text after a closing quote"));
            }
            let inner = &written[1..=close];
            if q == '"' && (inner.contains("\\n") || inner.contains("\\r")) {
                return Some((e.value_span.start, "\\n or \\r in double quotes (Gemini CLI reads a line break)"));
            }
        }
        _ => {
            let bare = &text[e.value_span.clone()];
            if let Some(i) = bare.find('#') {
                return Some((e.value_span.start + i, "a # in an unquoted value (Gemini CLI ends the value there)"));
            }
        }
    }
    None
}

/// Whether dotenv reads `line` (its line ending off) as a variable: `[export ]NAME=` or
/// `[export ]NAME: `, NAME of letters, digits, `_`, `.` and `-`.
fn dotenv_reads(line: &str) -> bool {
    let rest = line.trim_start();
    let rest = match rest.strip_prefix("export") {
        Some(after) if after.starts_with(char::is_whitespace) => after.trim_start(),
        _ => rest,
    };
    let name_len = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')).count();
    let after = &rest[name_len..];
    let colon = after.strip_prefix(':').is_some_and(|v| v.is_empty() || v.starts_with(char::is_whitespace));
    name_len > 0 && (after.trim_start().starts_with('=') || colon)
}

/// The value dotenv reads for `name` (the last line naming it).
pub(crate) fn get(text: &str, name: &str) -> Option<String> {
    entries(text).into_iter().rev().find(|e| e.name == name).map(|e| e.value)
}

/// `text` with `name` set to `value` (written bare: set-up writes URLs and tokens, which need
/// no quotes).
pub(crate) fn set(text: &str, name: &str, value: &str) -> String {
    let spans: Vec<Range<usize>> = entries(text).into_iter().filter(|e| e.name == name).map(|e| e.value_span).collect();
    if spans.is_empty() {
        let mut out = text.to_string();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push_str(if out.contains("\r\n") { "\r\n" } else { "\n" });
        }
        out.push_str(&format!("{name}={value}\n"));
        return out;
    }
    let mut out = String::with_capacity(text.len() + value.len());
    let mut from = 0;
    for span in spans {
        out.push_str(&text[from..span.start]);
        out.push_str(value);
        from = span.end;
    }
    out.push_str(&text[from..]);
    out
}

/// `text` without the lines that set `name`.
pub(crate) fn remove(text: &str, name: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for e in entries(text).into_iter().filter(|e| e.name == name) {
        out.push_str(&text[from..e.line_span.start]);
        from = e.line_span.end;
    }
    out.push_str(&text[from..]);
    out
}

/// Every name and value with its span, for masking.
pub(crate) fn literals(text: &str) -> Vec<Literal> {
    entries(text)
        .into_iter()
        .flat_map(|e| [Literal { span: e.name_span, value: e.name }, Literal { span: e.value_span, value: e.value }])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# my keys\nexport GEMINI_API_KEY=\"AIza-one\"  \nGEMINI_MODEL=gemini-2.5-pro # the default\n\nOTHER='a b'\r\nbroken line\n";

    #[test]
    fn reads_names_and_values_as_dotenv_does() {
        let got: Vec<(String, String)> = entries(FILE).into_iter().map(|e| (e.name, e.value)).collect();
        assert_eq!(
            got,
            [
                ("GEMINI_API_KEY".to_string(), "AIza-one".to_string()),
                ("GEMINI_MODEL".to_string(), "gemini-2.5-pro".to_string()),
                ("OTHER".to_string(), "a b".to_string()),
            ],
            "export, quotes, a trailing comment and CRLF are read; a comment and a line without = are not entries"
        );
        assert_eq!(get(FILE, "GEMINI_MODEL").as_deref(), Some("gemini-2.5-pro"));
        assert_eq!(get(FILE, "NOPE"), None);
    }

    #[test]
    fn edits_touch_only_the_value_or_the_line() {
        let set_once = set(FILE, "GEMINI_API_KEY", "sy_token");
        assert_eq!(
            set_once,
            FILE.replace("\"AIza-one\"", "sy_token"),
            "only the value's bytes change: export, comment and spacing stay"
        );
        let added = set(FILE, "GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:4141/c/gem");
        assert_eq!(added, format!("{FILE}GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:4141/c/gem\n"), "appended");
        assert_eq!(set("A=1", "B", "2"), "A=1\nB=2\n", "after a last line without its newline");
        let removed = remove(FILE, "GEMINI_MODEL");
        assert_eq!(removed, FILE.replace("GEMINI_MODEL=gemini-2.5-pro # the default\n", ""), "the whole line goes");
        let twice = set("K=a\nK=b\n", "K", "c");
        assert_eq!(twice, "K=c\nK=c\n", "every line naming it says the same");
    }

    /// Issue 39: lines `entries` skipped or read otherwise were read by Gemini CLI's dotenv.
    #[test]
    fn a_line_dotenv_reads_otherwise_is_found_where_it_goes_wrong() {
        assert_eq!(unreadable(FILE), None, "export, quotes, comments, CRLF and a line without = read alike");
        let at = |t: &str| unreadable(t).map(|(at, _)| at);
        assert_eq!(at("A=1\nGOOGLE_API_KEY: k\n"), Some(4), "NAME: value");
        assert_eq!(at("export\tA=k\n"), Some(0), "export and a tab");
        assert_eq!(at("A=\"open\n"), Some(2), "an unclosed quote");
        assert_eq!(at("A=\"k\" x\n"), Some(5), "text after the closing quote");
        assert_eq!(at("A=k#x\n"), Some(3), "a # inside a bare value");
        assert_eq!(at("A=\"a\\nb\"\n"), Some(2), "\\n in double quotes");
        assert_eq!(at("A=k\rB=2\n"), Some(3), "a lone carriage return");
        assert_eq!(at("A=\"k\" # c\nB='x'#c\nC=v # c\n"), None, "a comment after a value reads alike");
    }
}
