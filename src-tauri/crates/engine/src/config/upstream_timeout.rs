//! How long the relay waits for a provider's first byte (the response head) on each
//! connection before it answers 504 and records a `network` failure. Per connection, kept in
//! `settings` (`first_byte_timeout_ms:<connection id>`); unset means the default, which is
//! long because a non-streaming call to a reasoning model can think for minutes first.

use std::time::Duration;

use crate::context::Context;
use crate::error::EngineError;
use crate::settings::{Scope, FIRST_BYTE_TIMEOUT_MS};

pub use crate::settings::values::DEFAULT_FIRST_BYTE_TIMEOUT;

impl Context {
    /// The wait for the first byte on `connection_id`.
    pub(crate) async fn first_byte_timeout(&self, connection_id: &str) -> Result<Duration, EngineError> {
        let ms = self.setting(&FIRST_BYTE_TIMEOUT_MS, Scope::Connection(connection_id)).await?;
        Ok(Duration::from_millis(u64::try_from(ms).unwrap_or_default()))
    }

    /// Sets the wait for the first byte on `slug` (1 s to 1 h); takes effect within a second
    /// on a running relay.
    pub async fn set_first_byte_timeout(&self, slug: &str, secs: i64) -> Result<(), EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let ms = secs.saturating_mul(1000);
        self.set_setting(&FIRST_BYTE_TIMEOUT_MS, Scope::Connection(&connection.id), ms).await
    }
}
