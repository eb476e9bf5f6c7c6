//! `switchyard attempts`: the ledger newest first (`--limit`, `--since`), or with `--format
//! jsonl` every attempt since a time, oldest first, one JSON object a line, written as the
//! engine pages through the table (no `--limit` cap; stops quietly when stdout closes).

use std::io::Write;

use clap::Args;
use switchyard_engine::{Engine, EngineError};

use crate::output::Output;

#[derive(Debug, Args)]
pub struct AttemptsArgs {
    pub slug: String,
    /// Newest N rows (1-10 000) for the table and --json; jsonl has no limit.
    #[arg(long, default_value_t = 50)]
    pub limit: i64,
    /// Only attempts at or after this time: RFC 3339, or Nd (the last N calendar days).
    #[arg(long, value_name = "RFC3339|Nd")]
    pub since: Option<String>,
    /// `jsonl`: stream every row (no limit), oldest first, for outside analysis.
    #[arg(long, default_value = "table", value_parser = ["table", "jsonl"])]
    pub format: String,
}

pub async fn run(engine: &Engine, args: AttemptsArgs) -> Result<Output, EngineError> {
    if args.format == "jsonl" {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        let mut failed = false;
        engine
            .attempts_export(&args.slug, args.since.as_deref(), |row| {
                let ok = serde_json::to_writer(&mut out, &row).is_ok() && out.write_all(b"\n").is_ok();
                failed |= !ok;
                ok
            })
            .await?;
        if !failed {
            let _ = out.flush();
        }
        return Ok(Output::Done);
    }
    let list = match &args.since {
        Some(since) => engine.attempts_since(&args.slug, since, args.limit).await?,
        None => engine.attempts(&args.slug, args.limit).await?,
    };
    Ok(Output::view(list))
}
