//! Fallback across connections (invariant 17), the pure part: a chain's hops (`OTHER` keeps
//! the requested model, `OTHER=MODEL` names the hop's model), chain validation (same
//! protocol, no self reference, no repeats, no cycle through other connections' chains, a
//! bounded length), when a request may fall back (the decision table: only when the first
//! connection has no eligible profile, only before output, only after credential-scoped
//! failures) and which hop serves a model (model-first: only a hop whose current evidence
//! supports the model counts). The engine loads chains and drives the loop; nothing here does
//! I/O.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::circuit::NoCircuits;
use super::eligibility::{Criteria, Eligibility, Exclusion, ProfileView};
use super::failure::{Failure, FailureKind};
use super::gate::{ExcludedProfile, ModelGate};
use crate::validate::{validate_slug, InvalidInput};
use crate::Protocol;

/// The most hops a chain may have, and the most a path may take through the chains of the
/// hops themselves (so checking a chain walks at most 4⁴ paths).
pub const MAX_CHAIN_HOPS: usize = 4;

/// One hop of a chain: another connection, and the model it is asked for (`None`: the
/// requested model, unchanged).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Hop {
    pub slug: String,
    pub model: Option<String>,
}

impl Hop {
    /// Parses `OTHER` or `OTHER=MODEL`.
    pub fn parse(text: &str) -> Result<Hop, InvalidInput> {
        let (slug, model) = match text.split_once('=') {
            Some((s, m)) => (s.trim(), Some(m.trim())),
            None => (text.trim(), None),
        };
        validate_slug(slug).map_err(|e| InvalidInput::new("fallback", format!("hop: {}", e.message)))?;
        if let Some(m) = model {
            // A leading '-' would reach the CLI backend's `--model` as an option (issue 39).
            if m.is_empty() || m.starts_with('-') || m.chars().any(|c| c.is_control() || c.is_whitespace()) {
                return Err(InvalidInput::new(
                    "fallback",
                    format!("hop '{slug}': the model after '=' is empty or not a name"),
                ));
            }
        }
        Ok(Hop { slug: slug.to_string(), model: model.map(str::to_string) })
    }

    /// The model this hop is asked for when the client asked for `requested`.
    pub fn model_for<'a>(&'a self, requested: &'a str) -> &'a str {
        self.model.as_deref().unwrap_or(requested)
    }
}

impl fmt::Display for Hop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.model {
            Some(m) => write!(f, "{}={m}", self.slug),
            None => f.write_str(&self.slug),
        }
    }
}

/// What chain validation knows of another connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainNode {
    pub protocol: Protocol,
    /// The slugs of that connection's own chain, in order (empty without one).
    pub hops: Vec<String>,
}

/// Why a chain is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    #[error("a fallback chain needs at least one hop (use --clear to remove it)")]
    Empty,
    #[error("connection '{0}' is not known")]
    UnknownConnection(String),
    #[error("'{0}' falls back to itself")]
    SelfReference(String),
    #[error("'{0}' appears twice in the chain")]
    Repeated(String),
    #[error("'{hop}' speaks {found}, the connection speaks {expected}: a chain stays within one protocol")]
    ProtocolMismatch { hop: String, expected: Protocol, found: Protocol },
    #[error("the chain makes a cycle: {}", .0.join(" -> "))]
    Cycle(Vec<String>),
    #[error("the chain is longer than {max} hops (counting the hops' own chains): {}", .path.join(" -> "))]
    TooLong { max: usize, path: Vec<String> },
    #[error("the chain of '{slug}' has {count} hops; a fallback chain has at most {max}")]
    TooMany { slug: String, max: usize, count: usize },
}

impl From<ChainError> for InvalidInput {
    fn from(e: ChainError) -> Self {
        InvalidInput::new("fallback", e.to_string())
    }
}

/// Checks the chain `hops` of `source` (protocol `protocol`); `lookup` gives what is known of
/// another connection by slug (`None`: no such connection). The chain and every chain it
/// passes through have at most [`MAX_CHAIN_HOPS`] hops, and every path through the chains of
/// the hops must end within [`MAX_CHAIN_HOPS`] and never reach `source` again.
pub fn validate_chain(
    source: &str,
    protocol: Protocol,
    hops: &[Hop],
    lookup: &dyn Fn(&str) -> Option<ChainNode>,
) -> Result<(), ChainError> {
    if hops.is_empty() {
        return Err(ChainError::Empty);
    }
    if hops.len() > MAX_CHAIN_HOPS {
        return Err(ChainError::TooMany { slug: source.to_string(), max: MAX_CHAIN_HOPS, count: hops.len() });
    }
    let mut seen: Vec<&str> = Vec::with_capacity(hops.len());
    for hop in hops {
        if hop.slug == source {
            return Err(ChainError::SelfReference(source.to_string()));
        }
        if seen.contains(&hop.slug.as_str()) {
            return Err(ChainError::Repeated(hop.slug.clone()));
        }
        seen.push(&hop.slug);
        let node = lookup(&hop.slug).ok_or_else(|| ChainError::UnknownConnection(hop.slug.clone()))?;
        if node.protocol != protocol {
            return Err(ChainError::ProtocolMismatch {
                hop: hop.slug.clone(),
                expected: protocol,
                found: node.protocol,
            });
        }
    }
    // Depth-first over the hops' own chains: the path so far, and whether it closes a cycle.
    let mut path = vec![source.to_string()];
    for hop in hops {
        walk(&hop.slug, &mut path, lookup)?;
    }
    Ok(())
}

fn walk(slug: &str, path: &mut Vec<String>, lookup: &dyn Fn(&str) -> Option<ChainNode>) -> Result<(), ChainError> {
    if path.iter().any(|p| p == slug) {
        let mut cycle = path.clone();
        cycle.push(slug.to_string());
        return Err(ChainError::Cycle(cycle));
    }
    path.push(slug.to_string());
    if path.len() - 1 > MAX_CHAIN_HOPS {
        return Err(ChainError::TooLong { max: MAX_CHAIN_HOPS, path: path.clone() });
    }
    let next = lookup(slug).map(|n| n.hops).unwrap_or_default();
    if next.len() > MAX_CHAIN_HOPS {
        return Err(ChainError::TooMany { slug: slug.to_string(), max: MAX_CHAIN_HOPS, count: next.len() });
    }
    for n in &next {
        walk(n, path, lookup)?;
    }
    path.pop();
    Ok(())
}

/// Where a request stands when the first connection cannot serve it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// Choosing the first attempt: no profile of the connection is eligible. `why` is the
    /// kind of the first exclusion (see [`selection_kind`]).
    Selection { why: FallbackKind },
    /// An attempt failed and the planner found no other eligible profile.
    AfterFailure {
        failure: Failure,
        /// Output of this request or turn already reached the client.
        committed: bool,
    },
}

/// Why the first connection could not serve: a failure kind, or an exclusion reason
/// (`disabled`, `quota_reserve`, `probe_in_flight`, …). Written as `fallback:<kind>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FallbackKind {
    Failure(FailureKind),
    Excluded(Exclusion),
}

impl FallbackKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FallbackKind::Failure(k) => k.as_str(),
            FallbackKind::Excluded(e) => e.as_str(),
        }
    }
}

impl fmt::Display for FallbackKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind a selection-time fallback is recorded with: for each excluded profile (in the
/// connection's order) its exclusion and, for a cooling circuit, the failure that opened it.
/// A cooling circuit counts as its failure (`rate_limited`, `quota_exhausted`,
/// `model_forbidden`, `auth_invalid`); the first profile decides.
pub fn selection_kind(excluded: &[(Exclusion, Option<FailureKind>)]) -> Option<FallbackKind> {
    excluded.first().map(|&(e, cooling)| match (e, cooling) {
        (Exclusion::CircuitOpen | Exclusion::ModelCircuitOpen | Exclusion::AuthInvalid, Some(k)) => {
            FallbackKind::Failure(k)
        }
        (Exclusion::AuthInvalid, None) => FallbackKind::Failure(FailureKind::AuthInvalid),
        (e, _) => FallbackKind::Excluded(e),
    })
}

/// The decision of one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Try the chain; the attempt's reason is `fallback:<kind>`.
    Fallback(FallbackKind),
    /// Stay: answer from the first connection (its error, or 503/429).
    Stay(Stay),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stay {
    /// No active chain (not set, not activated, or its gates do not hold).
    NoChain,
    /// Output already reached the client: never another connection.
    AfterOutput,
    /// Provider, request or ambiguous failures never fall back (nor fail over).
    NotCredentialScoped,
    /// The request continues a response only one account can read (`previous_response_id`).
    Continuity,
}

/// The decision table of invariant 17: fall back only with an active chain, never for a
/// request pinned by continuity, at selection time whenever nothing is eligible, and after a
/// failure only when it is credential-scoped and came before any output.
pub fn decide(moment: Moment, chain_active: bool, continuing: bool) -> Decision {
    if !chain_active {
        return Decision::Stay(Stay::NoChain);
    }
    if continuing {
        return Decision::Stay(Stay::Continuity);
    }
    match moment {
        Moment::Selection { why } => Decision::Fallback(why),
        Moment::AfterFailure { committed: true, .. } => Decision::Stay(Stay::AfterOutput),
        Moment::AfterFailure { failure, .. } if !failure.scope.allows_failover() => {
            Decision::Stay(Stay::NotCredentialScoped)
        }
        Moment::AfterFailure { failure, .. } => Decision::Fallback(FallbackKind::Failure(failure.kind)),
    }
}

/// The next hop (from position `from` on) that can serve the request, with the model it is
/// asked for: model-first hops count only when `serves(position, model)` (the hop's current
/// evidence supports the model and a profile of it is eligible); so do explicit ones.
pub fn next_hop<'a>(
    hops: &'a [Hop],
    from: usize,
    requested: &'a str,
    serves: &mut dyn FnMut(usize, &str) -> bool,
) -> Option<(usize, &'a str)> {
    hops.iter().enumerate().skip(from).find_map(|(i, hop)| {
        let model = hop.model_for(requested);
        serves(i, model).then_some((i, model))
    })
}

/// The models the gates of a hop are judged for: the hop's explicit model, or every model of
/// the first connection (model-first hops keep the requested name).
pub fn hop_gate_models<'a>(hop: &'a Hop, source_models: &'a [String]) -> Vec<&'a str> {
    match &hop.model {
        Some(m) => vec![m.as_str()],
        None => source_models.iter().map(String::as_str).collect(),
    }
}

/// The gate lines of one hop: for each model it will be asked for (its explicit model, or the
/// first connection's models the hop enables) the hop's profiles with current evidence for
/// it, judged on evidence alone like activation; plus why the hop fails, in words. A
/// model-first hop that enables none of the first connection's models, or an explicit model
/// the hop does not enable, fails.
pub fn hop_gate(
    hop: &Hop,
    source_models: &[String],
    hop_models: &[String],
    profiles: &[ProfileView],
    criteria: &Criteria<'_>,
) -> (Vec<ModelGate>, Vec<String>) {
    let asked: Vec<&str> = match &hop.model {
        Some(m) => vec![m.as_str()],
        None => source_models.iter().map(String::as_str).filter(|m| hop_models.iter().any(|h| h == m)).collect(),
    };
    let mut failures = Vec::new();
    if asked.is_empty() {
        failures.push(format!("hop {}: it enables none of the connection's models", hop.slug));
    }
    let mut e = Eligibility::default();
    let mut lines = Vec::with_capacity(asked.len());
    for model in asked {
        if !hop_models.iter().any(|h| h == model) {
            failures.push(format!("hop {}: model {model} is not enabled there", hop.slug));
        }
        e.evaluate(profiles, model, criteria, &NoCircuits);
        let line = ModelGate {
            model: format!("{}:{model}", hop.slug),
            eligible: e.eligible().iter().map(|&i| profiles[i].id.clone()).collect(),
            excluded: e
                .excluded()
                .iter()
                .map(|&(i, reason)| ExcludedProfile { profile: profiles[i].id.clone(), reason })
                .collect(),
        };
        if line.eligible.is_empty() {
            let why: Vec<String> = line.excluded.iter().map(|x| format!("{}: {}", x.profile, x.reason)).collect();
            failures.push(format!(
                "hop {}: model {model} has no profile with current evidence ({})",
                hop.slug,
                why.join(", ")
            ));
        }
        lines.push(line);
    }
    (lines, failures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hops_parse_with_and_without_a_model() {
        assert_eq!(Hop::parse("b").ok(), Some(Hop { slug: "b".into(), model: None }), "a bare slug keeps the model");
        assert_eq!(
            Hop::parse("b=gpt-x").ok(),
            Some(Hop { slug: "b".into(), model: Some("gpt-x".into()) }),
            "SLUG=MODEL names the hop's model"
        );
        assert!(Hop::parse("b=").is_err(), "an empty model is refused");
        assert!(Hop::parse("B C").is_err(), "not a slug");
        assert_eq!(Hop::parse("b=m").map(|h| h.to_string()).ok().as_deref(), Some("b=m"), "round trip");
    }

    /// Issue 39: a hop's model starting with '-' would reach the CLI backend's `--model` as an
    /// option.
    #[test]
    fn a_hop_model_starting_with_a_dash_is_refused() {
        let err = Hop::parse("b=--dangerously-skip-permissions").err();
        assert_eq!(err.map(|e| e.field), Some("fallback".to_string()), "refused as the hop's model, not taken as one");
        assert!(Hop::parse("b=claude-haiku-4-5").is_ok(), "a dash inside a model name is ordinary");
    }
}
