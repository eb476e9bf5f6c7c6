//! A secret typed into the window (the other inputs are the engine's own types, `engine/src/config/inputs.rs`).

use serde::Deserialize;
use specta::Type;
use switchyard_engine::Secret;

/// A secret typed into the window. Sent once, as a command argument; never serialized back,
/// never printed (`Debug` is redacted), handed straight to the engine as a [`Secret`].
#[derive(Deserialize, Type)]
#[serde(transparent)]
pub struct SecretArg(String);

impl SecretArg {
    pub fn into_secret(self) -> Secret {
        Secret::new(self.0)
    }
}

impl std::fmt::Debug for SecretArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretArg([redacted])")
    }
}
