//! The headless `switchyard` binary. Each subcommand opens the engine on the data dir,
//! makes one engine call and prints the result; errors map to docs/interface.md exit codes.

mod args;
mod attempts_cmd;
mod client_cmd;
mod commands;
mod exec_cmd;
mod exec_login;
mod exec_pool;
mod limits_cmd;
mod login_cmd;
mod output;
mod pool_cmd;
mod portable_cmd;
mod prices_cmd;
mod progress;
mod relay_cmd;
mod render;
mod secret_input;
mod store_cmd;
mod usage_cmd;

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use switchyard_engine::{default_data_dir, Engine, EngineError, MasterKey, OpenOptions, VaultKind};

use crate::args::{Cli, Command};

// mimalloc, without transparent huge pages (issue 40, docs/decisions.md): `relay serve` answers
// on one thread, and glibc's malloc and free were the largest part of what that thread spent
// beyond the bare proxy's floor (12.2k of a one-line legacy request's 84.7k instructions, 58
// allocations). mimalloc takes 9 % off the request thread (legacy 84.7k -> 76.8k, balanced
// 103.5k -> 94.4k). Its extra memory (72-76 MB at 256 concurrent streams against glibc's 55 MB,
// the reason this binary kept glibc's in 2026-11) was huge pages; with `no_thp` it holds 55.8 MB.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => match args::redacted(&e) {
            Some(invalid) => {
                let json = std::env::args().any(|a| a == "--json");
                let e = EngineError::Invalid(invalid);
                output::print_error(&e, json);
                return ExitCode::from(u8::try_from(e.code().exit_code()).unwrap_or(2));
            }
            None => e.exit(),
        },
    };
    init_logging();
    // The relay's connection cap follows the descriptor limit; raising it is the binary's call.
    switchyard_relay::raise_fd_limit();
    let runtime = match runtime_for(&cli.command).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            output::print_error(&EngineError::Internal(format!("cannot start runtime: {e}")), cli.json);
            return ExitCode::from(1);
        }
    };
    let json = cli.json;
    match runtime.block_on(run(cli)) {
        Ok(out) => ExitCode::from(output::print(&out, json)),
        Err(e) => {
            output::print_error(&e, json);
            ExitCode::from(u8::try_from(e.code().exit_code()).unwrap_or(1))
        }
    }
}

async fn run(cli: Cli) -> Result<output::Output, EngineError> {
    let json = cli.json;
    let data_dir = cli.data_dir.unwrap_or_else(default_data_dir);
    let vault = cli.vault.as_deref().and_then(VaultKind::parse);
    let store = cli.store.as_deref().filter(|s| !s.trim().is_empty()).map(switchyard_engine::StoreLocation::parse);
    let options = OpenOptions::at(&data_dir).store(store).choosing(vault, MasterKey::from_env);
    let engine = Arc::new(Engine::open(options).await?);
    // Admin changes made here are the audit's `cli:<os user>`.
    let who = std::env::var("USER").or_else(|_| std::env::var("LOGNAME")).unwrap_or_else(|_| "unknown".into());
    engine.set_actor(&format!("cli:{}", switchyard_engine::echo_safe(&who).unwrap_or("unknown")));
    let result = match cli.command {
        Command::Connection(cmd) => commands::connection(&engine, cmd).await,
        Command::Profile(cmd) => commands::profile(&engine, cmd, json).await,
        Command::Verify { slug, profile, deep } => {
            let progress = progress::Progress::new(json);
            let report = engine.verify(&slug, profile.as_deref(), deep, &|e| progress.show(&e)).await;
            progress.finish();
            report.map(output::Output::view)
        }
        Command::Routing(cmd) => commands::routing(&engine, cmd).await,
        Command::Health(cmd) => commands::health(&engine, cmd).await,
        Command::Attempts(a) => attempts_cmd::run(&engine, a).await,
        Command::Usage(a) => usage_cmd::run(&engine, a).await,
        Command::Prices(a) => prices_cmd::run(&engine, a).await,
        Command::Quota { slug } => engine.quota(&slug).await.map(|q| output::Output::view(render::quota::Quota(q))),
        Command::Status { line } => engine.status().await.map(|v| match line {
            true => output::Output::view(render::status::StatusLine { line: switchyard_engine::status_line(&v) }),
            false => output::Output::view(render::status::Status(v)),
        }),
        Command::Limits(cmd) => limits_cmd::run(&engine, cmd).await,
        Command::Audit(cmd) => limits_cmd::audit(&engine, cmd).await,
        Command::Relay(cmd) => relay_cmd::run(&engine, cmd, json).await,
        Command::Vault(cmd) => relay_cmd::vault(&engine, cmd).await,
        Command::Store(cmd) => store_cmd::run(&engine, cmd).await,
        Command::Settings { key, value } => commands::settings(&engine, key.as_deref(), value.as_deref()).await,
        Command::Exec(a) => exec_cmd::run(&engine, a).await,
        Command::Pool(cmd) => pool_cmd::run(&engine, cmd).await,
        Command::Client(cmd) => client_cmd::run(&engine, cmd).await,
        Command::Export(a) => portable_cmd::export(&engine, a).await,
        Command::Import(a) => portable_cmd::import(&engine, a).await,
    };
    engine.close().await;
    result
}

/// Logs go to stderr only (stdout is for results); `SWITCHYARD_LOG` sets the filter.
/// `relay serve` runs on one thread: in the relay benchmark it used 10–20 % less CPU per
/// request than on 2 workers (no hand-offs between workers; legacy at concurrency 1: 126–128
/// vs 151–168 µs, added p50 143–148 vs 152–179 µs) with the same closed-loop throughput, and
/// keychain reads already run on the blocking pool. Everything else keeps 2 workers.
fn runtime_for(command: &Command) -> tokio::runtime::Builder {
    match command {
        Command::Relay(args::RelayCmd::Serve { .. }) => tokio::runtime::Builder::new_current_thread(),
        _ => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(2);
            b
        }
    }
}

fn init_logging() {
    switchyard_relay::init_logging();
}
