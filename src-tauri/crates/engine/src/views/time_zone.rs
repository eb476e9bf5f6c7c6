//! The time zone usage days are counted in.

use serde::Serialize;
use specta::Type;

/// The time zone in use and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct TimeZoneView {
    /// The IANA name (`UTC`, `Europe/Berlin`); `system` when the system's has no name.
    pub name: String,
    /// `setting` or `system`.
    pub source: String,
}
