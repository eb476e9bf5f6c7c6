//! Choosing the profile for a request of a turn: the routing `Strategy`, the recorded
//! `SelectionReason` and `select_for_turn` (sticky binding, else SWRR or priority).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

use super::failure::FailureKind;
use super::swrr::{select_priority, Candidate, Swrr};
use crate::connection::RoutingMode;
use crate::validate::InvalidInput;

pub use crate::states::Strategy;

impl Strategy {
    /// `None` for legacy mode, which never selects: it uses the primary (`legacy_primary`).
    pub fn from_mode(mode: RoutingMode) -> Option<Strategy> {
        match mode {
            RoutingMode::Legacy => None,
            RoutingMode::Balanced => Some(Strategy::Balanced),
            RoutingMode::Priority => Some(Strategy::Priority),
        }
    }

    /// The routing mode this strategy is.
    pub fn mode(self) -> RoutingMode {
        match self {
            Strategy::Balanced => RoutingMode::Balanced,
            Strategy::Priority => RoutingMode::Priority,
        }
    }
}

/// Why an attempt went to its profile; recorded with every attempt as a string
/// (`legacy_primary`, `sticky`, `conversation`, `continuity`, `swrr`, `priority`,
/// `failover:<kind>`, `probe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SelectionReason {
    LegacyPrimary,
    /// The turn's binding (every call of a turn after its first).
    Sticky,
    /// A warm conversation's key (conversation affinity, `affinity.rs`).
    Conversation,
    /// The profile that produced the response a request continues (`previous_response_id`):
    /// account-bound state, so no other profile may serve it (invariant 16).
    Continuity,
    Swrr,
    Priority,
    Failover(FailureKind),
    /// The attempt holds a half-open probe lease (overrides the reason it was picked for).
    Probe,
    /// The request named this profile (`x-switchyard-profile`, an external login run by
    /// `switchyard exec`): it goes there only (`client_rule.rs`).
    Pinned,
}

impl SelectionReason {
    /// The reason's word, for every reason but a failover (which names its failure kind).
    pub fn word(&self) -> Option<&'static str> {
        Some(match self {
            SelectionReason::LegacyPrimary => "legacy_primary",
            SelectionReason::Sticky => "sticky",
            SelectionReason::Conversation => "conversation",
            SelectionReason::Continuity => "continuity",
            SelectionReason::Swrr => "swrr",
            SelectionReason::Priority => "priority",
            SelectionReason::Failover(_) => return None,
            SelectionReason::Probe => "probe",
            SelectionReason::Pinned => "pinned",
        })
    }

    /// As [`fmt::Display`] writes it, without the formatter for a plain word (once per routed
    /// request: issue 40).
    pub fn text(&self) -> String {
        match self.word() {
            Some(word) => word.to_string(),
            None => self.to_string(),
        }
    }
}

impl fmt::Display for SelectionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self, self.word()) {
            (_, Some(word)) => f.write_str(word),
            (SelectionReason::Failover(kind), None) => write!(f, "failover:{kind}"),
            (_, None) => Ok(()),
        }
    }
}

impl FromStr for SelectionReason {
    type Err = InvalidInput;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "legacy_primary" => Ok(SelectionReason::LegacyPrimary),
            "sticky" => Ok(SelectionReason::Sticky),
            "conversation" => Ok(SelectionReason::Conversation),
            "continuity" => Ok(SelectionReason::Continuity),
            "swrr" => Ok(SelectionReason::Swrr),
            "priority" => Ok(SelectionReason::Priority),
            "probe" => Ok(SelectionReason::Probe),
            "pinned" => Ok(SelectionReason::Pinned),
            other => match other.strip_prefix("failover:") {
                Some(kind) => Ok(SelectionReason::Failover(kind.parse()?)),
                None => Err(InvalidInput::new("reason", format!("unknown selection reason '{other}'"))),
            },
        }
    }
}

impl Serialize for SelectionReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SelectionReason {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The chosen profile (index into the candidates) and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selection {
    pub index: usize,
    pub reason: SelectionReason,
}

/// Picks the profile for a new request of a turn: the turn's bound profile while it stays
/// eligible (`sticky`, SWRR state untouched), else SWRR (`swrr`) or the preferred profile
/// (`priority`). `None` when nothing is eligible. Does not allocate once `swrr` has seen
/// this eligible set.
pub fn select_for_turn<C: Candidate>(
    strategy: Strategy,
    bound: Option<&str>,
    candidates: &[C],
    eligible: &[usize],
    swrr: &mut Swrr,
) -> Option<Selection> {
    if let Some(bound) = bound {
        let sticky = eligible.iter().copied().find(|&i| candidates.get(i).is_some_and(|c| c.id() == bound));
        if let Some(index) = sticky {
            return Some(Selection { index, reason: SelectionReason::Sticky });
        }
    }
    let (index, reason) = match strategy {
        Strategy::Balanced => (swrr.select(candidates, eligible)?, SelectionReason::Swrr),
        Strategy::Priority => (select_priority(candidates, eligible)?, SelectionReason::Priority),
    };
    Some(Selection { index, reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_round_trip_as_strings() {
        let all = [
            SelectionReason::LegacyPrimary,
            SelectionReason::Sticky,
            SelectionReason::Conversation,
            SelectionReason::Continuity,
            SelectionReason::Swrr,
            SelectionReason::Priority,
            SelectionReason::Failover(FailureKind::RateLimited),
            SelectionReason::Probe,
        ];
        let names: Vec<String> = all.iter().map(ToString::to_string).collect();
        assert_eq!(
            names,
            [
                "legacy_primary",
                "sticky",
                "conversation",
                "continuity",
                "swrr",
                "priority",
                "failover:rate_limited",
                "probe"
            ],
            "attempt records carry these exact reason strings"
        );
        let texts: Vec<String> = all.iter().map(SelectionReason::text).collect();
        assert_eq!(texts, names, "text() is the Display spelling, the failover's kind included");
        for r in all {
            let json = serde_json::to_string(&r).unwrap_or_default();
            let back: Option<SelectionReason> = serde_json::from_str(&json).ok();
            assert_eq!(back, Some(r), "serde round-trips {r}");
        }
        assert!("failover:teapot".parse::<SelectionReason>().is_err(), "kinds are checked");
    }
}
