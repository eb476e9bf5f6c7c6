//! Where and how to call a connection's provider for test/discovery: its base URL, headers and
//! dialect (`dialect/`: the URLs, the required header), and the credential header injected for
//! a profile (the only header Switchyard adds to a legacy request).

use reqwest::header::{HeaderName, HeaderValue};
use switchyard_core::{Header, Protocol};
use switchyard_vault::Secret;

use crate::dialect::{self, Dialect};

/// A connection's execution basis, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct Endpoint<'a> {
    pub protocol: Protocol,
    /// Normalised, without a trailing slash. OpenAI bases include `/v1`; Anthropic bases do not.
    pub base_url: &'a str,
    pub headers: &'a [Header],
}

impl Endpoint<'_> {
    /// The connection's dialect.
    pub fn dialect(&self) -> &'static dyn Dialect {
        dialect::of(self.protocol)
    }

    /// The models listing URL.
    pub fn models_url(&self) -> String {
        self.dialect().models_url(self.base_url)
    }

    /// Adds the connection's headers, the dialect's required header (when the connection sets
    /// none) and the profile's credential to a request.
    pub fn authorize(&self, mut req: reqwest::RequestBuilder, secret: &Secret) -> reqwest::RequestBuilder {
        for h in self.headers {
            req = req.header(h.name.as_str(), h.value.as_str());
        }
        if let Some((name, value)) = self.dialect().required_header() {
            if !self.headers.iter().any(|h| h.name == name) {
                req = req.header(name, value);
            }
        }
        let (name, value) = credential_header(self.protocol, secret);
        req.header(name, value)
    }
}

/// The header carrying a profile's secret in this dialect. The value is marked sensitive so
/// HTTP libraries never print it.
pub fn credential_header(protocol: Protocol, secret: &Secret) -> (HeaderName, HeaderValue) {
    dialect::credential_header(dialect::of(protocol), secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_follow_each_dialect() {
        let o = Endpoint { protocol: Protocol::Openai, base_url: "http://h/v1", headers: &[] };
        assert_eq!(o.models_url(), "http://h/v1/models", "OpenAI bases carry /v1");
        let a = Endpoint { protocol: Protocol::Anthropic, base_url: "http://h", headers: &[] };
        assert_eq!(a.models_url(), "http://h/v1/models", "Anthropic bases do not carry /v1");
    }

    #[test]
    fn credential_header_is_sensitive() {
        let (name, value) = credential_header(Protocol::Anthropic, &Secret::new("k"));
        assert_eq!(name, "x-api-key", "Anthropic keys go in x-api-key");
        assert!(value.is_sensitive(), "the value must be hidden from Debug output");
        assert!(!format!("{value:?}").contains('k'), "sensitive values never print");
    }
}
