//! Header names the relay looks up on every request, spelled once as `HeaderName`s: a lookup
//! by `&str` parses and checks the name first (`HdrName::from_bytes`, ~400 instructions for a
//! custom name), a lookup by `HeaderName` only hashes it.

use http::{HeaderMap, HeaderName};

pub const X_API_KEY: HeaderName = HeaderName::from_static("x-api-key");
/// Gemini's key header: where Gemini clients send the relay token, and where the relay puts
/// the profile's key upstream.
pub const X_GOOG_API_KEY: HeaderName = HeaderName::from_static("x-goog-api-key");
pub const X_CODEX_TURN_METADATA: HeaderName = HeaderName::from_static("x-codex-turn-metadata");
pub const SESSION_ID: HeaderName = HeaderName::from_static("session-id");
pub const X_CLAUDE_CODE_SESSION_ID: HeaderName = HeaderName::from_static("x-claude-code-session-id");
pub const X_SESSION_ID: HeaderName = HeaderName::from_static("x-session-id");
pub const X_SWITCHYARD_TURN: HeaderName = HeaderName::from_static("x-switchyard-turn");
pub const X_SWITCHYARD_CONVERSATION: HeaderName = HeaderName::from_static("x-switchyard-conversation");
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

/// `headers[name]` as text, for core's readers that ask by name (`ClientIds::read_headers`).
pub fn text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    let known = match name {
        "x-codex-turn-metadata" => Some(X_CODEX_TURN_METADATA),
        "session-id" => Some(SESSION_ID),
        "x-claude-code-session-id" => Some(X_CLAUDE_CODE_SESSION_ID),
        "x-session-id" => Some(X_SESSION_ID),
        "x-switchyard-turn" => Some(X_SWITCHYARD_TURN),
        "x-switchyard-conversation" => Some(X_SWITCHYARD_CONVERSATION),
        _ => None,
    };
    let value = match known {
        Some(name) => headers.get(name),
        None => headers.get(name),
    };
    value.and_then(|v| v.to_str().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_name_and_any_other_read_alike() {
        let mut h = HeaderMap::new();
        for (name, value) in [("session-id", "s1"), ("x-switchyard-turn", "t1"), ("x-other", "o1")] {
            h.insert(HeaderName::from_static(name), value.parse().unwrap_or_else(|_| unreachable!()));
        }
        assert_eq!(text(&h, "session-id"), Some("s1"), "a name spelled here");
        assert_eq!(text(&h, "x-switchyard-turn"), Some("t1"));
        assert_eq!(text(&h, "x-other"), Some("o1"), "a name not spelled here is looked up as given");
        assert_eq!(text(&h, "x-session-id"), None, "absent");
    }
}
