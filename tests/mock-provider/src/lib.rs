//! A scripted fake LLM provider speaking the OpenAI, Anthropic and Gemini HTTP shapes, for tests and
//! benchmarks: each test key follows a [`KeyScript`] (ok, 429, quota, 401, forbidden model,
//! 5xx, overloaded, slow, a stream that dies or errs, no listing, sequences; how streams are
//! cut, pinged and compressed; a tool call before the reply; limit headers on successes;
//! account-bound state: response ids, encrypted reasoning, thinking signatures; Anthropic
//! prompt caching in usage; subscription windows on successes and a spent window's, a
//! Claude-Code-only and an extra-usage refusal), every
//! request is counted and recorded. No routing logic lives here: it fakes the provider only.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use switchyard_mock_provider::{Behaviour, KeyScript, MockProvider};
//! let mock = MockProvider::start().await?;
//! mock.set_key("sk-a", KeyScript::new(["gpt-4o"]).behaviour(Behaviour::rate_limited(20)));
//! // point a client at mock.base_url() ...
//! assert_eq!(mock.hits("sk-a"), 0);
//! mock.shutdown().await
//! # }
//! ```

mod account;
mod anthropic;
mod cache;
mod fault;
mod gemini;
mod in_flight;
mod oauth;
mod openai;
mod playbook;
mod quota;
mod record;
mod reply;
mod responses;
mod script;
mod server;
mod sse;
mod subscription;
mod tool;
mod wire;

pub use axum::http::{HeaderMap, Method};
pub use bytes::Bytes;
pub use oauth::{OauthConfig, RefreshFault};
pub use quota::Quota;
pub use record::RecordedRequest;
pub use script::{
    Behaviour, Chunking, GeminiRefusal, KeyScript, PromptCache, ScriptFile, ToolCall, Wire, DEFAULT_REPLY,
};
pub use server::MockProvider;
pub use subscription::{LimitWindow, ResetAt, Subscription, UsageWindow};
