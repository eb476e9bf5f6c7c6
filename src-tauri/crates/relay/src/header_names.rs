//! Header names the relay looks up on every request, spelled once as `HeaderName`s: a lookup
//! by `&str` parses and checks the name first (`HdrName::from_bytes`, ~400 instructions for a
//! custom name), a lookup by `HeaderName` only hashes it.

use http::{HeaderMap, HeaderName};

pub const X_API_KEY: HeaderName = HeaderName::from_static("x-api-key");
/// Gemini's key header: where Gemini clients send the relay token, and where the relay puts
/// the profile's key upstream.
pub const X_GOOG_API_KEY: HeaderName = HeaderName::from_static("x-goog-api-key");
pub const X_SWITCHYARD_TOKEN: HeaderName = HeaderName::from_static("x-switchyard-token");
pub const X_SWITCHYARD_PROFILE: HeaderName = HeaderName::from_static("x-switchyard-profile");
/// The route headers of an answer in routed mode (`respond.rs`): set on every balanced or
/// priority answer, so spelled once (`HeaderName::from_static` at run time parsed and checked
/// each name: ~740 instructions apiece, four per answer).
pub const X_SWITCHYARD_CONNECTION: HeaderName = HeaderName::from_static("x-switchyard-connection");
pub const X_SWITCHYARD_ATTEMPTS: HeaderName = HeaderName::from_static("x-switchyard-attempts");
pub const X_SWITCHYARD_REASON: HeaderName = HeaderName::from_static("x-switchyard-reason");
/// `false` on a refusal of ours a client should not retry soon (the official SDKs honour it).
pub const X_SHOULD_RETRY: HeaderName = HeaderName::from_static("x-should-retry");
/// What a proxy in front of the relay adds (`guard::is_proxied`), looked up on every request.
pub const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
pub const X_REAL_IP: HeaderName = HeaderName::from_static("x-real-ip");
/// Claude Code's `x-app: cli` (the client rule reads it).
pub const X_APP: HeaderName = HeaderName::from_static("x-app");
/// Codex's `originator` (`codex_exec`, `codex_cli_rs`; the client rule reads it).
pub const ORIGINATOR: HeaderName = HeaderName::from_static("originator");
pub const ANTHROPIC_BETA: HeaderName = HeaderName::from_static("anthropic-beta");
/// The ChatGPT account an owned login's request is for (the ChatGPT backend requires it).
pub const CHATGPT_ACCOUNT_ID: HeaderName = HeaderName::from_static("chatgpt-account-id");

/// The names `ClientIds::read_headers` asks for on every request.
const ID_NAMES: [&str; 6] = [
    "x-codex-turn-metadata",
    "session-id",
    "x-claude-code-session-id",
    "x-session-id",
    "x-switchyard-turn",
    "x-switchyard-conversation",
];

/// A request's headers as text for core's readers that ask by name (`ClientIds::read_headers`):
/// the six names it asks on every request are found in one pass over the headers — a lookup
/// each hashed its custom name byte by byte (~1k instructions a request together, issue 40);
/// any other name is looked up as given. A name's first value is its value, as `get` gives it.
pub struct HeaderText<'h> {
    headers: &'h HeaderMap,
    /// Per [`ID_NAMES`]: `Some(first value as text, if it is text)` when present.
    found: [Option<Option<&'h str>>; ID_NAMES.len()],
}

impl<'h> HeaderText<'h> {
    pub fn of(headers: &'h HeaderMap) -> Self {
        let mut found = [None; ID_NAMES.len()];
        // Every value, each name's values together and its first one first.
        for (name, value) in headers {
            if let Some(i) = ID_NAMES.iter().position(|n| *n == name.as_str()) {
                found[i].get_or_insert(value.to_str().ok());
            }
        }
        HeaderText { headers, found }
    }

    /// `headers[name]` as text (`name` lowercase).
    pub fn text(&self, name: &str) -> Option<&'h str> {
        match ID_NAMES.iter().position(|n| *n == name) {
            Some(i) => self.found[i].flatten(),
            None => self.headers.get(name).and_then(|v| v.to_str().ok()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_read_in_one_pass_read_as_a_lookup_would() {
        let mut h = HeaderMap::new();
        for (name, value) in [("session-id", "s1"), ("x-switchyard-turn", "t1"), ("x-other", "o1")] {
            h.insert(HeaderName::from_static(name), value.parse().unwrap_or_else(|_| unreachable!()));
        }
        h.append(HeaderName::from_static("session-id"), "s2".parse().unwrap_or_else(|_| unreachable!()));
        h.insert(
            HeaderName::from_static("x-session-id"),
            http::HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap_or_else(|_| unreachable!()),
        );
        h.append(HeaderName::from_static("x-session-id"), "ascii".parse().unwrap_or_else(|_| unreachable!()));
        let t = HeaderText::of(&h);
        for name in ID_NAMES.iter().copied().chain(["x-other", "x-absent"]) {
            let lookup = h.get(name).and_then(|v| v.to_str().ok());
            assert_eq!(t.text(name), lookup, "{name}: as `get` reads it");
        }
        assert_eq!(t.text("session-id"), Some("s1"), "a repeated name's first value");
        assert_eq!(t.text("x-switchyard-turn"), Some("t1"));
        assert_eq!(t.text("x-session-id"), None, "a first value that is not text is none, not the second");
        assert_eq!(t.text("x-other"), Some("o1"), "a name not read in the pass is looked up as given");
        assert_eq!(t.text("x-claude-code-session-id"), None, "absent");
    }
}
