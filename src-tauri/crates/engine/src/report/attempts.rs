//! The attempt ledger as front ends list it (`switchyard attempts`, the Activity view) and
//! export it (`--format jsonl`: every row since a time, page by page, oldest first). Rows
//! carry no secret and no prompt text; the profile's label is there for tables but never
//! serialised; tags are the caller's, checked on the way in.

pub use crate::views::AttemptView;

use std::collections::HashMap;

use switchyard_core::connection::Protocol;
use switchyard_core::prompt_cache::prompt_tokens;
use switchyard_core::tag::parse_tags_json;
use switchyard_store::attempts::{self, AttemptRow};
use switchyard_store::{profiles, SqliteConnection};

use crate::clock::rfc3339;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::views::small;

/// Rows per page of the export.
const EXPORT_PAGE: i64 = 1_000;

impl Engine {
    /// The newest `limit` attempts of a connection at or after `since` (RFC 3339 or `Nd`),
    /// newest first.
    pub async fn attempts_since(&self, slug: &str, since: &str, limit: i64) -> Result<Vec<AttemptView>, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let since_ms = crate::report::time_zone::parse_since(since, self.now_ms(), &self.zone().await?)?;
        let mut conn = self.store.acquire().await?;
        let rows = attempts::for_connection_since(&mut conn, &connection.id, since_ms, limit.clamp(1, 10_000)).await?;
        let labels = profile_labels(&mut conn, &connection.id).await?;
        let protocol = crate::views::protocol_of(&connection);
        Ok(rows.into_iter().map(|r| attempt_view(&connection.slug, protocol, &labels, r)).collect())
    }

    /// Every attempt of a connection at or after `since` (RFC 3339 or `Nd`; `None`: all),
    /// oldest first, handed to `sink` one at a time as pages of 1 000 are read (no limit, and
    /// never the whole ledger in memory). `sink` returns `false` to stop (a closed pipe).
    /// Returns how many rows it was given.
    pub async fn attempts_export(
        &self,
        slug: &str,
        since: Option<&str>,
        mut sink: impl FnMut(AttemptView) -> bool,
    ) -> Result<u64, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let since_ms = match since {
            Some(s) => crate::report::time_zone::parse_since(s, self.now_ms(), &self.zone().await?)?,
            None => i64::MIN,
        };
        let (start, labels) = {
            let mut conn = self.store.acquire().await?;
            let start = attempts::page_start(&mut conn, &connection.id, since_ms).await?;
            (start, profile_labels(&mut conn, &connection.id).await?)
        };
        let (Some(mut after), mut sent) = (start, 0u64) else { return Ok(0) };
        loop {
            let page = {
                let mut conn = self.store.acquire().await?;
                attempts::page_since(&mut conn, &connection.id, since_ms, after, EXPORT_PAGE).await?
            };
            let full = page.len() as i64 == EXPORT_PAGE;
            let last = page.last().map(|r| r.id);
            for r in page {
                sent += 1;
                if !sink(attempt_view(&connection.slug, crate::views::protocol_of(&connection), &labels, r.row)) {
                    return Ok(sent);
                }
            }
            match last {
                Some(id) if full => after = id,
                _ => return Ok(sent),
            }
        }
    }

    /// The newest `limit` attempts of a connection, newest first.
    pub async fn attempts(&self, slug: &str, limit: i64) -> Result<Vec<AttemptView>, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let mut conn = self.store.acquire().await?;
        let rows = attempts::for_connection(&mut conn, &connection.id, limit.clamp(1, 10_000)).await?;
        let labels = profile_labels(&mut conn, &connection.id).await?;
        let protocol = crate::views::protocol_of(&connection);
        Ok(rows.into_iter().map(|r| attempt_view(&connection.slug, protocol, &labels, r)).collect())
    }
}

/// The labels of a connection's profiles now, by id (a removed profile has none).
pub(crate) async fn profile_labels(
    conn: &mut SqliteConnection,
    connection_id: &str,
) -> Result<HashMap<String, String>, EngineError> {
    Ok(profiles::for_connection(conn, connection_id).await?.into_iter().map(|p| (p.id, p.label)).collect())
}

fn attempt_view(slug: &str, protocol: Protocol, labels: &HashMap<String, String>, r: AttemptRow) -> AttemptView {
    let opt = |v: Option<i64>| v.map(small);
    AttemptView {
        at: rfc3339(r.at_ms),
        connection: slug.to_string(),
        turn: r.turn,
        attempt: small(r.attempt),
        label: labels.get(&r.profile_id).cloned(),
        profile: r.profile_id,
        reason: r.reason,
        model: r.model,
        status: opt(r.status),
        failure_kind: r.failure_kind,
        scope: r.scope,
        ttfb_ms: opt(r.ttfb_ms),
        duration_ms: opt(r.duration_ms),
        input_tokens: opt(r.input_tokens),
        output_tokens: opt(r.output_tokens),
        session: r.session,
        conversation: r.conversation,
        moved: r.moved,
        cache_read_tokens: opt(r.cache_read_tokens),
        cache_write_tokens: opt(r.cache_write_tokens),
        prompt_tokens: opt(prompt_tokens(protocol, r.input_tokens, r.cache_read_tokens, r.cache_write_tokens)),
        tags: parse_tags_json(r.tags.as_deref()),
        reference_cost_usd: r.reference_cost_micro_usd.map(|micro| micro as f64 / 1e6),
        user: r.user_name,
    }
}
