//! Usage: the Activity view's chart of a connection's tokens and cost per day and key.

use std::sync::Arc;

use switchyard_engine::{Engine, UsageBy, UsageChart, UsageView};
use tauri::State;

use crate::ipc::IpcError;

/// Tokens, requests and cost of `slug` per day (the last `days`, 1–366, in the user's time
/// zone) and profile; `cost_usd` is `null` where a price is unknown, `complete` says so.
#[tauri::command]
#[specta::specta]
pub async fn usage_chart(engine: State<'_, Arc<Engine>>, slug: String, days: i32) -> Result<UsageChart, IpcError> {
    Ok(engine.usage_chart(&slug, i64::from(days)).await?)
}

/// `usage SLUG --by BY [--since T]`: requests, tokens, errors and cost per profile, model, day,
/// tag, user or pool member.
#[tauri::command]
#[specta::specta]
pub async fn usage_table(
    engine: State<'_, Arc<Engine>>,
    slug: String,
    by: String,
    since: Option<String>,
) -> Result<UsageView, IpcError> {
    let by = UsageBy::parse(&by).map_err(switchyard_engine::EngineError::from)?;
    Ok(engine.usage(&slug, since.as_deref(), by).await?)
}
