//! The CLI backend setting of each connection (docs/design.md, "The CLI backend"): off by
//! default; when on, the connection's `external` Claude Code profiles serve plain Messages
//! requests by running the official CLI in print mode with their own config directory, at
//! most `max_concurrent` runs per profile at once (default 2). Kept in `settings`
//! (`cli_backend:<connection id>` = `on:<n>` or `off:<n>`; the cap is kept while off). Which
//! profiles it applies to is [`serves_through_cli`]; what a request may ask of it is
//! `switchyard_providers::claude_cli`.

use switchyard_core::states::{OfficialClient, ProfileKind};
use switchyard_core::{InvalidInput, Protocol};
use switchyard_providers::dialect;
use switchyard_store::profiles::ProfileRow;

use crate::config::rows::{client_of, credential_facts};
use crate::context::Context;
use crate::error::EngineError;
use crate::settings::CliBackendSetting;
use crate::settings::{Scope, Stored, CLI_BACKEND};
use crate::views::CliBackendView;

pub use crate::settings::values::MAX_CLI_CONCURRENCY;

/// `on:<n>` / `off:<n>`.
impl Stored for CliBackendSetting {
    fn read(text: &str) -> Option<Self> {
        let (mode, n) = text.split_once(':')?;
        let max_concurrent = n.parse::<u8>().ok()?;
        match mode {
            "on" => Some(CliBackendSetting { enabled: true, max_concurrent }),
            "off" => Some(CliBackendSetting { enabled: false, max_concurrent }),
            _ => None,
        }
    }
    fn write(&self) -> String {
        format!("{}:{}", if self.enabled { "on" } else { "off" }, self.max_concurrent)
    }
}

/// Whether a profile of a `protocol` connection serves through the CLI when the backend is on:
/// an external Claude Code login on an Anthropic connection (a Codex login has no print-mode
/// backend here; API keys and tokens go over HTTP as always).
pub(crate) fn serves_through_cli(protocol: Protocol, row: &ProfileRow) -> bool {
    dialect::of(protocol).has_cli_backend()
        && credential_facts(row).kind == ProfileKind::External
        && client_of(row) == Some(OfficialClient::ClaudeCode)
}

impl Context {
    /// The CLI backend setting of `connection_id` (off when unset or unreadable).
    pub(crate) async fn cli_backend_setting(&self, connection_id: &str) -> Result<CliBackendSetting, EngineError> {
        self.setting(&CLI_BACKEND, Scope::Connection(connection_id)).await
    }

    /// The CLI backend setting of `slug` and the profiles it applies to.
    pub async fn cli_backend(&self, slug: &str) -> Result<CliBackendView, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let setting = self.cli_backend_setting(&connection.id).await?;
        let protocol = crate::views::protocol_of(&connection);
        let rows = {
            let mut conn = self.store.acquire().await?;
            switchyard_store::profiles::for_connection(&mut conn, &connection.id).await?
        };
        Ok(CliBackendView {
            slug: connection.slug.clone(),
            enabled: setting.enabled,
            max_concurrent: i32::from(setting.max_concurrent),
            profiles: rows.iter().filter(|r| serves_through_cli(protocol, r)).map(|r| r.label.clone()).collect(),
        })
    }

    /// Turns the CLI backend of `slug` on or off (`None`: as it is) and, when given, sets its
    /// per-profile cap (1 to 16; otherwise the current cap stays). A running relay uses it
    /// within a second.
    pub async fn set_cli_backend(
        &self,
        slug: &str,
        enabled: Option<bool>,
        max_concurrent: Option<i64>,
    ) -> Result<CliBackendView, EngineError> {
        let cap = match max_concurrent {
            None => None,
            Some(n) => Some(u8::try_from(n).map_err(|_| {
                let why = format!("must be between 1 and {MAX_CLI_CONCURRENCY} (got {n})");
                EngineError::Invalid(InvalidInput::new("max_concurrent", why))
            })?),
        };
        let connection = self.connection_by_slug(slug).await?;
        if enabled == Some(true) && !dialect::of(crate::views::protocol_of(&connection)).has_cli_backend() {
            return Err(EngineError::Precondition(format!(
                "'{slug}' is not an Anthropic connection: the CLI backend runs Claude Code, which serves Messages requests"
            )));
        }
        self.update_setting(&CLI_BACKEND, Scope::Connection(&connection.id), |before| CliBackendSetting {
            enabled: enabled.unwrap_or(before.enabled),
            max_concurrent: cap.unwrap_or(before.max_concurrent),
        })
        .await?;
        self.cli_backend(slug).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_settings_read_back_and_garbage_is_off() {
        let on = CliBackendSetting { enabled: true, max_concurrent: 3 };
        assert_eq!(CLI_BACKEND.parse_stored(&on.write()), on, "a stored setting reads back as written");
        assert_eq!(
            CLI_BACKEND.parse_stored("off:3"),
            CliBackendSetting { enabled: false, max_concurrent: 3 },
            "off keeps the cap"
        );
        assert_eq!(CLI_BACKEND.parse_stored("on:0"), CliBackendSetting::default(), "a cap of 0 is out of range");
        assert_eq!(CLI_BACKEND.parse_stored("on:17"), CliBackendSetting::default(), "past 16 is out of range");
        assert_eq!(CLI_BACKEND.parse_stored("yes:2"), CliBackendSetting::default(), "an unknown mode is the default");
        assert!(!CliBackendSetting::default().enabled, "the CLI backend is off unless turned on");
    }
}
