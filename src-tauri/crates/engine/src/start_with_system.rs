//! Whether the desktop app starts with the user's session (issue 17; off by default), so the
//! relay is listening before a coding agent starts. Only the wish is stored here (a setting);
//! the desktop shell writes or removes the OS's autostart entry to match it.

use switchyard_store::settings;

use crate::engine::Engine;
use crate::error::EngineError;

/// Settings key of the wish (`true` / `false`).
pub const START_WITH_SYSTEM_KEY: &str = "start_with_system";

impl Engine {
    /// Whether the app should start with the system (false when never set).
    pub async fn start_with_system(&self) -> Result<bool, EngineError> {
        let mut conn = self.store.acquire().await?;
        Ok(settings::get(&mut conn, START_WITH_SYSTEM_KEY).await?.is_some_and(|(v, _)| v == "true"))
    }

    pub async fn set_start_with_system(&self, on: bool) -> Result<(), EngineError> {
        let mut conn = self.store.acquire().await?;
        let current = settings::get(&mut conn, START_WITH_SYSTEM_KEY).await?.map(|(_, rev)| rev);
        settings::put(&mut conn, START_WITH_SYSTEM_KEY, if on { "true" } else { "false" }, current, self.now_ms())
            .await?;
        Ok(())
    }
}
