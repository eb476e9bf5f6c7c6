//! What a test key does: its models, its behaviour (per model, for listing, as a sequence),
//! how its streams are written, the tool it calls, and the JSON script file the binary
//! loads. Plain data; the playbook plays it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::quota::Quota;
use crate::subscription::{LimitWindow, ResetAt, Subscription};

/// The default reply text; streamed one word per content chunk.
pub const DEFAULT_REPLY: &str = "Hello from the mock provider.";

/// How the provider answers one hit. JSON (externally tagged, snake case): `"ok"`,
/// `{"rate_limited": {"retry_after_secs": 20}}`, `{"slow": {"ms": 300}}`,
/// `{"stream_dies_after": {"chunks": 2}}`, `{"stream_error": {"after_chunks": 0}}`,
/// `{"sequence": [{"rate_limited": ...}, "ok"]}`,
/// `{"usage_limit": {"window": "five_hour", "reset": {"in_secs": 3600}}}`, `"client_not_allowed"`,
/// `"extra_usage_required"`.
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
    /// Streaming: a 200 event stream that sends this many content chunks (0: right after
    /// the preamble, e.g. `message_start`), then the dialect's in-stream error event, and
    /// ends cleanly (Anthropic `event: error` `overloaded_error`; Responses `event: error`
    /// `server_error`; chat completions `data: {"error": {...}}` without `[DONE]`).
    /// Non-streaming: the overloaded answer (Anthropic 529, OpenAI 503).
    StreamError { after_chunks: usize },
    /// `GET /v1/models` answers 404; other endpoints answer normally.
    ListingUnsupported,
    /// A subscription account's spent window: Anthropic 429 `rate_limit_error` with the unified
    /// headers saying `window` is `rejected` until `reset`; the OpenAI dialects 429 Codex
    /// `usage_limit_reached` with `resets_at` (and `resets_in_seconds` for a countdown).
    UsageLimit { window: LimitWindow, reset: ResetAt },
    /// A subscription token used by a client it was not issued for: 400
    /// `invalid_request_error` "This credential is only authorized for use with Claude Code…".
    ClientNotAllowed,
    /// A request the account may make only with extra usage: 429 `rate_limit_error` "Extra usage
    /// is required for long context requests." (Anthropic's shape; the OpenAI dialects send
    /// the same words as a 429 without a structured code).
    ExtraUsageRequired,
    /// One of Gemini's structured refusals (`gemini.rs` renders it with the recorded shape;
    /// the other dialects answer their nearest equivalent). Listing is unaffected.
    /// JSON: `{"gemini": "quota_per_day"}`, `{"gemini": {"quota_per_minute": {"retry_delay_secs": 39}}}`.
    Gemini(GeminiRefusal),
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

    /// Shorthand for [`Behaviour::StreamError`].
    pub fn stream_error(after_chunks: usize) -> Self {
        Behaviour::StreamError { after_chunks }
    }

    /// Shorthand for [`Behaviour::UsageLimit`] with a countdown.
    pub fn usage_limit(window: LimitWindow, reset_in_secs: u64) -> Self {
        Behaviour::UsageLimit { window, reset: ResetAt::InSecs(reset_in_secs) }
    }

    /// Shorthand for [`Behaviour::UsageLimit`] with an absolute reset (unix seconds).
    pub fn usage_limit_until(window: LimitWindow, reset_at_unix: i64) -> Self {
        Behaviour::UsageLimit { window, reset: ResetAt::At(reset_at_unix) }
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

/// A Gemini refusal, each the shape of a recorded sample in `providers/tests/fixtures/gemini/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GeminiRefusal {
    /// 429 `RESOURCE_EXHAUSTED` with a `QuotaFailure` naming a per-day quota id (beside the
    /// per-minute ones, as the API sends it) and a `RetryInfo`.
    QuotaPerDay,
    /// 429 `RESOURCE_EXHAUSTED` with a per-minute `QuotaFailure` and `RetryInfo.retryDelay`.
    QuotaPerMinute { retry_delay_secs: u64 },
    /// 429 `RESOURCE_EXHAUSTED` with no details at all.
    ResourceExhausted,
    /// 403 `PERMISSION_DENIED` with `ErrorInfo.reason` `SERVICE_DISABLED`.
    ServiceDisabled,
    /// 403 `PERMISSION_DENIED` with `ErrorInfo.reason` `API_KEY_SERVICE_BLOCKED`.
    PermissionDenied,
}

/// How the writes of a stream are cut. JSON: `"events"` (one write per SSE frame, the
/// default), `"whole"` (the entire stream, closing event included, in one write),
/// `{"bytes": N}` (N bytes per write, the last one shorter; 0 counts as 1), `{"seeded": S}`
/// (write sizes 1..=64 drawn from a xorshift generator seeded by S: the same S, the same
/// cuts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Chunking {
    #[default]
    Events,
    Whole,
    Bytes(usize),
    Seeded(u64),
}

/// How successful answers travel over the wire. JSON (every field optional):
/// `{"chunking": {"bytes": 7}, "crlf": true, "pings": true, "gzip": true, "brotli": true}`.
/// The default writes as the mock always did: one write per event, `\n` line ends, no
/// pings, no compression.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wire {
    /// How event-stream bytes are cut into body writes (JSON answers are one write).
    #[serde(default)]
    pub chunking: Chunking,
    /// Every line of an event stream ends in `\r\n` instead of `\n`.
    #[serde(default)]
    pub crlf: bool,
    /// Before every content event: Anthropic a `: keep-alive` comment block and an
    /// `event: ping` frame, the OpenAI dialects a `: ping` comment block.
    #[serde(default)]
    pub pings: bool,
    /// When the request's `accept-encoding` lists `gzip`: the body (stream or JSON) is
    /// gzip-compressed, with `content-encoding: gzip`.
    #[serde(default)]
    pub gzip: bool,
    /// When the request's `accept-encoding` lists `br`: the body is brotli-compressed, with
    /// `content-encoding: br` (chosen over gzip when both are on and accepted).
    #[serde(default)]
    pub brotli: bool,
}

impl Wire {
    /// A wire cutting streams by `chunking`, with nothing else changed.
    pub fn chunked(chunking: Chunking) -> Self {
        Wire { chunking, ..Wire::default() }
    }

    /// Turns on `\r\n` line ends.
    pub fn crlf(mut self) -> Self {
        self.crlf = true;
        self
    }

    /// Turns on keep-alive pings before content events.
    pub fn pings(mut self) -> Self {
        self.pings = true;
        self
    }

    /// Turns on gzip for requests that accept it.
    pub fn gzip(mut self) -> Self {
        self.gzip = true;
        self
    }

    /// Turns on brotli for requests that accept it.
    pub fn brotli(mut self) -> Self {
        self.brotli = true;
        self
    }
}

/// The tool call a key answers with. JSON: `{"name": "Bash", "input": {"command": "echo hi"}}`.
/// A model call answers with it when the request offers a tool of that name and the
/// conversation's last turn holds no tool result yet (Anthropic: the last user message has
/// a `tool_result` block; chat: the last message has role `tool`; Responses: a
/// `function_call_output` item after the last user message); otherwise with the text reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// The tool's name, as the request's `tools` list names it.
    pub name: String,
    /// The call's input (Anthropic `input`; OpenAI `arguments`, serialized to a string);
    /// `{}` when absent.
    #[serde(default = "empty_input")]
    pub input: Value,
}

fn empty_input() -> Value {
    Value::Object(serde_json::Map::new())
}

/// Prompt caching as Anthropic bills it (`/v1/messages` only). JSON:
/// `{"ttl_secs": 300, "account": "org-1", "scale": 10}` (all but `ttl_secs` optional). The
/// account (default: the key's `account`, else the key itself) remembers the request
/// prefixes it has seen — model, tools and system, then the messages before the last one,
/// as canonical JSON without `cache_control` — with when they were last read or written; a
/// prefix seen within `ttl_secs` is reported as `cache_read_input_tokens`, the rest of the
/// prefix as `cache_creation_input_tokens`, the rest of the request as `input_tokens`.
/// `None`: usage is `input_tokens` and `output_tokens` only (the mock as it always was).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptCache {
    /// How long an unused prefix stays cached; every read or write renews it.
    pub ttl_secs: u64,
    /// The cache's owner: keys naming the same account share its cache. `None`: the key's
    /// `account`, else the key itself. (Unlike the key's `account`, it checks nothing.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// Tokens per 4 request bytes for this key's usage (default 1: a token per 4 bytes), so a
    /// benchmark can model large contexts with small bodies.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub scale: u64,
}

fn one() -> u64 {
    1
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_one(n: &u64) -> bool {
    *n == 1
}

/// The script of one API key. JSON:
/// `{"models": ["m1", "m2"], "behaviour": "ok", "per_model": {"m2": "model_forbidden"},
///   "listing": "listing_unsupported", "reply": "Hi.", "wire": {"chunking": "whole"},
///   "tool": {"name": "Bash", "input": {"command": "echo hi"}},
///   "quota": {"requests_limit": 50, "requests_remaining_start": 49},
///   "subscription": {"five_hour": {"used": 0.42, "reset": {"in_secs": 3600}}}}` (all but `models`
/// optional).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// How answers are written; `None` is [`Wire::default`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire: Option<Wire>,
    /// The tool to call before replying; `None` always replies with text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolCall>,
    /// Limit headers on successful model calls, remaining falling by one per call; `None`
    /// sends none (error answers keep their own headers either way).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<Quota>,
    /// The account (organization) this key belongs to. Set, or with `reasoning` on, the key
    /// enforces account-bound state (`account.rs`): another account's `previous_response_id`,
    /// encrypted reasoning or thinking signature is refused with 400. `None` with `reasoning`
    /// off: nothing is checked (the mock as it always was); the account is then the key itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// Answers carry account-bound reasoning: a Responses `reasoning` item with
    /// `encrypted_content` when the request's `include` asks for `reasoning.encrypted_content`;
    /// an Anthropic `thinking` block with a `signature` (JSON answers).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reasoning: bool,
    /// Anthropic prompt caching in the usage of `/v1/messages` answers; `None`: no cache
    /// fields in usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<PromptCache>,
    /// Subscription windows on successful model calls (`subscription.rs`); `None` sends none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription: Option<Subscription>,
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

    /// Sets how answers are written.
    pub fn wire(mut self, wire: Wire) -> Self {
        self.wire = Some(wire);
        self
    }

    /// Makes model calls offering the tool `name` answer with a call of it with `input`
    /// (until the conversation holds its result).
    pub fn tool(mut self, name: impl Into<String>, input: Value) -> Self {
        self.tool = Some(ToolCall { name: name.into(), input });
        self
    }

    /// Reports a request limit of `limit` on successful model calls, with `remaining_start`
    /// left on the first and one less on each later one.
    pub fn quota(mut self, limit: u64, remaining_start: u64) -> Self {
        self.quota = Some(Quota { requests_limit: limit, requests_remaining_start: remaining_start });
        self
    }

    /// Puts the key in `account` (keys of one account share its state).
    pub fn account(mut self, account: impl Into<String>) -> Self {
        self.account = Some(account.into());
        self
    }

    /// Makes answers carry account-bound reasoning (and turns the account checks on).
    pub fn reasoning(mut self) -> Self {
        self.reasoning = true;
        self
    }

    /// Reports these subscription windows on successful model calls.
    pub fn subscription(mut self, subscription: Subscription) -> Self {
        self.subscription = Some(subscription);
        self
    }

    /// Models Anthropic prompt caching with this TTL (scale 1, the key's account).
    pub fn prompt_cache(mut self, ttl_secs: u64) -> Self {
        self.prompt_cache = Some(PromptCache { ttl_secs, account: None, scale: 1 });
        self
    }
}

/// The script file of the `mock-provider` binary: `{"keys": {"KEY": KeyScript, ...}, "oauth": {...}}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptFile {
    pub keys: BTreeMap<String, KeyScript>,
    /// The fake authorization server's configuration (`oauth.rs`), if the test signs in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<crate::OauthConfig>,
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
        }, "sk-b": {
            "models": ["m"],
            "behaviour": {"stream_error": {"after_chunks": 0}},
            "wire": {"chunking": {"seeded": 42}, "crlf": true, "pings": true, "gzip": true, "brotli": true},
            "tool": {"name": "Bash", "input": {"command": "echo hi"}}
        }, "sk-c": {"models": ["m"], "wire": {"chunking": "whole"}},
           "sk-d": {"models": ["m"], "wire": {"chunking": {"bytes": 3}}},
           "sk-e": {"models": ["m"], "wire": {}},
           "sk-f": {"models": ["m"], "quota": {"requests_limit": 50, "requests_remaining_start": 49}},
           "sk-g": {"models": ["m"], "account": "org-1", "reasoning": true},
           "sk-h": {"models": ["m"], "prompt_cache": {"ttl_secs": 300}},
           "sk-i": {"models": ["m"], "prompt_cache": {"ttl_secs": 5, "account": "org-2", "scale": 10}},
           "sk-j": {"models": ["m"], "behaviour": {"sequence": [
               {"usage_limit": {"window": "seven_day_opus", "reset": {"at": 1735693200}}},
               "client_not_allowed", "extra_usage_required"]},
             "subscription": {"five_hour": {"used": 0.42, "reset": {"in_secs": 3600}}, "codex_weekly_first": true}}
        }}"#;
        let file = ScriptFile::from_json(text)?;
        let want = KeyScript::new(["m1", "m2"])
            .behaviour(Behaviour::sequence([Behaviour::rate_limited(20), Behaviour::Ok]))
            .model("m2", Behaviour::ModelForbidden)
            .model("m1", Behaviour::stream_dies_after(2))
            .listing(Behaviour::ListingUnsupported);
        assert_eq!(file.keys["sk-a"], want, "the documented JSON shape parses");
        let want = KeyScript::new(["m"])
            .behaviour(Behaviour::stream_error(0))
            .wire(Wire::chunked(Chunking::Seeded(42)).crlf().pings().gzip().brotli())
            .tool("Bash", serde_json::json!({"command": "echo hi"}));
        assert_eq!(file.keys["sk-b"], want, "wire, tool and stream_error parse");
        assert_eq!(file.keys["sk-c"].wire, Some(Wire::chunked(Chunking::Whole)), "\"whole\" is a bare string");
        assert_eq!(file.keys["sk-d"].wire, Some(Wire::chunked(Chunking::Bytes(3))), "bytes carries its size");
        assert_eq!(file.keys["sk-e"].wire, Some(Wire::default()), "every wire field is optional");
        assert_eq!(file.keys["sk-f"], KeyScript::new(["m"]).quota(50, 49), "quota parses");
        assert_eq!(
            file.keys["sk-g"],
            KeyScript::new(["m"]).account("org-1").reasoning(),
            "account and reasoning parse"
        );
        assert_eq!(file.keys["sk-h"], KeyScript::new(["m"]).prompt_cache(300), "prompt_cache parses");
        let cache = PromptCache { ttl_secs: 5, account: Some("org-2".to_owned()), scale: 10 };
        assert_eq!(file.keys["sk-i"].prompt_cache, Some(cache), "with its account and scale");
        let want = KeyScript::new(["m"])
            .behaviour(Behaviour::sequence([
                Behaviour::usage_limit_until(LimitWindow::SevenDayOpus, 1_735_693_200),
                Behaviour::ClientNotAllowed,
                Behaviour::ExtraUsageRequired,
            ]))
            .subscription(Subscription {
                five_hour: Some(crate::subscription::UsageWindow { used: 0.42, reset: ResetAt::InSecs(3600) }),
                codex_weekly_first: true,
                ..Subscription::default()
            });
        assert_eq!(file.keys["sk-j"], want, "subscription refusals and windows parse");
        assert_eq!(
            serde_json::to_value(KeyScript::new(["m"]))?,
            serde_json::json!({"models": ["m"], "behaviour": "ok", "per_model": {}}),
            "a script without wire, tool or quota serializes without them"
        );
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
        let text = r#"{"keys": {"k": {"models": [], "wire": {"gzipped": true}}}}"#;
        assert!(ScriptFile::from_json(text).is_err(), "nor in wire");
        let text = r#"{"keys": {"k": {"models": [], "tool": {"name": "Bash", "args": {}}}}}"#;
        assert!(ScriptFile::from_json(text).is_err(), "nor in tool");
        let text = r#"{"keys": {"k": {"models": [], "quota": {"request_limit": 5, "requests_remaining_start": 4}}}}"#;
        assert!(ScriptFile::from_json(text).is_err(), "nor in quota");
        let text = r#"{"keys": {"k": {"models": [], "quota": {"requests_limit": 5}}}}"#;
        assert!(ScriptFile::from_json(text).is_err(), "quota names both of its numbers");
        let text = r#"{"keys": {"k": {"models": [], "acount": "org"}}}"#;
        assert!(ScriptFile::from_json(text).is_err(), "nor the account");
        let text = r#"{"keys": {"k": {"models": [], "prompt_cache": {"ttl": 300}}}}"#;
        assert!(ScriptFile::from_json(text).is_err(), "nor in prompt_cache");
        let text =
            r#"{"keys": {"k": {"models": [], "subscription": {"five_hours": {"used": 1, "reset": {"at": 1}}}}}}"#;
        assert!(ScriptFile::from_json(text).is_err(), "nor in subscription");
    }
}
