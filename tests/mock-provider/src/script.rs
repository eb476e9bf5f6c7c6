//! What a test key does: its models, its behaviour (per model, for listing, as a sequence),
//! and the JSON script file the binary loads. Plain data; the playbook plays it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The default reply text; streamed one word per content chunk.
pub const DEFAULT_REPLY: &str = "Hello from the mock provider.";

/// How the provider answers one hit. JSON (externally tagged, snake case): `"ok"`,
/// `{"rate_limited": {"retry_after_secs": 20}}`, `{"slow": {"ms": 300}}`,
/// `{"stream_dies_after": {"chunks": 2}}`, `{"sequence": [{"rate_limited": ...}, "ok"]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Behaviour {
    /// A normal answer.
    #[default]
    Ok,
    /// 429 with `Retry-After` and the provider's rate-limit headers and body.
    RateLimited { retry_after_secs: u64 },
    /// The account cannot pay (OpenAI 429 `insufficient_quota`, Anthropic 402 `billing_error`).
    QuotaExhausted,
    /// 401 as for a revoked key.
    Unauthorized,
    /// The key may not use the requested model (listing still succeeds).
    ModelForbidden,
    /// 500.
    ServerError,
    /// Anthropic 529 `overloaded_error`, OpenAI 503.
    Overloaded,
    /// Wait this long, then answer normally.
    Slow { ms: u64 },
    /// Streaming: send this many content chunks, then drop the connection without a final
    /// event. Non-streaming: send half the body, then drop the connection.
    StreamDiesAfter { chunks: usize },
    /// `GET /v1/models` answers 404; other endpoints answer normally.
    ListingUnsupported,
    /// One step per hit, in order; the last step then repeats (`[429, ok]` = 429 once, then
    /// ok). Nested sequences are flattened; an empty sequence is `ok`.
    Sequence(Vec<Behaviour>),
}

impl Behaviour {
    /// Shorthand for [`Behaviour::RateLimited`].
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        Behaviour::RateLimited { retry_after_secs }
    }

    /// Shorthand for [`Behaviour::Slow`].
    pub fn slow(ms: u64) -> Self {
        Behaviour::Slow { ms }
    }

    /// Shorthand for [`Behaviour::StreamDiesAfter`].
    pub fn stream_dies_after(chunks: usize) -> Self {
        Behaviour::StreamDiesAfter { chunks }
    }

    /// Shorthand for [`Behaviour::Sequence`].
    pub fn sequence(steps: impl IntoIterator<Item = Behaviour>) -> Self {
        Behaviour::Sequence(steps.into_iter().collect())
    }

    /// The steps this behaviour plays, nested sequences flattened (a single step if it is
    /// not a sequence; `[ok]` for an empty one).
    pub(crate) fn steps(&self) -> Vec<Behaviour> {
        let mut out = Vec::new();
        self.flatten_into(&mut out);
        if out.is_empty() {
            out.push(Behaviour::Ok);
        }
        out
    }

    fn flatten_into(&self, out: &mut Vec<Behaviour>) {
        match self {
            Behaviour::Sequence(steps) => steps.iter().for_each(|s| s.flatten_into(out)),
            other => out.push(other.clone()),
        }
    }
}

/// The script of one API key. JSON:
/// `{"models": ["m1", "m2"], "behaviour": "ok", "per_model": {"m2": "model_forbidden"},
///   "listing": "listing_unsupported", "reply": "Hi."}` (all but `models` optional).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyScript {
    /// Models this key lists and may call; others get the dialect's model-not-found error.
    pub models: Vec<String>,
    /// Behaviour for every model without an entry in `per_model` (and for listing, unless
    /// `listing` is set).
    #[serde(default)]
    pub behaviour: Behaviour,
    /// Behaviour for calls naming one model.
    #[serde(default)]
    pub per_model: BTreeMap<String, Behaviour>,
    /// Behaviour of `GET /v1/models`; `None` uses `behaviour`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing: Option<Behaviour>,
    /// The assistant's answer text; `None` uses [`DEFAULT_REPLY`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
}

impl KeyScript {
    /// A key serving `models`, answering ok.
    pub fn new<S: Into<String>>(models: impl IntoIterator<Item = S>) -> Self {
        KeyScript { models: models.into_iter().map(Into::into).collect(), ..KeyScript::default() }
    }

    /// Sets the behaviour of every model without its own.
    pub fn behaviour(mut self, behaviour: Behaviour) -> Self {
        self.behaviour = behaviour;
        self
    }

    /// Sets the behaviour of calls naming `model`.
    pub fn model(mut self, model: impl Into<String>, behaviour: Behaviour) -> Self {
        self.per_model.insert(model.into(), behaviour);
        self
    }

    /// Sets the behaviour of `GET /v1/models`.
    pub fn listing(mut self, behaviour: Behaviour) -> Self {
        self.listing = Some(behaviour);
        self
    }

    /// Sets the reply text.
    pub fn reply(mut self, text: impl Into<String>) -> Self {
        self.reply = Some(text.into());
        self
    }
}

/// The script file of the `mock-provider` binary: `{"keys": {"KEY": KeyScript, ...}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptFile {
    pub keys: BTreeMap<String, KeyScript>,
}

impl ScriptFile {
    /// Parses a script file's JSON text.
    pub fn from_json(text: &str) -> serde_json::Result<Self> {
        serde_json::from_str(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_format_round_trips() -> serde_json::Result<()> {
        let text = r#"{"keys": {"sk-a": {
            "models": ["m1", "m2"],
            "behaviour": {"sequence": [{"rate_limited": {"retry_after_secs": 20}}, "ok"]},
            "per_model": {"m2": "model_forbidden", "m1": {"stream_dies_after": {"chunks": 2}}},
            "listing": "listing_unsupported"
        }}}"#;
        let file = ScriptFile::from_json(text)?;
        let want = KeyScript::new(["m1", "m2"])
            .behaviour(Behaviour::sequence([Behaviour::rate_limited(20), Behaviour::Ok]))
            .model("m2", Behaviour::ModelForbidden)
            .model("m1", Behaviour::stream_dies_after(2))
            .listing(Behaviour::ListingUnsupported);
        assert_eq!(file.keys["sk-a"], want, "the documented JSON shape parses");
        let again = serde_json::to_string(&file)?;
        assert_eq!(ScriptFile::from_json(&again)?, file, "and round-trips");
        Ok(())
    }

    #[test]
    fn nested_sequences_flatten_and_empty_is_ok() {
        let nested =
            Behaviour::sequence([Behaviour::ServerError, Behaviour::sequence([Behaviour::Overloaded, Behaviour::Ok])]);
        assert_eq!(
            nested.steps(),
            vec![Behaviour::ServerError, Behaviour::Overloaded, Behaviour::Ok],
            "nested steps play in order"
        );
        assert_eq!(Behaviour::sequence([]).steps(), vec![Behaviour::Ok], "empty is ok");
    }

    #[test]
    fn unknown_fields_are_refused() {
        let text = r#"{"keys": {"k": {"models": [], "behavior": "ok"}}}"#;
        assert!(ScriptFile::from_json(text).is_err(), "a typo must not pass silently");
    }
}
