//! What of an Anthropic Messages request `claude -p` carries exactly, and nothing else.
//!
//! Print mode takes one prompt (stdin), one system prompt (`--system-prompt-file`), one model
//! (`--model`), the output cap (`CLAUDE_CODE_MAX_OUTPUT_TOKENS`) and no thinking
//! (`MAX_THINKING_TOKENS=0`, which also makes the CLI send the API's default temperature 1).
//! So a request is carried when it is one user turn of text with, optionally, a system prompt
//! of text; every other field must be absent or say what the CLI does anyway (`tools: []`,
//! `temperature: 1`, `thinking: {"type": "disabled"}`, empty `stop_sequences`). `metadata` is
//! accepted and not sent: it carries an end-user id for abuse detection and changes no answer;
//! `cache_control` on a text block likewise (the CLI marks its own cache breakpoints). A
//! history of turns, several text blocks, images, documents, tools, sampling settings, betas:
//! each is refused with the field that could not be carried ([`NotCarried`]) — rendering
//! them into one prompt would send the model something other than what the client asked.

use serde_json::{Map, Value};

/// A request print mode carries exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliPrompt {
    /// The request's model, passed as `--model`.
    pub model: String,
    /// The request's system prompt (`None`: it had none; the CLI then gets a short neutral one).
    pub system: Option<String>,
    /// The user turn's text, written to the CLI's stdin.
    pub prompt: String,
    pub max_tokens: u64,
    /// The client asked for a stream: the finished answer goes back as Messages events.
    pub stream: bool,
}

/// Why a request cannot be carried (completes "the CLI backend cannot carry …").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotCarried(pub String);

impl std::fmt::Display for NotCarried {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the CLI backend cannot carry {}", self.0)
    }
}

/// Top-level fields that may be present (each checked below); any other is refused.
const KNOWN: [&str; 11] = [
    "model",
    "messages",
    "max_tokens",
    "system",
    "stream",
    "metadata",
    "temperature",
    "thinking",
    "tools",
    "tool_choice",
    "stop_sequences",
];

/// Reads a Messages request body for print mode. `beta`: the request's `anthropic-beta`
/// header (betas change what a request means; print mode sends its own, so any is refused).
pub fn cli_prompt(body: &[u8], beta: Option<&str>) -> Result<CliPrompt, NotCarried> {
    let no = |why: &str| Err(NotCarried(why.to_string()));
    if beta.is_some_and(|b| !b.trim().is_empty()) {
        return no("an anthropic-beta header (print mode sends only its own betas)");
    }
    let Ok(Value::Object(req)) = serde_json::from_slice::<Value>(body) else {
        return no("a body that is not a JSON object");
    };
    if let Some(field) = req.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(NotCarried(format!("the request field '{field}'")));
    }
    check_defaults(&req)?;
    let model = match req.get("model") {
        Some(Value::String(m)) if plain_model(m) => m.clone(),
        _ => return no("a request without a plain model name"),
    };
    let max_tokens = match req.get("max_tokens").and_then(Value::as_u64) {
        Some(n) if n >= 1 => n,
        _ => return no("a request without a positive max_tokens"),
    };
    let stream = match req.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return no("a 'stream' that is not true or false"),
    };
    let system = match req.get("system") {
        None | Some(Value::Null) => None,
        Some(s) => Some(one_text(s, "the system prompt")?).filter(|s| !s.is_empty()),
    };
    let prompt = one_user_turn(req.get("messages"))?;
    Ok(CliPrompt { model, system, prompt, max_tokens, stream })
}

/// Fields print mode cannot set are accepted only when they ask for what it does anyway.
fn check_defaults(req: &Map<String, Value>) -> Result<(), NotCarried> {
    let refuse = |why: &str| Err(NotCarried(why.to_string()));
    let no_tools = match req.get("tools") {
        None | Some(Value::Null) => true,
        Some(Value::Array(t)) => t.is_empty(),
        Some(_) => false,
    };
    if !no_tools {
        return refuse("tools (print mode runs with none)");
    }
    match req.get("tool_choice") {
        None | Some(Value::Null) => {}
        Some(choice) if matches!(choice.get("type").and_then(Value::as_str), Some("auto" | "none")) => {}
        Some(_) => return refuse("a tool_choice (print mode runs with no tools)"),
    }
    match req.get("temperature") {
        None | Some(Value::Null) => {}
        Some(t) if t.as_f64() == Some(1.0) => {}
        Some(_) => return refuse("a temperature other than 1 (print mode sends the default)"),
    }
    match req.get("thinking") {
        None | Some(Value::Null) => {}
        Some(t) if t.get("type").and_then(Value::as_str) == Some("disabled") => {}
        Some(_) => return refuse("extended thinking (print mode's result has no thinking blocks)"),
    }
    match req.get("stop_sequences") {
        None | Some(Value::Null) => {}
        Some(Value::Array(s)) if s.is_empty() => {}
        Some(_) => return refuse("stop_sequences"),
    }
    match req.get("metadata") {
        None | Some(Value::Null) | Some(Value::Object(_)) => Ok(()),
        Some(_) => refuse("a 'metadata' that is not an object"),
    }
}

/// A model name that reaches argv as a value, never as an option: the request's, and the one a
/// mapping, a hop or a pool member puts in its place (the relay checks that one again).
pub fn plain_model(m: &str) -> bool {
    !m.is_empty()
        && m.len() <= 200
        && !m.starts_with('-')
        && m.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b':' | b'@' | b'/' | b'[' | b']'))
}

/// Exactly one message, from the user, of text.
fn one_user_turn(messages: Option<&Value>) -> Result<String, NotCarried> {
    let Some(Value::Array(messages)) = messages else {
        return Err(NotCarried("a request without a messages list".into()));
    };
    let [only] = messages.as_slice() else {
        return Err(NotCarried(format!(
            "{} messages (print mode carries one user turn, not a history)",
            messages.len()
        )));
    };
    if only.get("role").and_then(Value::as_str) != Some("user") {
        return Err(NotCarried("a first message that is not the user's".into()));
    }
    if let Some(field) = only.as_object().and_then(|m| m.keys().find(|k| !matches!(k.as_str(), "role" | "content"))) {
        return Err(NotCarried(format!("the message field '{field}'")));
    }
    let text = one_text(only.get("content").unwrap_or(&Value::Null), "the user turn")?;
    if text.trim().is_empty() {
        return Err(NotCarried("an empty user turn".into()));
    }
    Ok(text)
}

/// A string, or a list of exactly one text block (`cache_control` allowed).
fn one_text(v: &Value, what: &str) -> Result<String, NotCarried> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Array(blocks) => {
            let [block] = blocks.as_slice() else {
                return Err(NotCarried(format!(
                    "{what} as {} content blocks (print mode takes one text)",
                    blocks.len()
                )));
            };
            let kind = block.get("type").and_then(Value::as_str).unwrap_or("untyped");
            if kind != "text" {
                return Err(NotCarried(format!("a '{kind}' block in {what} (print mode takes text only)")));
            }
            let extra = block.as_object().and_then(|b| {
                b.iter().find(|(k, v)| !matches!(k.as_str(), "type" | "text" | "cache_control") && !v.is_null())
            });
            if let Some((field, _)) = extra {
                return Err(NotCarried(format!("the text block field '{field}' in {what}")));
            }
            match block.get("text") {
                Some(Value::String(t)) => Ok(t.clone()),
                _ => Err(NotCarried(format!("a text block without text in {what}"))),
            }
        }
        _ => Err(NotCarried(format!("{what} that is neither a string nor content blocks"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(v: Value) -> Result<CliPrompt, NotCarried> {
        cli_prompt(v.to_string().as_bytes(), None)
    }

    fn base() -> Value {
        json!({"model": "claude-haiku-4-5", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]})
    }

    fn with(field: &str, value: Value) -> Value {
        let mut v = base();
        v[field] = value;
        v
    }

    #[test]
    fn one_text_turn_is_carried_as_it_is() {
        let p = read(base()).expect("a plain turn is carried");
        let want = CliPrompt {
            model: "claude-haiku-4-5".into(),
            system: None,
            prompt: "hi".into(),
            max_tokens: 64,
            stream: false,
        };
        assert_eq!(p, want, "model, prompt and max_tokens as sent, no system");
        let blocks = with(
            "messages",
            json!([{"role": "user", "content": [{"type": "text", "text": "hi\n", "cache_control": {"type": "ephemeral"}}]}]),
        );
        let mut blocks = blocks;
        blocks["system"] = json!([{"type": "text", "text": "Answer in French."}]);
        blocks["stream"] = json!(true);
        let p = read(blocks).expect("one text block with a cache mark is carried");
        assert_eq!(p.prompt, "hi\n", "the text byte for byte");
        assert_eq!(p.system.as_deref(), Some("Answer in French."), "the system prompt as one text");
        assert!(p.stream, "a stream is asked for");
    }

    #[test]
    fn what_print_mode_does_anyway_is_accepted() {
        for (field, value) in [
            ("tools", json!([])),
            ("tool_choice", json!({"type": "auto"})),
            ("temperature", json!(1)),
            ("temperature", json!(1.0)),
            ("thinking", json!({"type": "disabled"})),
            ("stop_sequences", json!([])),
            ("metadata", json!({"user_id": "u-1"})),
            ("system", json!("")),
        ] {
            assert!(read(with(field, value.clone())).is_ok(), "{field} = {value} asks for what the CLI does");
        }
    }

    #[test]
    fn everything_else_is_refused_naming_what() {
        let cases = [
            (with("tools", json!([{"name": "Read", "input_schema": {}}])), "tools"),
            (with("tool_choice", json!({"type": "any"})), "tool_choice"),
            (with("temperature", json!(0.2)), "temperature"),
            (with("top_p", json!(0.9)), "'top_p'"),
            (with("top_k", json!(5)), "'top_k'"),
            (with("thinking", json!({"type": "enabled", "budget_tokens": 1024})), "thinking"),
            (with("stop_sequences", json!(["END"])), "stop_sequences"),
            (with("max_tokens", json!(0)), "max_tokens"),
            (with("model", json!("--dangerously-skip-permissions")), "model"),
            (with("model", json!("claude haiku")), "model"),
            (
                with(
                    "messages",
                    json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]),
                ),
                "3 messages",
            ),
            (with("messages", json!([{"role": "assistant", "content": "prefill"}])), "not the user's"),
            (
                with(
                    "messages",
                    json!([{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]}]),
                ),
                "'image' block",
            ),
            (
                with(
                    "messages",
                    json!([{"role": "user", "content": [{"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}}]}]),
                ),
                "'document' block",
            ),
            (
                with(
                    "messages",
                    json!([{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]),
                ),
                "2 content blocks",
            ),
            (with("messages", json!([{"role": "user", "content": "  "}])), "empty"),
            (
                with("system", json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])),
                "system prompt as 2",
            ),
        ];
        for (request, why) in cases {
            let refused = read(request.clone()).expect_err("refused");
            assert!(refused.to_string().contains(why), "{request}: the refusal names {why:?}: {refused}");
        }
        let beta = cli_prompt(base().to_string().as_bytes(), Some("output-128k-2025-02-19"));
        assert!(beta.is_err(), "a beta header changes what the request means: refused");
        assert!(cli_prompt(b"not json", None).is_err(), "a body that is not JSON is refused");
    }
}
