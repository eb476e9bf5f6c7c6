//! The shape of a `switchyard.config` v1 document as serde types. Unknown fields are refused
//! everywhere; what is absent here (secrets, locators, evidence, health, ids) cannot be written.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::connection::{Protocol, RoutingMode};
use crate::states::{OfficialClient, ProfileKind};

/// Value of the top-level `format` field.
pub const FORMAT: &str = "switchyard.config";
/// The only version this code reads and writes.
pub const VERSION: u64 = 1;

/// A whole shared configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    pub format: String,
    pub version: u64,
    pub connections: Vec<ConnectionEntry>,
    /// Pools over this file's connections. An importer stores them inactive.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<PoolEntry>,
}

/// A pool: its name, protocol, members (connections of this file by ref, with the model each
/// is asked for and its weight, in priority order), the mode it routed in and whether it was
/// active (an importer turns it on once its gates hold).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolEntry {
    pub name: String,
    pub protocol: Protocol,
    pub members: Vec<PoolMemberEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<RoutingMode>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub active: bool,
}

/// One member of an exported pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolMemberEntry {
    /// The `ref` of a connection in this file.
    pub connection: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default = "one_u32")]
    pub weight: u32,
}

fn one_u32() -> u32 {
    1
}

/// One connection: its definition and the wanted routing mode, with its profiles nested.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectionEntry {
    /// Export-local reference (`c1`, `c2`, …), never a database id.
    #[serde(rename = "ref")]
    pub reference: String,
    pub slug: String,
    pub protocol: Protocol,
    pub base_url: String,
    #[serde(default)]
    pub headers: Vec<HeaderEntry>,
    #[serde(default)]
    pub models: Vec<String>,
    /// Client-facing model name → upstream model name.
    #[serde(default)]
    pub mapping: BTreeMap<String, String>,
    /// The routing mode the exporter had (or wanted); an importer records it as pending.
    #[serde(default = "legacy")]
    pub routing: RoutingMode,
    #[serde(default)]
    pub profiles: Vec<ProfileEntry>,
    /// The fallback chain: other connections of this file by ref, in order. An importer
    /// stores it inactive.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallback: Vec<FallbackEntry>,
    /// The exporter had the chain activated: an importer turns it on once its gates hold.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fallback_active: bool,
}

/// One hop of a fallback chain: a connection of the same file, and the model it is asked
/// for (absent: the requested model, unchanged).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FallbackEntry {
    /// The `ref` of another connection in this file.
    pub connection: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// A non-secret header of a connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeaderEntry {
    pub name: String,
    pub value: String,
}

/// A credential profile without its credential: the importer adds keys (or tokens, or signs
/// in) later. Its kind travels; a token, a locator or an official CLI's login never does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileEntry {
    /// Export-local reference (`p1`, `p2`, …), never a database id.
    #[serde(rename = "ref")]
    pub reference: String,
    pub label: String,
    #[serde(default = "one")]
    pub weight: i64,
    #[serde(default)]
    pub priority: i64,
    /// The profile legacy mode uses; exactly one per connection that has profiles.
    #[serde(default)]
    pub primary: bool,
    /// What the credential is; files written before kinds existed have none: `api_key`.
    #[serde(default = "api_key")]
    pub kind: ProfileKind,
    /// The official client of a `token` or `external` profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<OfficialClient>,
    /// A token's expiry as the exporter knew it (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

fn api_key() -> ProfileKind {
    ProfileKind::ApiKey
}

fn legacy() -> RoutingMode {
    RoutingMode::Legacy
}

fn one() -> i64 {
    1
}
