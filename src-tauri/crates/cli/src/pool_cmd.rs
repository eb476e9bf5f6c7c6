//! `switchyard pool …`: pools across connections (docs/interface.md, "Pools"). Each
//! subcommand is one engine call; `render/pool.rs` prints the views.

use clap::Subcommand;
use switchyard_engine::{Engine, EngineError, Strategy};

use crate::output::Output;
use crate::render::pool::PoolList;

#[derive(Debug, Subcommand)]
pub enum PoolCmd {
    /// Add a pool: members `CONN[=MODEL][:WEIGHT]` of one protocol; the order of --member is
    /// the priority order. Stored inactive until `pool activate`.
    Add {
        pool: String,
        #[arg(long, value_parser = ["openai", "anthropic", "gemini"])]
        protocol: String,
        #[arg(long = "member", value_name = "CONN[=MODEL][:WEIGHT]", required = true)]
        members: Vec<String>,
    },
    /// Replace a pool's members (it goes inactive until activated again).
    Edit {
        pool: String,
        #[arg(long = "member", value_name = "CONN[=MODEL][:WEIGHT]", required = true)]
        members: Vec<String>,
        #[arg(long, value_name = "N")]
        if_revision: Option<i64>,
    },
    /// Remove a pool (its ledger rows stay).
    Remove { pool: String },
    /// Every pool: members, state, the member launched last.
    List,
    /// One pool: members and why one is out, gates, shares of conversations and tokens.
    #[command(alias = "show")]
    Status { pool: String },
    /// Route the pool (only if every member has current evidence for its model and at least
    /// two members can serve).
    Activate {
        pool: String,
        #[arg(value_enum)]
        mode: Strategy,
    },
    /// Stop routing the pool (it stays stored).
    Deactivate { pool: String },
}

pub async fn run(engine: &Engine, cmd: PoolCmd) -> Result<Output, EngineError> {
    Ok(match cmd {
        PoolCmd::Add { pool, protocol, members } => Output::view(engine.pool_add(&pool, &protocol, &members).await?),
        PoolCmd::Edit { pool, members, if_revision } => {
            Output::view(engine.pool_edit(&pool, &members, if_revision).await?)
        }
        PoolCmd::Remove { pool } => {
            engine.pool_remove(&pool).await?;
            Output::view(crate::render::pool::Removed { pool })
        }
        PoolCmd::List => Output::view(PoolList(engine.pool_list().await?)),
        PoolCmd::Status { pool } => Output::view(engine.pool_status(&pool).await?),
        PoolCmd::Activate { pool, mode } => Output::view(engine.pool_activate(&pool, mode).await?),
        PoolCmd::Deactivate { pool } => Output::view(engine.pool_deactivate(&pool).await?),
    })
}
