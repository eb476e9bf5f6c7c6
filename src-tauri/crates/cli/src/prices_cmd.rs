//! `switchyard prices`: the user's price table (USD per million tokens per model) and the
//! monthly fees of subscription keys. One engine call per subcommand, then the table
//! (`render/prices.rs`).

use clap::{Args, Subcommand};
use switchyard_engine::{Engine, EngineError, NewPrice};

use crate::output::Output;

#[derive(Debug, Args)]
pub struct PricesArgs {
    #[command(subcommand)]
    pub command: Option<PricesCmd>,
}

#[derive(Debug, Subcommand)]
pub enum PricesCmd {
    /// Set a model's price in USD per million tokens (the client-facing model name the ledger
    /// records); a cache price left out is "not given": such tokens then cost "unknown".
    Set {
        model: String,
        #[arg(long, value_name = "USD")]
        input: f64,
        #[arg(long, value_name = "USD")]
        output: f64,
        #[arg(long, value_name = "USD")]
        cache_read: Option<f64>,
        #[arg(long, value_name = "USD")]
        cache_write: Option<f64>,
    },
    /// Remove a model's price.
    Remove { model: String },
    /// A subscription key's monthly fee, spread over that key's tokens of each month; its
    /// attempts are then costed by the fee, not by model prices.
    Fee {
        slug: String,
        profile: String,
        #[arg(long, value_name = "USD", required_unless_present = "clear")]
        monthly: Option<f64>,
        #[arg(long, conflicts_with = "monthly")]
        clear: bool,
    },
}

pub async fn run(engine: &Engine, args: PricesArgs) -> Result<Output, EngineError> {
    match args.command {
        None => {}
        Some(PricesCmd::Set { model, input, output, cache_read, cache_write }) => {
            engine.set_price(&model, NewPrice { input, output, cache_read, cache_write }).await?;
        }
        Some(PricesCmd::Remove { model }) => engine.remove_price(&model).await?,
        Some(PricesCmd::Fee { slug, profile, monthly, clear }) => {
            engine.set_key_fee(&slug, &profile, if clear { None } else { monthly }).await?;
        }
    }
    Ok(Output::view(engine.prices().await?))
}
