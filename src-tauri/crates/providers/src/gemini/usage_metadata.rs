//! Gemini's `usageMetadata`: `promptTokenCount` (includes `cachedContentTokenCount`, as
//! OpenAI's prompt count includes its cached tokens), `candidatesTokenCount`,
//! `thoughtsTokenCount` (billed as output, reported apart from the candidates), and
//! `cachedContentTokenCount`. Every streamed chunk carries the counts so far; the last wins.
//! Read leniently, without building a `Value` (`lenient.rs`).

use serde::de::{IgnoredAny, MapAccess};
use serde::Deserialize;

use crate::lenient::{deserialize_leniently, Shapes};
use crate::usage::Usage;

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

#[derive(Default)]
struct Count(Option<i64>);

impl Shapes<'_> for Count {
    fn integer(v: Option<i64>) -> Count {
        Count(v)
    }
}

deserialize_leniently!(UsageMetadata, Count);

#[cfg(test)]
mod tests {
    use super::*;

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
