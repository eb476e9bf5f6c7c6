//! Client set-up with undo (docs/design.md, "Client set-up"): point Claude Code, Codex, opencode or Gemini CLI
//! at the relay for one connection by editing the client's own config file — previewed as a
//! unified diff, written atomically after the original is kept under the data dir, detected
//! (`status`) and undone byte for byte (`restore`). Only the relay token is ever written; a
//! provider key found in plain text can be moved into the keychain as a profile. Routing, the
//! relay and the keychain are the engine's: this crate uses only its public API.
//!
//! The rooms:
//! - `client.rs` — [`Client`], where each client keeps its file ([`ClientHome`]);
//! - `config_file.rs` — the [`ConfigFile`](config_file::ConfigFile) trait, one impl per file:
//!   `claude_code.rs` (settings.json), `codex.rs` (config.toml), `opencode.rs` (opencode.json[c]),
//!   `gemini_cli.rs` (`~/.gemini/.env`);
//! - `json_doc.rs` — JSON/JSONC on `jsonc-parser` (AST spans for reading, CST for editing);
//!   `toml_doc.rs` — Codex's TOML on `toml_edit`; `env_doc.rs` — dotenv files, edited by span;
//! - `mask.rs` and `diff.rs` — the preview (secrets masked by span, `similar`'s unified diff, capped);
//! - `config_read.rs` — reading a config (regular files only, size cap, no control characters,
//!   symlinks kept, a link out of HOME refused);
//! - `backup.rs`, `moved_key.rs` — the kept original and how a moved key is left out of it, the
//!   atomic write and the lock one set-up or restore of a file holds;
//! - `setup.rs` (preview, write), `restore.rs` (status, restore), `views.rs` (what front ends get).
//!
//! Errors are [`EngineError`](switchyard_engine::EngineError)s: the codes front ends already map
//! (`invalid` for a malformed file, `conflict` for a file that moved, `precondition`, `not_found`).

mod backup;
mod claude_code;
mod client;
mod codex;
mod config_file;
mod config_read;
mod diff;
mod env_doc;
mod gemini_cli;
mod json_doc;
mod mask;
mod moved_key;
mod opencode;
mod restore;
mod setup;
mod toml_doc;
mod views;

pub use backup::MOVED_KEY;
pub use client::{Client, ClientHome, ClientRequest, CLIENTS};
pub use config_read::MAX_CONFIG_BYTES;
pub use diff::{MAX_DIFF_BYTES, MAX_LINE_CHARS};
pub use restore::{restore, status, Restored};
pub use setup::{preview, setup};
pub use views::{ClientPreview, ClientRestoreReport, ClientSetupReport, ClientStatus};
