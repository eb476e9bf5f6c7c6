//! Error codes shared by every front end: the CLI maps them to exit codes, the desktop shell
//! sends them over IPC so the UI never matches on message text.

use serde::Serialize;

/// A small, stable classification of every error a front end can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Bad input from the user (a field is malformed or out of range).
    Invalid,
    /// A compare-and-swap lost: the row changed since it was read, or a unique name is taken.
    Conflict,
    /// The named connection or profile does not exist.
    NotFound,
    /// A gate or precondition does not hold (the message says which).
    Precondition,
    /// The OS keychain cannot be reached.
    KeychainUnavailable,
    /// Anything else (I/O, database corruption, bugs).
    Internal,
}

impl ErrorCode {
    /// Process exit code of the `switchyard` CLI for this error (docs/interface.md).
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorCode::Internal => 1,
            ErrorCode::Invalid => 2,
            ErrorCode::Conflict => 3,
            ErrorCode::NotFound => 4,
            ErrorCode::Precondition => 5,
            ErrorCode::KeychainUnavailable => 6,
        }
    }

    /// HTTP status of a relay answer the relay makes itself for this error: the client's
    /// request was fine but Switchyard cannot serve it now (keychain locked, a precondition)
    /// → 503, so clients retry later instead of giving up as on a 500.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::Invalid => 400,
            ErrorCode::NotFound => 404,
            ErrorCode::Conflict => 409,
            ErrorCode::Precondition | ErrorCode::KeychainUnavailable => 503,
            ErrorCode::Internal => 500,
        }
    }

    /// The snake_case name used in JSON and IPC payloads.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Invalid => "invalid",
            ErrorCode::Conflict => "conflict",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Precondition => "precondition",
            ErrorCode::KeychainUnavailable => "keychain_unavailable",
            ErrorCode::Internal => "internal",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_interface_contract() {
        let table = [
            (ErrorCode::Internal, 1),
            (ErrorCode::Invalid, 2),
            (ErrorCode::Conflict, 3),
            (ErrorCode::NotFound, 4),
            (ErrorCode::Precondition, 5),
            (ErrorCode::KeychainUnavailable, 6),
        ];
        for (code, want) in table {
            assert_eq!(code.exit_code(), want, "docs/interface.md fixes the exit code of {code:?}");
        }
        assert_eq!(ErrorCode::KeychainUnavailable.http_status(), 503, "a locked keychain is temporary, not a 500");
        assert_eq!(ErrorCode::NotFound.http_status(), 404, "an unknown connection is a 404");
    }
}
