//! The web console's sign-in (docs/design.md §18; invariant 31): an `admin` user's relay token is
//! exchanged for a session — a random cookie value and a CSRF token, both shown once and kept in
//! the store as SHA-256 hashes (`console_sessions`), so every replica honours the session and a
//! revoked or rotated token ends it at once. A `user` token, the install's token or an expired
//! admin's are refused. The relay's console API (relay `console/`) checks the session on every
//! call and the CSRF header on every change, and records the changes as `user:<name>`
//! ([`crate::acting_as`]).

pub mod admin;

use switchyard_store::console_sessions;
use switchyard_vault::Secret;

use crate::config::audit::Change;
use crate::config::relay_users::{random_hex, user_token_hash, Role};
use crate::context::Context;
use crate::error::EngineError;

/// How long a console session lasts after sign-in.
pub const CONSOLE_SESSION_MS: i64 = 12 * 60 * 60 * 1000;

/// A new session: its cookie value and CSRF token (given to the browser once).
pub struct ConsoleSession {
    pub cookie: Secret,
    pub csrf: Secret,
    pub user: String,
    pub expires_at_ms: i64,
}

impl std::fmt::Debug for ConsoleSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsoleSession").field("user", &self.user).finish_non_exhaustive()
    }
}

/// A signed-in admin, as a console call sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleCaller {
    pub user: String,
    csrf_hash: String,
}

impl ConsoleCaller {
    /// Whether `presented` is this session's CSRF token (constant time).
    pub fn csrf_matches(&self, presented: &str) -> bool {
        let hash = hash_of(presented);
        hash.len() == self.csrf_hash.len()
            && hash.bytes().zip(self.csrf_hash.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }

    /// The actor the audit names for this admin's changes.
    pub fn actor(&self) -> String {
        format!("user:{}", self.user)
    }
}

/// A session value as the store keeps it: SHA-256, hex (as user tokens are kept).
fn hash_of(value: &str) -> String {
    user_token_hash(value)
}

impl Context {
    /// Signs an admin in with their relay token. `None` for anything but a live, unexpired
    /// `admin` user's token (the relay answers 401 alike: nothing tells a user token from a wrong
    /// one).
    pub async fn console_sign_in(&self, token: &Secret) -> Result<Option<ConsoleSession>, EngineError> {
        let now = self.now_ms();
        let hash = user_token_hash(token.expose());
        let grant = self
            .relay_user_tokens()
            .await?
            .into_iter()
            .find(|(h, _)| *h == hash)
            .map(|(_, g)| g)
            .filter(|g| g.role == Role::Admin && g.expires_at.is_none_or(|at| at > now));
        let Some(grant) = grant else { return Ok(None) };
        let (cookie, csrf) = (random_hex()?, random_hex()?);
        let expires_at_ms = now + CONSOLE_SESSION_MS;
        let mut tx = self.store.begin_rows().await?;
        console_sessions::prune(&mut tx, now).await?;
        console_sessions::insert(&mut tx, &hash_of(&cookie), &grant.name, &hash, &hash_of(&csrf), now, expires_at_ms)
            .await?;
        let change =
            Change { action: "console.sign_in", subject: &grant.name, before: None, after: None, detail: None };
        crate::acting_as(format!("user:{}", grant.name), self.audit(&mut tx, change)).await?;
        tx.commit().await.map_err(switchyard_store::StoreError::from)?;
        Ok(Some(ConsoleSession {
            cookie: Secret::new(cookie),
            csrf: Secret::new(csrf),
            user: grant.name,
            expires_at_ms,
        }))
    }

    /// The admin a session cookie belongs to, while it is valid (see `console_sessions::valid`).
    pub async fn console_caller(&self, cookie: &str) -> Result<Option<ConsoleCaller>, EngineError> {
        let mut conn = self.store.acquire().await?;
        let row = console_sessions::valid(&mut conn, &hash_of(cookie), self.now_ms()).await?;
        Ok(row.map(|r| ConsoleCaller { user: r.user_name, csrf_hash: r.csrf_hash }))
    }

    /// A valid session's admin and a new CSRF token for it (a reloaded page: the browser keeps the
    /// CSRF token in memory only). `None`: no valid session.
    pub async fn console_resume(&self, cookie: &str) -> Result<Option<(String, Secret)>, EngineError> {
        let Some(caller) = self.console_caller(cookie).await? else { return Ok(None) };
        let csrf = random_hex()?;
        let mut conn = self.store.acquire().await?;
        console_sessions::set_csrf(&mut conn, &hash_of(cookie), &hash_of(&csrf)).await?;
        Ok(Some((caller.user, Secret::new(csrf))))
    }

    /// Ends a session (sign-out); unknown cookies are fine.
    pub async fn console_sign_out(&self, cookie: &str) -> Result<(), EngineError> {
        let mut conn = self.store.acquire().await?;
        console_sessions::remove(&mut conn, &hash_of(cookie)).await?;
        Ok(())
    }
}
