//! Signing an `external` profile in again from a front end that has no terminal (the desktop):
//! the exact `switchyard profile login` command to run in one, quoted for a POSIX shell, with
//! `--data-dir` when this engine's data dir is not the one the CLI finds by itself. The official
//! CLI's login is interactive (its own browser or device flow, prompts on a terminal), so the
//! window shows this command and then re-reads the health (`profile_login_finished`).

use switchyard_core::states::ProfileKind;

use crate::config::rows::credential_facts;
use crate::context::Context;
use crate::error::EngineError;

impl Context {
    /// `switchyard [--data-dir DIR] profile login SLUG LABEL` for external profile PROFILE (an
    /// id or a label) of `slug`; other kinds are told how they get their credential instead.
    pub async fn profile_login_command(&self, slug: &str, profile: &str) -> Result<String, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let row = self.profile_by_ref(&connection, profile).await?;
        match credential_facts(&row).kind {
            ProfileKind::External => {}
            ProfileKind::Token => {
                return Err(EngineError::Precondition(format!(
                    "'{}' is a token profile: paste a new token instead of signing in",
                    row.label
                )))
            }
            ProfileKind::ApiKey => {
                return Err(EngineError::Precondition(format!(
                    "'{}' is an API key profile: there is nothing to sign in to; replace its key",
                    row.label
                )))
            }
            ProfileKind::Oauth => {
                return Err(EngineError::Precondition(format!(
                    "'{}' is an oauth profile: Switchyard signs it in itself with a device code (no terminal needed)",
                    row.label
                )))
            }
        }
        Ok(self.login_command(&connection.slug, &row.label))
    }

    /// `switchyard [--data-dir DIR] profile login SLUG LABEL`, quoted for a POSIX shell
    /// (`--data-dir` when this engine's data dir is not the one the CLI finds by itself): what
    /// signs a login in again, named wherever one is expired or signed out.
    pub fn login_command(&self, slug: &str, label: &str) -> String {
        let own = per_user_data_dir();
        let mut words = vec!["switchyard".to_string()];
        if own.as_deref() != Some(self.data_dir()) {
            let dir = std::path::absolute(self.data_dir()).unwrap_or_else(|_| self.data_dir().to_path_buf());
            words.extend(["--data-dir".to_string(), dir.display().to_string()]);
        }
        words.extend(["profile", "login", slug, label].map(str::to_string));
        words.iter().map(|w| shell_quoted(w)).collect::<Vec<_>>().join(" ")
    }
}

/// The data dir the CLI uses when neither `--data-dir` nor `SWITCHYARD_DATA_DIR` says otherwise.
fn per_user_data_dir() -> Option<std::path::PathBuf> {
    dirs::data_dir().map(|d| d.join("switchyard"))
}

/// `word` as one POSIX shell word: as is when it holds only safe characters, else in single
/// quotes (a single quote inside becomes `'\''`).
pub(crate) fn shell_quoted(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_when_a_shell_would_split_or_expand_them() {
        assert_eq!(shell_quoted("team-a"), "team-a");
        assert_eq!(shell_quoted("/home/u/.local/share/switchyard"), "/home/u/.local/share/switchyard");
        assert_eq!(shell_quoted("max 1"), "'max 1'", "a space");
        assert_eq!(shell_quoted("bob's"), r"'bob'\''s'", "a single quote closes, is escaped, reopens");
        assert_eq!(shell_quoted("$HOME"), "'$HOME'", "no expansion");
        assert_eq!(shell_quoted(""), "''");
    }
}
