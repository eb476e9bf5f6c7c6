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
    /// Google's Gemini API (`/v1beta/models/{model}:generateContent`); the model is in the path.
    Gemini,
}

impl Protocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Openai => "openai",
            Protocol::Anthropic => "anthropic",
            Protocol::Gemini => "gemini",
        }
    }

    /// The provider's own API base when a connection names none.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Protocol::Openai => "https://api.openai.com",
            Protocol::Anthropic => "https://api.anthropic.com",
            Protocol::Gemini => "https://generativelanguage.googleapis.com",
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
            "gemini" => Ok(Protocol::Gemini),
            _ => Err(InvalidInput::new("protocol", "unknown protocol (expected openai, anthropic or gemini)")),
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
        for p in [Protocol::Openai, Protocol::Anthropic, Protocol::Gemini] {
            assert_eq!(p.as_str().parse::<Protocol>().ok(), Some(p), "as_str must parse back");
        }
        assert_eq!(
            Protocol::Gemini.default_base_url(),
            "https://generativelanguage.googleapis.com",
            "Gemini's API host when none is given"
        );
        let err = "vertex".parse::<Protocol>().err();
        assert_eq!(err.map(|e| e.field), Some("protocol".to_string()), "the error names the field");
    }

    #[test]
    fn routing_mode_round_trips() {
        for m in [RoutingMode::Legacy, RoutingMode::Balanced, RoutingMode::Priority] {
            assert_eq!(m.as_str().parse::<RoutingMode>().ok(), Some(m), "as_str must parse back");
        }
    }
}
