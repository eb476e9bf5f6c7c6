//! Connection-level enums: protocol dialect, routing mode and routing state. Parse errors
//! list the accepted words and do not repeat the text given.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use crate::validate::InvalidInput;

/// The wire dialect a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    Openai,
    Anthropic,
}

impl Protocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Openai => "openai",
            Protocol::Anthropic => "anthropic",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl FromStr for Protocol {
    type Err = InvalidInput;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "openai" => Ok(Protocol::Openai),
            "anthropic" => Ok(Protocol::Anthropic),
            _ => Err(InvalidInput::new("protocol", "unknown protocol (expected openai or anthropic)")),
        }
    }
}

/// How a connection chooses a profile. `Legacy` is the default and means "primary only".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum RoutingMode {
    Legacy,
    Balanced,
    Priority,
}

impl RoutingMode {
    pub fn as_str(self) -> &'static str {
        match self {
            RoutingMode::Legacy => "legacy",
            RoutingMode::Balanced => "balanced",
            RoutingMode::Priority => "priority",
        }
    }
}

impl fmt::Display for RoutingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl FromStr for RoutingMode {
    type Err = InvalidInput;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "legacy" => Ok(RoutingMode::Legacy),
            "balanced" => Ok(RoutingMode::Balanced),
            "priority" => Ok(RoutingMode::Priority),
            _ => Err(InvalidInput::new("mode", "unknown routing mode (expected legacy, balanced or priority)")),
        }
    }
}

/// Whether an activated mode is in force. `Suspended` routes as legacy until the gates hold again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum RoutingState {
    Active,
    Suspended,
}

impl RoutingState {
    pub fn as_str(self) -> &'static str {
        match self {
            RoutingState::Active => "active",
            RoutingState::Suspended => "suspended",
        }
    }
}

/// A mode or state compares equal to its contract word (`status.mode == "balanced"`).
macro_rules! eq_word {
    ($t:ty) => {
        impl PartialEq<str> for $t {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }
        impl PartialEq<&str> for $t {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }
    };
}
eq_word!(RoutingMode);
eq_word!(RoutingState);

impl fmt::Display for RoutingState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl FromStr for RoutingState {
    type Err = InvalidInput;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "active" => Ok(RoutingState::Active),
            "suspended" => Ok(RoutingState::Suspended),
            _ => Err(InvalidInput::new("routing_state", "unknown routing state (expected active or suspended)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_round_trips_and_rejects_unknown() {
        for p in [Protocol::Openai, Protocol::Anthropic] {
            assert_eq!(p.as_str().parse::<Protocol>().ok(), Some(p), "as_str must parse back");
        }
        let err = "gemini".parse::<Protocol>().err();
        assert_eq!(err.map(|e| e.field), Some("protocol".to_string()), "the error names the field");
    }

    #[test]
    fn routing_mode_round_trips() {
        for m in [RoutingMode::Legacy, RoutingMode::Balanced, RoutingMode::Priority] {
            assert_eq!(m.as_str().parse::<RoutingMode>().ok(), Some(m), "as_str must parse back");
        }
    }
}
