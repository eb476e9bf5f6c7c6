//! Relay settings kept by the engine: the relay token (256 random bits, in the keychain,
//! created once under the data-dir lock),
//! the listening port (in `settings`), and the attempt ledger as front ends list it.

use serde::Serialize;
use specta::Type;
use switchyard_store::{attempts, settings};
use switchyard_vault::{Locator, Secret};

use crate::clock::rfc3339;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::views::small;

/// Settings key of the relay port.
pub const RELAY_PORT_KEY: &str = "relay_port";
pub const DEFAULT_RELAY_PORT: u16 = 4141;

/// One physical attempt as `switchyard attempts` shows it (docs/interface.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct AttemptView {
    pub at: String,
    pub turn: String,
    pub attempt: i32,
    /// Stable profile id (never the label).
    pub profile: String,
    pub reason: String,
    pub model: Option<String>,
    pub status: Option<i32>,
    pub failure_kind: Option<String>,
    pub scope: Option<String>,
    pub ttfb_ms: Option<i32>,
    pub duration_ms: Option<i32>,
    pub input_tokens: Option<i32>,
    pub output_tokens: Option<i32>,
    /// The client session the attempt belongs to (a hash, never the client's raw id).
    pub session: Option<String>,
    /// The conversation the attempt belongs to (a hash, never the client's raw id).
    pub conversation: Option<String>,
    /// Why this turn moved its conversation off its key (`excluded:<exclusion>`,
    /// `unavailable` or `removed`); `None` when it did not move.
    pub moved: Option<String>,
    /// Input tokens read from the provider's prompt cache, as reported.
    pub cache_read_tokens: Option<i32>,
    /// Input tokens written to the provider's prompt cache, as reported (Anthropic only).
    pub cache_write_tokens: Option<i32>,
}

impl Engine {
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
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| EngineError::Internal(format!("no randomness: {e}")))?;
        let token = format!("sy_{}", hex::encode(bytes));
        self.vault_put(locator, Secret::new(token.clone())).await?;
        Ok(Secret::new(token))
    }

    /// The relay port from settings (default 4141).
    pub async fn relay_port(&self) -> Result<u16, EngineError> {
        let mut conn = self.store.acquire().await?;
        Ok(settings::get(&mut conn, RELAY_PORT_KEY)
            .await?
            .and_then(|(v, _)| v.parse().ok())
            .unwrap_or(DEFAULT_RELAY_PORT))
    }

    /// Sets the relay port (1024–65535; takes effect when the relay next starts).
    pub async fn set_relay_port(&self, port: i64) -> Result<(), EngineError> {
        if !(1024..=65535).contains(&port) {
            return Err(EngineError::Invalid(switchyard_core::InvalidInput::new(
                "relay_port",
                format!("must be between 1024 and 65535 (got {port})"),
            )));
        }
        let mut conn = self.store.acquire().await?;
        let current = settings::get(&mut conn, RELAY_PORT_KEY).await?.map(|(_, rev)| rev);
        settings::put(&mut conn, RELAY_PORT_KEY, &port.to_string(), current, self.now_ms()).await?;
        Ok(())
    }

    /// The newest `limit` attempts of a connection, newest first.
    pub async fn attempts(&self, slug: &str, limit: i64) -> Result<Vec<AttemptView>, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let mut conn = self.store.acquire().await?;
        let rows = attempts::for_connection(&mut conn, &connection.id, limit.clamp(1, 10_000)).await?;
        let opt = |v: Option<i64>| v.map(small);
        Ok(rows
            .into_iter()
            .map(|r| AttemptView {
                at: rfc3339(r.at_ms),
                turn: r.turn,
                attempt: small(r.attempt),
                profile: r.profile_id,
                reason: r.reason,
                model: r.model,
                status: opt(r.status),
                failure_kind: r.failure_kind,
                scope: r.scope,
                ttfb_ms: opt(r.ttfb_ms),
                duration_ms: opt(r.duration_ms),
                input_tokens: opt(r.input_tokens),
                output_tokens: opt(r.output_tokens),
                session: r.session,
                conversation: r.conversation,
                moved: r.moved,
                cache_read_tokens: opt(r.cache_read_tokens),
                cache_write_tokens: opt(r.cache_write_tokens),
            })
            .collect())
    }
}
