//! What a preview may show of a config file: every string literal is judged by its decoded
//! value at its span (so `"\u0073k-ant-…"` is caught like `"sk-ant-…"`), everything between
//! literals (comments, bare keys) word by word. The relay token and the provider keys set-up
//! found get their own placeholders; any other value shaped like a secret (`core::secret_shape`:
//! `sk-…`, `ghp_…`, `Bearer …`, long generated words) becomes `<secret>`.

use switchyard_core::secret_shape::{looks_like_key, looks_like_secret};

use crate::config_file::{ConfigFile, Literal};

pub(crate) const RELAY_TOKEN: &str = "<relay token>";
pub(crate) const PROVIDER_KEY: &str = "<provider key>";
pub(crate) const OTHER_SECRET: &str = "<secret>";

/// The secrets a preview knows by value.
pub(crate) struct Known<'a> {
    pub token: &'a str,
    pub keys: Vec<&'a str>,
}

impl Known<'_> {
    fn placeholder(&self, value: &str) -> Option<&'static str> {
        if value == self.token {
            Some(RELAY_TOKEN)
        } else if self.keys.contains(&value) {
            Some(PROVIDER_KEY)
        } else if looks_like_secret(value) {
            Some(OTHER_SECRET)
        } else {
            None
        }
    }
}

/// `text` as a preview may show it. A file whose literals cannot be listed is masked word by
/// word as a whole.
pub(crate) fn masked(file: &dyn ConfigFile, text: &str, known: &Known<'_>) -> String {
    let mut literals = file.literals(text).unwrap_or_default();
    literals.sort_by_key(|l| l.span.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for Literal { span, value } in &literals {
        if span.start < at || span.end > text.len() {
            continue;
        }
        out.push_str(&masked_words(&text[at..span.start]));
        match known.placeholder(value) {
            Some(p) => {
                let quote = &text[span.start..span.start + 1];
                out.push_str(&format!("{quote}{p}{quote}"));
            }
            None => out.push_str(&text[span.clone()]),
        }
        at = span.end;
    }
    out.push_str(&masked_words(&text[at..]));
    // What no literal held (a key in a comment, say) by value too.
    for s in std::iter::once(known.token).chain(known.keys.iter().copied()).filter(|s| s.len() >= 8) {
        let p = if s == known.token { RELAY_TOKEN } else { PROVIDER_KEY };
        out = out.replace(s, p);
    }
    out
}

/// `text` with each word of key characters that looks like a key replaced by `<secret>`.
fn masked_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word_start = None;
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    for (i, c) in text.char_indices() {
        match (word_start, is_word(c)) {
            (None, true) => word_start = Some(i),
            (Some(s), false) => {
                push_word(&mut out, &text[s..i]);
                word_start = None;
                out.push(c);
            }
            (None, false) => out.push(c),
            (Some(_), true) => {}
        }
    }
    if let Some(s) = word_start {
        push_word(&mut out, &text[s..]);
    }
    out
}

fn push_word(out: &mut String, word: &str) {
    out.push_str(if looks_like_key(word) { OTHER_SECRET } else { word });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Client;

    const TOKEN: &str = "sy_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn literals_are_masked_by_decoded_value_and_shape_comments_by_word() {
        let text = concat!(
            "{\n  // old key: sk-ant-comment-0000000000000000\n",
            "  \"env\": {\n    \"ANTHROPIC_API_KEY\": \"\\u0073k-ant-escaped-canary\",\n",
            "    \"OPENAI_API_KEY\": \"sk-proj-other-0000000000000000\",\n",
            "    \"GH\": \"ghp_abcdefghijklmnopqrstuvwxyz0123456789\",\n",
            "    \"H\": \"Bearer abc.def\",\n    \"T\": \"TOKEN\",\n    \"theme\": \"dark\"\n  }\n}\n"
        )
        .replace("TOKEN", TOKEN);
        let known = Known { token: TOKEN, keys: vec!["sk-ant-escaped-canary"] };
        let out = masked(Client::Opencode.file(), &text, &known);
        for secret in ["escaped-canary", "\\u0073k", "sk-proj", "ghp_", "abc.def", "comment-0000", TOKEN] {
            assert!(!out.contains(secret), "'{secret}' is not shown:\n{out}");
        }
        assert!(out.contains("\"ANTHROPIC_API_KEY\": \"<provider key>\""), "ours by name:\n{out}");
        assert!(out.contains("\"T\": \"<relay token>\"") && out.contains("\"theme\": \"dark\""), "{out}");
        assert!(out.contains("\"OPENAI_API_KEY\": \"<secret>\"") && out.contains("// old key: <secret>"), "{out}");
    }
}
