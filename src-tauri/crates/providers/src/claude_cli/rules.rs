//! Which CLI results are which answers, as a data table (first match wins): the relay turns a
//! failed run into the Anthropic error answer the API would have given (status, error type,
//! the CLI's sentence as the message, `Retry-After` when the CLI named a reset), and that
//! answer is classified by the Anthropic table like any other — so circuits and cooldowns
//! apply as they do to HTTP answers. The CLI's sentence is read in two rows only, where it is
//! the sole carrier: "Not logged in" (no structured field says so) and the reset of a usage
//! limit (`reset.rs`).

use crate::claude_cli::reset::reset_at_ms;
use crate::claude_cli::result::CliResult;

/// What a result matches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CliMatch {
    /// The CLI's own kind of error (`api_error`).
    ApiError(&'static str),
    /// Any result carrying the API's error status (`api_error_status`).
    ApiStatus,
    /// An error result whose sentence starts so.
    Sentence(&'static str),
    /// No result object at all (crash, unknown flag, killed).
    NoResult,
    /// Any other error result.
    Other,
}

/// What the relay answers for a matched result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CliAnswerAs {
    /// This status and Anthropic error type.
    Status(u16, &'static str),
    /// The API's own status and type, as the CLI reported them.
    ApiStatus,
    /// No answer came back (the provider could not be reached): a network failure.
    NoAnswer,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CliRule {
    pub name: &'static str,
    pub on: CliMatch,
    pub answer: CliAnswerAs,
    /// Read the reset out of the sentence (usage limits).
    pub reset: bool,
}

const fn rule(name: &'static str, on: CliMatch, answer: CliAnswerAs, reset: bool) -> CliRule {
    CliRule { name, on, answer, reset }
}

#[rustfmt::skip]
pub const CLI_RULES: &[CliRule] = &[
    // The subscription's 5-hour, weekly or model window is used up: the API's 429, with the reset.
    rule("usage_limit", CliMatch::ApiError("usage_limit_reached"), CliAnswerAs::Status(429, "rate_limit_error"), true),
    rule("connection_failed", CliMatch::ApiError("connection_failed"), CliAnswerAs::NoAnswer, false),
    // Any other API error answer: as the API gave it (401 expired login, 529 overloaded, …).
    rule("api_status", CliMatch::ApiStatus, CliAnswerAs::ApiStatus, false),
    // The profile's login is unusable (no credential the CLI accepts): sign in again.
    rule("not_logged_in", CliMatch::Sentence("Not logged in"), CliAnswerAs::Status(401, "authentication_error"), false),
    rule("no_result", CliMatch::NoResult, CliAnswerAs::Status(502, "api_error"), false),
    rule("other", CliMatch::Other, CliAnswerAs::Status(502, "api_error"), false),
];

/// A failed run as the answer the relay makes of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliRefusal {
    Answer {
        status: u16,
        error_type: String,
        message: String,
        /// When the limit resets (unix ms), if the CLI said.
        reset_at_ms: Option<i64>,
        rule: &'static str,
    },
    NoAnswer {
        rule: &'static str,
    },
}

/// The answer for a failed run: `result` as read (`None`: none was printed), `exit` the
/// process's exit code, `now_ms` the engine clock.
pub fn refusal_of(result: Option<&CliResult>, exit: Option<i32>, now_ms: i64) -> CliRefusal {
    let matches = |on: CliMatch| match (on, result) {
        (CliMatch::NoResult, None) => true,
        (_, None) | (CliMatch::NoResult, Some(_)) => false,
        (CliMatch::ApiError(kind), Some(r)) => r.api_error.as_deref() == Some(kind),
        (CliMatch::ApiStatus, Some(r)) => r.api_error_status.is_some(),
        (CliMatch::Sentence(start), Some(r)) => r.result.as_deref().is_some_and(|s| s.starts_with(start)),
        (CliMatch::Other, Some(_)) => true,
    };
    let Some(rule) = CLI_RULES.iter().find(|r| matches(r.on)) else {
        return CliRefusal::NoAnswer { rule: "none" };
    };
    let sentence = result.and_then(|r| r.result.clone()).filter(|s| !s.trim().is_empty());
    let message = match (&sentence, exit) {
        (Some(s), _) => format!("Claude Code: {s}"),
        (None, Some(code)) => format!("Claude Code exited with status {code} without a result"),
        (None, None) => "Claude Code ended without a result".to_string(),
    };
    let (status, error_type) = match rule.answer {
        CliAnswerAs::NoAnswer => return CliRefusal::NoAnswer { rule: rule.name },
        CliAnswerAs::Status(status, kind) => (status, kind.to_string()),
        CliAnswerAs::ApiStatus => {
            let status = result.and_then(|r| r.api_error_status).unwrap_or(502);
            let kind = result.and_then(|r| r.api_error_type.clone()).unwrap_or_else(|| type_of(status).to_string());
            (status, kind)
        }
    };
    let reset_at_ms = if rule.reset { sentence.as_deref().and_then(|s| reset_at_ms(s, now_ms)) } else { None };
    CliRefusal::Answer { status, error_type, message, reset_at_ms, rule: rule.name }
}

/// The Anthropic error type of a status the CLI reported without one.
fn type_of(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude_cli::result::read_result;

    /// 2026-12-02T14:24:00Z.
    const NOW: i64 = 1_796_221_440_000;

    fn result(fields: &str) -> CliResult {
        let text = format!(r#"{{"type":"result","is_error":true,{fields}}}"#);
        read_result(text.as_bytes()).unwrap_or_default()
    }

    fn answer(r: CliRefusal) -> (u16, String, Option<i64>, &'static str) {
        match r {
            CliRefusal::Answer { status, error_type, reset_at_ms, rule, .. } => (status, error_type, reset_at_ms, rule),
            CliRefusal::NoAnswer { rule } => (0, String::new(), None, rule),
        }
    }

    #[test]
    fn every_row_has_its_result() {
        let limit = result(
            r#""api_error_status":429,"api_error_type":"rate_limit_error","api_error":"usage_limit_reached","result":"You've hit your 5-hour limit · resets 4:24pm (UTC)""#,
        );
        let cases = [
            (Some(limit), (429, "rate_limit_error".to_string(), Some(NOW + 7_200_000), "usage_limit")),
            (
                Some(result(
                    r#""api_error_status":null,"api_error":"connection_failed","result":"API Error: Connection refused""#,
                )),
                (0, String::new(), None, "connection_failed"),
            ),
            (
                Some(result(
                    r#""api_error_status":401,"api_error_type":"authentication_error","result":"OAuth token has expired""#,
                )),
                (401, "authentication_error".to_string(), None, "api_status"),
            ),
            (
                Some(result(r#""api_error_status":529,"result":"API Error: overloaded""#)),
                (529, "overloaded_error".to_string(), None, "api_status"),
            ),
            (
                Some(result(r#""api_error_status":null,"result":"Not logged in · Please run /login""#)),
                (401, "authentication_error".to_string(), None, "not_logged_in"),
            ),
            (None, (502, "api_error".to_string(), None, "no_result")),
            (Some(result(r#""result":"something else""#)), (502, "api_error".to_string(), None, "other")),
        ];
        for (r, want) in cases {
            assert_eq!(answer(refusal_of(r.as_ref(), Some(1), NOW)), want, "{r:?}");
        }
        let names: Vec<&str> = CLI_RULES.iter().map(|r| r.name).collect();
        for name in ["usage_limit", "connection_failed", "api_status", "not_logged_in", "no_result", "other"] {
            assert!(names.contains(&name), "row {name} exists and was exercised above");
        }
    }

    #[test]
    fn the_message_is_the_cli_s_sentence_or_the_exit() {
        let limit = result(r#""api_error":"usage_limit_reached","result":"You've hit your weekly limit""#);
        match refusal_of(Some(&limit), Some(1), NOW) {
            CliRefusal::Answer { message, reset_at_ms, .. } => {
                assert_eq!(message, "Claude Code: You've hit your weekly limit", "the sentence, attributed");
                assert_eq!(reset_at_ms, None, "no reset named: none invented");
            }
            other => panic!("an answer: {other:?}"),
        }
        match refusal_of(None, Some(2), NOW) {
            CliRefusal::Answer { message, .. } => assert!(message.contains("status 2"), "the exit code: {message}"),
            other => panic!("an answer: {other:?}"),
        }
    }
}
