//! The states that cross the front ends' boundary (IPC, `--json` and the command line) as closed
//! sets: each serializes as the snake_case word the contract names (docs/interface.md), derives
//! `specta::Type` with the `specta` feature so TypeScript gets a union and `clap::ValueEnum` with
//! the `clap` feature so the CLI takes exactly those words, and parses from its word
//! (`FromStr`). Code compares states with states, never with words.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::validate::InvalidInput;

/// Declares a state enum: variants with their contract words (serde and clap name each variant
/// by its word, so a word may hold a `-`), `as_str`, `Display` and `FromStr`.
macro_rules! state_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $word:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "specta", derive(specta::Type))]
        #[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $word)] #[cfg_attr(feature = "clap", value(name = $word))] $variant),+
        }

        impl $name {
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }

            /// The state named by its contract word, if it is one.
            pub fn from_word(word: &str) -> Option<Self> {
                match word {
                    $($word => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = InvalidInput;
            fn from_str(word: &str) -> Result<Self, InvalidInput> {
                $name::from_word(word).ok_or_else(|| {
                    let words = [$($word),+].join(", ");
                    InvalidInput::new(stringify!($name), format!("'{word}' is not one of {words}"))
                })
            }
        }
    };
}

state_enum! {
    /// A circuit as the health view shows it.
    CircuitState {
        Closed => "closed",
        Open => "open",
        /// The cooldown is over; one probe may try the key.
        HalfOpen => "half_open",
    }
}

state_enum! {
    /// Whether a profile's secret is in the keychain.
    CredentialPresence {
        Present => "present",
        Missing => "missing",
        /// The keychain could not be asked.
        Unknown => "unknown",
    }
}

state_enum! {
    /// The evidence a profile's routing readiness rests on.
    EvidenceState {
        Current => "current",
        /// Taken under another credential revision or basis, or older than the max age.
        Stale => "stale",
        None => "none",
    }
}

state_enum! {
    /// What one verification of a profile proved.
    VerifyOutcome {
        /// Evidence recorded.
        Verified => "verified",
        /// Recorded: the provider refused the key.
        AuthInvalid => "auth_invalid",
        /// Nothing proven (`detail` says why); nothing recorded.
        Unverified => "unverified",
    }
}

state_enum! {
    /// What one stored piece of evidence says.
    EvidenceOutcome {
        Ok => "ok",
        AuthInvalid => "auth_invalid",
    }
}

state_enum! {
    /// How a routed connection or pool picks: smooth weighted round robin, or the first that can
    /// serve in priority order (what `routing activate` and `pool activate` take).
    Strategy {
        Balanced => "balanced",
        Priority => "priority",
    }
}

state_enum! {
    /// Whether a pool routes: `active`, `suspended` (activated, but its gates do not hold),
    /// `inactive` (never activated, or deactivated), `pending` (imported activated; waits for
    /// its gates).
    PoolState {
        Active => "active",
        Suspended => "suspended",
        Inactive => "inactive",
        Pending => "pending",
    }
}

state_enum! {
    /// What an import does when a slug or pool name exists already: import it under `NAME-2`, …,
    /// or leave it out.
    ConflictPolicy {
        Rename => "rename",
        Skip => "skip",
    }
}

state_enum! {
    /// What balanced routing keeps on one key.
    AffinityMode {
        Turn => "turn",
        Conversation => "conversation",
    }
}

state_enum! {
    /// The relay service's state (`switchyard_relay::Service`, shown by the window).
    RelayState {
        Starting => "starting",
        Listening => "listening",
        /// It could not start or stopped on an error (`error` says why: port taken, keychain locked).
        Error => "error",
        Stopped => "stopped",
    }
}

state_enum! {
    /// Where the relay's port came from.
    PortSource {
        Settings => "settings",
        /// An address given on the command line (`relay serve --listen`).
        Listen => "listen",
        /// `SWITCHYARD_RELAY_PORT`.
        Env => "env",
    }
}

state_enum! {
    /// What a profile's credential is (docs/design.md, "kind").
    ProfileKind {
        /// A key the provider issued, in the keychain.
        ApiKey => "api_key",
        /// A long-lived bearer token issued for one official client (Claude Code's
        /// `setup-token`), in the keychain like a key.
        Token => "token",
        /// The official CLI's own login in a per-profile config directory; Switchyard never
        /// reads it.
        External => "external",
        /// A login Switchyard owns and refreshes (a later issue: not creatable yet).
        Oauth => "oauth",
    }
}

state_enum! {
    /// The official client a `token` or `external` credential belongs to.
    OfficialClient {
        ClaudeCode => "claude-code",
        Codex => "codex",
    }
}

state_enum! {
    /// A profile's credential health (docs/design.md, "credential health"): computed from the
    /// clock and what is known, never stored.
    CredentialHealthState {
        /// An API key that is there: it does not expire by itself.
        Static => "static",
        Ok => "ok",
        /// A token that expires within seven days.
        Expiring => "expiring",
        Expired => "expired",
        /// No secret, or the official CLI is not signed in.
        Missing => "missing",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_serialize_as_their_contract_words_and_parse_from_them() {
        let json = serde_json::to_string(&[CircuitState::HalfOpen, CircuitState::Closed]).unwrap_or_default();
        assert_eq!(json, r#"["half_open","closed"]"#, "the JSON words of the contract, unchanged");
        assert_eq!("open".parse::<CircuitState>().ok(), Some(CircuitState::Open), "a state parses from its word");
        assert_eq!("verified".parse::<VerifyOutcome>().ok(), Some(VerifyOutcome::Verified), "and only its word");
        let refused = "sideways".parse::<Strategy>().map_err(|e| e.to_string());
        assert!(refused.is_err_and(|e| e.contains("balanced, priority")), "a wrong word names the right ones");
        for word in ["present", "missing", "unknown"] {
            let state = CredentialPresence::from_word(word);
            assert_eq!(state.map(CredentialPresence::as_str), Some(word), "{word} round-trips");
        }
        assert_eq!(EvidenceState::from_word("fresh"), None, "an unknown word is not a state");
        let client = serde_json::to_string(&OfficialClient::ClaudeCode).unwrap_or_default();
        assert_eq!(client, r#""claude-code""#, "a word with a dash is its JSON too (the CLI's --client value)");
        assert_eq!(
            serde_json::from_str::<ProfileKind>(r#""api_key""#).ok(),
            Some(ProfileKind::ApiKey),
            "kinds read back from their words"
        );
    }
}
