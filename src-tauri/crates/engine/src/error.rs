//! Engine errors: the variants front ends branch on, each with an [`ErrorCode`].

use switchyard_core::routing::GateReport;
use switchyard_core::{ErrorCode, InvalidInput};
use switchyard_store::StoreError;
use switchyard_vault::VaultError;
use thiserror::Error;

use crate::fault::FaultPoint;

#[derive(Debug, Error)]
pub enum EngineError {
    #[error("{0}")]
    Invalid(#[from] InvalidInput),
    #[error("{what} changed since it was read (revision {expected} expected, {found} found); reload and retry")]
    Conflict { what: &'static str, expected: i64, found: i64 },
    #[error("{field} '{value}' already exists")]
    Duplicate { field: &'static str, value: String },
    #[error("{what} '{name}' not found")]
    NotFound { what: &'static str, name: String },
    #[error("{0}")]
    Precondition(String),
    /// A file changed since it was read (client set-up, restore): code `conflict`, nothing written.
    #[error("{0}")]
    Changed(String),
    /// Activation refused: the gates do not hold. Carries the full report (shown through
    /// `GateRefusal::view` where it crosses to a front end).
    #[error("{message}")]
    GateFailed { message: String, gates: Box<GateRefusal> },
    #[error("{0}; Switchyard keeps secrets only in the OS keychain (unlock it or start a Secret Service such as gnome-keyring)")]
    KeychainUnavailable(String),
    /// The sealed vault cannot serve (no master key, a wrong one, a key file others can read,
    /// a row that does not open). Code `keychain_unavailable`: the place secrets are kept
    /// cannot be read, and nothing starts without it.
    #[error("{0}")]
    SealedVault(String),
    #[error("internal error: {0}")]
    Internal(String),
    /// Raised by an armed [`FaultPoint`] in crash-safety tests.
    #[error("simulated crash at {0:?}")]
    Crashed(FaultPoint),
}

/// A refused activation's gates: core's report, the label of each profile it names, and why the
/// gates fail in words (naming profile ids; the view shows labels).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateRefusal {
    pub report: GateReport,
    pub labels: Vec<(String, String)>,
    pub failures: Vec<String>,
}

impl GateRefusal {
    /// A connection's gates as core judged them, its profiles labelled by `labels`.
    pub(crate) fn of_report(report: GateReport, labels: Vec<(String, String)>) -> Self {
        let failures = report.failures();
        GateRefusal { report, labels, failures }
    }

    /// Gates judged elsewhere than per model (a pool's members): only the reasons.
    pub(crate) fn of_failures(failures: Vec<String>) -> Self {
        GateRefusal { report: GateReport { ok: false, models: Vec::new() }, labels: Vec::new(), failures }
    }
}

impl EngineError {
    pub fn code(&self) -> ErrorCode {
        match self {
            EngineError::Invalid(_) => ErrorCode::Invalid,
            EngineError::Conflict { .. } | EngineError::Duplicate { .. } | EngineError::Changed(_) => {
                ErrorCode::Conflict
            }
            EngineError::NotFound { .. } => ErrorCode::NotFound,
            EngineError::Precondition(_) | EngineError::GateFailed { .. } => ErrorCode::Precondition,
            EngineError::KeychainUnavailable(_) | EngineError::SealedVault(_) => ErrorCode::KeychainUnavailable,
            EngineError::Internal(_) | EngineError::Crashed(_) => ErrorCode::Internal,
        }
    }

    /// `name` is what the user typed; it is repeated only when it cannot be a pasted key.
    /// No connection and no pool is called `name` (a relay path naming a pool's member).
    pub fn not_found_pool(name: &str) -> Self {
        EngineError::not_found("pool", name)
    }

    pub(crate) fn not_found(what: &'static str, name: impl Into<String>) -> Self {
        let name = name.into();
        let name = match switchyard_core::secret_shape::echo_safe(&name) {
            Some(_) => name,
            None => switchyard_core::secret_shape::NOT_SHOWN.to_string(),
        };
        EngineError::NotFound { what, name }
    }

    /// Maps a store error raised while writing `what`, naming the value for duplicates.
    pub(crate) fn from_store(what: &'static str, value: &str, e: StoreError) -> Self {
        match e {
            StoreError::Conflict { expected, found } => EngineError::Conflict { what, expected, found },
            StoreError::NotFound(_) => EngineError::not_found(what, value),
            StoreError::Duplicate { field } => EngineError::Duplicate { field, value: value.to_string() },
            StoreError::CopyRefused(why) => EngineError::Precondition(why),
            other => EngineError::Internal(other.to_string()),
        }
    }
}

impl From<StoreError> for EngineError {
    fn from(e: StoreError) -> Self {
        EngineError::from_store("row", "", e)
    }
}

impl From<VaultError> for EngineError {
    fn from(e: VaultError) -> Self {
        match e {
            VaultError::Unavailable(why) => {
                EngineError::KeychainUnavailable(format!("the OS keychain is unavailable ({why})"))
            }
            VaultError::Failed(why) => EngineError::Internal(format!("keychain: {why}")),
            e @ VaultError::Sealed(_) => EngineError::SealedVault(e.to_string()),
        }
    }
}
