//! `switchyard limits set|list|remove|status` and `switchyard audit list`: thin adapters over
//! the engine (`config/limits.rs`, `report/audit.rs`), rendered by `render/limits.rs`.

use clap::{Args, Subcommand};
use switchyard_engine::{Engine, EngineError, Measure, NewLimit, Period};

use crate::output::Output;
use crate::render::limits::{Audit, LimitRemoved, Limits, LimitsStatus};

#[derive(Debug, Subcommand)]
pub enum LimitsCmd {
    /// Set a limit on SCOPE (user:NAME, users, connection:SLUG, pool:POOL): requests, tokens or
    /// USD per minute/hour/day/week/month (calendar windows in the time zone setting), or
    /// requests in flight. Setting the same id again changes its capacity and keeps what was spent.
    Set(SetArgs),
    /// Every limit.
    List,
    /// Remove a limit (and what its windows hold).
    Remove { id: String },
    /// Each limit's current window: used, reserved, remaining, resets_at (per user for `users`).
    Status { scope: Option<String> },
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("measure").required(true).args(["requests", "tokens", "usd", "concurrency"])))]
pub struct SetArgs {
    pub scope: String,
    #[arg(long, value_name = "N")]
    pub requests: Option<u64>,
    #[arg(long, value_name = "N")]
    pub tokens: Option<u64>,
    #[arg(long, value_name = "USD")]
    pub usd: Option<f64>,
    /// Requests in flight at once (no period).
    #[arg(long, value_name = "N")]
    pub concurrency: Option<u64>,
    #[arg(long, value_parser = ["minute", "hour", "day", "week", "month"])]
    pub per: Option<String>,
    /// The limit's id (default: scope, measure and period, e.g. user-alice-usd-day).
    #[arg(long)]
    pub id: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum AuditCmd {
    /// Admin changes, oldest first: who, what, when, revisions before and after (never a secret).
    List {
        /// RFC 3339, or Nd (the last N days).
        #[arg(long)]
        since: Option<String>,
        /// Rows made by this user's admin token, or changing this user.
        #[arg(long)]
        user: Option<String>,
    },
}

pub async fn run(engine: &Engine, cmd: LimitsCmd) -> Result<Output, EngineError> {
    match cmd {
        LimitsCmd::Set(a) => {
            let (measure, amount) = match (a.requests, a.tokens, a.usd, a.concurrency) {
                (Some(n), ..) => (Measure::Requests, n as f64),
                (_, Some(n), ..) => (Measure::Tokens, n as f64),
                (_, _, Some(usd), _) => (Measure::Usd, usd),
                (.., Some(n)) => (Measure::Concurrency, n as f64),
                _ => {
                    return Err(switchyard_engine::InvalidInput::new(
                        "measure",
                        "give one of --requests, --tokens, --usd, --concurrency",
                    )
                    .into())
                }
            };
            let period = a.per.as_deref().and_then(Period::parse);
            let view = engine.limit_set(&NewLimit { scope: a.scope, measure, amount, period, id: a.id }).await?;
            Ok(Output::view(Limits(vec![view])))
        }
        LimitsCmd::List => Ok(Output::view(Limits(engine.limit_list().await?))),
        LimitsCmd::Remove { id } => {
            engine.limit_remove(&id).await?;
            Ok(Output::view(LimitRemoved { id, removed: true }))
        }
        LimitsCmd::Status { scope } => Ok(Output::view(LimitsStatus(engine.limit_status(scope.as_deref()).await?))),
    }
}

pub async fn audit(engine: &Engine, cmd: AuditCmd) -> Result<Output, EngineError> {
    match cmd {
        AuditCmd::List { since, user } => {
            Ok(Output::view(Audit(engine.audit_list(since.as_deref(), user.as_deref()).await?)))
        }
    }
}
