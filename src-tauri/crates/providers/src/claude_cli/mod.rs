//! The official Claude Code CLI in print mode as a backend of Anthropic Messages requests
//! (docs/design.md, "The CLI backend"): what of a request print mode carries exactly
//! (`prompt.rs`: one user turn of text, a system prompt, `max_tokens`; everything else is
//! refused, never approximated), how its `--output-format json` result reads (`result.rs`),
//! which results are which failures (`rules.rs`: a data table, like the dialects'), when a
//! usage limit it reports resets (`reset.rs`), and the Messages answer made of a finished
//! result (`message.rs`: a JSON body, or the SSE events of a finished answer). Pure: no
//! process is started here (the relay's `cli_backend/` does that), the clock is passed in.

pub mod message;
pub mod prompt;
pub mod reset;
pub mod result;
pub mod rules;

pub use message::{message_events, message_json};
pub use prompt::{cli_prompt, plain_model, CliPrompt, NotCarried};
pub use result::{read_result, CliAnswer, CliResult};
pub use rules::{refusal_of, CliRefusal, CliRule, CLI_RULES};

/// The reason a request the CLI backend cannot carry is refused with (400, Anthropic's error
/// shape, `x-switchyard-reason`).
pub const NOT_SUPPORTED: &str = "not_supported_by_cli_backend";
