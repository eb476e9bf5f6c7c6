//! Whether the desktop app starts with the user's session (issue 17; off by default), so the
//! relay is listening before a coding agent starts. Only the wish is stored here (a setting);
//! the desktop shell writes or removes the OS's autostart entry to match it.

use crate::context::Context;
use crate::error::EngineError;
use crate::settings::{Scope, START_WITH_SYSTEM};

/// Settings key of the wish (`true` / `false`).
pub const START_WITH_SYSTEM_KEY: &str = START_WITH_SYSTEM.key;

impl Context {
    /// Whether the app should start with the system (false when never set).
    pub async fn start_with_system(&self) -> Result<bool, EngineError> {
        self.setting(&START_WITH_SYSTEM, Scope::Global).await
    }

    pub async fn set_start_with_system(&self, on: bool) -> Result<(), EngineError> {
        self.set_setting(&START_WITH_SYSTEM, Scope::Global, on).await
    }
}
