//! One physical attempt as `switchyard attempts` and the Activity view show it.

use std::collections::BTreeMap;

use serde::Serialize;
use specta::Type;

/// One physical attempt as `switchyard attempts` shows it (docs/interface.md).
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct AttemptView {
    pub at: String,
    /// The connection's slug.
    pub connection: String,
    pub turn: String,
    pub attempt: i32,
    /// Stable profile id (never the label).
    pub profile: String,
    /// The profile's label now, for tables; `None` when the profile has been removed since.
    /// Not serialised: JSON and IPC rows carry the id only (docs/interface.md, `Attempt`).
    #[serde(skip)]
    pub label: Option<String>,
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
    /// The whole prompt, cached or not, on one scale for both dialects (Anthropic: input +
    /// cache read + cache write; OpenAI: input, which includes the cached tokens).
    pub prompt_tokens: Option<i32>,
    /// What the official CLI reported the tokens would cost at list price (USD; attempts the
    /// CLI backend served, `None` otherwise): a reference figure, never counted as a cost (a
    /// subscription is not billed per token). Not in the desktop's bindings yet.
    #[specta(skip)]
    pub reference_cost_usd: Option<f64>,
    /// The caller's tags (`x-switchyard-tag-NAME: value`), by name; empty without tags.
    pub tags: BTreeMap<String, String>,
    /// The relay user the attempt was made for (a name given by `relay users add`, never the
    /// token); `None` for the install's own token. Not in the desktop's bindings yet.
    #[specta(skip)]
    pub user: Option<String>,
    /// The pool the attempt was routed through (its name); `None` outside pools. Not in the
    /// desktop's bindings yet (nor `member`, `origin`).
    #[specta(skip)]
    pub pool: Option<String>,
    /// The pool member that made it (`CONN` or `CONN=MODEL`), in a pool's listing.
    #[specta(skip)]
    pub member: Option<String>,
    /// The connection the client named when the attempt went to another one (a fallback hop):
    /// `attempts prim` shows that a turn went to `spare`.
    #[specta(skip)]
    pub origin: Option<String>,
    /// The limit a limit refusal names (its row made no attempt upstream).
    #[specta(skip)]
    pub limit: Option<String>,
}
