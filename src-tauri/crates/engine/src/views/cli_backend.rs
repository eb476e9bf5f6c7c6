//! A connection's CLI backend setting as `routing cli-backend` shows it.

use serde::Serialize;
use specta::Type;

/// Whether a connection's external Claude Code profiles also serve plain Messages requests by
/// running the official CLI in print mode, and how many runs one profile may have at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct CliBackendView {
    pub slug: String,
    pub enabled: bool,
    /// Concurrent `claude -p` runs per profile (1 ..= 16; kept while off).
    pub max_concurrent: i32,
    /// The profiles that serve through the CLI while it is on (external, Claude Code), by label.
    pub profiles: Vec<String>,
}
