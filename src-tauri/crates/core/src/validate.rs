//! Validation of user input: each check names the field it rejects so every front end can
//! print a one-line error such as `weight: must be between 1 and 1000 (got 0)`.

use std::collections::BTreeMap;
use std::fmt;

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

/// A slug is 1–48 chars of `a-z 0-9 -`, starting with a letter or digit; it appears in relay URLs.
pub fn validate_slug(slug: &str) -> Result<(), InvalidInput> {
    let ok_chars = slug.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    let ok_start = slug.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    if slug.is_empty() || slug.len() > MAX_SLUG_LEN || !ok_chars || !ok_start {
        return Err(InvalidInput::new(
            "slug",
            format!(
                "'{slug}' is not a valid slug (1-{MAX_SLUG_LEN} characters of a-z, 0-9 and '-', not starting with '-')"
            ),
        ));
    }
    Ok(())
}

/// A label is 1–64 printable characters without leading/trailing spaces.
pub fn validate_label(label: &str) -> Result<(), InvalidInput> {
    let trimmed = label.trim();
    if trimmed.is_empty() || trimmed != label || label.chars().count() > MAX_LABEL_LEN {
        return Err(InvalidInput::new(
            "label",
            format!("must be 1-{MAX_LABEL_LEN} characters without leading or trailing spaces"),
        ));
    }
    if label.chars().any(char::is_control) {
        return Err(InvalidInput::new("label", "must not contain control characters"));
    }
    Ok(())
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
pub fn normalize_base_url(raw: &str) -> Result<String, InvalidInput> {
    let parsed = url::Url::parse(raw.trim())
        .map_err(|e| InvalidInput::new("base_url", format!("'{raw}' is not a valid URL ({e})")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(InvalidInput::new("base_url", format!("scheme must be http or https (got '{}')", parsed.scheme())));
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

/// A model name as the provider spells it: 1–200 chars, no whitespace or control characters.
pub fn validate_model(model: &str) -> Result<(), InvalidInput> {
    if model.is_empty() || model.len() > 200 || model.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(InvalidInput::new(
            "model",
            format!("'{model}' is not a valid model name (1-200 characters, no spaces)"),
        ));
    }
    Ok(())
}

/// Validates a list of models: each valid, no duplicates. Order is kept.
pub fn validate_models(models: &[String]) -> Result<(), InvalidInput> {
    let mut seen = std::collections::BTreeSet::new();
    for m in models {
        validate_model(m)?;
        if !seen.insert(m.as_str()) {
            return Err(InvalidInput::new("model", format!("'{m}' is listed twice")));
        }
    }
    Ok(())
}

/// Parses `FROM=TO` model mappings (the name a client asks for → the name sent upstream).
pub fn parse_mappings(raw: &[String]) -> Result<BTreeMap<String, String>, InvalidInput> {
    let mut out = BTreeMap::new();
    for item in raw {
        let Some((from, to)) = item.split_once('=') else {
            return Err(InvalidInput::new("map", format!("'{item}' must look like FROM=TO")));
        };
        let (from, to) = (from.trim(), to.trim());
        validate_model(from).map_err(|_| InvalidInput::new("map", format!("'{item}': bad source model")))?;
        validate_model(to).map_err(|_| InvalidInput::new("map", format!("'{item}': bad target model")))?;
        if out.insert(from.to_string(), to.to_string()).is_some() {
            return Err(InvalidInput::new("map", format!("'{from}' is mapped twice")));
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
}
