//! The failures the mock answers with, independent of dialect; `openai.rs` and
//! `anthropic.rs` render each one as that provider's status, headers and error body.

/// One failure to send back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fault {
    /// No credential header at all.
    MissingKey,
    /// A key the script does not know, or one scripted `unauthorized`.
    InvalidKey {
        key: String,
    },
    RateLimited {
        retry_after_secs: u64,
    },
    QuotaExhausted,
    /// The key may not use this model (scripted `model_forbidden`).
    ModelForbidden {
        model: String,
    },
    /// The model is not in the key's model list.
    ModelNotFound {
        model: String,
    },
    ServerError,
    Overloaded,
    /// `GET /v1/models` on a key scripted `listing_unsupported`.
    ListingUnsupported,
    /// A malformed request (bad JSON, no model, missing required header).
    BadRequest {
        message: String,
    },
    /// A subscription's spent window (`subscription.rs` renders its headers and body).
    UsageLimit {
        window: crate::subscription::LimitWindow,
        reset: crate::subscription::ResetAt,
    },
    /// A subscription token used by a client it was not issued for.
    ClientNotAllowed,
    /// A request only extra usage may pay for.
    ExtraUsageRequired,
    /// The request refers to state this key's account does not hold (another account's
    /// `previous_response_id`, encrypted reasoning or thinking signature): 400 with `code`.
    ForeignState {
        code: &'static str,
        param: &'static str,
        message: String,
    },
    /// A Gemini refusal (`gemini.rs`); other dialects render [`Fault::elsewhere`].
    Gemini(crate::script::GeminiRefusal),
}

impl Fault {
    /// What a Gemini refusal is in the OpenAI and Anthropic dialects.
    pub fn elsewhere(refusal: crate::script::GeminiRefusal) -> Fault {
        use crate::script::GeminiRefusal as R;
        match refusal {
            R::QuotaPerDay => Fault::QuotaExhausted,
            R::QuotaPerMinute { retry_delay_secs } => Fault::RateLimited { retry_after_secs: retry_delay_secs },
            R::ResourceExhausted => Fault::RateLimited { retry_after_secs: 0 },
            R::ServiceDisabled | R::PermissionDenied => Fault::ModelForbidden { model: String::new() },
        }
    }
}

/// A key shown the way providers echo one back: a short prefix, stars, the last four.
pub(crate) fn mask_key(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() <= 8 {
        return "*".repeat(chars.len());
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}{}{tail}", "*".repeat(chars.len() - 7))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masked_keys_never_contain_the_key() {
        assert_eq!(mask_key("sk-canary-1234567890"), "sk-*************7890", "prefix, stars, last four");
        assert_eq!(mask_key("short"), "*****", "short keys are hidden entirely");
    }
}
