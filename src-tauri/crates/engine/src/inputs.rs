//! Inputs of the use cases, as raw user text: the engine validates them, front ends do not.

/// `connection add`.
#[derive(Debug, Clone, Default)]
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
#[derive(Debug, Clone, Default)]
pub struct ConnectionEdit {
    pub protocol: Option<String>,
    pub base_url: Option<String>,
    pub models: Option<Vec<String>>,
    pub mappings: Option<Vec<String>>,
    pub headers: Option<Vec<String>>,
    /// The revision the caller read; the edit fails with a conflict if the row moved on.
    pub if_revision: Option<i64>,
}

/// `profile add`.
#[derive(Debug, Clone, Default)]
pub struct NewProfile {
    pub label: String,
    /// Default 1.
    pub weight: Option<i64>,
    /// Default: after every existing profile (lower numbers are tried first).
    pub priority: Option<i64>,
}

/// `profile edit`.
#[derive(Debug, Clone, Default)]
pub struct ProfileEdit {
    pub label: Option<String>,
    pub weight: Option<i64>,
    pub priority: Option<i64>,
    pub enabled: Option<bool>,
    /// Make this profile the connection's primary (the one legacy mode uses).
    pub make_primary: bool,
    pub if_revision: Option<i64>,
}
