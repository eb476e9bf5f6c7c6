//! What verification proved about one model.

use serde::{Deserialize, Serialize};
use specta::Type;

/// What verification learned about one model for one key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ModelProof {
    pub model: String,
    /// `listed` (the key's models listing has it), `inferred` (no listing; taken from the
    /// connection's configuration) or `probed` (a 1-token request succeeded).
    pub source: String,
    /// Whether routing may send this model to this key.
    pub supported: bool,
    /// Failure kind of the deep check when it failed (e.g. `model_forbidden`).
    pub failure_kind: Option<String>,
}
