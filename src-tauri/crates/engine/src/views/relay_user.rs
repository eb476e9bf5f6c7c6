//! `relay users list`: who may use the relay with a token of their own. Never the token or its
//! hash.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RelayUserView {
    pub name: String,
    /// When the current token was made (RFC 3339).
    pub created_at: String,
    /// When it was revoked (RFC 3339); `None` while it is accepted.
    pub revoked_at: Option<String>,
}
