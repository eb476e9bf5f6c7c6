//! Prompt-cache hit ratios and traffic shares as front ends show them (docs/interface.md,
//! "Cache accounting"): per profile over the ledger — `routing status`'s `cache` (cache reads
//! against the whole prompt) and `traffic` (its share of the conversations and of the prompt
//! tokens, the app's share chart) — and the whole prompt of each attempt (`switchyard
//! attempts`'s `prompt_tokens`). The ledger keeps counts as each provider states them;
//! `switchyard_core::prompt_cache` puts both dialects on one scale.

use std::collections::HashMap;

use serde::Serialize;
use specta::Type;
use switchyard_core::connection::Protocol;
use switchyard_core::prompt_cache::CacheTally;
use switchyard_store::attempts;
use switchyard_store::connections::ConnectionRow;

use crate::context::Context;
use crate::error::EngineError;

/// Cache reads against the whole prompt, summed over successful attempts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Type)]
pub struct CacheView {
    /// Prompt tokens read from the provider's cache.
    #[specta(type = f64)]
    pub read_tokens: i64,
    /// Prompt tokens in all, cached or not (Anthropic: input + cache read + cache write;
    /// OpenAI: the prompt tokens, which include the cached ones).
    #[specta(type = f64)]
    pub input_tokens: i64,
    /// `read_tokens / input_tokens`; `None` when no prompt tokens were recorded.
    pub hit_ratio: Option<f64>,
}

/// A profile's part of the connection's traffic in the ledger.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Type)]
pub struct TrafficView {
    /// Conversations whose oldest retained attempt this profile served.
    #[specta(type = f64)]
    pub conversations: i64,
    /// Its share of the connection's conversations (0 when there are none).
    pub conversation_share: f64,
    /// Prompt tokens of its successful attempts (`CacheView::input_tokens`).
    #[specta(type = f64)]
    pub prompt_tokens: i64,
    /// Its share of the connection's prompt tokens (0 when there are none).
    pub token_share: f64,
}

// The ratios and shares are quotients of counts with non-zero divisors (else 0 or `None`):
// never NaN.
impl Eq for CacheView {}
impl Eq for TrafficView {}

impl From<CacheTally> for CacheView {
    fn from(t: CacheTally) -> Self {
        CacheView { read_tokens: t.read_tokens, input_tokens: t.input_tokens, hit_ratio: t.hit_ratio() }
    }
}

/// The connection's dialect (`anthropic` unless it says `openai`).
pub(crate) fn protocol_of(connection: &ConnectionRow) -> Protocol {
    connection.protocol.parse().unwrap_or(Protocol::Anthropic)
}

/// Per profile id: its cache counts and its traffic share.
pub(crate) type ProfileCounts = HashMap<String, (CacheView, TrafficView)>;

impl Context {
    /// Per profile id, the cache counts of its successful attempts in the ledger and its
    /// share of the conversations and prompt tokens (two aggregate queries, no row read).
    pub(crate) async fn counts_by_profile(&self, connection: &ConnectionRow) -> Result<ProfileCounts, EngineError> {
        let protocol = protocol_of(connection);
        let mut conn = self.store.acquire().await?;
        let totals = attempts::cache_totals(&mut conn, &connection.id).await?;
        let openers = attempts::conversation_openers(&mut conn, &connection.id).await?;
        drop(conn);
        let mut out: ProfileCounts = HashMap::new();
        for t in totals {
            let mut tally = CacheTally::default();
            tally.add(protocol, Some(t.input_tokens), Some(t.cache_read_tokens), Some(t.cache_write_tokens));
            let entry = out.entry(t.profile_id).or_default();
            entry.0 = CacheView::from(tally);
            entry.1.prompt_tokens = tally.input_tokens;
        }
        for (profile, n) in openers {
            out.entry(profile).or_default().1.conversations = n;
        }
        let conversations: i64 = out.values().map(|(_, t)| t.conversations).sum();
        let tokens: i64 = out.values().map(|(_, t)| t.prompt_tokens).sum();
        let share = |part: i64, whole: i64| if whole > 0 { part as f64 / whole as f64 } else { 0.0 };
        for (_, t) in out.values_mut() {
            t.conversation_share = share(t.conversations, conversations);
            t.token_share = share(t.prompt_tokens, tokens);
        }
        Ok(out)
    }
}
