//! One row of a classification table: which answers it matches (status and the structured
//! `type`/`code` fields of the error body) and the kind and scope it assigns.

use switchyard_core::routing::{FailureKind, Scope};

/// The statuses a rule accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusMatch {
    /// Any status, including 200 for an error event inside a stream.
    Any,
    Is(u16),
    /// Inclusive range.
    Range(u16, u16),
}

impl StatusMatch {
    pub fn matches(self, status: u16) -> bool {
        match self {
            StatusMatch::Any => true,
            StatusMatch::Is(s) => s == status,
            StatusMatch::Range(lo, hi) => (lo..=hi).contains(&status),
        }
    }
}

/// A classification rule. Rows are tried in order; the first whose every given field
/// matches wins. `name` is also the fixture file stem under `tests/fixtures/<dialect>/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub name: &'static str,
    pub status: StatusMatch,
    /// The error object's `type`, when the rule requires one.
    pub error_type: Option<&'static str>,
    /// The error object's `code`, when the rule requires one.
    pub error_code: Option<&'static str>,
    pub kind: FailureKind,
    pub scope: Scope,
}

impl Rule {
    pub fn matches(&self, status: u16, error_type: Option<&str>, error_code: Option<&str>) -> bool {
        self.status.matches(status)
            && self.error_type.is_none_or(|t| error_type == Some(t))
            && self.error_code.is_none_or(|c| error_code == Some(c))
    }
}

/// Shorthand for table rows.
pub(crate) const fn row(
    name: &'static str,
    status: StatusMatch,
    error_type: Option<&'static str>,
    error_code: Option<&'static str>,
    kind: FailureKind,
    scope: Scope,
) -> Rule {
    Rule { name, status, error_type, error_code, kind, scope }
}
