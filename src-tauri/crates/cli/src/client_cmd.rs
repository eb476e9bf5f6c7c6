//! `switchyard client setup|status|restore CLIENT`: thin adapters over `switchyard-client-setup`.
//! `setup` previews and writes in one step, so the hash it compares is of what it read;
//! `--dry-run` prints the diff only.

use clap::Subcommand;
use switchyard_client_setup::{self as client_setup, Client, ClientHome, ClientRequest, CLIENTS, MOVED_KEY};
use switchyard_engine::{Engine, EngineError};
use switchyard_relay::Service;

use crate::output::Output;

#[derive(Debug, Subcommand)]
pub enum ClientCmd {
    /// Point CLIENT (claude-code, codex, opencode) at the relay for SLUG; prints the change.
    Setup {
        #[arg(value_parser = CLIENTS)]
        client: String,
        /// The connection (default: the only one of the client's protocol).
        slug: Option<String>,
        /// Print the change; write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Move a provider key found in plain text in the file into the keychain as a profile
        /// of SLUG with this label (only the relay token stays in the file).
        #[arg(long, value_name = "LABEL")]
        move_key: Option<String>,
    },
    /// Whether CLIENT points at Switchyard, and at which connection.
    Status {
        #[arg(value_parser = CLIENTS)]
        client: String,
    },
    /// Put back the file as it was before set-up, byte for byte.
    Restore {
        #[arg(value_parser = CLIENTS)]
        client: String,
        /// Restore even though the file changed since set-up wrote it.
        #[arg(long)]
        force: bool,
    },
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| "{}".to_string())
}

pub async fn run(engine: &Engine, cmd: ClientCmd, _json: bool) -> Result<Output, EngineError> {
    let home = ClientHome::from_env();
    match cmd {
        ClientCmd::Setup { client, slug, dry_run, move_key } => {
            let client: Client = client.parse()?;
            let req = ClientRequest { client, slug, home, port: Service::port_from_env(), move_key };
            let preview = client_setup::preview(engine, &req).await?;
            let mut text = String::new();
            if preview.changes {
                text.push_str(&preview.diff);
            } else {
                text.push_str(&format!("{} already points at {}; nothing to change\n", preview.path, preview.base_url));
            }
            for note in &preview.notes {
                text.push_str(&format!("note: {note}\n"));
            }
            if dry_run {
                text.push_str("(dry run: nothing written)");
                return Ok(Output::Rendered { json: to_json(&preview), text: text.trim_end().to_string() });
            }
            let hash = preview.file_hash.clone();
            let report = client_setup::setup(engine, &req, &hash).await?;
            if report.written {
                text.push_str(&format!(
                    "wrote {} (original kept in {}; undo with: switchyard client restore {})",
                    report.preview.path,
                    report.backup.as_deref().unwrap_or("?"),
                    report.preview.client
                ));
            }
            if let Some(p) = &report.moved_to {
                text.push_str(&format!(
                    "\nmoved the provider key into the keychain as profile '{}' ({}) of '{}'",
                    p.label, p.id, report.preview.slug
                ));
            }
            Ok(Output::Rendered { json: to_json(&report), text: text.trim_end().to_string() })
        }
        ClientCmd::Status { client } => {
            let s = client_setup::status(engine, client.parse()?, &home).await?;
            let mut text = match (&s.slug, s.port) {
                (Some(slug), Some(port)) if s.pointed => format!(
                    "{} points at Switchyard: connection '{slug}' on port {port}{}",
                    s.client,
                    if s.token_current { "" } else { " (with an old relay token: run client setup again)" }
                ),
                _ if s.exists => format!("{} is not pointed at Switchyard ({})", s.client, s.path),
                _ => format!("{} has no config file yet ({})", s.client, s.path),
            };
            if s.restorable {
                text.push_str(&format!("\noriginal kept: switchyard client restore {} undoes the set-up", s.client));
            }
            for k in &s.plain_keys {
                text.push_str(&format!("\nplain-text provider key: {k}"));
            }
            Ok(Output::Rendered { json: to_json(&s), text })
        }
        ClientCmd::Restore { client, force } => {
            let restored = client_setup::restore(engine, client.parse()?, &home, force).await?;
            let r = restored.report;
            let text = if r.removed {
                format!("removed {} (it did not exist before set-up)", r.path)
            } else if restored.placeholder_left {
                format!("restored {} with \"{MOVED_KEY}\" where the moved key was (its profile no longer holds it): put the key there yourself", r.path)
            } else {
                format!("restored {} to its original bytes", r.path)
            };
            Ok(Output::Rendered { json: to_json(&r), text })
        }
    }
}
