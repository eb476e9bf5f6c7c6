//! `relay users list`: who may use the relay with a token of their own, their role, scope and
//! expiry. Never the token or its hash.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    pub revision: i64,
}
