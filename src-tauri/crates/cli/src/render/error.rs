//! An error as scripts read it with `--json`: `{"error": {"code", "message"}}`, plus
//! `"gates"` (the gate report) when an activation was refused. People get one stderr line
//! (and the gate report).

use serde::Serialize;
use switchyard_engine::{EngineError, GateView};

use super::routing;

#[derive(Debug, Serialize)]
pub struct ErrorJson<'a> {
    pub error: ErrorBody<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gates: Option<GateView>,
}

#[derive(Debug, Serialize)]
pub struct ErrorBody<'a> {
    pub code: &'static str,
    pub message: &'a str,
}

/// The message on one line.
pub fn message(e: &EngineError) -> String {
    e.to_string().replace('\n', " ")
}

/// The JSON document of `e`, whose one-line message is `message`.
pub fn json<'a>(e: &'a EngineError, message: &'a str) -> ErrorJson<'a> {
    let gates = match e {
        EngineError::GateFailed { gates, .. } => Some(gates.view()),
        _ => None,
    };
    ErrorJson { error: ErrorBody { code: e.code().as_str(), message }, gates }
}

/// What people see after the `error:` line: the gate report of a refused activation.
pub fn details(e: &EngineError) -> Vec<String> {
    match e {
        EngineError::GateFailed { gates, .. } => routing::gates(&gates.view()),
        _ => Vec::new(),
    }
}
