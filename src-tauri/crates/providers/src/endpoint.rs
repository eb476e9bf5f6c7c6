//! Where and how to call a connection's provider: URLs per dialect and the credential
//! header injected for a profile (the only header Switchyard adds to a legacy request).

use reqwest::header::{HeaderName, HeaderValue};
use switchyard_core::{Header, Protocol};
use switchyard_vault::Secret;

/// The `anthropic-version` sent when the connection does not set one.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A connection's execution basis, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct Endpoint<'a> {
    pub protocol: Protocol,
    /// Normalised, without a trailing slash. OpenAI bases include `/v1`; Anthropic bases do not.
    pub base_url: &'a str,
    pub headers: &'a [Header],
}

impl Endpoint<'_> {
    /// The models listing URL.
    pub fn models_url(&self) -> String {
        match self.protocol {
            Protocol::Openai => format!("{}/models", self.base_url),
            Protocol::Anthropic => format!("{}/v1/models", self.base_url),
            Protocol::Gemini => format!("{}/v1beta/models", self.base_url),
        }
    }

    /// The URL of the dialect's main generation call (Gemini names the model in the path:
    /// see [`Endpoint::generate_url_for`]).
    pub fn generate_url(&self) -> String {
        match self.protocol {
            Protocol::Openai => format!("{}/chat/completions", self.base_url),
            Protocol::Anthropic => format!("{}/v1/messages", self.base_url),
            Protocol::Gemini => format!("{}/v1beta/models", self.base_url),
        }
    }

    /// The URL of the generation call for `model`.
    pub fn generate_url_for(&self, model: &str) -> String {
        match self.protocol {
            Protocol::Gemini => format!("{}/v1beta/models/{model}:generateContent", self.base_url),
            Protocol::Openai | Protocol::Anthropic => self.generate_url(),
        }
    }

    /// Adds the connection's headers, the dialect's required version header and the
    /// profile's credential to a request.
    pub fn authorize(&self, mut req: reqwest::RequestBuilder, secret: &Secret) -> reqwest::RequestBuilder {
        for h in self.headers {
            req = req.header(h.name.as_str(), h.value.as_str());
        }
        if self.protocol == Protocol::Anthropic && !self.headers.iter().any(|h| h.name == "anthropic-version") {
            req = req.header("anthropic-version", ANTHROPIC_VERSION);
        }
        let (name, value) = credential_header(self.protocol, secret);
        req.header(name, value)
    }
}

/// The header carrying a profile's secret in this dialect. The value is marked sensitive so
/// HTTP libraries never print it.
pub fn credential_header(protocol: Protocol, secret: &Secret) -> (HeaderName, HeaderValue) {
    let (name, scheme) = match protocol {
        Protocol::Openai => (reqwest::header::AUTHORIZATION, "Bearer "),
        Protocol::Anthropic => (HeaderName::from_static("x-api-key"), ""),
        // Always a header, never `?key=` in the URL: a URL reaches logs and proxies.
        Protocol::Gemini => (HeaderName::from_static("x-goog-api-key"), ""),
    };
    // Written into one buffer (this runs on every relayed request).
    let mut text = Vec::with_capacity(scheme.len() + secret.expose().len());
    text.extend_from_slice(scheme.as_bytes());
    text.extend_from_slice(secret.expose().as_bytes());
    let mut value = HeaderValue::from_bytes(&text).unwrap_or_else(|_| HeaderValue::from_static("invalid-secret"));
    value.set_sensitive(true);
    (name, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_follow_each_dialect() {
        let o = Endpoint { protocol: Protocol::Openai, base_url: "http://h/v1", headers: &[] };
        assert_eq!(o.models_url(), "http://h/v1/models", "OpenAI bases carry /v1");
        let a = Endpoint { protocol: Protocol::Anthropic, base_url: "http://h", headers: &[] };
        assert_eq!(a.generate_url(), "http://h/v1/messages", "Anthropic bases do not carry /v1");
    }

    #[test]
    fn credential_header_is_sensitive() {
        let (name, value) = credential_header(Protocol::Anthropic, &Secret::new("k"));
        assert_eq!(name, "x-api-key", "Anthropic keys go in x-api-key");
        assert!(value.is_sensitive(), "the value must be hidden from Debug output");
        assert!(!format!("{value:?}").contains('k'), "sensitive values never print");
    }
}
