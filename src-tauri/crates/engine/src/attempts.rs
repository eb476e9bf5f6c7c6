//! The attempt ledger as front ends list it (`switchyard attempts`, the Activity view).

use serde::Serialize;
use specta::Type;
use switchyard_store::attempts;

use crate::clock::rfc3339;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::views::small;

/// One physical attempt as `switchyard attempts` shows it (docs/interface.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct AttemptView {
    pub at: String,
    pub turn: String,
    pub attempt: i32,
    /// Stable profile id (never the label).
    pub profile: String,
    pub reason: String,
    pub model: Option<String>,
    pub status: Option<i32>,
    pub failure_kind: Option<String>,
    pub scope: Option<String>,
    pub ttfb_ms: Option<i32>,
    pub duration_ms: Option<i32>,
    pub input_tokens: Option<i32>,
    pub output_tokens: Option<i32>,
    /// The client session the attempt belongs to (a hash, never the client's raw id).
    pub session: Option<String>,
    /// The conversation the attempt belongs to (a hash, never the client's raw id).
    pub conversation: Option<String>,
    /// Why this turn moved its conversation off its key (`excluded:<exclusion>`,
    /// `unavailable` or `removed`); `None` when it did not move.
    pub moved: Option<String>,
    /// Input tokens read from the provider's prompt cache, as reported.
    pub cache_read_tokens: Option<i32>,
    /// Input tokens written to the provider's prompt cache, as reported (Anthropic only).
    pub cache_write_tokens: Option<i32>,
}

impl Engine {
    /// The newest `limit` attempts of a connection, newest first.
    pub async fn attempts(&self, slug: &str, limit: i64) -> Result<Vec<AttemptView>, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let mut conn = self.store.acquire().await?;
        let rows = attempts::for_connection(&mut conn, &connection.id, limit.clamp(1, 10_000)).await?;
        let opt = |v: Option<i64>| v.map(small);
        Ok(rows
            .into_iter()
            .map(|r| AttemptView {
                at: rfc3339(r.at_ms),
                turn: r.turn,
                attempt: small(r.attempt),
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
            })
            .collect())
    }
}
