//! Relay settings kept by the engine: the relay token (256 random bits, in the keychain,
//! created once under the data-dir lock),
//! and the listening port (in `settings`).

use switchyard_store::settings;
use switchyard_vault::{Locator, Secret};

use crate::context::Context;
use crate::error::EngineError;
use crate::settings::{Scope, RELAY_PORT};

/// Settings key of the relay port.
pub const RELAY_PORT_KEY: &str = RELAY_PORT.key;
pub use crate::settings::values::DEFAULT_RELAY_PORT;

/// Settings row bumped whenever the relay token is created or rotated: a running relay polls
/// this (one SQLite read) and reads the keychain only when it moved (`relay_token_revision`).
pub const RELAY_TOKEN_REVISION_KEY: &str = "relay_token_revision";

impl Context {
    /// The relay token; created on first use, replaced when `rotate`. Creation and rotation
    /// run under the data-dir lock and the first creation reads again after taking it, so
    /// concurrent first calls (in any process) all return the one token that is stored.
    pub async fn relay_token(&self, rotate: bool) -> Result<Secret, EngineError> {
        let locator = Locator::relay_token(&self.install_id);
        if !rotate {
            if let Some(token) = self.vault_get(locator.clone()).await? {
                return Ok(token);
            }
        }
        let _held = self.lock_data_dir().await?;
        if !rotate {
            if let Some(token) = self.vault_get(locator.clone()).await? {
                return Ok(token);
            }
        }
        let token = format!("sy_{}", crate::config::relay_users::random_hex()?);
        self.vault_put(locator, Secret::new(token.clone())).await?;
        let current = self.relay_token_revision().await?;
        let mut conn = self.store.acquire().await?;
        let at = self.now_ms();
        settings::put(&mut conn, RELAY_TOKEN_REVISION_KEY, &at.to_string(), current, at).await?;
        Ok(Secret::new(token))
    }

    /// The revision of the relay token's settings row (`None` before any token was made):
    /// it changes whenever [`Engine::relay_token`] creates or rotates the token.
    pub async fn relay_token_revision(&self) -> Result<Option<i64>, EngineError> {
        let mut conn = self.store.acquire().await?;
        Ok(settings::get(&mut conn, RELAY_TOKEN_REVISION_KEY).await?.map(|(_, rev)| rev))
    }

    /// The relay port from settings (default 4141).
    pub async fn relay_port(&self) -> Result<u16, EngineError> {
        let port = self.setting(&RELAY_PORT, Scope::Global).await?;
        Ok(u16::try_from(port).unwrap_or(DEFAULT_RELAY_PORT))
    }

    /// Sets the relay port (1024–65535; takes effect when the relay next starts).
    pub async fn set_relay_port(&self, port: i64) -> Result<(), EngineError> {
        self.set_setting(&RELAY_PORT, Scope::Global, port).await
    }
}
