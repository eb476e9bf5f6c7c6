//! Per-person relay tokens (invariant 27): `relay users add NAME` makes a token of 256 random
//! bits (`syu_` + 64 hex digits), shows it once and keeps only its SHA-256 (a hash of a
//! 256-bit random value needs no salt or slow hash: nothing guessable goes in);
//! `relay users revoke NAME` refuses it from then on (a running relay re-reads the live hashes
//! every [`USERS_REFRESH_MS`] ms). The ledger records the user's name
//! with each attempt, never the token.

use sha2::{Digest, Sha256};
use switchyard_core::InvalidInput;
use switchyard_store::relay_users;
use switchyard_vault::Secret;

use crate::clock::rfc3339;
use crate::context::Context;
use crate::error::EngineError;
use crate::views::RelayUserView;

/// How often a running relay re-reads the live user tokens (one store read): a revocation on
/// any replica is refused everywhere within this time.
pub const USERS_REFRESH_MS: u64 = 250;

/// Prefix of a user token (the install's own token starts `sy_`).
pub const USER_TOKEN_PREFIX: &str = "syu_";

/// The stored form of a user token: SHA-256, hex.
pub fn user_token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
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

impl Context {
    /// Adds `name` (or gives a revoked name a new token) and returns the token, which is not
    /// kept anywhere: only its hash is stored.
    pub async fn relay_user_add(&self, name: &str) -> Result<Secret, EngineError> {
        validate_user(name)?;
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| EngineError::Internal(format!("no randomness: {e}")))?;
        let token = Secret::new(format!("{USER_TOKEN_PREFIX}{}", hex::encode(bytes)));
        let mut conn = self.store.acquire().await?;
        relay_users::add(&mut conn, name, &user_token_hash(token.expose()), self.now_ms())
            .await
            .map_err(|e| EngineError::from_store("relay user", name, e))?;
        tracing::info!(user = name, "relay user added");
        Ok(token)
    }

    pub async fn relay_user_list(&self) -> Result<Vec<RelayUserView>, EngineError> {
        let mut conn = self.store.acquire().await?;
        Ok(relay_users::list(&mut conn)
            .await?
            .into_iter()
            .map(|r| RelayUserView {
                name: r.name,
                created_at: rfc3339(r.created_at),
                revoked_at: r.revoked_at.map(rfc3339),
            })
            .collect())
    }

    /// Revokes `name`'s token; a name without a live token is not found.
    pub async fn relay_user_revoke(&self, name: &str) -> Result<(), EngineError> {
        let mut conn = self.store.acquire().await?;
        if !relay_users::revoke(&mut conn, name, self.now_ms()).await? {
            return Err(EngineError::not_found("relay user", name));
        }
        tracing::info!(user = name, "relay user revoked");
        Ok(())
    }

    /// (token hash, name) of every live user token: what the relay accepts.
    pub async fn relay_user_hashes(&self) -> Result<Vec<(String, String)>, EngineError> {
        let mut conn = self.store.acquire().await?;
        Ok(relay_users::live_hashes(&mut conn).await?)
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
}
