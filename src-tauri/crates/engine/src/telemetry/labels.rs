//! Label values, only ever from configured names (invariant 32): a connection's slug, a
//! profile's label, a pool's name, a relay user's name, a limit's id, a model the connection
//! enables (its models list or a name its mapping takes), a failure kind or selection reason of
//! the taxonomy. Anything else — a model a client made up, a profile no longer in the snapshot
//! — is [`OTHER`], so random client input adds at most one series per family.

use std::str::FromStr;

use switchyard_core::connection::Protocol;
use switchyard_core::routing::{FailureKind, SelectionReason};

use crate::router::Snapshot;

/// The value of every label whose value is not a configured name.
pub const OTHER: &str = "other";

/// The connection's slug (`""` when the row names none: a pool's refusal before a member).
pub(crate) fn connection(snapshot: Option<&Snapshot>) -> &str {
    snapshot.map_or("", |s| s.slug.as_str())
}

/// A model the connection enables, else [`OTHER`]; `""` when the request named none.
pub(crate) fn model<'a>(snapshot: Option<&Snapshot>, model: Option<&'a str>) -> &'a str {
    bounded(model, |m| snapshot.is_some_and(|s| s.models.iter().any(|x| x == m) || s.mapping.contains_key(m)))
}

/// `model` when `enabled` says the connection enables it, else [`OTHER`]; `""` for none (the
/// one rule of every model label: a row's, a circuit's, a provider window's).
pub(crate) fn bounded(model: Option<&str>, enabled: impl FnOnce(&str) -> bool) -> &str {
    match model.filter(|m| !m.is_empty()) {
        None => "",
        Some(m) if enabled(m) => m,
        Some(_) => OTHER,
    }
}

/// The label of profile `id` in the snapshot, else [`OTHER`]; `""` for no profile.
pub(crate) fn profile<'a>(snapshot: Option<&'a Snapshot>, id: Option<&str>) -> &'a str {
    let Some(id) = id.filter(|i| !i.is_empty()) else { return "" };
    snapshot.and_then(|s| s.rows.iter().find(|r| r.id == id)).map_or(OTHER, |r| r.label.as_str())
}

/// A failure kind of the taxonomy, else [`OTHER`]; `""` for none.
pub(crate) fn failure_kind(kind: Option<&str>) -> &'static str {
    match kind {
        None | Some("") => "",
        Some(k) => FailureKind::from_str(k).map_or(OTHER, FailureKind::as_str),
    }
}

/// How an attempt came to be made, as the ledger's `reason` says it: a move
/// (`failover`, `fallback`, `pool`) with its failure kind, or the selection's word.
pub(crate) fn reason(reason: &str) -> (&'static str, &'static str) {
    for (prefix, word) in [("failover:", "failover"), ("fallback:", "fallback"), ("pool:", "pool")] {
        if let Some(kind) = reason.strip_prefix(prefix) {
            return (word, failure_kind(Some(kind)));
        }
    }
    match SelectionReason::from_str(reason) {
        Ok(r) => (r.word().unwrap_or(OTHER), ""),
        Err(_) => (OTHER, ""),
    }
}

/// `gen_ai.provider.name` of a dialect (semantic conventions' well-known values).
pub(crate) fn provider(protocol: Option<Protocol>) -> &'static str {
    match protocol {
        Some(Protocol::Anthropic) => "anthropic",
        Some(Protocol::Openai) => "openai",
        Some(Protocol::Gemini) => "gcp.gemini",
        None => "",
    }
}

/// `gen_ai.operation.name` of a dialect's model call.
pub(crate) fn operation(protocol: Option<Protocol>) -> &'static str {
    match protocol {
        Some(Protocol::Gemini) => "generate_content",
        _ => "chat",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_nobody_configured_is_other() {
        assert_eq!(model(None, Some("made-up")), OTHER, "no snapshot: no model is known");
        assert_eq!(model(None, None), "", "no model named: empty, not other");
        assert_eq!(profile(None, Some("p-1")), OTHER, "a profile not in the snapshot");
        assert_eq!(failure_kind(Some("rate_limited")), "rate_limited");
        assert_eq!(failure_kind(Some("rate_limited\"} 1\n")), OTHER, "never a client's text in a label");
        assert_eq!(reason("failover:rate_limited"), ("failover", "rate_limited"));
        assert_eq!(reason("pool:quota_exhausted"), ("pool", "quota_exhausted"));
        assert_eq!(reason("swrr"), ("swrr", ""));
        assert_eq!(reason("limit"), (OTHER, ""), "a refusal's why is not a selection");
    }
}
