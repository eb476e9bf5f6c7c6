//! `relay users add|list|revoke` and `vault rotate-master-key`: a new token (shown once), the
//! users (never a token), a revocation, a rotation's count and key ids.

use serde::Serialize;
use switchyard_engine::RelayUserView;

use super::Render;

/// `relay users add NAME`: `{"user", "token"}`; the token is printed this once.
#[derive(Debug, Serialize)]
pub struct NewUserToken {
    pub user: String,
    pub token: String,
}

impl Render for NewUserToken {
    fn text(&self) -> String {
        format!(
            "{}\n(the token of relay user '{}': shown this once, only its hash is kept; send it as \
             Authorization: Bearer, x-api-key or x-switchyard-token)",
            self.token, self.user
        )
    }
}

/// `relay users list`: the rows.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct RelayUsers(pub Vec<RelayUserView>);

impl Render for RelayUsers {
    fn text(&self) -> String {
        if self.0.is_empty() {
            return "no relay users (add one: switchyard relay users add NAME)".to_string();
        }
        let mut lines = vec![format!(
            "{:<20} {:<6} {:<24} {:<20} {:<22} {:<22} {}",
            "USER", "ROLE", "REACHES", "MODELS", "EXPIRES", "LAST USED", "REVOKED"
        )];
        let list = |l: &[String]| if l.is_empty() { "all".to_string() } else { l.join(",") };
        for u in &self.0 {
            lines.push(format!(
                "{:<20} {:<6} {:<24} {:<20} {:<22} {:<22} {}",
                u.name,
                u.role,
                list(&u.connections),
                list(&u.models),
                u.expires_at.as_deref().unwrap_or("never"),
                u.last_used.as_deref().unwrap_or("-"),
                u.revoked_at.as_deref().unwrap_or("-")
            ));
        }
        lines.join("\n")
    }
}

/// `relay users revoke NAME`: `{"user", "revoked": true}`.
#[derive(Debug, Serialize)]
pub struct UserRevoked {
    pub user: String,
    pub revoked: bool,
}

impl Render for UserRevoked {
    fn text(&self) -> String {
        format!("relay user '{}' revoked; every relay refuses the token within a second", self.user)
    }
}

/// `vault rotate-master-key`: `{"resealed", "from_key_id", "to_key_id"}`.
#[derive(Debug, Serialize)]
pub struct MasterKeyRotated {
    pub resealed: i64,
    pub from_key_id: String,
    pub to_key_id: String,
}

impl Render for MasterKeyRotated {
    fn text(&self) -> String {
        format!(
            "re-sealed {} secrets under master key {} (was {}); restart every process on this store with \
             SWITCHYARD_MASTER_KEY_FILE pointing at the new file",
            self.resealed, self.to_key_id, self.from_key_id
        )
    }
}
