//! What the engine returns to front ends: JSON for the CLI, IPC for the desktop (specta
//! types). Never database rows, never secret material. Small integers are i32 and times are
//! RFC 3339 text so the TypeScript bindings stay exact.

use serde::Serialize;
use specta::Type;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct HeaderView {
    pub name: String,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ModelMapping {
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ConnectionView {
    pub id: String,
    pub slug: String,
    pub protocol: String,
    pub base_url: String,
    pub headers: Vec<HeaderView>,
    pub models: Vec<String>,
    pub mapping: Vec<ModelMapping>,
    pub basis_fingerprint: String,
    pub routing_mode: switchyard_core::RoutingMode,
    pub routing_state: switchyard_core::RoutingState,
    pub revision: i32,
    pub profile_count: i32,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ProfileView {
    pub id: String,
    pub connection_id: String,
    pub label: String,
    pub weight: i32,
    pub priority: i32,
    pub enabled: bool,
    pub primary: bool,
    /// `unknown` when the keychain could not be asked.
    pub credential: switchyard_core::states::CredentialPresence,
    pub credential_revision: i32,
    pub revision: i32,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ConnectionDetail {
    pub connection: ConnectionView,
    pub profiles: Vec<ProfileView>,
}

/// What a removal deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct Removal {
    pub slug: String,
    pub profiles_removed: i32,
    pub secrets_deleted: i32,
    /// Secrets the keychain could not delete now; start-up clean-up retries them.
    pub secrets_pending: i32,
}

pub(crate) fn small(n: i64) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}
