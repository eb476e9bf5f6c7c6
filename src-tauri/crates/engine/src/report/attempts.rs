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
use switchyard_store::{profiles, AnyConnection};

use crate::clock::rfc3339;
use crate::context::Context;
use crate::error::EngineError;
use crate::views::small;

/// Rows per page of the export.
const EXPORT_PAGE: i64 = 1_000;

impl Context {
    /// The newest `limit` attempts of a connection at or after `since` (RFC 3339 or `Nd`),
    /// newest first.
    pub async fn attempts_since(&self, slug: &str, since: &str, limit: i64) -> Result<Vec<AttemptView>, EngineError> {
        let since_ms = crate::report::time_zone::parse_since(since, self.now_ms(), &self.zone().await?)?;
        self.ledger_rows(slug, since_ms, limit).await
    }

    /// The newest `limit` rows at or after `since_ms` of a connection (its own and those of
    /// its turns that fell back elsewhere) or of a pool, named.
    async fn ledger_rows(&self, slug: &str, since_ms: i64, limit: i64) -> Result<Vec<AttemptView>, EngineError> {
        let (source, names) = self.ledger_source(slug).await?;
        let mut conn = self.store.acquire().await?;
        let rows = match &source {
            Source::Connection(id) => {
                attempts::for_connection_since(&mut conn, id, since_ms, limit.clamp(1, 10_000)).await?
            }
            Source::Pool(id) => attempts::for_pool(&mut conn, id, since_ms, limit.clamp(1, 10_000)).await?,
        };
        Ok(rows.into_iter().map(|r| names.view(r)).collect())
    }

    /// Where `slug`'s rows are (a connection, else a pool) and the names its rows use.
    async fn ledger_source(&self, slug: &str) -> Result<(Source, Names), EngineError> {
        let (source, pool) = match self.connection_by_slug(slug).await {
            Ok(c) => (Source::Connection(c.id), None),
            Err(EngineError::NotFound { .. }) if self.is_pool(slug).await? => {
                let row = self.pool_row(slug).await?;
                let members = crate::config::pools::decode_members(&row);
                (Source::Pool(row.id.clone()), Some((row.id, row.name, members)))
            }
            Err(e) => return Err(e),
        };
        let mut conn = self.store.acquire().await?;
        let mut names = Names { pool, ..Names::default() };
        for c in switchyard_store::connections::list(&mut conn).await? {
            names.labels.extend(profile_labels(&mut conn, &c.id).await?);
            names.protocols.insert(c.id.clone(), crate::views::protocol_of(&c));
            names.slugs.insert(c.id, c.slug);
        }
        Ok((source, names))
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
        let since_ms = match since {
            Some(s) => crate::report::time_zone::parse_since(s, self.now_ms(), &self.zone().await?)?,
            None => i64::MIN,
        };
        let (source, names) = self.ledger_source(slug).await?;
        let start = match &source {
            Source::Connection(id) => {
                let mut conn = self.store.acquire().await?;
                attempts::page_start(&mut conn, id, since_ms).await?
            }
            Source::Pool(_) => Some(0),
        };
        let (Some(mut after), mut sent) = (start, 0u64) else { return Ok(0) };
        loop {
            let page = {
                let mut conn = self.store.acquire().await?;
                match &source {
                    Source::Connection(id) => attempts::page_since(&mut conn, id, since_ms, after, EXPORT_PAGE).await?,
                    Source::Pool(id) => attempts::pool_page_since(&mut conn, id, since_ms, after, EXPORT_PAGE).await?,
                }
            };
            let full = page.len() as i64 == EXPORT_PAGE;
            let last = page.last().map(|r| r.id);
            for r in page {
                sent += 1;
                if !sink(names.view(r.row)) {
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
        self.ledger_rows(slug, i64::MIN, limit).await
    }
}

/// Where a listing's rows are.
enum Source {
    Connection(String),
    Pool(String),
}

/// What rows are named by: connection slugs and dialects, profile labels, the pool and its
/// members (a pool's listing).
#[derive(Default)]
struct Names {
    slugs: HashMap<String, String>,
    protocols: HashMap<String, Protocol>,
    labels: HashMap<String, String>,
    pool: Option<(String, String, Vec<crate::config::pools::StoredMember>)>,
}

impl Names {
    fn view(&self, r: AttemptRow) -> AttemptView {
        let slug = self.slugs.get(&r.connection_id).cloned().unwrap_or_else(|| r.connection_id.clone());
        let protocol = self.protocols.get(&r.connection_id).copied().unwrap_or(Protocol::Openai);
        let pool = r.pool_id.as_ref().map(|id| match &self.pool {
            Some((pid, name, _)) if pid == id => name.clone(),
            _ => id.clone(),
        });
        let member = self.pool.as_ref().filter(|(pid, _, _)| r.pool_id.as_ref() == Some(pid)).and_then(|(_, _, ms)| {
            ms.iter()
                .find(|m| m.connection_id == r.connection_id && (m.model.is_none() || m.model == r.model))
                .map(|m| m.member(&[]).key())
        });
        let origin = r.origin_id.as_ref().map(|id| self.slugs.get(id).cloned().unwrap_or_else(|| id.clone()));
        let mut view = attempt_view(&slug, protocol, &self.labels, r);
        view.pool = pool;
        view.member = member;
        view.origin = origin;
        view
    }
}

/// The labels of a connection's profiles now, by id (a removed profile has none).
pub(crate) async fn profile_labels(
    conn: &mut AnyConnection,
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
        pool: None,
        member: None,
        origin: None,
        limit: r.limit_id,
    }
}
