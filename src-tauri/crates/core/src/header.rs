//! Connection headers (`Name: value`) and the one rule for what a connection may carry,
//! [`Header::new`]: `--header`, the engine's connection add/edit (the desktop form) and
//! import all go through it. Refused: HTTP framing and hop-by-hop headers (the relay frames
//! every request itself), and anything credential-looking by name or by value. Decision:
//! such a header is refused, not stored as a secret; keys belong in credential profiles,
//! which keep them in the OS keychain. Errors name the header, never repeat its value.

use serde::{Deserialize, Serialize};

use crate::secret_shape::echo_safe;
pub use crate::secret_shape::looks_like_secret;
use crate::validate::InvalidInput;

/// One header sent with every upstream request of a connection.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Header {
    pub name: String,
    pub value: String,
}

/// Which half of a header a refusal is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderPart {
    Name,
    Value,
}

impl HeaderPart {
    pub fn as_str(self) -> &'static str {
        match self {
            HeaderPart::Name => "name",
            HeaderPart::Value => "value",
        }
    }
}

/// Why [`Header::new`] refused a header. The message names the header (when its name can be
/// shown) and never contains the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderRefusal {
    pub part: HeaderPart,
    pub message: String,
}

/// Where keys go instead; every credential refusal says it.
pub const KEYS_BELONG_IN_PROFILES: &str = "keys belong in credential profiles: \
     `switchyard profile add SLUG --label NAME --secret-stdin`; they are kept in the OS keychain";

/// Names that frame the HTTP message or belong to one hop; `proxy-*` too.
const FRAMING_HEADERS: &[&str] =
    &["content-length", "transfer-encoding", "host", "connection", "expect", "te", "upgrade", "keep-alive", "trailer"];

/// Names that carry credentials.
const CREDENTIAL_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "x-auth-token",
    "x-portkey-api-key",
    "x-goog-api-key",
    "cookie",
    "set-cookie",
    "key",
];

/// Parts of names that carry credentials, anywhere in the name (`x-helicone-auth`,
/// `x-session-token`, `openai-apikey`).
const CREDENTIAL_WORDS: &[&str] =
    &["api-key", "api_key", "apikey", "token", "secret", "password", "passwd", "auth", "credential", "cookie"];

/// Name endings that carry credentials (`x-portkey-virtual-key`).
const CREDENTIAL_SUFFIXES: &[&str] = &["-key", "_key"];

impl Header {
    /// The rule for one connection header. The name is lower-cased (HTTP names are
    /// case-insensitive) and both halves are trimmed.
    pub fn new(name: &str, value: &str) -> Result<Self, HeaderRefusal> {
        let name = name.trim().to_ascii_lowercase();
        let value = value.trim().to_string();
        let refuse = |part, message: String| Err(HeaderRefusal { part, message });
        let token_ok =
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !token_ok {
            let named = shown_name(&name).map(|n| format!("'{n}' ")).unwrap_or_default();
            return refuse(
                HeaderPart::Name,
                format!("{named}is not a valid header name (letters, digits and !#$%&'*+-.^_`|~ only)"),
            );
        }
        let Some(shown) = shown_name(&name) else {
            return refuse(
                HeaderPart::Name,
                format!("the header name looks like a key, not a header name; {KEYS_BELONG_IN_PROFILES}"),
            );
        };
        if is_credential_header(&name) {
            return refuse(HeaderPart::Name, format!("'{shown}' carries a credential; {KEYS_BELONG_IN_PROFILES}"));
        }
        if is_framing_header(&name) {
            return refuse(
                HeaderPart::Name,
                format!(
                    "'{shown}' is set by the relay for each request (HTTP framing and hop-by-hop headers \
                     cannot be connection headers)"
                ),
            );
        }
        if value.chars().any(|c| c.is_control() && c != '\t') {
            return refuse(HeaderPart::Value, format!("value of '{shown}' contains control characters"));
        }
        if looks_like_secret(&value) {
            return refuse(
                HeaderPart::Value,
                format!("value of '{shown}' looks like a secret; {KEYS_BELONG_IN_PROFILES}"),
            );
        }
        Ok(Header { name, value })
    }

    /// Parses `Name: value` (the form of `--header`) through [`Header::new`].
    pub fn parse(raw: &str) -> Result<Self, InvalidInput> {
        let Some((name, value)) = raw.split_once(':') else {
            return Err(InvalidInput::new("header", "must look like 'Name: value' (the text given has no ':')"));
        };
        Header::new(name, value).map_err(|r| InvalidInput::new("header", r.message))
    }
}

/// True when `name` (any case) carries credentials: a known credential header, or a name
/// containing `auth`, `token`, `secret`, `password`, `api-key`/`apikey`, … or ending in `-key`.
pub fn is_credential_header(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase();
    CREDENTIAL_HEADERS.contains(&name.as_str())
        || CREDENTIAL_WORDS.iter().any(|w| name.contains(w))
        || CREDENTIAL_SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// True when `name` (any case) frames the HTTP message or belongs to one hop
/// (`content-length`, `transfer-encoding`, `host`, `connection`, `proxy-*`, …).
pub fn is_framing_header(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase();
    FRAMING_HEADERS.contains(&name.as_str()) || name.starts_with("proxy-")
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

/// A header name an error may repeat: not shaped like a key.
fn shown_name(name: &str) -> Option<&str> {
    echo_safe(name)
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
    fn refuses_every_framing_and_hop_by_hop_name() {
        for name in [
            "content-length",
            "Transfer-Encoding",
            "host",
            "connection",
            "expect",
            "te",
            "upgrade",
            "keep-alive",
            "trailer",
            "proxy-connection",
            "Proxy-Foo",
        ] {
            let refusal = Header::new(name, "1").err();
            let lower = name.to_ascii_lowercase();
            assert_eq!(refusal.as_ref().map(|r| r.part), Some(HeaderPart::Name), "'{name}' frames the request");
            let message = refusal.map(|r| r.message).unwrap_or_default();
            assert!(message.contains(&format!("'{lower}'")), "the refusal names the header: {message}");
        }
    }

    #[test]
    fn refuses_every_credential_name_pointing_at_profiles() {
        for name in [
            "authorization",
            "x-api-key",
            "api-key",
            "x-auth-token",
            "x-portkey-api-key",
            "X-Helicone-Auth",
            "openai-apikey",
            "x-session-token",
            "x-client-secret",
            "x-password",
            "x-portkey-virtual-key",
            "proxy-authorization",
        ] {
            let message = Header::new(name, "plain").err().map(|r| r.message).unwrap_or_default();
            assert!(
                message.contains(&format!("'{}' carries a credential", name.to_ascii_lowercase())),
                "'{name}' is credential-looking and named in the refusal: {message}"
            );
            assert!(message.contains("switchyard profile add"), "the refusal points at profiles: {message}");
        }
    }

    #[test]
    fn refuses_credential_looking_values_without_echoing_them() {
        for value in [
            "sk-canary-echo-123",
            "sk-ant-canary-echo-123",
            "Bearer canary-echo-123",
            "CanaryEcho123CanaryEcho123CanaryEcho123",
        ] {
            let refusal = Header::new("x-custom", value).err();
            assert_eq!(refusal.as_ref().map(|r| r.part), Some(HeaderPart::Value), "'{value}' looks like a key");
            let message = refusal.map(|r| r.message).unwrap_or_default();
            assert!(message.contains("'x-custom'"), "the refusal names the header: {message}");
            assert!(!message.to_lowercase().contains("canary"), "the value is never repeated: {message}");
        }
    }

    #[test]
    fn a_key_pasted_as_the_name_is_not_echoed() {
        let err = Header::parse("sk-canary-echo-123: x").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(!err.contains("canary"), "a key typed where the name goes is not repeated: {err}");
        let err = Header::parse("Bearer sk-canary-echo-123: x").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(!err.contains("canary"), "an invalid name shaped like a credential is not repeated: {err}");
    }

    #[test]
    fn ordinary_headers_pass() {
        for (name, value) in [
            ("OpenAI-Organization", "org-AbCdEf1234567890abcdefGH"),
            ("OpenAI-Project", "proj_AbCdEf1234567890abcdefGH"),
            ("anthropic-beta", "fine-grained-tool-streaming-2025-05-14"),
            ("anthropic-version", "2023-06-01"),
            ("x-title", "My app"),
        ] {
            assert!(Header::new(name, value).is_ok(), "'{name}: {value}' is an ordinary header");
        }
    }

    #[test]
    fn duplicate_names_are_refused() {
        assert!(parse_headers(&["a: 1".into(), "A: 2".into()]).is_err(), "one value per header name");
    }
}
