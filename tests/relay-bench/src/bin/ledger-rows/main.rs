//! `ledger-rows [--batches N] [--rows R]`: the attempt ledger's cost per row in the store on its
//! own, for `scripts/relay-instructions` (issue 40). Opens an SQLite store in a temp dir, writes
//! one warm-up batch, then `N` batches of `R` relay-shaped rows through `attempts::insert_batch`
//! (what the ledger's writer calls), each as the writer sends it. Under callgrind with
//! `--instr-atstart=no` it switches counting on around the measured batches itself
//! (`callgrind_control -i on|off` on its own pid) and prints the rows written; the script divides
//! the instructions of every thread (sqlx's SQLite worker does the binding and SQLite's work) by
//! them. Outside valgrind the switches fail quietly and it just writes.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use anyhow::{Context, Result};
use switchyard_store::attempts::{insert_batch, AttemptRow};
use switchyard_store::Store;

fn row(i: i64) -> AttemptRow {
    AttemptRow {
        at_ms: 1_764_000_000_000 + i,
        connection_id: "c_4f9d3b2a1c8e4e7f9a0b1c2d3e4f5a6b".into(),
        turn: format!("x:{:016x}", (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        attempt: 1,
        profile_id: "p_0a1b2c3d4e5f60718293a4b5c6d7e8f9".into(),
        reason: "legacy_primary".into(),
        model: Some("gpt-model-01".into()),
        status: Some(200),
        ttfb_ms: Some(3),
        duration_ms: Some(5),
        input_tokens: Some(1_200 + i % 7),
        output_tokens: Some(40),
        session: Some(format!("s:{:016x}", i / 10)),
        conversation: Some(format!("x:{:016x}", i / 10)),
        cache_read_tokens: Some(1_024),
        ..Default::default()
    }
}

fn callgrind(on: bool) {
    let _ = std::process::Command::new("callgrind_control")
        .args(["-i", if on { "on" } else { "off" }, &std::process::id().to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let (mut batches, mut rows) = (50i64, 40i64);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--batches" => batches = args.next().context("--batches N")?.parse()?,
            "--rows" => rows = args.next().context("--rows R")?.parse()?,
            other => anyhow::bail!("unknown argument {other}"),
        }
    }
    let dir = std::env::temp_dir().join(format!("switchyard-ledger-rows-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let written = runtime.block_on(async {
        let store = Store::open(&dir.join("ledger.db")).await?;
        // Built before counting starts: what is counted is the insert alone.
        let mut all: Vec<Vec<AttemptRow>> =
            (0..=batches).map(|b| (b * rows..(b + 1) * rows).map(row).collect()).collect();
        let mut conn = store.acquire().await?;
        insert_batch(&mut conn, all.remove(0)).await?;
        callgrind(true);
        for batch in all {
            insert_batch(&mut conn, batch).await?;
        }
        callgrind(false);
        anyhow::Ok(batches * rows)
    })?;
    let _ = std::fs::remove_dir_all(&dir);
    println!("{written}");
    Ok(())
}
