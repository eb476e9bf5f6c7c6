//! The one error shape that crosses IPC: `{ code, message, gates }` with the engine's error
//! code enum, which the generated TypeScript mirrors, so the UI never matches on message text. A refused
//! activation also carries the gate report, so the window can show which gate failed.

use serde::Serialize;
use specta::Type;
use switchyard_engine::{EngineError, ErrorCode, GateView};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct IpcError {
    /// The engine's own code (`switchyard_core::ErrorCode`; TypeScript gets its union).
    pub code: ErrorCode,
    pub message: String,
    /// The gate report when activation was refused because the gates do not hold.
    pub gates: Option<GateView>,
}

impl From<EngineError> for IpcError {
    fn from(e: EngineError) -> Self {
        let code = e.code();
        let message = e.to_string();
        let gates = match e {
            EngineError::GateFailed { gates, .. } => Some(gates.view()),
            _ => None,
        };
        IpcError { code, message, gates }
    }
}
