//! The one error shape that crosses IPC, `{ code, message, gates }`: the engine's `IpcError`
//! (`engine/src/views/ipc_error.rs`), which the console's HTTP API answers with too.

pub use switchyard_engine::IpcError;
