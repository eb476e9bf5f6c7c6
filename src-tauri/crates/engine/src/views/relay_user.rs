//! `relay users list`: who may use the relay with a token of their own, their role, scope and
//! expiry. Never the token or its hash.

use serde::{Deserialize, Serialize};
use specta::Type;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct RelayUserView {
    pub name: String,
    /// `user` or `admin`.
    pub role: String,
    /// Connections and pools the user may reach (empty: all).
    pub connections: Vec<String>,
    /// Model patterns the user may ask for (empty: all).
    pub models: Vec<String>,
    /// When the token stops being accepted (RFC 3339); `None`: never.
    pub expires_at: Option<String>,
    /// When the current token was made (RFC 3339).
    pub created_at: String,
    /// When it was revoked (RFC 3339); `None` while it is accepted.
    pub revoked_at: Option<String>,
    /// The user's last recorded request (RFC 3339).
    pub last_used: Option<String>,
    #[specta(type = u32)]
    pub revision: i64,
}

/// A user's token, shown once: when the user is added or their token rotated. Nothing else ever
/// returns a token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct NewUserToken {
    pub user: String,
    pub token: String,
}

/// A user as the console's and the desktop's forms send it (`relay users add|edit`): `None`
/// keeps a value on an edit; an empty list means all; `no_expiry` clears the expiry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Type)]
pub struct RelayUserInput {
    /// `user` or `admin`.
    pub role: Option<String>,
    pub connections: Option<Vec<String>>,
    pub models: Option<Vec<String>>,
    /// RFC 3339.
    pub expires: Option<String>,
    #[serde(default)]
    pub no_expiry: bool,
}

/// A limit as the console's form sends it (`limits set`): `measure` `requests`, `tokens`, `usd`
/// or `concurrency`; `period` `minute` … `month` (none for concurrency).
#[derive(Debug, Clone, PartialEq, Deserialize, Type)]
pub struct LimitInput {
    pub scope: String,
    pub measure: String,
    pub amount: f64,
    pub period: Option<String>,
    pub id: Option<String>,
}
