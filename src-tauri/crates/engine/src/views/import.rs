//! What an import did or would do (`switchyard import`).

use serde::Serialize;
use specta::Type;

/// One profile as import creates it: disabled, without credential.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ImportedProfile {
    #[serde(rename = "ref")]
    pub reference: String,
    pub label: String,
    pub primary: bool,
}

/// What happens (or, in a dry run, would happen) to one connection of the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ImportedConnection {
    #[serde(rename = "ref")]
    pub reference: String,
    /// The slug in the file.
    pub slug: String,
    /// `create`, `rename` or `skip`.
    pub action: String,
    /// The slug in this data dir (`None` when skipped).
    pub new_slug: Option<String>,
    /// The routing mode recorded as pending until verification proves the gates.
    pub pending_mode: Option<String>,
    pub profiles: Vec<ImportedProfile>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ImportReport {
    /// True when nothing was written.
    pub dry_run: bool,
    pub connections: Vec<ImportedConnection>,
    pub created: i32,
    pub renamed: i32,
    pub skipped: i32,
    /// The pools the file carried, by name here (inactive until their gates hold; a pool whose
    /// name is taken is skipped). Not in the desktop's bindings yet.
    #[specta(skip)]
    pub pools: Vec<String>,
}
