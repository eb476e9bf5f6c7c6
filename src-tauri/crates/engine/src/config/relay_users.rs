//! Per-person relay tokens (invariants 27 and 31): `relay users add NAME` makes a token of 256
//! random bits (`syu_` + 64 hex digits), shows it once and keeps only its SHA-256 (a hash of a
//! 256-bit random value needs no salt or slow hash: nothing guessable goes in), with the user's
//! role (`user` or `admin`), scope (connections and pools; model patterns) and expiry.
//! `edit` changes those (CAS on the user's revision), `rotate` replaces the token (the old one
//! is refused from the next refresh on), `revoke` refuses it from then on. A running relay
//! re-reads the live tokens every [`USERS_REFRESH_MS`] ms. Every change is an audit row. The
//! ledger records the user's name with each attempt, never the token.

use sha2::{Digest, Sha256};
use switchyard_core::limit::UserScope;
use switchyard_core::InvalidInput;
use switchyard_store::relay_users::{self, Grant, LiveToken, RelayUserRow};
use switchyard_vault::Secret;

use crate::clock::rfc3339;
use crate::config::audit::Change;
use crate::context::Context;
use crate::error::EngineError;
use crate::views::RelayUserView;

/// How often a running relay re-reads the live user tokens (one store read): a revocation or
/// a rotation on any replica is refused everywhere within this time.
pub const USERS_REFRESH_MS: u64 = 250;

/// Prefix of a user token (the install's own token starts `sy_`).
pub const USER_TOKEN_PREFIX: &str = "syu_";

/// The stored form of a user token: SHA-256, hex.
pub fn user_token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A user's role: what their token reaches besides model calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    /// Model calls within their scope, and their own figures (`/v1/switchyard/me`).
    #[default]
    User,
    /// Also the admin surfaces (`/metrics`, the console).
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Admin => "admin",
        }
    }

    pub fn parse(text: &str) -> Result<Self, InvalidInput> {
        match text {
            "user" => Ok(Role::User),
            "admin" => Ok(Role::Admin),
            _ => Err(InvalidInput::new("role", "must be user or admin")),
        }
    }
}

/// What a user may do, as `add` and `edit` take it. `None` fields of an edit keep the value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserGrant {
    pub role: Option<Role>,
    /// Connections and pools by name (empty: all).
    pub connections: Option<Vec<String>>,
    /// Model patterns with `*` (empty: all).
    pub models: Option<Vec<String>>,
    /// `Some(None)` clears the expiry.
    pub expires: Option<Option<String>>,
}

/// A user token as a relay holds it: the user and what they may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenGrant {
    pub name: String,
    pub role: Role,
    pub scope: UserScope,
    /// Unix ms after which the token is refused (401).
    pub expires_at: Option<i64>,
}

/// A user name: 1–64 of `a-z 0-9 . _ -`, starting with a letter or digit, and never anything
/// shaped like a key (names are printed and stored in the ledger).
fn validate_user(name: &str) -> Result<(), InvalidInput> {
    let shaped = !name.is_empty()
        && name.len() <= 64
        && name.bytes().next().is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b));
    if !shaped {
        return Err(InvalidInput::new("user", "must be 1-64 characters of a-z, 0-9, '.', '_' or '-'"));
    }
    if switchyard_core::secret_shape::echo_safe(name).is_none() {
        return Err(InvalidInput::new("user", "looks like a key; choose a person's or a machine's name"));
    }
    Ok(())
}

/// A scope list's entries: names of `a-z 0-9 . _ -` (connections, pools) or model patterns
/// (printable, no comma or space, at most 200 characters), at most 100 of them.
fn scope_list(field: &str, items: &[String], patterns: bool) -> Result<String, InvalidInput> {
    if items.len() > 100 {
        return Err(InvalidInput::new(field, "at most 100 entries"));
    }
    for item in items {
        let ok = if patterns {
            !item.is_empty() && item.len() <= 200 && item.bytes().all(|b| b.is_ascii_graphic() && b != b',')
        } else {
            !item.is_empty()
                && item.len() <= 64
                && item.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
        };
        if !ok || switchyard_core::secret_shape::echo_safe(item).is_none() {
            let what = if patterns { "model patterns (no spaces or commas)" } else { "connection or pool names" };
            return Err(InvalidInput::new(field, format!("entries must be {what}")));
        }
    }
    Ok(items.join(","))
}

fn expiry(text: &str) -> Result<i64, InvalidInput> {
    text.parse::<jiff::Timestamp>()
        .map(|t| t.as_millisecond())
        .map_err(|_| InvalidInput::new("expires", "must be an RFC 3339 time such as 2027-01-31T00:00:00Z"))
}

/// `grant` over `base` (an edit keeps what it does not name), checked.
fn merged(base: &Grant, grant: &UserGrant) -> Result<Grant, InvalidInput> {
    Ok(Grant {
        role: grant.role.map_or_else(|| base.role.clone(), |r| r.as_str().to_string()),
        connections: match &grant.connections {
            Some(list) => scope_list("connections", list, false)?,
            None => base.connections.clone(),
        },
        models: match &grant.models {
            Some(list) => scope_list("models", list, true)?,
            None => base.models.clone(),
        },
        expires_at: match &grant.expires {
            Some(Some(text)) => Some(expiry(text)?),
            Some(None) => None,
            None => base.expires_at,
        },
    })
}

fn detail(grant: &Grant) -> serde_json::Value {
    serde_json::json!({
        "role": grant.role,
        "connections": grant.connections,
        "models": grant.models,
        "expires_at": grant.expires_at.map(rfc3339),
    })
}

/// 32 random bytes as 64 hex digits: the body of every token and session value the engine makes
/// (relay tokens, user tokens, console sessions and their CSRF tokens).
pub(crate) fn random_hex() -> Result<String, EngineError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| EngineError::Internal(format!("no randomness: {e}")))?;
    Ok(hex::encode(bytes))
}

fn new_token() -> Result<Secret, EngineError> {
    Ok(Secret::new(format!("{USER_TOKEN_PREFIX}{}", random_hex()?)))
}

impl Context {
    /// Adds `name` as a `user` reaching everything, with no expiry ([`Context::relay_user_add_with`]).
    pub async fn relay_user_add(&self, name: &str) -> Result<Secret, EngineError> {
        self.relay_user_add_with(name, &UserGrant::default()).await
    }

    /// Adds `name` (or gives a revoked name a new token) with `grant` and returns the token,
    /// which is not kept anywhere: only its hash is stored.
    pub async fn relay_user_add_with(&self, name: &str, grant: &UserGrant) -> Result<Secret, EngineError> {
        validate_user(name)?;
        let base = Grant { role: Role::User.as_str().to_string(), ..Grant::default() };
        let grant = merged(&base, grant)?;
        let token = new_token()?;
        let mut tx = self.store.begin().await?;
        let revision = relay_users::add(&mut tx, name, &user_token_hash(token.expose()), &grant, self.now_ms())
            .await
            .map_err(|e| EngineError::from_store("relay user", name, e))?;
        let change = Change {
            action: "user.add",
            subject: name,
            before: None,
            after: Some(revision),
            detail: Some(detail(&grant)),
        };
        self.audit(&mut tx, change).await?;
        tx.commit().await.map_err(switchyard_store::StoreError::from)?;
        tracing::info!(user = name, "relay user added");
        Ok(token)
    }

    /// Changes a live user's role, scope or expiry; `if_revision` refuses a stale edit.
    pub async fn relay_user_edit(
        &self,
        name: &str,
        grant: &UserGrant,
        if_revision: Option<i64>,
    ) -> Result<RelayUserView, EngineError> {
        let mut tx = self.store.begin().await?;
        let Some(row) = relay_users::live(&mut tx, name).await? else {
            return Err(EngineError::not_found("relay user", name));
        };
        let expected = if_revision.unwrap_or(row.revision);
        let base = Grant {
            role: row.role.clone(),
            connections: row.connections.clone(),
            models: row.models.clone(),
            expires_at: row.expires_at,
        };
        let next = merged(&base, grant)?;
        let revision = relay_users::edit(&mut tx, name, &next, expected)
            .await
            .map_err(|e| EngineError::from_store("relay user", name, e))?;
        let change = Change {
            action: "user.edit",
            subject: name,
            before: Some(expected),
            after: Some(revision),
            detail: Some(detail(&next)),
        };
        self.audit(&mut tx, change).await?;
        tx.commit().await.map_err(switchyard_store::StoreError::from)?;
        let row = RelayUserRow {
            role: next.role,
            connections: next.connections,
            models: next.models,
            expires_at: next.expires_at,
            revision,
            ..row
        };
        Ok(user_view(row, None))
    }

    /// Gives a live user a new token (shown once); the old one is refused from the next refresh.
    pub async fn relay_user_rotate(&self, name: &str) -> Result<Secret, EngineError> {
        let token = new_token()?;
        let mut tx = self.store.begin().await?;
        let Some(revision) = relay_users::rotate(&mut tx, name, &user_token_hash(token.expose())).await? else {
            return Err(EngineError::not_found("relay user", name));
        };
        let change = Change::step("user.rotate", name, revision);
        self.audit(&mut tx, change).await?;
        tx.commit().await.map_err(switchyard_store::StoreError::from)?;
        tracing::info!(user = name, "relay user token rotated");
        Ok(token)
    }

    pub async fn relay_user_list(&self) -> Result<Vec<RelayUserView>, EngineError> {
        let mut conn = self.store.acquire().await?;
        let last_used = switchyard_store::attempts::last_used_by_user(&mut conn).await?;
        Ok(relay_users::list(&mut conn)
            .await?
            .into_iter()
            .map(|r| {
                let used = last_used.iter().find(|(n, _)| *n == r.name).map(|(_, at)| *at);
                user_view(r, used)
            })
            .collect())
    }

    /// Revokes `name`'s token; a name without a live token is not found.
    pub async fn relay_user_revoke(&self, name: &str) -> Result<(), EngineError> {
        let mut tx = self.store.begin().await?;
        let Some(revision) = relay_users::revoke(&mut tx, name, self.now_ms()).await? else {
            return Err(EngineError::not_found("relay user", name));
        };
        let change = Change::step("user.revoke", name, revision);
        self.audit(&mut tx, change).await?;
        tx.commit().await.map_err(switchyard_store::StoreError::from)?;
        tracing::info!(user = name, "relay user revoked");
        Ok(())
    }

    /// (token hash, name) of every live user token.
    pub async fn relay_user_hashes(&self) -> Result<Vec<(String, String)>, EngineError> {
        Ok(self.relay_user_tokens().await?.into_iter().map(|(hash, g)| (hash, g.name)).collect())
    }

    /// Every live user token's hash and grant: what the relay accepts.
    pub async fn relay_user_tokens(&self) -> Result<Vec<(String, TokenGrant)>, EngineError> {
        let mut conn = self.store.acquire().await?;
        Ok(relay_users::live_tokens(&mut conn).await?.into_iter().map(token_grant).collect())
    }
}

fn token_grant(t: LiveToken) -> (String, TokenGrant) {
    let grant = TokenGrant {
        role: Role::parse(&t.role).unwrap_or(Role::User),
        scope: UserScope::from_lists(&t.connections, &t.models),
        expires_at: t.expires_at,
        name: t.name,
    };
    (t.token_hash, grant)
}

fn user_view(r: RelayUserRow, last_used: Option<i64>) -> RelayUserView {
    let scope = UserScope::from_lists(&r.connections, &r.models);
    RelayUserView {
        name: r.name,
        role: r.role,
        connections: scope.targets,
        models: scope.models,
        expires_at: r.expires_at.map(rfc3339),
        created_at: rfc3339(r.created_at),
        revoked_at: r.revoked_at.map(rfc3339),
        last_used: last_used.map(rfc3339),
        revision: r.revision,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_and_never_key_shaped() {
        for good in ["alice", "ci-runner-2", "bob.smith", "m1"] {
            assert!(validate_user(good).is_ok(), "'{good}' is a fine user name");
        }
        for bad in ["", "Alice", "-x", "a b", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789", &"a".repeat(65)] {
            assert!(validate_user(bad).is_err(), "'{bad}' must be refused");
        }
    }

    #[test]
    fn the_stored_hash_is_sha256_of_the_token() {
        let h = user_token_hash("syu_abc");
        assert_eq!(h.len(), 64, "hex SHA-256");
        assert_ne!(h, user_token_hash("syu_abd"), "another token, another hash");
        assert!(!h.contains("abc"), "the hash does not carry the token");
    }

    #[test]
    fn an_edit_keeps_what_it_does_not_name_and_checks_what_it_does() {
        let base =
            Grant { role: "user".into(), connections: "work".into(), models: "claude-*".into(), expires_at: Some(5) };
        let role_only = UserGrant { role: Some(Role::Admin), ..UserGrant::default() };
        let next = merged(&base, &role_only).expect("a role change");
        assert_eq!((next.role.as_str(), next.connections.as_str(), next.expires_at), ("admin", "work", Some(5)));
        let cleared = UserGrant { expires: Some(None), connections: Some(vec![]), ..UserGrant::default() };
        let next = merged(&base, &cleared).expect("clearing");
        assert_eq!((next.connections.as_str(), next.expires_at), ("", None), "an empty list is all; no expiry");
        let bad = UserGrant { connections: Some(vec!["Work Space".into()]), ..UserGrant::default() };
        assert!(merged(&base, &bad).is_err(), "a name with spaces is refused");
        let key = UserGrant {
            models: Some(vec!["sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789".into()]),
            ..UserGrant::default()
        };
        assert!(merged(&base, &key).is_err(), "a key pasted as a pattern is refused, never stored");
    }
}
