//! Non-secret connection headers (`Name: value`). Credential headers are refused here so a
//! secret can never reach the database through `--header`.

use serde::{Deserialize, Serialize};

use crate::validate::InvalidInput;

/// One header sent with every upstream request of a connection.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Header {
    pub name: String,
    pub value: String,
}

/// Header names that carry credentials; they come from profiles, never from `--header`.
const CREDENTIAL_HEADERS: &[&str] =
    &["authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie"];

/// Value prefixes that look like API keys or bearer tokens.
const SECRET_PREFIXES: &[&str] = &["sk-", "sk_", "bearer ", "basic "];

impl Header {
    /// Parses `Name: value`. The name is lower-cased (HTTP names are case-insensitive).
    pub fn parse(raw: &str) -> Result<Self, InvalidInput> {
        let Some((name, value)) = raw.split_once(':') else {
            return Err(InvalidInput::new("header", format!("'{}' must look like 'Name: value'", redact(raw))));
        };
        let name = name.trim().to_ascii_lowercase();
        let value = value.trim().to_string();
        let token_ok =
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !token_ok {
            return Err(InvalidInput::new("header", format!("'{name}' is not a valid header name")));
        }
        if value.chars().any(|c| c.is_control() && c != '\t') {
            return Err(InvalidInput::new("header", format!("value of '{name}' contains control characters")));
        }
        if CREDENTIAL_HEADERS.contains(&name.as_str()) {
            return Err(InvalidInput::new(
                "header",
                format!("'{name}' carries a credential; add keys as profiles with --secret-stdin or --secret-env"),
            ));
        }
        let lower = value.to_ascii_lowercase();
        if SECRET_PREFIXES.iter().any(|p| lower.starts_with(p)) {
            return Err(InvalidInput::new(
                "header",
                format!(
                    "value of '{name}' looks like a secret; add keys as profiles with --secret-stdin or --secret-env"
                ),
            ));
        }
        Ok(Header { name, value })
    }
}

/// True when `name` (any case) is a header that carries credentials.
pub fn is_credential_header(name: &str) -> bool {
    CREDENTIAL_HEADERS.contains(&name.trim().to_ascii_lowercase().as_str())
}

/// True when `value` starts like an API key or an HTTP credential (`sk-…`, `Bearer …`).
pub fn looks_like_secret(value: &str) -> bool {
    let lower = value.trim().to_ascii_lowercase();
    SECRET_PREFIXES.iter().any(|p| lower.starts_with(p))
}

/// Parses a list of headers; a name may appear once.
pub fn parse_headers(raw: &[String]) -> Result<Vec<Header>, InvalidInput> {
    let mut out: Vec<Header> = Vec::with_capacity(raw.len());
    for item in raw {
        let h = Header::parse(item)?;
        if out.iter().any(|o| o.name == h.name) {
            return Err(InvalidInput::new("header", format!("'{}' is given twice", h.name)));
        }
        out.push(h);
    }
    out.sort();
    Ok(out)
}

/// Shows the part before any colon only, so a mistyped secret is not echoed in an error.
fn redact(raw: &str) -> String {
    let shown: String = raw.chars().take(24).collect();
    if shown.len() < raw.len() || raw.len() > 8 {
        format!("{}…", shown.chars().take(8).collect::<String>())
    } else {
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_lowercases() {
        let h = Header::parse("OpenAI-Organization: org-123");
        assert_eq!(
            h.ok(),
            Some(Header { name: "openai-organization".into(), value: "org-123".into() }),
            "names are case-insensitive, so they are stored lower-case"
        );
    }

    #[test]
    fn refuses_missing_colon_without_echoing_it() {
        let err = Header::parse("sk-live-abcdefghijklmnop").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.starts_with("header:"), "the error names the field: {err}");
        assert!(!err.contains("abcdefghijklmnop"), "a header without colon may be a pasted key: {err}");
    }

    #[test]
    fn refuses_credential_headers_and_secret_looking_values() {
        assert!(Header::parse("Authorization: Bearer x").is_err(), "credentials belong in the keychain");
        assert!(Header::parse("x-api-key: abc").is_err(), "credentials belong in the keychain");
        assert!(Header::parse("x-custom: sk-abc").is_err(), "sk- values look like OpenAI keys");
    }

    #[test]
    fn duplicate_names_are_refused() {
        assert!(parse_headers(&["a: 1".into(), "A: 2".into()]).is_err(), "one value per header name");
    }
}
