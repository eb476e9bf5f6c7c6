//! Profile-level words: whether a credential is present, the identifier formats, and a
//! profile's kind (docs/design.md, "kind"): which kinds can be created, what each takes
//! (`--client`, `--expires`, a secret or none), and the shape a pasted token must have.

use serde::{Deserialize, Serialize};

pub use crate::states::{OfficialClient, ProfileKind};
use crate::validate::InvalidInput;

/// Longest token accepted (Claude Code's `setup-token` output is about a hundred characters).
pub const MAX_TOKEN_LEN: usize = 4096;

impl ProfileKind {
    /// Kinds `profile add` creates (an `oauth` profile is created signed out, `missing` until
    /// `profile login` signs it in).
    pub const CREATABLE: [ProfileKind; 4] =
        [ProfileKind::ApiKey, ProfileKind::Token, ProfileKind::External, ProfileKind::Oauth];

    /// The credential is a sign-in (the official CLI's, or one Switchyard owns) rather than a
    /// pasted secret: its absence reads `missing`, not `secret_missing`.
    pub fn signs_in(self) -> bool {
        matches!(self, ProfileKind::External | ProfileKind::Oauth)
    }

    /// The credential is a secret in the keychain (`external` has none: the CLI keeps its login).
    pub fn has_secret(self) -> bool {
        !matches!(self, ProfileKind::External)
    }
}

impl OfficialClient {
    pub const ALL: [OfficialClient; 2] = [OfficialClient::ClaudeCode, OfficialClient::Codex];

    /// The protocol the official client speaks: its connection must be of this protocol.
    pub fn protocol(self) -> crate::connection::Protocol {
        match self {
            OfficialClient::ClaudeCode => crate::connection::Protocol::Anthropic,
            OfficialClient::Codex => crate::connection::Protocol::Openai,
        }
    }

    /// The variable that points the official CLI at a config directory of its own.
    pub fn config_dir_var(self) -> &'static str {
        match self {
            OfficialClient::ClaudeCode => "CLAUDE_CONFIG_DIR",
            OfficialClient::Codex => "CODEX_HOME",
        }
    }

    /// The file the CLI keeps its login in, inside that directory. Switchyard asks only
    /// whether it exists, never what it holds.
    pub fn credential_file(self) -> &'static str {
        match self {
            OfficialClient::ClaudeCode => ".credentials.json",
            OfficialClient::Codex => "auth.json",
        }
    }

    /// The CLI's program name on PATH.
    pub fn program(self) -> &'static str {
        match self {
            OfficialClient::ClaudeCode => "claude",
            OfficialClient::Codex => "codex",
        }
    }

    /// The environment variable that overrides where the program is (tests use a stub).
    pub fn program_override_var(self) -> &'static str {
        match self {
            OfficialClient::ClaudeCode => "SWITCHYARD_CLAUDE_BIN",
            OfficialClient::Codex => "SWITCHYARD_CODEX_BIN",
        }
    }

    /// The CLI's own login command: Claude Code's `auth login` (subscription login by default),
    /// Codex's `login` (browser; `--device-auth` for a device code).
    pub fn login_args(self) -> &'static [&'static str] {
        match self {
            OfficialClient::ClaudeCode => &["auth", "login"],
            OfficialClient::Codex => &["login"],
        }
    }
}

/// A profile's credential settings as given (`--kind`, `--client`, `--expires`), checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CredentialSpec {
    pub kind: ProfileKind,
    /// Set for `token` (default `claude-code`) and `external` (required).
    pub client: Option<OfficialClient>,
    /// `token` only, and only in the future.
    pub expires_at_ms: Option<i64>,
}

/// Checks what `profile add` says about a credential, as typed: the kind (absent: `api_key`),
/// the client and the expiry (RFC 3339), then [`check_credential`].
pub fn credential_spec(
    kind: Option<&str>,
    client: Option<&str>,
    expires: Option<&str>,
    now_ms: Option<i64>,
) -> Result<CredentialSpec, InvalidInput> {
    let kind = match kind {
        None => ProfileKind::ApiKey,
        Some(word) => ProfileKind::from_word(word).ok_or_else(|| {
            InvalidInput::new("kind", format!("unknown kind; one of {}", words(&ProfileKind::CREATABLE)))
        })?,
    };
    let client = client
        .map(|word| {
            OfficialClient::from_word(word).ok_or_else(|| {
                InvalidInput::new("client", format!("unknown client; one of {}", words(&OfficialClient::ALL)))
            })
        })
        .transpose()?;
    let expires_at_ms = expires.map(parse_expiry).transpose()?;
    check_credential(CredentialSpec { kind, client, expires_at_ms }, now_ms)
}

/// The rules of a credential's settings (`profile add`, an imported file): `oauth` takes no
/// client; the client is required for `external`, `claude-code` by default for `token`,
/// refused for `api_key`; an expiry is for `token` only and, when `now_ms` is given, must be
/// after it. Returns the settings with the default client filled in. Errors name the field
/// (`kind`, `client`, `expires`).
pub fn check_credential(spec: CredentialSpec, now_ms: Option<i64>) -> Result<CredentialSpec, InvalidInput> {
    let CredentialSpec { kind, client, expires_at_ms } = spec;
    match kind {
        ProfileKind::Oauth if client.is_some() => {
            return Err(InvalidInput::new(
                "client",
                "is not for an oauth profile: a ChatGPT login Switchyard owns serves any client of its connection",
            ));
        }
        ProfileKind::ApiKey if client.is_some() => {
            return Err(InvalidInput::new("client", "is for token and external profiles only"));
        }
        ProfileKind::External if client.is_none() => {
            return Err(InvalidInput::new(
                "client",
                format!("is required for an external profile: {}", words(&OfficialClient::ALL)),
            ));
        }
        _ => {}
    }
    if expires_at_ms.is_some() && kind != ProfileKind::Token {
        return Err(InvalidInput::new(
            "expires",
            "is for token profiles only (an API key has no expiry; an external login renews itself)",
        ));
    }
    if let (Some(at), Some(now)) = (expires_at_ms, now_ms) {
        if at <= now {
            return Err(InvalidInput::new("expires", "is in the past: that token has expired already"));
        }
    }
    let client = if kind == ProfileKind::Token { client.or(Some(OfficialClient::ClaudeCode)) } else { client };
    Ok(CredentialSpec { kind, client, expires_at_ms })
}

/// An RFC 3339 time (`2027-01-31T00:00:00Z`, any offset) as unix milliseconds.
pub fn parse_expiry(text: &str) -> Result<i64, InvalidInput> {
    let at: jiff::Timestamp = text
        .trim()
        .parse()
        .map_err(|_| InvalidInput::new("expires", "is not an RFC 3339 time (for example 2027-01-31T00:00:00Z)"))?;
    Ok(at.as_millisecond())
}

/// Checks the shape of a pasted token for `client`, never echoing it: not empty, one line of
/// printable ASCII without spaces, at most [`MAX_TOKEN_LEN`], and not an API key pasted as a
/// token. Nothing more (`sk-ant-oat01-…` is Claude Code's today; other shapes may come).
pub fn validate_token(token: &str, client: OfficialClient) -> Result<(), InvalidInput> {
    if token.is_empty() {
        return Err(InvalidInput::new("secret", "the token is empty"));
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(InvalidInput::new(
            "secret",
            "the token contains spaces or line breaks; paste the token alone, on one line",
        ));
    }
    if !token.is_ascii() {
        return Err(InvalidInput::new("secret", "the token contains characters a token never has"));
    }
    if token.len() > MAX_TOKEN_LEN {
        return Err(InvalidInput::new("secret", format!("the token is longer than {MAX_TOKEN_LEN} characters")));
    }
    let api_key = match client {
        OfficialClient::ClaudeCode => token.starts_with("sk-ant-api"),
        OfficialClient::Codex => token.starts_with("sk-"),
    };
    if api_key {
        return Err(InvalidInput::new(
            "secret",
            "this is an API key, not a subscription token; add it with --kind api_key",
        ));
    }
    Ok(())
}

fn words<T: Copy + std::fmt::Display>(all: &[T]) -> String {
    all.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// Whether the keychain holds a secret for a profile (the DB only knows the locator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CredentialState {
    Present,
    Missing,
}

impl CredentialState {
    pub fn as_str(self) -> &'static str {
        match self {
            CredentialState::Present => "present",
            CredentialState::Missing => "missing",
        }
    }
}

/// True when `s` has the shape of a generated profile or connection id (`p_`/`c_` + 32 hex).
pub fn looks_like_id(s: &str, prefix: &str) -> bool {
    s.strip_prefix(prefix).is_some_and(|rest| rest.len() == 32 && rest.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_shape() {
        assert!(looks_like_id(&format!("p_{}", "a".repeat(32)), "p_"), "generated ids match");
        assert!(!looks_like_id("work", "p_"), "labels are not ids");
        assert!(!looks_like_id(&format!("c_{}", "a".repeat(32)), "p_"), "prefix matters");
    }

    const NOW: i64 = 1_750_000_000_000;

    #[test]
    fn kind_inputs_are_checked_per_kind() {
        let ok = |k, c, e| credential_spec(k, c, e, Some(NOW));
        assert_eq!(
            ok(None, None, None).map(|s| s.kind),
            Ok(ProfileKind::ApiKey),
            "no --kind is an API key, as before kinds existed"
        );
        let token = ok(Some("token"), None, Some("2030-01-01T00:00:00Z"));
        assert_eq!(
            token.map(|s| (s.client, s.expires_at_ms)),
            Ok((Some(OfficialClient::ClaudeCode), Some(1_893_456_000_000))),
            "a token is Claude Code's unless said otherwise, and its expiry is read as RFC 3339"
        );
        assert_eq!(
            ok(Some("oauth"), None, None).map(|s| (s.kind, s.client)),
            Ok((ProfileKind::Oauth, None)),
            "an owned login is created signed out, with no client"
        );
        let refused = [
            (Some("oauth"), Some("codex"), None, "client", "an owned login serves any client"),
            (Some("oauth"), None, Some("2030-01-01T00:00:00Z"), "expires", "a login's expiry comes from its tokens"),
            (Some("password"), None, None, "kind", "an unknown kind"),
            (Some("external"), None, None, "client", "external needs to know which CLI"),
            (Some("external"), Some("cursor"), None, "client", "an unknown client"),
            (Some("api_key"), Some("codex"), None, "client", "an API key belongs to no official client"),
            (Some("api_key"), None, Some("2030-01-01T00:00:00Z"), "expires", "an API key has no expiry"),
            (Some("external"), Some("codex"), Some("2030-01-01T00:00:00Z"), "expires", "a login renews itself"),
            (Some("token"), None, Some("2020-01-01T00:00:00Z"), "expires", "a token that expired already"),
            (Some("token"), None, Some("next tuesday"), "expires", "not RFC 3339"),
        ];
        for (kind, client, expires, field, why) in refused {
            let got = ok(kind, client, expires);
            assert_eq!(got.map_err(|e| e.field), Err(field.to_string()), "refused: {why}");
        }
    }

    #[test]
    fn token_shapes() {
        let claude = OfficialClient::ClaudeCode;
        assert_eq!(validate_token("sk-ant-oat01-abcDEF_123-xyz", claude), Ok(()), "Claude Code's setup-token shape");
        assert_eq!(validate_token("eyJhbGciOi.eyJzdWIi.c2ln", OfficialClient::Codex), Ok(()), "other shapes pass");
        for (bad, why) in [
            ("", "empty"),
            ("sk-ant-oat01-abc def", "a space inside"),
            ("sk-ant-oat01-abc\ndef", "two lines"),
            ("sk-ant-oat01-abc\tdef", "a tab"),
            ("sk-ant-oat01-abcé", "not ASCII"),
            ("sk-ant-api03-abcdef", "an API key pasted as a token"),
        ] {
            let got = validate_token(bad, claude);
            assert!(got.is_err(), "refused: {why}");
            let message = got.map_err(|e| e.message).err().unwrap_or_default();
            assert!(bad.is_empty() || !message.contains(bad), "the error never repeats the token ({why})");
        }
        assert!(validate_token(&"a".repeat(MAX_TOKEN_LEN + 1), claude).is_err(), "too long");
        assert!(validate_token("sk-proj-abc", OfficialClient::Codex).is_err(), "an OpenAI API key is not a token");
    }
}
