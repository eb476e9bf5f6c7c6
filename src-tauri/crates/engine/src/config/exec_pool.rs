//! The member a `switchyard exec POOL` launch runs on (docs/design.md section 5, "Pools"): the next
//! member that counts by the members' weights — smooth weighted round robin per launch, its
//! position kept in the pool's row (`pools.launch`) and written compare-and-swap, so launches
//! from separate processes rotate through one sequence — skipping members already tried by
//! this `exec` (`--failover`). The launch points the tool at the member-pinned relay path
//! `/c/POOL@MEMBER`.

use serde::{Deserialize, Serialize};
use switchyard_core::routing::{MemberSlot, Swrr};
use switchyard_store::pools;

use crate::context::Context;
use crate::error::EngineError;

/// How often the position is re-read and written again when another launch wrote it first.
const POSITION_TRIES: usize = 5;

/// The launcher's stored position (`pools.launch`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LaunchState {
    /// SWRR's current weights by member, in candidate order.
    pub current: Vec<(String, i64)>,
    /// The member launched last.
    pub last: Option<String>,
}

/// The member a launch runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolLaunch {
    /// `CONN` or `CONN=MODEL`.
    pub member: String,
    pub slug: String,
    pub model: Option<String>,
    /// The pool's protocol (which client variables the launch sets).
    pub protocol: switchyard_core::Protocol,
    /// The relay path segment the tool is pointed at: `POOL@MEMBER`.
    pub path: String,
}

impl Context {
    /// The member of the next launch of pool `name`, among the members that count now and
    /// are not in `skip` (member names); the position is stored. A precondition error when
    /// none is left.
    pub async fn pool_launch(&self, name: &str, skip: &[String]) -> Result<PoolLaunch, EngineError> {
        for _ in 0..POSITION_TRIES {
            let row = self.pool_row(name).await?;
            if !row.active {
                return Err(EngineError::Precondition(format!(
                    "pool '{name}' is not active; run `switchyard pool activate {name} balanced|priority`"
                )));
            }
            let (gates, members) = self.pool_gates(&row).await?;
            let slots = MemberSlot::of(&members);
            let able: Vec<usize> = (0..members.len())
                .filter(|&i| gates.members.get(i).is_some_and(|g| g.out.is_none()))
                .filter(|&i| !skip.contains(&slots[i].key))
                .collect();
            let mut state: LaunchState =
                row.launch.as_deref().and_then(|l| serde_json::from_str(l).ok()).unwrap_or_default();
            let mut swrr = Swrr::from_current(state.current.clone());
            let chosen = match row.mode.as_deref() {
                Some("priority") => switchyard_core::routing::select_priority(&slots, &able),
                _ => swrr.select(&slots, &able),
            };
            let Some(i) = chosen else {
                let why = if skip.is_empty() { gates.why_not() } else { "every member was tried".to_string() };
                return Err(EngineError::Precondition(format!("no member of pool '{name}' can take a launch: {why}")));
            };
            // Only the full set's position is kept: a failover's narrowed choice is not a rotation.
            if skip.is_empty() {
                state.current = swrr.current_weights().map(|(k, w)| (k.to_string(), w)).collect();
            }
            state.last = Some(slots[i].key.clone());
            let json = serde_json::to_string(&state).map_err(|e| EngineError::Internal(e.to_string()))?;
            let mut conn = self.store.acquire().await?;
            match pools::set_launch(&mut conn, &row.id, &json, row.revision, self.now_ms()).await {
                Ok(_) => {}
                Err(switchyard_store::StoreError::Conflict { .. }) => continue,
                Err(e) => return Err(EngineError::from_store("pool", name, e)),
            }
            let m = &members[i];
            return Ok(PoolLaunch {
                member: m.key(),
                slug: m.slug.clone(),
                model: m.model.clone(),
                protocol: row.protocol.parse()?,
                path: format!("{name}@{}", m.key()),
            });
        }
        Err(EngineError::Precondition(format!("pool '{name}': other launches keep moving its position; try again")))
    }
}
