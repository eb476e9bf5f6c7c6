//! `switchyard exec POOL [--failover] -- CMD [ARGS...]`: runs CMD pinned to one member of the
//! pool, chosen by the engine per launch (`Engine::pool_launch`: SWRR over the members that
//! count, its position stored, so consecutive runs rotate), by pointing the tool at the
//! member-pinned relay path `/c/POOL@MEMBER`. With `--failover`, a child that exits non-zero
//! is launched again on the next member not yet tried; a table of each member tried, its exit
//! code and what the relay recorded for it goes to stderr, and the exit code is 1 when every
//! member failed.

use std::sync::Arc;

use serde::Serialize;
use switchyard_engine::{Engine, EngineError};

use crate::exec_cmd::{client_command, relay_for, run_child, ExecArgs};
use crate::output::{note, Output};

/// One launch: the member, the child's exit code, what the relay recorded.
#[derive(Debug, Clone, Serialize)]
pub struct Tried {
    pub member: String,
    pub exit_code: u8,
    pub relay: String,
}

pub async fn run(engine: &Arc<Engine>, a: ExecArgs) -> Result<Output, EngineError> {
    let pool = a.slug.clone();
    if a.profile.is_some() {
        return Err(EngineError::Invalid(switchyard_engine::InvalidInput::new(
            "profile",
            "a pool launches on a member; --profile names a connection's login",
        )));
    }
    let relay = relay_for(engine, &pool).await?;
    let mut tried: Vec<Tried> = Vec::new();
    loop {
        let skip: Vec<String> = tried.iter().map(|t| t.member.clone()).collect();
        let launch = match engine.pool_launch(&pool, &skip).await {
            Ok(l) => l,
            Err(e) if !tried.is_empty() => {
                tracing::debug!(error = %e, "no member left to try");
                break;
            }
            Err(e) => {
                relay.stop().await;
                return Err(e);
            }
        };
        let started = engine.now_rfc3339();
        let root = format!("{}@{}", relay.root, launch.member);
        let token = engine.relay_token(false).await?;
        let client = client_command(&a.command, &root, launch.protocol.as_str(), &token);
        drop(token);
        note(&format!("switchyard exec: {pool} -> member {}", launch.member));
        let code = run_child(&client.program, client.cmd).await?;
        relay.flush().await;
        let recorded = relay_outcome(engine, &pool, &launch.member, &started).await;
        tried.push(Tried { member: launch.member, exit_code: code, relay: recorded });
        if code == 0 || !a.failover {
            relay.stop().await;
            if a.failover {
                note(&table(&tried));
            }
            return Ok(Output::Exit(code));
        }
    }
    relay.stop().await;
    note(&table(&tried));
    note(&format!("switchyard exec: every member of pool '{pool}' failed"));
    Ok(Output::Exit(1))
}

/// What the relay recorded for the member's newest attempt of this launch: its failure kind
/// and status, or its reason when it answered; `-` when nothing was recorded.
async fn relay_outcome(engine: &Engine, pool: &str, member: &str, since: &str) -> String {
    let Ok(rows) = engine.attempts_since(pool, since, 50).await else { return "-".to_string() };
    rows.iter()
        .find(|r| r.member.as_deref() == Some(member))
        .map(|r| match (&r.failure_kind, r.status) {
            (Some(kind), Some(status)) => format!("{kind} ({status})"),
            (Some(kind), None) => kind.clone(),
            (None, Some(status)) => format!("{} ({status})", r.reason),
            (None, None) => r.reason.clone(),
        })
        .unwrap_or_else(|| "-".to_string())
}

fn table(tried: &[Tried]) -> String {
    let mut out = vec![format!("{:<28} {:>4}  RELAY", "MEMBER", "EXIT")];
    out.extend(tried.iter().map(|t| format!("{:<28} {:>4}  {}", t.member, t.exit_code, t.relay)));
    out.join("\n")
}
