//! What front ends get from client set-up (`switchyard client`, "Use with …"): previews,
//! reports and status. They cross IPC: names and shapes are `ui/src/bindings.ts`'s.

use serde::Serialize;
use specta::Type;

use switchyard_engine::ProfileView;

/// A set-up preview: the exact change, and the hash of the bytes it was computed from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ClientPreview {
    pub client: String,
    pub path: String,
    pub slug: String,
    /// The relay URL the client will call.
    pub base_url: String,
    pub exists: bool,
    /// Unified diff, with the relay token and any provider key shown as placeholders.
    pub diff: String,
    /// Whether set-up would change the file at all.
    pub changes: bool,
    /// SHA-256 of the file as read (`absent` when there is none); `setup` refuses if it moved.
    pub file_hash: String,
    /// Where provider keys sit in plain text in the file (e.g. `env.ANTHROPIC_API_KEY`).
    pub plain_keys: Vec<String>,
    pub notes: Vec<String>,
}

/// What `client setup` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ClientSetupReport {
    pub preview: ClientPreview,
    pub written: bool,
    /// Where the original is kept.
    pub backup: Option<String>,
    /// The profile a moved key became.
    pub moved_to: Option<ProfileView>,
}

/// Whether a client is pointed at Switchyard, and at which connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ClientStatus {
    pub client: String,
    pub path: String,
    pub exists: bool,
    pub pointed: bool,
    pub slug: Option<String>,
    pub port: Option<i32>,
    /// The file holds the current relay token (false after a rotation: run setup again).
    pub token_current: bool,
    /// A kept original exists (`restore` brings it back).
    pub restorable: bool,
    pub plain_keys: Vec<String>,
}

/// What `client restore` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ClientRestoreReport {
    pub client: String,
    pub path: String,
    /// The original was written back.
    pub restored: bool,
    /// There was no file before set-up, so it was removed.
    pub removed: bool,
}
