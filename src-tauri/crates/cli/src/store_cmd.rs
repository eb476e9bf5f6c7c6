//! `switchyard store copy --to postgres://… --master-key-file FILE`: this data dir's store onto
//! an empty team store (engine `store_copy.rs`), each table's progress on stderr.

use std::sync::Arc;

use switchyard_engine::{Engine, EngineError, MasterKey, StoreLocation};

use crate::args::StoreCmd;
use crate::output::{note, Output};
use crate::render::store_copy::StoreCopied;

pub async fn run(engine: &Arc<Engine>, cmd: StoreCmd) -> Result<Output, EngineError> {
    match cmd {
        StoreCmd::Copy { to, master_key_file } => {
            let key = MasterKey::from_file(&master_key_file)?;
            let target = StoreLocation::parse(&to);
            // A line per table, then one per 10,000 rows of a long one.
            let mut shown = 0_u64;
            let mut progress = |table: &str, rows: u64| {
                if rows == 0 {
                    shown = 0;
                    note(&format!("copying {table}…"));
                } else if rows / 10_000 > shown / 10_000 {
                    shown = rows;
                    note(&format!("copying {table}… {rows} rows"));
                }
            };
            let report = engine.copy_store_to(&target, &key, &mut progress).await?;
            Ok(Output::view(StoreCopied(report)))
        }
    }
}
