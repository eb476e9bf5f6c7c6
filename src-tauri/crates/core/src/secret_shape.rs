//! What a pasted key looks like, and which characters text must not hide. Used by the header
//! rule (`header.rs`), label and slug validation, and by errors deciding whether they may
//! repeat what the user typed. Heuristics, tuned to refuse keys rather than ordinary values:
//! a false refusal says what to do instead, a false acceptance would store a secret.

/// Value prefixes of API keys and tokens, compared lower-case per word (`sk-…`, `sk-ant-…`,
/// the relay's own `sy_…`, GitHub, GitLab and Slack tokens).
const KEY_PREFIXES: &[&str] = &[
    "sk-",
    "sk_",
    "sy_",
    "ghp_",
    "gho_",
    "ghs_",
    "ghu_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxr-",
    "xoxs-",
    "xapp-",
];

/// Prefixes of AWS access key ids (`AKIA…` long-lived, `ASIA…` temporary): the prefix and 16
/// upper-case letters or digits.
const AWS_KEY_ID_PREFIXES: &[&str] = &["AKIA", "ASIA"];
const AWS_KEY_ID_LEN: usize = 20;

/// Prefixes of HTTP credentials, compared lower-case on the whole value.
const SCHEME_PREFIXES: &[&str] = &["bearer ", "basic ", "token ", "digest "];

/// A word of key characters at least this long may be a generated key.
pub const MIN_KEY_LEN: usize = 32;

/// A run of letters and digits (mixed) at least this long reads as hex or base62 key material.
const MIN_KEY_RUN: usize = 20;

/// True when `value` looks like an API key, a token or an HTTP credential: it starts with
/// `Bearer `/`Basic `/`Token `/`Digest `, or [`looks_like_key`]. For header values.
pub fn looks_like_secret(value: &str) -> bool {
    let lower = value.trim().to_ascii_lowercase();
    SCHEME_PREFIXES.iter().any(|p| lower.starts_with(p)) || looks_like_key(value)
}

/// True when a word of `value` (split at characters outside `A-Za-z0-9_-`) starts with a key
/// prefix (`sk-`, `sy_`, …), `value` is a JSON Web Token, or a word is at least 32 key
/// characters that read as generated: a 20-character run mixing letters and digits, or upper
/// case, lower case and digits together. Readable values such as
/// `fine-grained-tool-streaming-2025-05-14`, a UUID or `basic tier` are not keys. For names
/// (labels, slugs), where a scheme word like "basic" is ordinary text.
pub fn looks_like_key(value: &str) -> bool {
    let trimmed = value.trim();
    is_jwt(trimmed) || trimmed.split(|c: char| !is_key_char(c)).any(is_key_word)
}

/// Stricter than [`looks_like_secret`], for free text a caller chooses and Switchyard stores
/// and shows (tag values): also a key prefix written with a space or a dot instead of its
/// `-`/`_` (`sk live …`, `sk.proj.…`), and a word of 20 or more key characters that reads as
/// generated (30 hex digits), where names and header values need 32. Refusing an odd tag
/// costs the caller a rename; storing a key in the ledger would cost much more.
pub fn looks_like_secret_in_free_text(value: &str) -> bool {
    looks_like_secret(value)
        || has_loosely_written_prefix(value)
        || value.split(|c: char| !is_key_char(c)).any(|w| w.len() >= MIN_KEY_RUN && reads_as_generated(w))
}

/// The first character that text must not carry, with its position (0-based, in characters):
/// control characters, zero-width characters (U+200B..U+200D, U+2060, U+FEFF, …) and
/// bidirectional overrides, isolates and marks (U+202A..U+202E, U+2066..U+2069, U+200E,
/// U+200F, U+061C). They make two names look alike, or a name look like another.
pub fn hidden_char(text: &str) -> Option<(usize, char)> {
    text.chars().enumerate().find(|(_, c)| is_hidden(*c))
}

/// True for the characters [`hidden_char`] refuses.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// `value` as an error message may repeat it: only when it is short, has no hidden
/// characters and does not look like a key. Otherwise `None`: say which field, not what.
pub fn echo_safe(value: &str) -> Option<&str> {
    let safe =
        !value.is_empty() && value.chars().count() <= 64 && hidden_char(value).is_none() && !looks_like_secret(value);
    safe.then_some(value)
}

/// How an error names a value it may not repeat.
pub const NOT_SHOWN: &str = "(not shown: it may be a key)";

/// `'value'` when [`echo_safe`], else [`NOT_SHOWN`].
pub fn quoted_or_hidden(value: &str) -> String {
    echo_safe(value).map_or_else(|| NOT_SHOWN.to_string(), |v| format!("'{v}'"))
}

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn is_key_word(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    if KEY_PREFIXES.iter().any(|p| lower.starts_with(p) && word.len() > p.len()) || is_aws_key_id(word) {
        return true;
    }
    word.len() >= MIN_KEY_LEN && reads_as_generated(word)
}

/// Upper case, lower case and digits together, or a long run mixing letters and digits.
fn reads_as_generated(word: &str) -> bool {
    let (upper, low, digit) = (
        word.bytes().any(|b| b.is_ascii_uppercase()),
        word.bytes().any(|b| b.is_ascii_lowercase()),
        word.bytes().any(|b| b.is_ascii_digit()),
    );
    (upper && low && digit) || word.split(['-', '_']).any(mixed_run)
}

/// `AKIA`/`ASIA` and 16 upper-case letters or digits.
fn is_aws_key_id(word: &str) -> bool {
    word.len() == AWS_KEY_ID_LEN
        && AWS_KEY_ID_PREFIXES.iter().any(|p| word.starts_with(p))
        && word.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// A key prefix's word (`sk`, `ghp`, `xapp`, …: a prefix of [`KEY_PREFIXES`] without its
/// separator) standing alone and followed by a space or a dot and more key characters.
fn has_loosely_written_prefix(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    KEY_PREFIXES.iter().map(|p| &p[..p.len() - 1]).any(|stem| {
        lower.match_indices(stem).any(|(at, _)| {
            let starts_word = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
            let rest = &bytes[at + stem.len()..];
            let gap = rest.iter().take_while(|b| matches!(b, b' ' | b'.')).count();
            starts_word && gap > 0 && rest.get(gap).is_some_and(|b| b.is_ascii_alphanumeric())
        })
    })
}

/// A long run of letters and digits with both in it (hex or base62 key material).
fn mixed_run(run: &str) -> bool {
    run.len() >= MIN_KEY_RUN && run.bytes().any(|b| b.is_ascii_digit()) && run.bytes().any(|b| b.is_ascii_alphabetic())
}

/// `eyJ…` header, payload and signature: a JSON Web Token.
fn is_jwt(value: &str) -> bool {
    let parts: Vec<&str> = value.split('.').collect();
    value.starts_with("eyJ")
        && value.len() >= MIN_KEY_LEN
        && parts.len() == 3
        && parts.iter().all(|p| !p.is_empty() && p.chars().all(is_key_char))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_tokens_are_recognised() {
        for key in [
            "sk-canary-echo-123",
            "sk-ant-api03-abc",
            "Bearer abc",
            "basic dXNlcjpwdw==",
            "sy_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
            "0123456789abcdef0123456789abcdef",
            "key=sk-live-1",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ] {
            assert!(looks_like_secret(key), "'{key}' has the shape of a key or token");
        }
    }

    #[test]
    fn readable_values_are_not_keys() {
        for plain in [
            "org-AbCdEf1234567890abcdefGH",
            "proj_AbCdEf1234567890abcdefGH",
            "fine-grained-tool-streaming-2025-05-14",
            "prompt-caching-2024-07-31,interleaved-thinking-2025-05-14",
            "2023-06-01",
            "123e4567-e89b-12d3-a456-426614174000",
            "work key",
            "task-force",
            "sk-",
        ] {
            assert!(!looks_like_secret(plain), "'{plain}' is an ordinary value");
        }
    }

    #[test]
    fn more_issuers_keys_are_recognised_everywhere() {
        for key in ["AKIAIOSFODNN7EXAMPLE", "ASIAY34FZKBOKMUTVV7A", "xapp-1-A0123", "glpat-abc123", "ghs_abc123"] {
            assert!(looks_like_key(key), "'{key}' has the shape of a key");
        }
        for plain in ["AKIA", "AKIAIOSFODNN7EXAMPLEX", "akiaiosfodnn7example"] {
            assert!(!looks_like_key(plain), "'{plain}' is not an AWS key id (length or case)");
        }
    }

    #[test]
    fn free_text_refuses_loosely_written_and_shorter_keys() {
        for key in ["sk live 4f3a9c1e", "sk.proj.4f3a9c1e", "my key: sk  ant api03", "0123456789abcdef0123456789abcd"] {
            assert!(looks_like_secret_in_free_text(key), "'{key}' is a key written loosely or a shorter one");
            assert!(!looks_like_secret(key), "'{key}': names and header values keep the looser rule");
        }
        for plain in ["task force", "risk.level", "sk", "desk 7", "job 7", "123e4567-e89b-12d3-a456-426614174000"] {
            assert!(!looks_like_secret_in_free_text(plain), "'{plain}' is ordinary text");
        }
    }

    #[test]
    fn scheme_words_make_secrets_in_values_but_not_keys_in_names() {
        assert!(looks_like_secret("Basic dXNlcjpwdw=="), "a header value starting 'Basic ' is a credential");
        assert!(!looks_like_key("basic tier"), "a label may well say 'basic tier'");
        assert!(!looks_like_key("token budget"), "or 'token budget'");
        assert!(looks_like_key("sk-canary-echo-123"), "a key is a key in names too");
    }

    #[test]
    fn hidden_characters_are_found_with_their_position() {
        assert_eq!(hidden_char("ab\u{200B}c"), Some((2, '\u{200B}')), "zero-width space");
        for c in
            ['\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}', '\u{7}']
        {
            assert!(is_hidden(c), "U+{:04X} must be refused in names", u32::from(c));
        }
        assert_eq!(hidden_char("Work key (prod) é"), None, "ordinary text, accents included, is fine");
    }

    #[test]
    fn echo_safe_never_returns_a_key() {
        assert_eq!(echo_safe("nope"), Some("nope"), "a plain short name may be repeated");
        assert_eq!(echo_safe("sk-canary-echo-123"), None, "a key is never repeated");
        assert_eq!(quoted_or_hidden("sk-canary-echo-123"), NOT_SHOWN, "the placeholder stands in");
        assert_eq!(echo_safe("a\u{202E}b"), None, "text with a bidi override is not repeated as is");
    }
}
