//! Token usage from provider answers: a JSON body (chat completions, responses, messages)
//! or the usage-bearing stream events (`usage` chunks, `message_start`/`message_delta`,
//! `response.completed`), including the prompt-cache counts each dialect reports: Anthropic
//! `cache_read_input_tokens` / `cache_creation_input_tokens`, chat completions
//! `prompt_tokens_details.cached_tokens`, Responses `input_tokens_details.cached_tokens`
//! (OpenAI reports no cache writes), Gemini `usageMetadata` ([`UsageMetadata`]: `promptTokenCount` includes
//! `cachedContentTokenCount`, `thoughtsTokenCount` is billed as output beside `candidatesTokenCount`). Counts are recorded as the provider states them: Anthropic's
//! `input_tokens` excludes cached tokens, OpenAI's `prompt_tokens` includes them. Pure.

use serde::de::{IgnoredAny, MapAccess};
use serde::Deserialize;

use crate::lenient::{deserialize_leniently, Shapes};

/// Tokens of one attempt; `None` when the provider did not say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    /// Input tokens read from the provider's prompt cache.
    pub cache_read_tokens: Option<i64>,
    /// Input tokens written to the provider's prompt cache (Anthropic only).
    pub cache_write_tokens: Option<i64>,
}

impl Usage {
    /// Keeps known values, letting later reports override earlier ones.
    pub fn merge(&mut self, other: Usage) {
        if other.input_tokens.is_some() {
            self.input_tokens = other.input_tokens;
        }
        if other.output_tokens.is_some() {
            self.output_tokens = other.output_tokens;
        }
        if other.cache_read_tokens.is_some() {
            self.cache_read_tokens = other.cache_read_tokens;
        }
        if other.cache_write_tokens.is_some() {
            self.cache_write_tokens = other.cache_write_tokens;
        }
    }
}

/// The parts of an answer or event that can carry usage. Everything else (choices, content)
/// is skipped by the parser, and the usage object is read into its counts directly — no
/// `Value` is built: an answer is parsed once per relayed request (a `Value` for the usage
/// object made this 9.7k of the relay's ~139k instructions per one-line request).
#[derive(Deserialize)]
struct Carriers {
    #[serde(default)]
    usage: Counts,
    /// Anthropic `message_start`: `{"message": {"usage": {...}}}`.
    #[serde(default)]
    message: Option<UsageOnly>,
    /// Responses API `response.completed`: `{"response": {"usage": {...}}}`.
    #[serde(default)]
    response: Option<UsageOnly>,
    /// Gemini: `{"usageMetadata": {...}}` on every chunk.
    #[serde(default, rename = "usageMetadata")]
    usage_metadata: Option<UsageMetadata>,
}

/// Only an object's `usage` counts: a whole answer, or the object an event nests its usage in.
#[derive(Deserialize)]
struct UsageOnly {
    #[serde(default)]
    usage: Counts,
    /// Gemini's whole answer: `usageMetadata` beside the candidates.
    #[serde(default, rename = "usageMetadata")]
    usage_metadata: Option<UsageMetadata>,
}

impl UsageOnly {
    fn usage(&self) -> Usage {
        let mut u = self.usage.usage();
        if let Some(m) = self.usage_metadata {
            u.merge(m.usage());
        }
        u
    }
}

/// A usage object's counts. Read leniently, as a reader of the document would: a usage
/// that is not an object has no counts, a count that is not an integer is unknown, nested
/// details that are not objects say nothing, and a repeated key counts as its last value.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    input_tokens: Option<i64>,
    prompt_tokens: Option<i64>,
    output_tokens: Option<i64>,
    completion_tokens: Option<i64>,
    cache_read_input_tokens: Option<i64>,
    cache_creation_input_tokens: Option<i64>,
    /// `prompt_tokens_details.cached_tokens`.
    prompt_cached: Option<i64>,
    /// `input_tokens_details.cached_tokens`.
    input_cached: Option<i64>,
}

impl Counts {
    fn usage(self) -> Usage {
        Usage {
            input_tokens: self.input_tokens.or(self.prompt_tokens),
            output_tokens: self.output_tokens.or(self.completion_tokens),
            cache_read_tokens: self.cache_read_input_tokens.or(self.prompt_cached).or(self.input_cached),
            cache_write_tokens: self.cache_creation_input_tokens,
        }
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum CountField {
    InputTokens,
    PromptTokens,
    OutputTokens,
    CompletionTokens,
    CacheReadInputTokens,
    CacheCreationInputTokens,
    PromptTokensDetails,
    InputTokensDetails,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum DetailField {
    CachedTokens,
    #[serde(other)]
    Other,
}

impl<'de> Shapes<'de> for Counts {
    fn object<A: MapAccess<'de>>(mut map: A) -> Result<Counts, A::Error> {
        let mut c = Counts::default();
        while let Some(field) = map.next_key::<CountField>()? {
            let slot = match field {
                CountField::InputTokens => &mut c.input_tokens,
                CountField::PromptTokens => &mut c.prompt_tokens,
                CountField::OutputTokens => &mut c.output_tokens,
                CountField::CompletionTokens => &mut c.completion_tokens,
                CountField::CacheReadInputTokens => &mut c.cache_read_input_tokens,
                CountField::CacheCreationInputTokens => &mut c.cache_creation_input_tokens,
                CountField::PromptTokensDetails => &mut c.prompt_cached,
                CountField::InputTokensDetails => &mut c.input_cached,
                CountField::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = match field {
                CountField::PromptTokensDetails | CountField::InputTokensDetails => map.next_value::<Cached>()?.0,
                _ => map.next_value::<Count>()?.0,
            };
        }
        Ok(c)
    }
}

/// A `*_tokens_details` object's `cached_tokens`.
#[derive(Default)]
struct Cached(Option<i64>);

impl<'de> Shapes<'de> for Cached {
    fn object<A: MapAccess<'de>>(mut map: A) -> Result<Cached, A::Error> {
        let mut cached = None;
        while let Some(field) = map.next_key::<DetailField>()? {
            match field {
                DetailField::CachedTokens => cached = map.next_value::<Count>()?.0,
                DetailField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Cached(cached))
    }
}

/// A token count: an integer that fits `i64`, or unknown (any other value).
#[derive(Default)]
struct Count(Option<i64>);

impl Shapes<'_> for Count {
    fn integer(v: Option<i64>) -> Count {
        Count(v)
    }
}

deserialize_leniently!(Counts, Cached, Count);

/// Usage in a whole JSON answer (any dialect).
pub fn usage_from_body(body: &[u8]) -> Usage {
    serde_json::from_slice::<UsageOnly>(body).map(|a| a.usage()).unwrap_or_default()
}

/// Usage carried by one stream event's data (any dialect).
pub fn usage_from_event(data: &str) -> Usage {
    if !data.contains("usage") {
        return Usage::default();
    }
    let Ok(c) = serde_json::from_str::<Carriers>(data) else {
        return Usage::default();
    };
    let mut u = c.usage.usage();
    for inner in [c.message, c.response].into_iter().flatten() {
        u.merge(inner.usage());
    }
    if let Some(m) = c.usage_metadata {
        u.merge(m.usage());
    }
    u
}

/// The counts of one `usageMetadata` object; `None` when absent or not an integer.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct UsageMetadata {
    pub prompt: Option<i64>,
    pub candidates: Option<i64>,
    pub cached: Option<i64>,
    pub thoughts: Option<i64>,
}

impl UsageMetadata {
    /// As the ledger counts: output is candidates plus thoughts (both billed as output, as
    /// OpenAI's completion count includes reasoning), input the whole prompt, cache reads the
    /// cached content.
    pub fn usage(self) -> Usage {
        let output = match (self.candidates, self.thoughts) {
            (None, None) => None,
            (c, t) => Some(c.unwrap_or(0).max(0).saturating_add(t.unwrap_or(0).max(0))),
        };
        Usage {
            input_tokens: self.prompt,
            output_tokens: output,
            cache_read_tokens: self.cached,
            cache_write_tokens: None,
        }
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum Field {
    PromptTokenCount,
    CandidatesTokenCount,
    CachedContentTokenCount,
    ThoughtsTokenCount,
    #[serde(other)]
    Other,
}

impl<'de> Shapes<'de> for UsageMetadata {
    fn object<A: MapAccess<'de>>(mut map: A) -> Result<UsageMetadata, A::Error> {
        let mut u = UsageMetadata::default();
        while let Some(field) = map.next_key::<Field>()? {
            let slot = match field {
                Field::PromptTokenCount => &mut u.prompt,
                Field::CandidatesTokenCount => &mut u.candidates,
                Field::CachedContentTokenCount => &mut u.cached,
                Field::ThoughtsTokenCount => &mut u.thoughts,
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = map.next_value::<Count>()?.0;
        }
        Ok(u)
    }
}

deserialize_leniently!(UsageMetadata);

#[cfg(test)]
mod tests {
    use super::*;

    fn io(input: i64, output: i64) -> Usage {
        Usage { input_tokens: Some(input), output_tokens: Some(output), ..Usage::default() }
    }

    #[test]
    fn reads_each_dialects_usage() {
        let chat = usage_from_body(br#"{"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}"#);
        assert_eq!(chat, io(12, 5), "chat completions usage");
        let msg = usage_from_body(br#"{"usage":{"input_tokens":7,"output_tokens":3}}"#);
        assert_eq!(msg, io(7, 3), "messages usage");
        let mut streamed =
            usage_from_event(r#"{"type":"message_start","message":{"usage":{"input_tokens":9,"output_tokens":1}}}"#);
        streamed.merge(usage_from_event(r#"{"type":"message_delta","usage":{"output_tokens":4}}"#));
        assert_eq!(streamed, io(9, 4), "message_delta carries the final output count");
        assert_eq!(usage_from_body(b"not json"), Usage::default(), "unreadable bodies have no usage");
        let odd = usage_from_event(r#"{"usage":null,"message":"text","response":{"usage":{"input_tokens":2}}}"#);
        assert_eq!(odd, Usage::default(), "a carrier of the wrong shape makes the event unreadable, not a panic");
        let nested = usage_from_event(r#"{"usage":7,"response":{"usage":{"input_tokens":2,"output_tokens":1}}}"#);
        assert_eq!(nested, io(2, 1), "a non-object usage is ignored");
        let skipped = usage_from_body(
            br#"{"choices":[{"message":{"content":"usage \"x\"","tool_calls":[{"f":{"a":[1,{"b":null}]}}]}}],"usage":{"prompt_tokens":1,"completion_tokens":2}}"#,
        );
        assert_eq!(skipped, io(1, 2), "nested content is skipped");
    }

    #[test]
    fn reads_each_dialects_prompt_cache_counts() {
        let cache = |read: Option<i64>, write: Option<i64>| (read, write);
        let of = |u: Usage| (u.cache_read_tokens, u.cache_write_tokens);
        let anthropic = usage_from_body(
            br#"{"usage":{"input_tokens":3,"cache_creation_input_tokens":120,"cache_read_input_tokens":4000,"output_tokens":9}}"#,
        );
        assert_eq!(of(anthropic), cache(Some(4000), Some(120)), "Anthropic reports cache reads and writes");
        assert_eq!(anthropic.input_tokens, Some(3), "Anthropic's input count is kept as stated (uncached only)");
        let mut streamed = usage_from_event(
            r#"{"type":"message_start","message":{"usage":{"input_tokens":2,"cache_creation_input_tokens":0,"cache_read_input_tokens":900,"output_tokens":1}}}"#,
        );
        streamed.merge(usage_from_event(r#"{"type":"message_delta","usage":{"output_tokens":7}}"#));
        assert_eq!(of(streamed), cache(Some(900), Some(0)), "message_start's cache counts survive message_delta");
        let chat = usage_from_body(
            br#"{"usage":{"prompt_tokens":1200,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":1024}}}"#,
        );
        assert_eq!(of(chat), cache(Some(1024), None), "chat completions report cached prompt tokens, no writes");
        let chunk = usage_from_event(
            r#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":0}}}"#,
        );
        assert_eq!(of(chunk), cache(Some(0), None), "a streamed usage chunk carries the cached count too");
        let responses = usage_from_event(
            r#"{"type":"response.completed","response":{"usage":{"input_tokens":2048,"input_tokens_details":{"cached_tokens":1920},"output_tokens":3}}}"#,
        );
        assert_eq!(of(responses), cache(Some(1920), None), "Responses report input_tokens_details.cached_tokens");
        let odd = usage_from_body(
            br#"{"usage":{"prompt_tokens":1,"prompt_tokens_details":7,"cache_read_input_tokens":"x"}}"#,
        );
        assert_eq!(of(odd), cache(None, None), "malformed cache fields are unknown, not a panic");
        let none = usage_from_body(br#"{"usage":{"prompt_tokens":1,"completion_tokens":1}}"#);
        assert_eq!(of(none), cache(None, None), "no cache fields: unknown");
    }

    #[test]
    fn counts_thoughts_as_output_and_cached_as_reads() {
        let u: UsageMetadata = serde_json::from_str(
            r#"{"promptTokenCount":1200,"candidatesTokenCount":40,"cachedContentTokenCount":1024,"thoughtsTokenCount":300,"totalTokenCount":1540,"promptTokensDetails":[{"modality":"TEXT","tokenCount":1200}]}"#,
        )
        .unwrap_or_default();
        assert_eq!(
            u.usage(),
            Usage {
                input_tokens: Some(1200),
                output_tokens: Some(340),
                cache_read_tokens: Some(1024),
                cache_write_tokens: None
            },
            "prompt as stated, output = candidates + thoughts, cached content as cache reads"
        );
        let odd: UsageMetadata =
            serde_json::from_str(r#"{"promptTokenCount":"x","thoughtsTokenCount":5}"#).unwrap_or_default();
        assert_eq!(odd.usage().output_tokens, Some(5), "thoughts alone (still thinking)");
        assert_eq!(odd.usage().input_tokens, None, "a count that is no integer is unknown");
    }
}
