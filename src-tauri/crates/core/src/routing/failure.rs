//! The failure taxonomy of docs/design.md ("Failure taxonomy") as types: `FailureKind`, `Scope` and a classified
//! `Failure`. The tables that map provider answers onto them live in `switchyard-providers`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use crate::validate::InvalidInput;

/// What went wrong with one attempt, normalized across provider dialects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    RateLimited,
    QuotaExhausted,
    AuthInvalid,
    ModelForbidden,
    PermissionAmbiguous,
    Overloaded,
    ServerError,
    Network,
    BadRequest,
    Unknown,
}

impl FailureKind {
    pub const ALL: [FailureKind; 10] = [
        FailureKind::RateLimited,
        FailureKind::QuotaExhausted,
        FailureKind::AuthInvalid,
        FailureKind::ModelForbidden,
        FailureKind::PermissionAmbiguous,
        FailureKind::Overloaded,
        FailureKind::ServerError,
        FailureKind::Network,
        FailureKind::BadRequest,
        FailureKind::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::RateLimited => "rate_limited",
            FailureKind::QuotaExhausted => "quota_exhausted",
            FailureKind::AuthInvalid => "auth_invalid",
            FailureKind::ModelForbidden => "model_forbidden",
            FailureKind::PermissionAmbiguous => "permission_ambiguous",
            FailureKind::Overloaded => "overloaded",
            FailureKind::ServerError => "server_error",
            FailureKind::Network => "network",
            FailureKind::BadRequest => "bad_request",
            FailureKind::Unknown => "unknown",
        }
    }

    /// Transient provider trouble that may be retried once on the same profile.
    pub fn is_transient(self) -> bool {
        matches!(self, FailureKind::Overloaded | FailureKind::ServerError | FailureKind::Network)
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FailureKind {
    type Err = InvalidInput;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FailureKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| InvalidInput::new("failure_kind", format!("unknown kind '{s}'")))
    }
}

/// Who a failure is about, which decides whether another credential could help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The credential as a whole (every model): opens the credential-wide circuit.
    Credential,
    /// The credential for one model only: opens the (profile, model) circuit.
    CredentialModel,
    /// The provider itself; another key of the same provider would not help.
    Provider,
    /// The request itself; it would fail the same way with any key.
    Request,
    /// Not known; never causes failover or a circuit change.
    Ambiguous,
}

impl Scope {
    pub const ALL: [Scope; 5] =
        [Scope::Credential, Scope::CredentialModel, Scope::Provider, Scope::Request, Scope::Ambiguous];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Credential => "credential",
            Scope::CredentialModel => "credential_model",
            Scope::Provider => "provider",
            Scope::Request => "request",
            Scope::Ambiguous => "ambiguous",
        }
    }

    /// Only credential-scoped failures move a turn to another profile (invariant 6).
    pub fn allows_failover(self) -> bool {
        matches!(self, Scope::Credential | Scope::CredentialModel)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scope {
    type Err = InvalidInput;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Scope::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| InvalidInput::new("scope", format!("unknown scope '{s}'")))
    }
}

/// A classified failure of one attempt: kind, scope and, when the provider said so, the wall
/// clock time (unix ms) before which the same credential should not be tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub kind: FailureKind,
    pub scope: Scope,
    pub retry_at_ms: Option<i64>,
}

impl Failure {
    pub fn new(kind: FailureKind, scope: Scope) -> Self {
        Failure { kind, scope, retry_at_ms: None }
    }

    pub fn with_retry_at(mut self, retry_at_ms: Option<i64>) -> Self {
        self.retry_at_ms = retry_at_ms;
        self
    }

    /// A transport failure before any response (connect, reset, TLS, timeout).
    pub fn network() -> Self {
        Failure::new(FailureKind::Network, Scope::Provider)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for k in FailureKind::ALL {
            assert_eq!(k.as_str().parse::<FailureKind>().ok(), Some(k), "as_str parses back");
            let json = serde_json::to_string(&k).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", k.as_str()), "serde uses the same snake_case name");
        }
        for s in Scope::ALL {
            assert_eq!(s.as_str().parse::<Scope>().ok(), Some(s), "as_str parses back");
            let json = serde_json::to_string(&s).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", s.as_str()), "serde uses the same snake_case name");
        }
        assert!("throttled".parse::<FailureKind>().is_err(), "unknown names are rejected");
    }

    #[test]
    fn only_credential_scopes_fail_over() {
        let movers: Vec<Scope> = Scope::ALL.into_iter().filter(|s| s.allows_failover()).collect();
        assert_eq!(
            movers,
            vec![Scope::Credential, Scope::CredentialModel],
            "provider, request and ambiguous scopes must never cause credential failover"
        );
    }
}
