//! How long the relay waits for a provider's first byte (the response head) on each
//! connection before it answers 504 and records a `network` failure. Per connection, kept in
//! `settings` (`first_byte_timeout_ms:<connection id>`); unset means the default, which is
//! long because a non-streaming call to a reasoning model can think for minutes first.

use std::time::Duration;

use switchyard_core::InvalidInput;
use switchyard_store::settings;

use crate::engine::Engine;
use crate::error::EngineError;

/// The default wait for a provider's first byte.
pub const DEFAULT_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(300);

/// Longest wait a user may set (one hour).
const MAX_SECS: i64 = 3600;

fn key(connection_id: &str) -> String {
    format!("first_byte_timeout_ms:{connection_id}")
}

impl Engine {
    /// The wait for the first byte on `connection_id`.
    pub(crate) async fn first_byte_timeout(&self, connection_id: &str) -> Result<Duration, EngineError> {
        let mut conn = self.store.acquire().await?;
        let stored = settings::get(&mut conn, &key(connection_id)).await?;
        Ok(stored.and_then(|(v, _)| v.parse::<u64>().ok()).map_or(DEFAULT_FIRST_BYTE_TIMEOUT, Duration::from_millis))
    }

    /// Sets the wait for the first byte on `slug` (1 s to 1 h); takes effect within a second
    /// on a running relay.
    pub async fn set_first_byte_timeout(&self, slug: &str, secs: i64) -> Result<(), EngineError> {
        if !(1..=MAX_SECS).contains(&secs) {
            return Err(EngineError::Invalid(InvalidInput::new(
                "first_byte_timeout_secs",
                format!("must be between 1 and {MAX_SECS} seconds"),
            )));
        }
        let connection = self.connection_by_slug(slug).await?;
        let key = key(&connection.id);
        let mut conn = self.store.acquire().await?;
        let current = settings::get(&mut conn, &key).await?.map(|(_, rev)| rev);
        settings::put(&mut conn, &key, &(secs * 1000).to_string(), current, self.now_ms()).await?;
        Ok(())
    }
}
