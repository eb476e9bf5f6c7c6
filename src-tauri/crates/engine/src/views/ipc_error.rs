//! The one error shape a front end gets: `{ code, message, gates }` with the engine's error
//! code enum, which the generated TypeScript mirrors, so the UI never matches on message text. A
//! refused activation also carries the gate report, so the window can show which gate failed.
//! The desktop's IPC and the console's HTTP API (relay `console/api.rs`) both answer with it.

use serde::Serialize;
use specta::Type;
use switchyard_core::ErrorCode;

use crate::error::EngineError;
use crate::views::GateView;

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
