//! The one error shape that crosses IPC: `{ code, message, gates }` with a small code enum
//! that the generated TypeScript mirrors, so the UI never matches on message text. A refused
//! activation also carries the gate report, so the window can show which gate failed.

use serde::Serialize;
use specta::Type;
use switchyard_engine::{EngineError, ErrorCode, GateView};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum IpcErrorCode {
    Invalid,
    Conflict,
    NotFound,
    Precondition,
    KeychainUnavailable,
    Internal,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct IpcError {
    pub code: IpcErrorCode,
    pub message: String,
    /// The gate report when activation was refused because the gates do not hold.
    pub gates: Option<GateView>,
}

impl From<EngineError> for IpcError {
    fn from(e: EngineError) -> Self {
        let code = match e.code() {
            ErrorCode::Invalid => IpcErrorCode::Invalid,
            ErrorCode::Conflict => IpcErrorCode::Conflict,
            ErrorCode::NotFound => IpcErrorCode::NotFound,
            ErrorCode::Precondition => IpcErrorCode::Precondition,
            ErrorCode::KeychainUnavailable => IpcErrorCode::KeychainUnavailable,
            ErrorCode::Internal => IpcErrorCode::Internal,
        };
        let message = e.to_string();
        let gates = match e {
            EngineError::GateFailed { gates, .. } => Some(*gates),
            _ => None,
        };
        IpcError { code, message, gates }
    }
}
