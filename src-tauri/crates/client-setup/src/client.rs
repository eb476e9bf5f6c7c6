//! The clients set-up knows ([`Client`]), where each keeps its config ([`ClientHome`]), and
//! what `client setup` asks for ([`ClientRequest`]).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use switchyard_core::secret_shape::{echo_safe, NOT_SHOWN};
use switchyard_engine::{EngineError, InvalidInput};

use crate::config_file::ConfigFile;

/// The clients set-up knows, as named on the command line.
pub const CLIENTS: [&str; 4] = ["claude-code", "codex", "opencode", "gemini-cli"];

/// A coding agent whose config file set-up edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Client {
    /// `settings.json` in `$CLAUDE_CONFIG_DIR` (else `~/.claude/`), strict JSON.
    ClaudeCode,
    /// `config.toml` in `$CODEX_HOME` (else `~/.codex/`).
    Codex,
    /// `opencode.jsonc` or `opencode.json` in `$XDG_CONFIG_HOME/opencode/`, JSONC.
    Opencode,
    /// `.env` in `$GEMINI_CLI_HOME/.gemini/` (else `~/.gemini/`).
    GeminiCli,
}

impl Client {
    /// The name on the command line and in views (`claude-code`, `codex`, `opencode`).
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => CLIENTS[0],
            Client::Codex => CLIENTS[1],
            Client::Opencode => CLIENTS[2],
            Client::GeminiCli => CLIENTS[3],
        }
    }

    /// The protocol the client speaks (`None`: opencode speaks either).
    pub fn protocol(self) -> Option<&'static str> {
        match self {
            Client::ClaudeCode => Some("anthropic"),
            Client::Codex => Some("openai"),
            Client::Opencode => None,
            Client::GeminiCli => Some("gemini"),
        }
    }

    /// Whether the client can use a connection of `protocol` (opencode: OpenAI or Anthropic,
    /// not Gemini's own API).
    pub fn speaks(self, protocol: &str) -> bool {
        match self.protocol() {
            Some(p) => p == protocol,
            None => protocol != "gemini",
        }
    }

    /// Whether the client's base URL ends in `/v1` for a connection of `protocol`.
    pub(crate) fn wants_v1(self, protocol: &str) -> bool {
        protocol == "openai" || self == Client::Opencode
    }

    /// The one [`ConfigFile`] of this client.
    pub(crate) fn file(self) -> &'static dyn ConfigFile {
        match self {
            Client::ClaudeCode => &crate::claude_code::ClaudeSettings,
            Client::Codex => &crate::codex::CodexConfig,
            Client::Opencode => &crate::opencode::OpencodeConfig,
            Client::GeminiCli => &crate::gemini_cli::GeminiEnv,
        }
    }
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Client {
    type Err = EngineError;

    fn from_str(name: &str) -> Result<Self, EngineError> {
        match name {
            "claude-code" => Ok(Client::ClaudeCode),
            "codex" => Ok(Client::Codex),
            "opencode" => Ok(Client::Opencode),
            "gemini-cli" => Ok(Client::GeminiCli),
            other => {
                let shown = echo_safe(other).unwrap_or(NOT_SHOWN);
                Err(EngineError::Invalid(InvalidInput::new(
                    "client",
                    format!("unknown client '{shown}'; one of {}", CLIENTS.join(", ")),
                )))
            }
        }
    }
}

/// Where the clients keep their config, from the environment they would see.
#[derive(Debug, Clone, Default)]
pub struct ClientHome {
    pub home: PathBuf,
    /// `CLAUDE_CONFIG_DIR` (default `~/.claude`).
    pub claude_config_dir: Option<PathBuf>,
    /// `CODEX_HOME` (default `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// `XDG_CONFIG_HOME` (default `~/.config`).
    pub xdg_config_home: Option<PathBuf>,
    /// `GEMINI_CLI_HOME`: Gemini CLI's home in place of `HOME` (its files are under `.gemini/`).
    pub gemini_cli_home: Option<PathBuf>,
}

impl ClientHome {
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        ClientHome {
            home: var("HOME").or_else(dirs::home_dir).unwrap_or_else(|| PathBuf::from(".")),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            codex_home: var("CODEX_HOME"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            gemini_cli_home: var("GEMINI_CLI_HOME"),
        }
    }

    /// The config file `client` reads.
    pub fn config_path(&self, client: Client) -> PathBuf {
        match client {
            Client::ClaudeCode => {
                self.claude_config_dir.clone().unwrap_or_else(|| self.home.join(".claude")).join("settings.json")
            }
            Client::Codex => self.codex_home.clone().unwrap_or_else(|| self.home.join(".codex")).join("config.toml"),
            Client::GeminiCli => {
                self.gemini_cli_home.clone().unwrap_or_else(|| self.home.clone()).join(".gemini").join(".env")
            }
            Client::Opencode => {
                let dir = self.xdg_config_home.clone().unwrap_or_else(|| self.home.join(".config")).join("opencode");
                let jsonc = dir.join("opencode.jsonc");
                // A link counts even when it dangles: set-up writes through it.
                if std::fs::symlink_metadata(&jsonc).is_ok() {
                    jsonc
                } else {
                    dir.join("opencode.json")
                }
            }
        }
    }
}

/// What `client setup` asks for.
#[derive(Debug, Clone)]
pub struct ClientRequest {
    pub client: Client,
    /// The connection; `None`: the only connection of the client's protocol.
    pub slug: Option<String>,
    pub home: ClientHome,
    /// The relay port to point at (`None`: the port setting). Port 0 is refused: a client
    /// needs the port the relay really listens on.
    pub port: Option<u16>,
    /// Move a plain-text provider key found in the file into the keychain as a profile with this label.
    pub move_key: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_parses_from_its_name_and_nothing_else_does() {
        for name in CLIENTS {
            let client: Result<Client, _> = name.parse();
            assert_eq!(client.map(Client::name).ok(), Some(name), "'{name}' round-trips");
        }
        let unknown = "sk-ant-looks-like-a-key-0000000000000000".parse::<Client>();
        let msg = unknown.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            msg.contains(NOT_SHOWN) && !msg.contains("sk-ant"),
            "an unknown name that may be a key is not echoed: {msg}"
        );
    }
}
