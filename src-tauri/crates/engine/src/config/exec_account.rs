//! The account an `exec` launch runs on (docs/design.md, section 12): which external profile's
//! config directory the official CLI gets, and afterwards whether the relay recorded a
//! subscription-limit refusal for that launch (`--failover`).
//!
//! - Named (`--profile LABEL`): that profile, if it is an external login of the command's
//!   client, enabled, signed in and not cooling.
//! - Otherwise the next eligible external profile of the client by the profiles' weights:
//!   smooth weighted round robin per launch, its position kept in the settings table
//!   (`exec_position:<connection id>`), so launches from separate processes share one
//!   sequence. Skipped: disabled profiles, logins that are `missing`/`expired`, profiles whose
//!   credential-wide circuit is open (a rejected 5-hour or weekly window cools the account until
//!   its reset; read from the `circuits` table, so a relay in another process counts), and those
//!   already tried by this `exec`.
//! - A limit refusal is an attempt of the launch's profile, tagged with the launch's id
//!   (`x-switchyard-tag-launch`), that failed `rate_limited` or `quota_exhausted`: the account
//!   hit its limit. Anything else leaves the child's exit code alone.

use std::path::PathBuf;
use std::time::Duration;

use switchyard_core::credential_health::credential_health;
use switchyard_core::routing::{Candidate, CircuitBoard, CooldownPolicy, FailureKind, Swrr};
use switchyard_core::states::{OfficialClient, ProfileKind};
use switchyard_store::attempts;
use switchyard_store::profiles::{self, ProfileRow};

use crate::clock::rfc3339;
use crate::config::rows::{client_of, credential_facts};
use crate::context::Context;
use crate::error::EngineError;
use crate::settings::ExecPosition;
use crate::settings::{Scope, EXEC_POSITION};

/// The tag name a launch's requests carry (`x-switchyard-tag-launch: <launch id>`).
pub const LAUNCH_TAG: &str = "launch";

/// How often the position is re-read and written again when another launch wrote it first.
const POSITION_TRIES: usize = 5;

/// The account a launch runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecAccount {
    pub profile_id: String,
    pub label: String,
    pub client: OfficialClient,
    /// The official CLI's config directory of this login (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`).
    pub config_dir: PathBuf,
    /// The variable that points the CLI at it.
    pub env_var: &'static str,
}

/// What the relay recorded for a launch that makes it worth another account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitRefusal {
    /// `rate_limited` or `quota_exhausted`.
    pub kind: String,
    /// The upstream status (429 for a spent window).
    pub status: Option<i64>,
    /// When the account's cooldown ends (RFC 3339), if the relay knows.
    pub until: Option<String>,
}

/// SWRR's view of a candidate row.
struct Weighted<'a>(&'a ProfileRow);

impl Candidate for Weighted<'_> {
    fn id(&self) -> &str {
        &self.0.id
    }
    fn weight(&self) -> u32 {
        u32::try_from(self.0.weight.max(0)).unwrap_or(u32::MAX)
    }
    fn priority(&self) -> i64 {
        self.0.priority
    }
}

impl Context {
    /// Whether connection `slug` has external profiles of `client`: `exec` then runs the CLI on
    /// one of those logins instead of the relay token.
    pub async fn exec_has_accounts(&self, slug: &str, client: OfficialClient) -> Result<bool, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let rows = {
            let mut conn = self.store.acquire().await?;
            profiles::for_connection(&mut conn, &connection.id).await?
        };
        Ok(rows.iter().any(|r| is_login_of(r, client)))
    }

    /// The account of the next launch of `client` on `slug`: `named` if given, else the next by
    /// weight among the eligible ones not in `skip` (profile ids). A precondition error says
    /// why none can take it.
    pub async fn exec_account(
        &self,
        slug: &str,
        client: OfficialClient,
        named: Option<&str>,
        skip: &[String],
    ) -> Result<ExecAccount, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let now_ms = self.now_ms();
        let board = self.stored_board().await?;
        if let Some(name) = named.filter(|_| skip.is_empty()) {
            let row = self.profile_by_ref(&connection, name).await?;
            if !is_login_of(&row, client) {
                return Err(EngineError::Precondition(format!(
                    "'{}' of '{slug}' is not an external {client} login; exec --profile names one (switchyard profile add \
                     {slug} --label L --kind external --client {client})",
                    row.label
                )));
            }
            return match self.unfit(&row, &board, now_ms) {
                Some(why) => Err(EngineError::Precondition(format!("'{}' of '{slug}' {why}", row.label))),
                None => Ok(self.exec_account_of(&row, client)),
            };
        }
        for _ in 0..POSITION_TRIES {
            let rows = {
                let mut conn = self.store.acquire().await?;
                profiles::for_connection(&mut conn, &connection.id).await?
            };
            let logins: Vec<&ProfileRow> = rows.iter().filter(|r| is_login_of(r, client)).collect();
            if logins.is_empty() {
                return Err(EngineError::Precondition(format!(
                    "'{slug}' has no external {client} login; add one with switchyard profile add {slug} --label L \
                     --kind external --client {client}, then switchyard profile login {slug} L"
                )));
            }
            let mut skipped = Vec::new();
            let mut eligible = Vec::new();
            for (i, row) in logins.iter().enumerate() {
                let why = if skip.contains(&row.id) {
                    Some("was tried by this exec already".to_string())
                } else {
                    self.unfit(row, &board, now_ms)
                };
                match why {
                    Some(why) => skipped.push(format!("'{}' {why}", row.label)),
                    None => eligible.push(i),
                }
            }
            if eligible.is_empty() {
                return Err(EngineError::Precondition(format!(
                    "no {client} login of '{slug}' can take a launch now: {}",
                    skipped.join("; ")
                )));
            }
            let candidates: Vec<Weighted<'_>> = logins.iter().map(|r| Weighted(r)).collect();
            let mut chosen = None;
            let written = self
                .update_setting(&EXEC_POSITION, Scope::Connection(&connection.id), |position| {
                    let mut swrr = Swrr::from_current(position.0);
                    chosen = swrr.select(&candidates, &eligible);
                    ExecPosition(swrr.current_weights().map(|(id, w)| (id.to_string(), w)).collect())
                })
                .await;
            match written {
                Ok(_) => {}
                Err(EngineError::Conflict { .. }) => continue,
                Err(e) => return Err(e),
            }
            let index = chosen.ok_or_else(|| EngineError::Internal("no account chosen among eligible ones".into()))?;
            return Ok(self.exec_account_of(logins[index], client));
        }
        Err(EngineError::Internal("the launch position kept changing under this exec; try again".into()))
    }

    /// A new launch's id, the value of its `x-switchyard-tag-launch` header: the engine clock's
    /// milliseconds, this process and how many launches this `exec` made before.
    pub fn exec_launch_id(&self, before: usize) -> String {
        launch_id(self.now_ms(), std::process::id(), before)
    }

    /// The limit refusal the relay recorded for launch `launch` (its tag value) on `profile_id`
    /// since `since_ms`, if any. Rows reach the ledger within a moment of the answer: it is
    /// read again every 100 ms for up to `settle` until one of the launch's rows is there.
    pub async fn exec_limit_refusal(
        &self,
        slug: &str,
        profile_id: &str,
        launch: &str,
        since_ms: i64,
        settle: Duration,
    ) -> Result<Option<LimitRefusal>, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let started = std::time::Instant::now();
        let rows = loop {
            let rows = {
                let mut conn = self.store.acquire().await?;
                attempts::tagged_since(&mut conn, &connection.id, profile_id, since_ms, LAUNCH_TAG, launch).await?
            };
            if rows.iter().any(is_limit) || started.elapsed() >= settle {
                break rows;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let Some(row) = rows.into_iter().find(is_limit) else { return Ok(None) };
        let board = self.stored_board().await?;
        let until = board.blocking_cooldown(profile_id, row.model.as_deref().unwrap_or(""), self.now_ms());
        Ok(Some(LimitRefusal {
            kind: row.failure_kind.unwrap_or_default(),
            status: row.status,
            until: until.and_then(|(_, u)| u).map(rfc3339),
        }))
    }

    /// Why `row` cannot take a launch now (`None`: it can).
    fn unfit(&self, row: &ProfileRow, board: &CircuitBoard, now_ms: i64) -> Option<String> {
        if !row.enabled {
            return Some("is disabled".into());
        }
        let present = self.login_presence(row) == switchyard_core::states::CredentialPresence::Present;
        let health = credential_health(&credential_facts(row), present, now_ms);
        if !health.usable() {
            let slug_hint = health.reason.unwrap_or("sign in again with switchyard profile login");
            return Some(format!("is {} ({slug_hint})", health.state));
        }
        match board.blocking_cooldown(&row.id, "", now_ms) {
            Some((kind, Some(until))) => Some(format!("is cooling until {} ({kind})", rfc3339(until))),
            Some((kind, None)) => Some(format!("is refused until it is signed in again ({kind})")),
            None => None,
        }
    }

    fn exec_account_of(&self, row: &ProfileRow, client: OfficialClient) -> ExecAccount {
        ExecAccount {
            profile_id: row.id.clone(),
            label: row.label.clone(),
            client,
            config_dir: self.config_dir(&row.id),
            env_var: client.config_dir_var(),
        }
    }

    /// The circuits as the store has them now (a relay in another process writes them through).
    async fn stored_board(&self) -> Result<CircuitBoard, EngineError> {
        let mut conn = self.store.acquire().await?;
        let stored = crate::context::stored_circuits(&mut conn).await?;
        Ok(CircuitBoard::restore(CooldownPolicy::default(), stored))
    }
}

/// A launch id: digits and dashes, short, so a valid tag value (core `tag.rs`).
fn launch_id(now_ms: i64, pid: u32, before: usize) -> String {
    format!("{now_ms}-{pid}-{before}")
}

/// An external login of `client`.
fn is_login_of(row: &ProfileRow, client: OfficialClient) -> bool {
    credential_facts(row).kind == ProfileKind::External && client_of(row) == Some(client)
}

/// A failure that says the account hit its limit.
fn is_limit(row: &switchyard_store::attempts::AttemptRow) -> bool {
    let kind = row.failure_kind.as_deref().and_then(|k| k.parse::<FailureKind>().ok());
    matches!(kind, Some(FailureKind::RateLimited | FailureKind::QuotaExhausted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_id_is_a_tag_value_the_relay_accepts() {
        let launch = launch_id(1_764_683_000_123, 4_194_304, 3);
        let header = format!("x-switchyard-tag-{LAUNCH_TAG}");
        let tags = switchyard_core::tag::read_tags([(header.as_str(), launch.as_bytes())]);
        assert!(tags.as_ref().is_ok_and(|t| t.get(LAUNCH_TAG) == Some(&launch)), "accepted as a tag: {tags:?}");
    }

    #[test]
    fn positions_read_back_as_written() {
        use crate::settings::Stored;
        let p = ExecPosition(vec![("p_a".into(), -2), ("p_b".into(), 2)]);
        assert_eq!(ExecPosition::read(&p.write()), Some(p), "a position round-trips");
        assert_eq!(ExecPosition::read(""), Some(ExecPosition::default()), "empty is the start");
        assert_eq!(ExecPosition::read("p_a=x"), None, "unreadable text reads as nothing (the default)");
    }
}
