//! Prompt-cache accounting per dialect (docs/design.md section 6, "Cache accounting"). The
//! ledger keeps each attempt's counts as the provider states them, and the dialects count
//! differently: Anthropic's `input_tokens` excludes the tokens read from and written to the
//! cache (`cache_read_input_tokens`, `cache_creation_input_tokens` come on top), OpenAI's
//! `prompt_tokens` / `input_tokens` include the cached ones (`cached_tokens` is a part of
//! them; no writes are reported). [`prompt_tokens`] turns either into the whole prompt, so
//! the cache hit ratio (`cache_read / prompt`) and the token load mean the same under both.

use crate::connection::Protocol;

/// The whole prompt of one attempt: every input token the provider processed, cached or not.
/// `None` when the provider reported no input count at all.
pub fn prompt_tokens(protocol: Protocol, input: Option<i64>, read: Option<i64>, write: Option<i64>) -> Option<i64> {
    match protocol {
        Protocol::Anthropic => {
            if input.is_none() && read.is_none() && write.is_none() {
                return None;
            }
            Some(input.unwrap_or(0).max(0) + read.unwrap_or(0).max(0) + write.unwrap_or(0).max(0))
        }
        // Gemini's `promptTokenCount` includes `cachedContentTokenCount`, as OpenAI's does.
        Protocol::Openai | Protocol::Gemini => input.map(|i| i.max(0)),
    }
}

/// The tokens an attempt sent that the cache did not serve (uncached input plus cache
/// writes): what a key switch re-sends. `None` when no input count was reported.
pub fn uncached_tokens(protocol: Protocol, input: Option<i64>, read: Option<i64>, write: Option<i64>) -> Option<i64> {
    prompt_tokens(protocol, input, read, write).map(|p| (p - read.unwrap_or(0).max(0)).max(0))
}

/// Cache reads over prompt tokens, summed over a set of attempts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheTally {
    /// Tokens read from the prompt cache.
    pub read_tokens: i64,
    /// Prompt tokens in all (cached or not, as [`prompt_tokens`] counts them).
    pub input_tokens: i64,
}

impl CacheTally {
    /// Adds one attempt's counts.
    pub fn add(&mut self, protocol: Protocol, input: Option<i64>, read: Option<i64>, write: Option<i64>) {
        if let Some(p) = prompt_tokens(protocol, input, read, write) {
            self.input_tokens += p;
            self.read_tokens += read.unwrap_or(0).max(0).min(p);
        }
    }

    /// `read_tokens / input_tokens`; `None` when no prompt tokens were counted.
    pub fn hit_ratio(&self) -> Option<f64> {
        (self.input_tokens > 0).then(|| self.read_tokens as f64 / self.input_tokens as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_input_excludes_cache_tokens_openai_input_includes_them() {
        assert_eq!(prompt_tokens(Protocol::Anthropic, Some(100), Some(900), Some(50)), Some(1050), "Anthropic adds");
        assert_eq!(prompt_tokens(Protocol::Openai, Some(1000), Some(900), None), Some(1000), "OpenAI includes");
        assert_eq!(uncached_tokens(Protocol::Anthropic, Some(100), Some(900), Some(50)), Some(150), "input + write");
        assert_eq!(uncached_tokens(Protocol::Openai, Some(1000), Some(900), None), Some(100), "prompt - cached");
        assert_eq!(prompt_tokens(Protocol::Openai, None, Some(5), None), None, "no input count, no prompt");
        let mut t = CacheTally::default();
        assert_eq!(t.hit_ratio(), None, "nothing counted: no ratio");
        t.add(Protocol::Anthropic, Some(100), Some(900), Some(0));
        t.add(Protocol::Openai, Some(1000), Some(500), None);
        assert_eq!((t.read_tokens, t.input_tokens), (1400, 2000), "both dialects summed on one scale");
        assert_eq!(t.hit_ratio(), Some(0.7), "1400 / 2000");
    }
}
