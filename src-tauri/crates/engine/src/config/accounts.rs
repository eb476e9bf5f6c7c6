//! The accounts of `external` profiles: each profile's config directory of the official CLI
//! under the data dir (`accounts/<profile id>/`, owner-only), whether the CLI is signed in
//! there — its credential file exists; the file is never opened — and what `profile login`
//! runs: the CLI's own login with the directory's variable (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`)
//! set. Switchyard never reads, copies or exports what the CLI keeps there; it only creates
//! the directory and removes it with its profile.

use std::path::{Path, PathBuf};

use switchyard_core::secret_shape::{echo_safe, NOT_SHOWN};
use switchyard_core::states::{CredentialPresence, OfficialClient, ProfileKind};
use switchyard_store::profiles::ProfileRow;

use switchyard_vault::Secret;

use crate::config::rows::{client_of, credential_facts};
use crate::context::Context;
use crate::error::EngineError;
use crate::views::ProfileView;

/// The folder of the data dir that holds the external profiles' config directories.
pub const ACCOUNTS_DIR: &str = "accounts";

/// Where an external Codex login's requests go: the ChatGPT backend its credential is for
/// (Codex's own default base for a ChatGPT sign-in); the relay's `v1/responses` maps onto
/// `<this>/responses`.
pub const CODEX_BACKEND_URL: &str = "https://chatgpt.com/backend-api/codex";

/// The variable that overrides [`CODEX_BACKEND_URL`] (tests point it at the mock provider).
pub const CODEX_BACKEND_ENV: &str = "SWITCHYARD_CODEX_BACKEND_URL";

/// The ChatGPT backend external Codex logins are relayed to: [`CODEX_BACKEND_ENV`] when set,
/// else [`CODEX_BACKEND_URL`]; without a trailing slash.
pub(crate) fn codex_backend_url() -> String {
    let url = std::env::var(CODEX_BACKEND_ENV).ok().filter(|v| !v.trim().is_empty());
    url.as_deref().unwrap_or(CODEX_BACKEND_URL).trim().trim_end_matches('/').to_string()
}

/// What `profile login` runs. The front end starts it with the terminal attached (the CLI's
/// own browser or device flow is interactive), waits, then calls
/// [`Engine::profile_login_finished`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginLaunch {
    /// The official CLI: `SWITCHYARD_CLAUDE_BIN` / `SWITCHYARD_CODEX_BIN`, else found on PATH.
    pub program: PathBuf,
    /// Its login command, then the caller's extra arguments (`--device-auth`, `--email …`).
    pub args: Vec<String>,
    /// The variable that points the CLI at the profile's directory.
    pub env_var: &'static str,
    /// The profile's config directory (created, owner-only).
    pub config_dir: PathBuf,
    pub client: OfficialClient,
    pub label: String,
}

/// The directory name an id that cannot name a path maps to: never created, never removed.
const UNSAFE_ID_DIR: &str = "-not-a-profile-id-";

/// `id` when it can name a directory under the accounts dir: ASCII letters, digits, `_` and `-`
/// (a generated id is `p_` and 32 hex digits). A profile id is read from the store, which another
/// writer may have tampered with: `../..` or `/home/x` must never become a path (issue 39).
fn path_safe(id: &str) -> Option<&str> {
    let safe = !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('-')
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    safe.then_some(id)
}

impl Context {
    /// Where the official CLI of external profile `profile_id` keeps its login (an id that
    /// cannot name a path maps to a directory that is never made: nothing is found there).
    pub(crate) fn config_dir(&self, profile_id: &str) -> PathBuf {
        let base = std::path::absolute(self.data_dir()).unwrap_or_else(|_| self.data_dir().to_path_buf());
        base.join(ACCOUNTS_DIR).join(path_safe(profile_id).unwrap_or(UNSAFE_ID_DIR))
    }

    /// Whether `presented` — the credential a request naming external profile `profile_id`
    /// carried — is the login's own: a string of the official CLI's credential file in the
    /// profile's directory (its access token), compared in constant time. Read only when a
    /// pinned attempt failed; anything unreadable is "not its own".
    pub(crate) async fn is_login_credential(&self, profile_id: &str, presented: &Secret) -> bool {
        let presented = presented.expose().trim();
        if presented.is_empty() {
            return false;
        }
        let dir = self.config_dir(profile_id);
        for client in [OfficialClient::ClaudeCode, OfficialClient::Codex] {
            let Ok(text) = tokio::fs::read(dir.join(client.credential_file())).await else { continue };
            let Ok(value) = serde_json::from_slice::<serde_json::Value>(&text) else { continue };
            if holds_string(&value, presented.as_bytes()) {
                return true;
            }
        }
        false
    }

    /// Creates (or tightens) the profile's config directory and its parent, mode 0700.
    pub(crate) fn create_config_dir(&self, profile_id: &str) -> Result<PathBuf, EngineError> {
        if path_safe(profile_id).is_none() {
            return Err(EngineError::Internal("a profile id that cannot name a directory".into()));
        }
        let dir = self.config_dir(profile_id);
        std::fs::create_dir_all(&dir).map_err(|e| {
            EngineError::Internal(format!("cannot create the account directory {}: {e}", dir.display()))
        })?;
        for d in [dir.parent().unwrap_or(&dir), dir.as_path()] {
            owner_only(d)?;
        }
        Ok(dir)
    }

    /// Removes an external profile's config directory with the login in it (its profile is
    /// gone). Best effort: a failure is logged, the directory left.
    pub(crate) fn remove_config_dir(&self, profile_id: &str) {
        if path_safe(profile_id).is_none() {
            tracing::warn!("a profile id that cannot name a directory: nothing removed");
            return;
        }
        let dir = self.config_dir(profile_id);
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!(dir = %dir.display(), error = %e, "an external profile's directory was left"),
        }
    }

    /// Whether the official CLI is signed in in the profile's directory: its credential file
    /// exists (`unknown` when the file system cannot say). Existence only, never contents.
    pub(crate) fn login_presence(&self, row: &ProfileRow) -> CredentialPresence {
        let Some(client) = client_of(row) else {
            return CredentialPresence::Missing;
        };
        match self.config_dir(&row.id).join(client.credential_file()).try_exists() {
            Ok(true) => CredentialPresence::Present,
            Ok(false) => CredentialPresence::Missing,
            Err(_) => CredentialPresence::Unknown,
        }
    }

    /// What `profile login SLUG PROFILE` runs for an external profile: the official CLI's own
    /// login in the profile's directory (created if an import left it out). `extra` goes after
    /// the login command. Other kinds are told how they get their credential.
    pub async fn profile_login_launch(
        &self,
        slug: &str,
        profile: &str,
        extra: &[String],
    ) -> Result<LoginLaunch, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let row = self.profile_by_ref(&connection, profile).await?;
        let kind = credential_facts(&row).kind;
        let client = match (kind, client_of(&row)) {
            (ProfileKind::External, Some(client)) => client,
            (ProfileKind::External, None) => {
                return Err(EngineError::Internal(format!("external profile '{}' has no client", row.label)))
            }
            (ProfileKind::Token, _) => {
                return Err(EngineError::Precondition(format!(
                    "'{}' is a token profile: paste a new token with switchyard profile rotate {slug} {} --secret-stdin",
                    row.label, row.label
                )))
            }
            (ProfileKind::ApiKey, _) => {
                return Err(EngineError::Precondition(format!(
                    "'{}' is an API key profile: there is nothing to sign in to; replace its key with switchyard profile rotate",
                    row.label
                )))
            }
            (ProfileKind::Oauth, _) => {
                return Err(EngineError::Precondition(format!(
                    "'{}' is an oauth profile: Switchyard signs it in itself with a device code, not through an official CLI",
                    row.label
                )));
            }
        };
        let program = find_program(client)?;
        let config_dir = self.create_config_dir(&row.id)?;
        let mut args: Vec<String> = client.login_args().iter().map(|a| (*a).to_string()).collect();
        args.extend(extra.iter().cloned());
        Ok(LoginLaunch { program, args, env_var: client.config_dir_var(), config_dir, client, label: row.label })
    }

    /// After the official CLI's login ran: the profile as it is now. Routing is reconciled (a
    /// login that appeared may let the gates hold again). When the CLI's credential file is
    /// still not there, a precondition error says so (the profile stays `missing`).
    pub async fn profile_login_finished(&self, slug: &str, profile: &str) -> Result<ProfileView, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let row = self.profile_by_ref(&connection, profile).await?;
        self.reconcile_routing(slug).await?;
        let presence = self.credential_state(&row).await;
        if presence != CredentialPresence::Present {
            let file = client_of(&row).map_or("its credential file", OfficialClient::credential_file);
            return Err(EngineError::Precondition(format!(
                "the login did not leave {file} in {}; '{}' is still not signed in",
                self.config_dir(&row.id).display(),
                row.label
            )));
        }
        Ok(self.profile_view(slug, &row, presence))
    }
}

/// The official CLI's program: the override variable when set, else the first executable of
/// that name on PATH.
pub(crate) fn find_program(client: OfficialClient) -> Result<PathBuf, EngineError> {
    let var = client.program_override_var();
    if let Some(path) = std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from) {
        if is_executable(&path) {
            return Ok(path);
        }
        let shown = path.to_str().and_then(echo_safe).unwrap_or(NOT_SHOWN);
        return Err(EngineError::Precondition(format!("{var} names {shown}, which is not an executable file")));
    }
    let name = client.program();
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p));
    found.ok_or_else(|| {
        let package = match client {
            OfficialClient::ClaudeCode => "@anthropic-ai/claude-code",
            OfficialClient::Codex => "@openai/codex",
        };
        EngineError::Precondition(format!(
            "{name} is not on PATH; install the official CLI (npm install -g {package}) or set {var}"
        ))
    })
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

fn owner_only(dir: &Path) -> Result<(), EngineError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| EngineError::Internal(format!("cannot make {} owner-only: {e}", dir.display())))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Whether a string of `value` (at any depth) equals `wanted`, each compared in constant time.
fn holds_string(value: &serde_json::Value, wanted: &[u8]) -> bool {
    match value {
        serde_json::Value::String(s) => same_bytes(s.as_bytes(), wanted),
        serde_json::Value::Array(items) => items.iter().fold(false, |found, v| holds_string(v, wanted) | found),
        serde_json::Value::Object(map) => map.values().fold(false, |found, v| holds_string(v, wanted) | found),
        _ => false,
    }
}

fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_from_the_store_never_names_a_path_outside_the_accounts_dir() {
        for bad in ["../../victim", "/home/victim", "..", ".", "", "a/b", "-rf", "p_\u{0}x"] {
            assert_eq!(path_safe(bad), None, "{bad:?} is no directory name");
        }
        let id = format!("p_{}", "ab".repeat(16));
        assert_eq!(path_safe(&id), Some(id.as_str()), "a generated id is");
    }

    #[test]
    fn the_login_s_credential_is_any_string_of_its_file() {
        let file = serde_json::json!({"claudeAiOauth": {"accessToken": "sk-ant-oat01-own", "scopes": ["a"]}});
        assert!(holds_string(&file, b"sk-ant-oat01-own"), "the login's access token");
        assert!(!holds_string(&file, b"sk-ant-oat01-other"), "a stranger's token");
        assert!(!holds_string(&file, b"sk-ant-oat01-ow"), "a prefix is not the token");
    }
}
