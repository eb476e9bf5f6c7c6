//! The Gemini dialect (`/v1beta/models/{model}:generateContent`, `:streamGenerateContent`,
//! `:countTokens`, `GET /v1beta/models`): its classification table and the structured signal
//! the table reads from `error.details[]` (`rules`), the Pacific-midnight reset of a per-day
//! quota (`pacific`), the role of a stream chunk (`chunk`), the JSON-array stream splitter used
//! without `alt=sse` (`array_stream`), (its `usageMetadata` is read with every dialect's usage: `usage.rs`), the
//! model in the path (`path`), and the quota states learned from refusals (`learned`). The relay's routes and key injection are not here.

pub mod array_stream;
pub mod chunk;
pub mod learned;
pub mod pacific;
pub mod path;
pub mod rules;

pub use rules::RULES;
