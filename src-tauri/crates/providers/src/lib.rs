//! Protocol dialects of Switchyard: classification of a provider's error answer (status,
//! headers, JSON error body) into the failure taxonomy of `switchyard_core::routing`, as
//! data tables per dialect, cooldown ends from `Retry-After`, rate-limit reset headers, a
//! spent subscription window's reset or the body's reset, and quota readings from limit
//! headers (`quota/`, tables per dialect too, with window kinds and forecasts). Message wording
//! is read only by the rows of refusals that carry no structured field, and only to keep them
//! from failing over (request scope, `rule.rs`). Classification and quota reading are pure (the clock is passed in);
//! `discovery` and `endpoint` make the HTTP calls of test/discovery with reqwest.

pub mod anthropic;
pub mod chat_chunk;
pub mod classify;
pub mod claude_cli;
pub mod content_coding;
pub mod dialect;
pub mod discovery;
pub mod endpoint;
pub mod gemini;
pub mod headers;
pub mod hint;
pub mod lenient;
pub mod openai;
pub mod quota;
pub mod response_id;
pub mod rule;
pub mod sse;
pub mod stream_watch;
pub mod usage;

pub use classify::{classify, table, Classified};
pub use headers::{Agreed, HeaderSource};
pub use hint::{parse_duration, retry_at_ms};
pub use quota::{read_quota, QuotaWindow, WindowKind};
pub use rule::{Answer, Rule, StatusMatch, Until};
