//! What the window sends: raw form values as IPC types (i32 for numbers so the TypeScript
//! stays exact), turned into the engine's requests field by field. The engine validates.

use serde::Deserialize;
use specta::Type;
use switchyard_engine::{ConnectionEdit, NewConnection, NewProfile, OrderEntry, ProfileEdit, Secret};

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

/// A new connection.
#[derive(Debug, Clone, Deserialize, Type)]
pub struct ConnectionInput {
    pub slug: String,
    /// `openai` or `anthropic`.
    pub protocol: String,
    pub base_url: String,
    pub models: Vec<String>,
    /// `FROM=TO` model mappings.
    pub mappings: Vec<String>,
    /// `Name: value` non-secret headers.
    pub headers: Vec<String>,
}

impl From<ConnectionInput> for NewConnection {
    fn from(i: ConnectionInput) -> Self {
        NewConnection {
            slug: i.slug,
            protocol: i.protocol,
            base_url: i.base_url,
            models: i.models,
            mappings: i.mappings,
            headers: i.headers,
        }
    }
}

/// A connection edit: `null` keeps a field; lists are replaced whole.
#[derive(Debug, Clone, Deserialize, Type)]
pub struct ConnectionEditInput {
    pub protocol: Option<String>,
    pub base_url: Option<String>,
    pub models: Option<Vec<String>>,
    pub mappings: Option<Vec<String>>,
    pub headers: Option<Vec<String>>,
    /// The revision the form was filled from; a newer row fails with a conflict.
    pub if_revision: Option<i32>,
}

impl From<ConnectionEditInput> for ConnectionEdit {
    fn from(i: ConnectionEditInput) -> Self {
        ConnectionEdit {
            protocol: i.protocol,
            base_url: i.base_url,
            models: i.models,
            mappings: i.mappings,
            headers: i.headers,
            if_revision: i.if_revision.map(i64::from),
        }
    }
}

/// A new profile (its secret travels separately as a [`SecretArg`]).
#[derive(Debug, Clone, Deserialize, Type)]
pub struct ProfileInput {
    pub label: String,
    /// Default 1.
    pub weight: Option<i32>,
    /// Default: after every existing profile.
    pub priority: Option<i32>,
}

impl From<ProfileInput> for NewProfile {
    fn from(i: ProfileInput) -> Self {
        NewProfile { label: i.label, weight: i.weight.map(i64::from), priority: i.priority.map(i64::from) }
    }
}

/// A profile edit: `null` keeps a field.
#[derive(Debug, Clone, Deserialize, Type)]
pub struct ProfileEditInput {
    pub label: Option<String>,
    pub weight: Option<i32>,
    pub priority: Option<i32>,
    pub enabled: Option<bool>,
    /// Make this profile the one legacy mode uses.
    pub make_primary: bool,
    pub if_revision: Option<i32>,
}

impl From<ProfileEditInput> for ProfileEdit {
    fn from(i: ProfileEditInput) -> Self {
        ProfileEdit {
            label: i.label,
            weight: i.weight.map(i64::from),
            priority: i.priority.map(i64::from),
            enabled: i.enabled,
            make_primary: i.make_primary,
            if_revision: i.if_revision.map(i64::from),
        }
    }
}

/// One entry of a new priority order: the profile and the revision it was read at.
#[derive(Debug, Clone, Deserialize, Type)]
pub struct OrderInput {
    pub id: String,
    pub revision: i32,
}

impl From<OrderInput> for OrderEntry {
    fn from(i: OrderInput) -> Self {
        OrderEntry { id: i.id, revision: i64::from(i.revision) }
    }
}
