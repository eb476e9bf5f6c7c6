//! Validation of user input: each check names the field it rejects so every front end can
//! print a one-line error such as `weight: must be between 1 and 1000 (got 0)`. Free text the
//! user typed (slugs, labels, URLs, model names) is never repeated in an error: it may be a
//! pasted key. Numbers may be.

use std::collections::BTreeMap;
use std::fmt;

use crate::secret_shape::{hidden_char, looks_like_key};

/// Bad input: which field, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidInput {
    pub field: String,
    pub message: String,
}

impl InvalidInput {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { field: field.into(), message: message.into() }
    }
}

impl fmt::Display for InvalidInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for InvalidInput {}

pub const MIN_WEIGHT: i64 = 1;
pub const MAX_WEIGHT: i64 = 1000;
pub const MAX_LABEL_LEN: usize = 64;
pub const MAX_SLUG_LEN: usize = 48;

/// A slug is 1–48 chars of `a-z 0-9 -`, starting with a letter or digit; it appears in relay
/// URLs. It must not look like a key (`sk-…`).
pub fn validate_slug(slug: &str) -> Result<(), InvalidInput> {
    let ok_chars = slug.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    let ok_start = slug.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    if slug.is_empty() || slug.len() > MAX_SLUG_LEN || !ok_chars || !ok_start {
        return Err(InvalidInput::new(
            "slug",
            format!("is not a valid slug (1-{MAX_SLUG_LEN} characters of a-z, 0-9 and '-', not starting with '-')"),
        ));
    }
    if looks_like_key(slug) {
        return Err(InvalidInput::new("slug", format!("looks like a key, not a name; {KEYS_ARE_SECRETS}")));
    }
    Ok(())
}

/// A label is 1–64 characters without leading/trailing spaces, without control, zero-width
/// or bidirectional-control characters (two labels must not look alike), and not shaped
/// like a key.
pub fn validate_label(label: &str) -> Result<(), InvalidInput> {
    let trimmed = label.trim();
    if trimmed.is_empty() || trimmed != label || label.chars().count() > MAX_LABEL_LEN {
        return Err(InvalidInput::new(
            "label",
            format!("must be 1-{MAX_LABEL_LEN} characters without leading or trailing spaces"),
        ));
    }
    refuse_hidden("label", label)?;
    if looks_like_key(label) {
        return Err(InvalidInput::new("label", format!("looks like a key, not a name; {KEYS_ARE_SECRETS}")));
    }
    Ok(())
}

/// What a refusal of key-shaped text tells the user to do instead.
const KEYS_ARE_SECRETS: &str =
    "keys go to --secret-stdin or --secret-env of `switchyard profile add`, which keeps them in the OS keychain";

/// Refuses control, zero-width and bidirectional-control characters, naming the code point.
fn refuse_hidden(field: &str, text: &str) -> Result<(), InvalidInput> {
    match hidden_char(text) {
        Some((at, c)) => Err(InvalidInput::new(
            field,
            format!(
                "must not contain control, zero-width or bidirectional-control characters \
                 (U+{:04X} at character {})",
                u32::from(c),
                at + 1
            ),
        )),
        None => Ok(()),
    }
}

pub fn validate_weight(weight: i64) -> Result<(), InvalidInput> {
    if !(MIN_WEIGHT..=MAX_WEIGHT).contains(&weight) {
        return Err(InvalidInput::new(
            "weight",
            format!("must be between {MIN_WEIGHT} and {MAX_WEIGHT} (got {weight})"),
        ));
    }
    Ok(())
}

pub fn validate_priority(priority: i64) -> Result<(), InvalidInput> {
    if !(0..=1_000_000).contains(&priority) {
        return Err(InvalidInput::new("priority", format!("must be between 0 and 1000000 (got {priority})")));
    }
    Ok(())
}

/// Parses and normalises a base URL: http or https, a host, no credentials, no query or
/// fragment; the trailing slash is removed so `https://x/v1/` and `https://x/v1` are one basis.
/// Errors never repeat the URL (it may carry `user:key@`).
pub fn normalize_base_url(raw: &str) -> Result<String, InvalidInput> {
    let parsed =
        url::Url::parse(raw.trim()).map_err(|e| InvalidInput::new("base_url", format!("is not a valid URL ({e})")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(InvalidInput::new("base_url", "scheme must be http or https"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(InvalidInput::new("base_url", "must include a host"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(InvalidInput::new(
            "base_url",
            "must not carry credentials; use --secret-stdin or --secret-env for keys",
        ));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(InvalidInput::new("base_url", "must not have a query string or fragment"));
    }
    let text = parsed.as_str().trim_end_matches('/').to_string();
    Ok(text)
}

/// A model name as the provider spells it: 1–200 chars, not starting with `-`, no whitespace,
/// control, zero-width or bidirectional-control characters, and not shaped like a key (model
/// names are stored, priced and shown; the CLI backend passes one to `claude --model`, where a
/// leading `-` would be read as an option — issue 39).
pub fn validate_model(model: &str) -> Result<(), InvalidInput> {
    if model.is_empty() || model.len() > 200 || model.chars().any(char::is_whitespace) {
        return Err(InvalidInput::new("model", "is not a valid model name (1-200 characters, no spaces)"));
    }
    if model.starts_with('-') {
        return Err(InvalidInput::new("model", "is not a valid model name (it must not start with '-')"));
    }
    // A model goes into request paths (Gemini's `models/{model}:…`, a pool member's) and config
    // strings (`exec POOL -- codex`): no quote, backslash, query or fragment mark, escape, and no
    // `.`/`..` segment that would climb the provider's path (issue 39).
    if model.chars().any(|c| matches!(c, '"' | '\'' | '`' | '\\' | '?' | '#' | '%')) {
        return Err(InvalidInput::new(
            "model",
            "is not a valid model name (no quotes, backslashes, '?', '#' or '%': it goes into request paths)",
        ));
    }
    if model.split('/').any(|segment| segment == "." || segment == "..") {
        return Err(InvalidInput::new("model", "is not a valid model name (no '.' or '..' path segment)"));
    }
    refuse_hidden("model", model)?;
    if looks_like_key(model) {
        return Err(InvalidInput::new("model", format!("looks like a key, not a model name; {KEYS_ARE_SECRETS}")));
    }
    Ok(())
}

/// Validates a list of models: each valid, no duplicates. Order is kept. Errors say which
/// entry (1-based), not what it says.
pub fn validate_models(models: &[String]) -> Result<(), InvalidInput> {
    for (i, m) in models.iter().enumerate() {
        validate_model(m).map_err(|e| InvalidInput::new("model", format!("entry {}: {}", i + 1, e.message)))?;
        if let Some(first) = models[..i].iter().position(|o| o == m) {
            return Err(InvalidInput::new("model", format!("entry {} repeats entry {}", i + 1, first + 1)));
        }
    }
    Ok(())
}

/// Parses `FROM=TO` model mappings (the name a client asks for → the name sent upstream).
/// Errors say which entry (1-based), not what it says.
pub fn parse_mappings(raw: &[String]) -> Result<BTreeMap<String, String>, InvalidInput> {
    let mut out = BTreeMap::new();
    for (i, item) in raw.iter().enumerate() {
        let n = i + 1;
        let Some((from, to)) = item.split_once('=') else {
            return Err(InvalidInput::new("map", format!("entry {n} must look like FROM=TO")));
        };
        let (from, to) = (from.trim(), to.trim());
        validate_model(from).map_err(|_| InvalidInput::new("map", format!("entry {n}: bad source model")))?;
        validate_model(to).map_err(|_| InvalidInput::new("map", format!("entry {n}: bad target model")))?;
        if out.insert(from.to_string(), to.to_string()).is_some() {
            return Err(InvalidInput::new("map", format!("entry {n} maps a source model that is already mapped")));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        for good in ["a", "openai-main", "x1", "0team"] {
            assert!(validate_slug(good).is_ok(), "'{good}' should be accepted");
        }
        for bad in ["", "-a", "A", "has space", "under_score", &"a".repeat(49)] {
            assert!(validate_slug(bad).is_err(), "'{bad}' should be rejected");
        }
    }

    #[test]
    fn weight_bounds() {
        assert!(validate_weight(0).is_err(), "weight 0 would starve a profile silently");
        assert!(validate_weight(1).is_ok(), "1 is the smallest weight");
        assert!(validate_weight(1000).is_ok(), "1000 is the largest weight");
        assert_eq!(validate_weight(1001).map_err(|e| e.field), Err("weight".to_string()));
    }

    #[test]
    fn base_urls_are_normalised_and_checked() {
        assert_eq!(normalize_base_url("https://api.openai.com/v1/").ok().as_deref(), Some("https://api.openai.com/v1"));
        assert_eq!(normalize_base_url("http://127.0.0.1:8080").ok().as_deref(), Some("http://127.0.0.1:8080"));
        for bad in ["ftp://x", "not a url", "https://user:pw@host/", "https://h/?a=1", "mailto:x@y"] {
            let err = normalize_base_url(bad).err();
            assert_eq!(err.map(|e| e.field), Some("base_url".to_string()), "'{bad}' must be rejected");
        }
    }

    #[test]
    fn labels() {
        assert!(validate_label("work key").is_ok(), "spaces inside are fine");
        assert!(validate_label(" lead").is_err(), "leading space would make two labels look alike");
        assert!(validate_label("").is_err(), "empty label cannot name a profile");
    }

    #[test]
    fn mappings() {
        let m = parse_mappings(&["fast=gpt-4o-mini".into()]);
        assert_eq!(m.ok().and_then(|m| m.get("fast").cloned()).as_deref(), Some("gpt-4o-mini"));
        assert!(parse_mappings(&["nosep".into()]).is_err(), "a mapping needs '='");
        assert!(parse_mappings(&["a=b".into(), "a=c".into()]).is_err(), "a source maps once");
    }

    #[test]
    fn models_are_unique() {
        assert!(validate_models(&["a".into(), "a".into()]).is_err(), "duplicate model names are refused");
        assert!(validate_models(&["a b".into()]).is_err(), "spaces are not valid in model names");
    }

    #[test]
    fn key_shaped_model_names_are_refused_and_real_ones_pass() {
        assert!(validate_model("sk-proj-canary-7c41").is_err(), "a key is not a model name");
        for real in [
            "gpt-4o-mini-2024-07-18",
            "claude-sonnet-4-5-20250929",
            "ft:gpt-4o-mini-2024-07-18:my-org::9abcDEF1",
            "accounts/fireworks/models/llama-v3p1-405b-instruct",
            "us.anthropic.claude-3-5-sonnet-20241022-v2:0",
            "gemini-2.5-pro",
        ] {
            assert_eq!(validate_model(real), Ok(()), "{real} is a model name");
        }
    }

    /// Issue 39: a model (or a mapping's target) starting with '-' reached `claude --model` as
    /// an option (`--dangerously-skip-permissions`); it is refused wherever a model is typed.
    #[test]
    fn a_model_starting_with_a_dash_is_refused() {
        for bad in ["-x", "--dangerously-skip-permissions", "--model=opus"] {
            let err = validate_model(bad).err();
            assert_eq!(err.as_ref().map(|e| e.field.as_str()), Some("model"), "'{bad}' would be read as an option");
            assert!(!err.map(|e| e.message).unwrap_or_default().contains(bad), "the refusal never repeats it");
        }
        assert!(
            parse_mappings(&["haiku=--dangerously-skip-permissions".into()]).is_err(),
            "a mapping's target is a model too"
        );
        assert_eq!(validate_model("claude-haiku-4-5"), Ok(()), "a dash inside a name is ordinary");
    }

    /// Issue 39: a model goes into request paths and config strings; `../`, quotes and query
    /// marks in one would climb the provider's path or break out of a string.
    #[test]
    fn a_model_cannot_climb_a_path_or_leave_a_string() {
        for bad in ["../files", "a/../b", "..", "./x", "m\"x", "m'x", "m`x", "m\\x", "m?key=1", "m#x", "m%2e"] {
            assert!(validate_model(bad).is_err(), "{bad:?} is refused");
        }
        for fine in ["gpt-4.1", "gemini-2.5-pro", "anthropic/claude-3.5-sonnet", "models/x..y"] {
            assert_eq!(validate_model(fine), Ok(()), "{fine} is a model name");
        }
    }

    #[test]
    fn labels_refuse_hidden_characters() {
        for c in
            ['\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}']
        {
            let label = format!("work{c}key");
            let err = validate_label(&label).err();
            assert_eq!(err.as_ref().map(|e| e.field.as_str()), Some("label"), "U+{:04X} is refused", u32::from(c));
            let message = err.map(|e| e.message).unwrap_or_default();
            assert!(
                message.contains(&format!("U+{:04X} at character 5", u32::from(c))),
                "the refusal names the code point and where: {message}"
            );
        }
        assert!(validate_label("tab\there").is_err(), "control characters stay refused");
        assert!(validate_label("Büro-Schlüssel").is_ok(), "accented letters are ordinary text");
    }

    #[test]
    fn key_shaped_names_are_refused() {
        assert!(validate_label("sk-canary-echo-123").is_err(), "a key pasted as a label would be shown everywhere");
        assert!(validate_slug("sk-canary-echo-123").is_err(), "a key pasted as a slug would sit in relay URLs");
        assert!(validate_slug("team-sk").is_ok(), "sk inside a name is fine");
        assert!(validate_label("basic tier").is_ok(), "a scheme word is ordinary text in a label");
    }

    #[test]
    fn errors_name_the_field_not_the_value() {
        const CANARY: &str = "sk-canary-echo-123";
        let errors = [
            validate_slug(CANARY).err(),
            validate_slug(&format!("{CANARY}_X")).err(),
            validate_label(CANARY).err(),
            validate_label(&format!("{CANARY}\u{202E}")).err(),
            normalize_base_url(&format!("https://user:{CANARY}@api.example.com/v1")).err(),
            normalize_base_url(&format!("https://user:{CANARY}@[bad/v1")).err(),
            normalize_base_url(&format!("{CANARY}://api.example.com")).err(),
            normalize_base_url(&format!("https://api.example.com/v1?key={CANARY}")).err(),
            validate_model(&format!("{CANARY} x")).err(),
            validate_models(&[CANARY.to_string(), CANARY.to_string()]).err(),
            parse_mappings(&[CANARY.to_string()]).err(),
            parse_mappings(&[format!("a={CANARY} x")]).err(),
            parse_mappings(&[format!("{CANARY}=a"), format!("{CANARY}=b")]).err(),
        ];
        for (i, err) in errors.into_iter().enumerate() {
            let shown = err.map(|e| e.to_string());
            assert!(shown.is_some(), "case {i} is refused");
            let shown = shown.unwrap_or_default();
            assert!(!shown.contains("canary"), "case {i}: the error must not repeat the input: {shown}");
        }
    }
}
