//! The result `claude -p --output-format json` prints on stdout (one JSON object, checked
//! against Claude Code 2.1.332): `is_error`, `result` (the answer's text, or what went wrong),
//! `stop_reason`, `usage` (Messages counts), `total_cost_usd` (what the tokens would cost at
//! list price: a reference figure, the subscription is not billed per token), `modelUsage`
//! (per model), and on errors `api_error_status`, `api_error_type`, `api_error`. Only the
//! fields read here are parsed; everything else is skipped.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::usage::Usage;

/// A result as the CLI printed it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct CliResult {
    #[serde(default)]
    pub is_error: bool,
    /// The answer's text (success) or the CLI's own sentence about what went wrong.
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub usage: Option<CliUsage>,
    #[serde(default)]
    pub total_cost_usd: Option<f64>,
    /// Models the run used, by name (their own counts; only the names are read).
    #[serde(default, rename = "modelUsage")]
    pub model_usage: Option<Map<String, Value>>,
    /// The HTTP status of the API's error answer, when the error was one.
    #[serde(default)]
    pub api_error_status: Option<u16>,
    /// The API error's `type` (`rate_limit_error`, …), when the error was one.
    #[serde(default)]
    pub api_error_type: Option<String>,
    /// The CLI's own kind of error (`usage_limit_reached`, `connection_failed`, …).
    #[serde(default)]
    pub api_error: Option<String>,
    #[serde(default)]
    pub uuid: Option<String>,
}

/// The Messages usage counts of a result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct CliUsage {
    #[serde(default)]
    pub input_tokens: Option<i64>,
    #[serde(default)]
    pub output_tokens: Option<i64>,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<i64>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<i64>,
}

/// A successful result, ready to become a Messages answer.
#[derive(Debug, Clone, PartialEq)]
pub struct CliAnswer {
    /// `msg_` and the result's uuid.
    pub id: String,
    /// The model that answered: the one `modelUsage` names when it names exactly one, else
    /// the model asked for.
    pub model: String,
    pub text: String,
    pub stop_reason: String,
    pub usage: Usage,
    /// The CLI's `total_cost_usd` (list price of the tokens; a reference figure only).
    pub reference_cost_usd: Option<f64>,
}

/// Reads the CLI's stdout. `None`: not a result object (the CLI crashed or printed something
/// else).
pub fn read_result(stdout: &[u8]) -> Option<CliResult> {
    // The object is the last non-empty line (nothing else is printed in json mode, but a
    // stray line before it must not hide it).
    let text = std::str::from_utf8(stdout).ok()?;
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?;
    let value: Value = serde_json::from_str(line.trim()).ok()?;
    if value.get("type").and_then(Value::as_str) != Some("result") {
        return None;
    }
    serde_json::from_value(value).ok()
}

impl CliResult {
    pub fn usage(&self) -> Usage {
        let u = self.usage.unwrap_or_default();
        Usage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_read_tokens: u.cache_read_input_tokens,
            cache_write_tokens: u.cache_creation_input_tokens,
        }
    }

    /// The answer, when the run succeeded (`asked`: the request's model).
    pub fn answer(&self, asked: &str) -> Option<CliAnswer> {
        if self.is_error || self.api_error_status.is_some() {
            return None;
        }
        let text = self.result.clone()?;
        let model = match self.model_usage.as_ref().map(|m| m.keys().collect::<Vec<_>>()) {
            Some(names) if names.len() == 1 => names[0].clone(),
            _ => asked.to_string(),
        };
        let id = match self.uuid.as_deref() {
            Some(u) if !u.is_empty() => format!("msg_{}", u.replace('-', "")),
            _ => "msg_cli".to_string(),
        };
        Some(CliAnswer {
            id,
            model,
            text,
            stop_reason: self.stop_reason.clone().unwrap_or_else(|| "end_turn".into()),
            usage: self.usage(),
            reference_cost_usd: self.total_cost_usd.filter(|c| c.is_finite() && *c >= 0.0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A success as Claude Code 2.1.332 printed it against a local recorder (trimmed of the
    /// fields nothing reads).
    const OK: &str = r#"{"duration_api_ms":28,"stop_reason":"end_turn","session_id":"bcec47d4-2f29-44fa-a969-9fd5f7df0c35","total_cost_usd":0.00002,"usage":{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":3,"output_tokens_details":{"thinking_tokens":0},"service_tier":"standard"},"modelUsage":{"claude-haiku-4-5":{"inputTokens":5,"outputTokens":3,"costUSD":0.00002}},"permission_denials":[],"terminal_reason":"completed","is_error":false,"num_turns":1,"subtype":"success","api_error_status":null,"result":"RECORDER-SAYS-HI","type":"result","duration_ms":119,"uuid":"d74b5a98-13db-4429-9b6b-9c81997cc5bd"}"#;

    /// A 5-hour limit as 2.1.332 reported it (the recorder answered 429 with unified headers).
    const LIMIT: &str = r#"{"stop_reason":"stop_sequence","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0},"modelUsage":{},"is_error":true,"num_turns":1,"subtype":"success","api_error_status":429,"api_error_type":"rate_limit_error","api_error":"usage_limit_reached","result":"You've hit your 5-hour limit · resets 4:24pm (UTC)","type":"result","uuid":"832026f3-f2b5-4653-a71e-7d7262763063"}"#;

    #[test]
    fn a_success_reads_as_an_answer_with_its_usage_and_cost() {
        let r = read_result(OK.as_bytes()).expect("a result object");
        let a = r.answer("haiku").expect("a success");
        assert_eq!(a.text, "RECORDER-SAYS-HI", "the text is the result");
        assert_eq!(a.model, "claude-haiku-4-5", "the one model modelUsage names answered");
        assert_eq!(a.id, "msg_d74b5a9813db44299b6b9c81997cc5bd", "msg_ and the uuid without dashes");
        assert_eq!(a.stop_reason, "end_turn");
        let want = Usage {
            input_tokens: Some(5),
            output_tokens: Some(3),
            cache_read_tokens: Some(0),
            cache_write_tokens: Some(0),
        };
        assert_eq!(a.usage, want, "the Messages counts");
        assert_eq!(a.reference_cost_usd, Some(0.00002), "the CLI's list-price figure");
    }

    #[test]
    fn an_error_is_no_answer_and_noise_is_no_result() {
        let r = read_result(LIMIT.as_bytes()).expect("an error is a result too");
        assert!(r.answer("m").is_none(), "an error result is not an answer");
        assert_eq!(r.api_error.as_deref(), Some("usage_limit_reached"));
        assert_eq!(r.api_error_status, Some(429));
        let with_noise = format!("warning: something\n{OK}\n\n");
        assert!(read_result(with_noise.as_bytes()).is_some(), "the result is the last line");
        assert!(read_result(b"Error: unknown option '--bogus'\n").is_none(), "not JSON: no result");
        assert!(read_result(br#"{"type":"system"}"#).is_none(), "another message type: no result");
        let no_models = OK
            .replace(r#""modelUsage":{"claude-haiku-4-5":{"inputTokens":5,"outputTokens":3,"costUSD":0.00002}},"#, "");
        let a = read_result(no_models.as_bytes()).and_then(|r| r.answer("asked-model"));
        assert_eq!(a.map(|a| a.model), Some("asked-model".into()), "without modelUsage: the model asked for");
    }
}
