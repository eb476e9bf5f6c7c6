//! When each key was last checked in the background and when the next check is due.

use serde::Serialize;
use specta::Type;

/// One key's schedule, as front ends show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct KeyCheck {
    pub profile_id: String,
    pub label: String,
    /// When the key's evidence was last taken (RFC 3339), if ever.
    pub last_checked: Option<String>,
    /// When the background check is due next (RFC 3339); `None` without evidence to keep fresh.
    pub next_due: Option<String>,
}
