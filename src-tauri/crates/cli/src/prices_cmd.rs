//! `switchyard prices`: the user's price table (USD per million tokens per model) and the
//! monthly fees of subscription keys. One engine call per subcommand; rendered here.

use clap::{Args, Subcommand};
use switchyard_engine::{Engine, EngineError, NewPrice, PriceTable};

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
    let table = engine.prices().await?;
    Ok(Output::Rendered { json: serde_json::to_string_pretty(&table).unwrap_or_default(), text: text(&table) })
}

fn text(t: &PriceTable) -> String {
    let usd = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v}"));
    let mut out = Vec::new();
    if t.prices.is_empty() {
        out.push(
            "no prices set: every cost shows as unknown (`switchyard prices set MODEL --input USD --output USD`)"
                .into(),
        );
    } else {
        out.push("USD per million tokens (\"-\": not given)".to_string());
        out.push(format!(
            "{:<40} {:>10} {:>10} {:>11} {:>12}",
            "MODEL", "INPUT", "OUTPUT", "CACHE_READ", "CACHE_WRITE"
        ));
        for p in &t.prices {
            out.push(format!(
                "{:<40} {:>10} {:>10} {:>11} {:>12}",
                p.model,
                p.input,
                p.output,
                usd(p.cache_read),
                usd(p.cache_write)
            ));
        }
    }
    for f in &t.fees {
        out.push(format!("fee: {} {} ({}) {} USD per month", f.connection, f.label, f.profile, f.monthly_usd));
    }
    out.join("\n")
}
