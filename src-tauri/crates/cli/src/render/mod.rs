//! How each result reads, one file per view: its text for people, and as `--json` the value
//! serialised — the engine's view, or a typed wrapper where docs/interface.md fixes another
//! shape (never a `json!` reshaping). Renderers return text; only `output.rs` prints.

pub mod attempts;
pub mod cache;
pub mod cli_backend;
pub mod client;
pub mod connection;
pub mod error;
pub mod export;
pub mod fallback;
pub mod import;
pub mod limits;
pub mod pool;
pub mod prices;
pub mod profile;
pub mod quota;
pub mod relay_users;
pub mod routing;
pub mod settings;
pub mod status;
pub mod store_copy;
pub mod token;
pub mod usage;
pub mod verify;

use serde::Serialize;

/// A subcommand's result as scripts (`--json`: the value serialised) and people read it.
pub trait Render: Serialize {
    /// The text for people, without a trailing newline.
    fn text(&self) -> String;

    /// Set when the command did its work but a script must not go on as if all went well:
    /// the exit code and one line for stderr (the result itself is printed as usual).
    fn shortfall(&self) -> Option<Shortfall> {
        None
    }
}

/// A non-zero exit after a printed result (docs/interface.md, "Exit codes").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shortfall {
    pub code: u8,
    pub message: String,
}
