//! `switchyard client setup|status|restore CLIENT`: thin adapters over `switchyard-client-setup`.
//! `setup` previews and writes in one step, so the hash it compares is of what it read;
//! `--dry-run` prints the diff only (`render/client.rs`).

use clap::Subcommand;
use switchyard_client_setup::{self as client_setup, Client, ClientHome, ClientRequest, CLIENTS};
use switchyard_engine::{Engine, EngineError};
use switchyard_relay::Service;

use crate::output::Output;
use crate::render::client::Restore;

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

pub async fn run(engine: &Engine, cmd: ClientCmd) -> Result<Output, EngineError> {
    let home = ClientHome::from_env();
    Ok(match cmd {
        ClientCmd::Setup { client, slug, dry_run, move_key } => {
            let client: Client = client.parse()?;
            let req = ClientRequest { client, slug, home, port: Service::port_from_env(), move_key };
            let preview = client_setup::preview(engine, &req).await?;
            if dry_run {
                return Ok(Output::view(preview));
            }
            Output::view(client_setup::setup(engine, &req, &preview.file_hash).await?)
        }
        ClientCmd::Status { client } => Output::view(client_setup::status(engine, client.parse()?, &home).await?),
        ClientCmd::Restore { client, force } => {
            Output::view(Restore::from(client_setup::restore(engine, client.parse()?, &home, force).await?))
        }
    })
}
