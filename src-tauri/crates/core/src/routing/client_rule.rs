//! Which official client a request comes from, and which profiles may serve it (invariant 20:
//! a subscription credential serves only the official client it was issued for; nothing is
//! rewritten to make a request pass as another client). Pure: the relay reads the facts from
//! the request's headers ([`ClientFacts`]), the engine asks [`may_serve`] per profile.
//!
//! - An `api_key` profile serves any client.
//! - An `oauth` profile (a ChatGPT login Switchyard owns, issue 32) serves any client of its
//!   connection: OpenAI describes its Codex sign-in as usable from other tools. Nothing is
//!   rewritten: the relay sends the request as it came, with the login's bearer and account.
//! - A `token` profile serves only requests that identify as its client:
//!   Claude Code by its `user-agent` (`claude-cli/…`) or `x-app: cli`; Codex by its
//!   `originator` (`codex_exec`, `codex_cli_rs`, …) or a `codex…` user agent. The relay then
//!   authenticates with `Authorization: Bearer` and adds [`TOKEN_BETA`] to `anthropic-beta`.
//! - An `external` profile (the official CLI's own login) is never chosen by selection: it
//!   serves only requests that name it (`x-switchyard-profile`, sent by `switchyard exec`) and
//!   come from its client; the client's own credential is forwarded unchanged.

use crate::states::{OfficialClient, ProfileKind};

/// The beta Anthropic requires with a subscription (OAuth) bearer token; Claude Code sends it
/// itself when it uses its own login.
pub const TOKEN_BETA: &str = "oauth-2025-04-20";

/// What the relay read from a request to tell its client (headers, as received).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientFacts<'a> {
    pub user_agent: Option<&'a str>,
    /// Claude Code's `x-app` header (`cli`).
    pub x_app: Option<&'a str>,
    /// Codex's `originator` header (`codex_exec`, `codex_cli_rs`, …).
    pub originator: Option<&'a str>,
}

/// The official client a request identifies as, if any. Only what the client itself sends is
/// read; a request that says nothing is no official client.
pub fn identify_client(facts: &ClientFacts<'_>) -> Option<OfficialClient> {
    let ua = facts.user_agent.map(str::trim).unwrap_or("");
    if ua.starts_with("claude-cli/") || facts.x_app.is_some_and(|a| a.trim().eq_ignore_ascii_case("cli")) {
        return Some(OfficialClient::ClaudeCode);
    }
    if facts.originator.is_some_and(|o| o.trim().starts_with("codex")) || ua.starts_with("codex") {
        return Some(OfficialClient::Codex);
    }
    None
}

/// Whether a profile of `kind` (issued for `profile_client`) may serve a request from
/// `request_client`. `pinned`: the request names this very profile (`x-switchyard-profile`).
pub fn may_serve(
    kind: ProfileKind,
    profile_client: Option<OfficialClient>,
    request_client: Option<OfficialClient>,
    pinned: bool,
) -> bool {
    let own_client = || profile_client.is_some() && request_client == profile_client;
    match kind {
        ProfileKind::ApiKey | ProfileKind::Oauth => true,
        ProfileKind::Token => own_client(),
        ProfileKind::External => pinned && own_client(),
    }
}

/// `list` (an `anthropic-beta` value: comma-separated betas) with `beta` added at the end, or
/// `None` when it is there already (the client's list is kept as it is then).
pub fn with_beta(list: Option<&str>, beta: &str) -> Option<String> {
    match list.map(str::trim).filter(|l| !l.is_empty()) {
        None => Some(beta.to_string()),
        Some(l) if l.split(',').any(|b| b.trim().eq_ignore_ascii_case(beta)) => None,
        Some(l) => Some(format!("{l},{beta}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use OfficialClient::{ClaudeCode, Codex};

    fn facts<'a>(ua: Option<&'a str>, app: Option<&'a str>, origin: Option<&'a str>) -> ClientFacts<'a> {
        ClientFacts { user_agent: ua, x_app: app, originator: origin }
    }

    #[test]
    fn clients_are_told_by_what_they_send() {
        let cases = [
            (facts(Some("claude-cli/2.1.332 (external, sdk-cli)"), Some("cli"), None), Some(ClaudeCode), "Claude Code"),
            (facts(Some("claude-cli/2.1.332 (external, cli)"), None, None), Some(ClaudeCode), "its user agent alone"),
            (facts(Some("Anthropic/Python 0.40.0"), Some("cli"), None), Some(ClaudeCode), "x-app: cli alone"),
            (facts(Some("Anthropic/Python 0.40.0"), None, None), None, "the Anthropic SDK"),
            (facts(Some("Anthropic/JS 0.128.0"), Some("web"), None), None, "another x-app"),
            (
                facts(Some("codex_exec/0.171.0 (Debian 12.0.0; x86_64)"), None, Some("codex_exec")),
                Some(Codex),
                "codex exec",
            ),
            (facts(Some("OpenAI/Python 1.0"), None, Some("codex_cli_rs")), Some(Codex), "the originator alone"),
            (facts(Some("codex_cli_rs/0.171.0"), None, None), Some(Codex), "its user agent alone"),
            (facts(Some("OpenAI/Python 1.0"), None, None), None, "the OpenAI SDK"),
            (facts(None, None, None), None, "nothing said"),
            (facts(Some("curl/8.0 claude-cli/1"), None, None), None, "the prefix only counts at the start"),
        ];
        for (f, want, why) in cases {
            assert_eq!(identify_client(&f), want, "{why}: {f:?}");
        }
    }

    #[test]
    fn each_kind_serves_whom_its_credential_belongs_to() {
        use ProfileKind::*;
        let cases = [
            (ApiKey, None, None, false, true, "an API key serves any client"),
            (ApiKey, None, Some(Codex), true, true, "pinned or not"),
            (Token, Some(ClaudeCode), Some(ClaudeCode), false, true, "a Claude Code token serves Claude Code"),
            (Token, Some(ClaudeCode), None, false, false, "never an SDK"),
            (Token, Some(ClaudeCode), Some(Codex), false, false, "nor another official client"),
            (Token, None, None, false, false, "a token of no known client serves nobody"),
            (External, Some(ClaudeCode), Some(ClaudeCode), false, false, "an external login is never selected"),
            (External, Some(ClaudeCode), Some(ClaudeCode), true, true, "only named, by its own client"),
            (External, Some(Codex), Some(ClaudeCode), true, false, "named by another client: refused"),
            (External, Some(Codex), None, true, false, "named by an SDK: refused"),
            (Oauth, None, Some(Codex), false, true, "an owned login serves Codex"),
            (Oauth, None, None, false, true, "and an SDK: OpenAI allows its sign-in in other tools"),
        ];
        for (kind, profile, request, pinned, want, why) in cases {
            assert_eq!(may_serve(kind, profile, request, pinned), want, "{why}");
        }
    }

    #[test]
    fn the_token_beta_is_appended_once() {
        assert_eq!(with_beta(None, TOKEN_BETA).as_deref(), Some("oauth-2025-04-20"), "no list: the beta alone");
        assert_eq!(with_beta(Some("  "), TOKEN_BETA).as_deref(), Some("oauth-2025-04-20"), "an empty list");
        assert_eq!(
            with_beta(Some("claude-code-20250219,interleaved-thinking-2025-05-14"), TOKEN_BETA).as_deref(),
            Some("claude-code-20250219,interleaved-thinking-2025-05-14,oauth-2025-04-20"),
            "appended after the client's betas, in their order"
        );
        assert_eq!(
            with_beta(Some("claude-code-20250219, oauth-2025-04-20"), TOKEN_BETA),
            None,
            "already there: the client's list is kept as it is"
        );
    }
}
