//! `switchyard usage`: one engine call (`Engine::usage`); `render/usage.rs` prints the view.

use clap::Args;
use switchyard_engine::{Engine, EngineError, UsageBy};

use crate::output::Output;

#[derive(Debug, Args)]
pub struct UsageArgs {
    pub slug: String,
    /// Count from this time: RFC 3339, or Nd for the last N calendar days (today included)
    /// in the time zone of `settings time-zone`. Default: the whole ledger.
    #[arg(long, value_name = "RFC3339|Nd")]
    pub since: Option<String>,
    /// What each row sums: a profile (id), a model, a day (YYYY-MM-DD), a tag (name=value), a relay
    /// user, or a pool's member.
    #[arg(long, default_value = "profile", value_parser = ["profile", "model", "day", "tag", "user", "member"])]
    pub by: String,
}

pub async fn run(engine: &Engine, args: UsageArgs) -> Result<Output, EngineError> {
    let by = UsageBy::parse(&args.by)?;
    let view = engine.usage(&args.slug, args.since.as_deref(), by).await?;
    Ok(Output::view(view))
}
