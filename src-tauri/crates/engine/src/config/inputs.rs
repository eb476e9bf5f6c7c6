//! Inputs of the use cases, as raw user text: the engine validates them, front ends do not.
//! The desktop window sends them as they are (serde + specta: numbers cross IPC as i32 so the
//! TypeScript stays exact; they are i64 here like the store's columns).

use serde::Deserialize;
use specta::Type;

/// `connection add`.
#[derive(Debug, Clone, Default, Deserialize, Type)]
pub struct NewConnection {
    pub slug: String,
    pub protocol: String,
    pub base_url: String,
    pub models: Vec<String>,
    /// `FROM=TO` model mappings.
    pub mappings: Vec<String>,
    /// `Name: value` non-secret headers.
    pub headers: Vec<String>,
}

/// `connection edit`: `None` keeps a field, `Some` replaces it (lists are replaced whole).
#[derive(Debug, Clone, Default, Deserialize, Type)]
pub struct ConnectionEdit {
    pub protocol: Option<String>,
    pub base_url: Option<String>,
    pub models: Option<Vec<String>>,
    pub mappings: Option<Vec<String>>,
    pub headers: Option<Vec<String>>,
    /// The revision the caller read; the edit fails with a conflict if the row moved on.
    #[specta(type = Option<i32>)]
    pub if_revision: Option<i64>,
}

/// `profile add`.
#[derive(Debug, Clone, Default, Deserialize, Type)]
pub struct NewProfile {
    pub label: String,
    /// Default 1.
    #[specta(type = Option<i32>)]
    pub weight: Option<i64>,
    /// Default: after every existing profile (lower numbers are tried first).
    #[specta(type = Option<i32>)]
    pub priority: Option<i64>,
}

/// `profile add --kind … [--client …] [--expires …]`: what the new profile's credential is,
/// as typed. All absent: an API key.
#[derive(Debug, Clone, Default, Deserialize, Type)]
pub struct NewCredential {
    /// `api_key` (default), `token`, `external` or `oauth` (an owned ChatGPT login, created
    /// signed out; OpenAI connections only).
    pub kind: Option<String>,
    /// `claude-code` or `codex`: required for `external`, default `claude-code` for `token`.
    pub client: Option<String>,
    /// A token's expiry, RFC 3339.
    pub expires_at: Option<String>,
}

/// `profile edit`.
#[derive(Debug, Clone, Default, Deserialize, Type)]
pub struct ProfileEdit {
    pub label: Option<String>,
    #[specta(type = Option<i32>)]
    pub weight: Option<i64>,
    #[specta(type = Option<i32>)]
    pub priority: Option<i64>,
    pub enabled: Option<bool>,
    /// Make this profile the connection's primary (the one legacy mode uses).
    pub make_primary: bool,
    #[specta(type = Option<i32>)]
    pub if_revision: Option<i64>,
}
