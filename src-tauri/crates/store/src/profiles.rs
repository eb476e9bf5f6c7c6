//! The `profiles` table: credentials of a connection. The row holds the keychain locator,
//! never the secret, and the credential's kind (`api_key`, `token`, `external`, `oauth`), official
//! client and expiry (migration 0008), and what is known about an owned login besides its tokens
//! (migration 0013: account, plan, generation, the last refresh's time, outcome and block).

use sqlx::{AnyConnection, FromRow};

use crate::error::{cas_failure, StoreError};

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct ProfileRow {
    pub id: String,
    pub connection_id: String,
    pub label: String,
    pub weight: i64,
    pub priority: i64,
    #[sqlx(try_from = "crate::flag::Flag")]
    pub enabled: bool,
    #[sqlx(try_from = "crate::flag::Flag")]
    pub is_primary: bool,
    pub locator_service: Option<String>,
    pub locator_account: Option<String>,
    pub credential_revision: i64,
    pub revision: i64,
    pub created_at: i64,
    pub updated_at: i64,
    /// `api_key`, `token`, `external` or `oauth`.
    pub kind: String,
    /// `claude-code` or `codex` for `token` and `external`.
    pub client: Option<String>,
    /// A token's expiry, or an owned login's access token's (unix ms), if known.
    pub expires_at: Option<i64>,
    /// `oauth`: the ChatGPT account the login belongs to.
    pub login_account_id: Option<String>,
    /// `oauth`: the plan its id token names, if any.
    pub login_plan: Option<String>,
    /// `oauth`: changes only when the user signs in again (0: never signed in).
    pub login_generation: i64,
    /// `oauth`: when the last refresh or sign-in was written (unix ms).
    pub login_refreshed_at: Option<i64>,
    /// `oauth`: `succeeded`, `failed` or `rejected`.
    pub login_outcome: Option<String>,
    /// `oauth`: no refresh before this (unix ms).
    pub login_blocked_until: Option<i64>,
}

/// What a sign-in writes besides the new locator (inside the rotation's transaction).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignIn<'a> {
    pub account_id: Option<&'a str>,
    pub plan: Option<&'a str>,
    pub generation: i64,
}

/// What a refresh writes: the new expiry (`None`: unchanged), how it went and any block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refreshed<'a> {
    pub expires_at: Option<i64>,
    pub outcome: &'a str,
    pub blocked_until: Option<i64>,
    pub at: i64,
}

/// What a new profile's credential is. The default is an API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind<'a> {
    pub kind: &'a str,
    pub client: Option<&'a str>,
    pub expires_at: Option<i64>,
}

impl Default for Kind<'_> {
    fn default() -> Self {
        Kind { kind: "api_key", client: None, expires_at: None }
    }
}

/// Fields of a new profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewProfile<'a> {
    pub id: &'a str,
    pub connection_id: &'a str,
    pub label: &'a str,
    pub weight: i64,
    pub priority: i64,
    pub enabled: bool,
    pub is_primary: bool,
    pub locator: Option<(&'a str, &'a str)>,
}

/// The settings `profile edit` changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub label: String,
    pub weight: i64,
    pub priority: i64,
    pub enabled: bool,
}

const COLUMNS: &str = "id, connection_id, label, weight, priority, enabled, is_primary, locator_service, \
     locator_account, credential_revision, revision, created_at, updated_at, kind, client, expires_at, \
     login_account_id, login_plan, login_generation, login_refreshed_at, login_outcome, login_blocked_until";

/// Inserts an API-key profile.
pub async fn insert(conn: &mut AnyConnection, p: &NewProfile<'_>, now_ms: i64) -> Result<(), StoreError> {
    insert_kind(conn, p, Kind::default(), now_ms).await
}

/// Inserts a profile whose credential is of `kind`.
pub async fn insert_kind(
    conn: &mut AnyConnection,
    p: &NewProfile<'_>,
    kind: Kind<'_>,
    now_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO profiles (id, connection_id, label, weight, priority, enabled, is_primary, locator_service, \
         locator_account, created_at, updated_at, kind, client, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
    )
    .bind(p.id)
    .bind(p.connection_id)
    .bind(p.label)
    .bind(p.weight)
    .bind(p.priority)
    .bind(i64::from(p.enabled))
    .bind(i64::from(p.is_primary))
    .bind(p.locator.map(|l| l.0))
    .bind(p.locator.map(|l| l.1))
    .bind(now_ms)
    .bind(now_ms)
    .bind(kind.kind)
    .bind(kind.client)
    .bind(kind.expires_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn by_id(conn: &mut AnyConnection, id: &str) -> Result<Option<ProfileRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM profiles WHERE id = $1");
    Ok(sqlx::query_as::<_, ProfileRow>(&sql).bind(id).fetch_optional(conn).await?)
}

/// Profiles of a connection in priority order (lower number first), then id.
pub async fn for_connection(conn: &mut AnyConnection, connection_id: &str) -> Result<Vec<ProfileRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM profiles WHERE connection_id = $1 ORDER BY priority, id");
    Ok(sqlx::query_as::<_, ProfileRow>(&sql).bind(connection_id).fetch_all(conn).await?)
}

/// Every profile id (start-up clean-up of per-profile files).
pub async fn all_ids(conn: &mut AnyConnection) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar::<_, String>("SELECT id FROM profiles").fetch_all(conn).await?)
}

/// Every locator any profile references (for keychain garbage collection).
pub async fn all_locators(conn: &mut AnyConnection) -> Result<Vec<(String, String)>, StoreError> {
    Ok(sqlx::query_as::<_, (String, String)>(
        "SELECT locator_service, locator_account FROM profiles WHERE locator_service IS NOT NULL AND locator_account IS NOT NULL",
    )
    .fetch_all(conn)
    .await?)
}

/// CAS update of label, weight, priority and enabled flag; returns the new revision.
pub async fn update_settings(
    conn: &mut AnyConnection,
    id: &str,
    expected: i64,
    s: &Settings,
    now_ms: i64,
) -> Result<i64, StoreError> {
    let done = sqlx::query_scalar::<_, i64>(
        "UPDATE profiles SET label = $1, weight = $2, priority = $3, enabled = $4, revision = revision + 1, updated_at = $5 \
         WHERE id = $6 AND revision = $7 RETURNING revision",
    )
    .bind(&s.label)
    .bind(s.weight)
    .bind(s.priority)
    .bind(i64::from(s.enabled))
    .bind(now_ms)
    .bind(id)
    .bind(expected)
    .fetch_optional(&mut *conn)
    .await?;
    match done {
        Some(rev) => Ok(rev),
        None => Err(cas_failure(conn, "profiles", id, expected).await),
    }
}

/// CAS replacement of the credential: new locator, the new credential's expiry (a token's;
/// `None` for a key or an unknown expiry) and credential revision + 1.
pub async fn replace_credential(
    conn: &mut AnyConnection,
    id: &str,
    expected: i64,
    locator: (&str, &str),
    expires_at: Option<i64>,
    now_ms: i64,
) -> Result<i64, StoreError> {
    let done = sqlx::query_scalar::<_, i64>(
        "UPDATE profiles SET locator_service = $1, locator_account = $2, expires_at = $3, \
         credential_revision = credential_revision + 1, revision = revision + 1, updated_at = $4 \
         WHERE id = $5 AND revision = $6 RETURNING revision",
    )
    .bind(locator.0)
    .bind(locator.1)
    .bind(expires_at)
    .bind(now_ms)
    .bind(id)
    .bind(expected)
    .fetch_optional(&mut *conn)
    .await?;
    match done {
        Some(rev) => Ok(rev),
        None => Err(cas_failure(conn, "profiles", id, expected).await),
    }
}

/// Records a sign-in on the row `replace_credential` just swapped (same transaction): the
/// account, the plan, the new generation, and a clean refresh state. Not a user edit: the
/// revision is the swap's.
pub async fn record_sign_in(
    conn: &mut AnyConnection,
    id: &str,
    sign_in: &SignIn<'_>,
    expires_at: Option<i64>,
    now_ms: i64,
) -> Result<(), StoreError> {
    let done = sqlx::query(
        "UPDATE profiles SET login_account_id = $1, login_plan = $2, login_generation = $3, expires_at = $4, \
         login_refreshed_at = $5, login_outcome = 'succeeded', login_blocked_until = NULL WHERE id = $6",
    )
    .bind(sign_in.account_id)
    .bind(sign_in.plan)
    .bind(sign_in.generation)
    .bind(expires_at)
    .bind(now_ms)
    .bind(id)
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 1 {
        Ok(())
    } else {
        Err(StoreError::NotFound("profiles"))
    }
}

/// Records a refresh of login `generation`: compare-and-swap on the generation (a refresh of a
/// login the user has since replaced writes nothing). Neither the revision nor the credential
/// revision changes: a refresh is not an edit and not a rotation (invariant 22). Returns whether
/// the row was written.
pub async fn record_refresh(
    conn: &mut AnyConnection,
    id: &str,
    generation: i64,
    r: Refreshed<'_>,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE profiles SET expires_at = COALESCE($1, expires_at), login_refreshed_at = $2, login_outcome = $3, \
         login_blocked_until = $4 WHERE id = $5 AND login_generation = $6",
    )
    .bind(r.expires_at)
    .bind(r.at)
    .bind(r.outcome)
    .bind(r.blocked_until)
    .bind(id)
    .bind(generation)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Makes `id` the primary of its connection (CAS on the new primary). Run inside a transaction.
pub async fn make_primary(conn: &mut AnyConnection, id: &str, expected: i64, now_ms: i64) -> Result<i64, StoreError> {
    let Some(row) = by_id(conn, id).await? else {
        return Err(StoreError::NotFound("profiles"));
    };
    if row.revision != expected {
        return Err(StoreError::Conflict { expected, found: row.revision });
    }
    sqlx::query(
        "UPDATE profiles SET is_primary = 0, revision = revision + 1, updated_at = $1 WHERE connection_id = $2 AND is_primary = 1 AND id != $3",
    )
    .bind(now_ms)
    .bind(&row.connection_id)
    .bind(id)
    .execute(&mut *conn)
    .await?;
    let done = sqlx::query_scalar::<_, i64>(
        "UPDATE profiles SET is_primary = 1, revision = revision + 1, updated_at = $1 WHERE id = $2 AND revision = $3 RETURNING revision",
    )
    .bind(now_ms)
    .bind(id)
    .bind(expected)
    .fetch_optional(&mut *conn)
    .await?;
    match done {
        Some(rev) => Ok(rev),
        None => Err(cas_failure(conn, "profiles", id, expected).await),
    }
}

/// CAS delete of one profile (its evidence and circuits cascade).
pub async fn delete(conn: &mut AnyConnection, id: &str, expected: i64) -> Result<(), StoreError> {
    let done = sqlx::query("DELETE FROM profiles WHERE id = $1 AND revision = $2")
        .bind(id)
        .bind(expected)
        .execute(&mut *conn)
        .await?;
    if done.rows_affected() == 1 {
        Ok(())
    } else {
        Err(cas_failure(conn, "profiles", id, expected).await)
    }
}
