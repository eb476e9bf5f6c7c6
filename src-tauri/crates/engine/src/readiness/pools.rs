//! Whether a pool may route, and why (invariant 24): its gates (each member's connection
//! exists, speaks the pool's protocol and has current evidence for the member's model —
//! `pool activate` wants every member and at least two; an active pool routes while at least
//! one member counts and is suspended otherwise), gated activation, deactivation, the status
//! (`pool status`, `routing status POOL`: members, why a member is out, shares of
//! conversations and tokens against weights) and the list. Imported pools that were active
//! wait for their gates (`restore_pending_pools`). The routing side is `router/pool.rs`.

use std::collections::HashMap;

use switchyard_core::routing::eligibility::evidence_is_current;
use switchyard_core::routing::{MemberGate, MemberOut, PoolGates, PoolMember, Strategy};
use switchyard_core::states::PoolState;
use switchyard_core::Protocol;
use switchyard_store::attempts;
use switchyard_store::connections::{self, ConnectionRow};
use switchyard_store::pools::{self, PoolRow};

use crate::config::pools::decode_members;
use crate::context::Context;
use crate::error::{EngineError, GateRefusal};
use crate::readiness::gates::Readiness;
use crate::views::{PoolGateView, PoolMemberView, PoolShareView, PoolStatus, PoolView};

/// How many of a pool's newest ledger rows its shares are computed over.
const SHARE_ROWS: i64 = 10_000;

/// Models some enabled profile with a usable credential has current evidence for.
pub(crate) fn evidenced_models(ready: &Readiness) -> Vec<String> {
    let criteria = ready.criteria();
    let mut out: Vec<String> = ready
        .routes
        .iter()
        .filter(|p| p.enabled && p.credential_health(ready.now_ms).usable())
        .filter_map(|p| p.evidence.as_ref().filter(|e| evidence_is_current(p, e, &criteria)))
        .flat_map(|e| e.models.iter().map(str::to_string))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// One member's gate line, judged on evidence (cooldowns do not decide).
pub(crate) fn member_gate(
    member: &PoolMember,
    protocol: Protocol,
    target: Option<(&ConnectionRow, &[String])>,
) -> MemberGate {
    let out = match target {
        None => Some(MemberOut::ConnectionMissing),
        Some((c, _)) if c.protocol != protocol.as_str() => Some(MemberOut::ProtocolMismatch),
        Some((_, served)) => match &member.model {
            Some(m) if !served.iter().any(|s| s == m) => Some(MemberOut::NoEvidence(m.clone())),
            None if served.is_empty() => Some(MemberOut::NoEvidence("any of its models".into())),
            _ => None,
        },
    };
    MemberGate { key: member.key(), out }
}

impl Context {
    /// The gates of a stored pool, with each member as selection sees it.
    pub(crate) async fn pool_gates(&self, row: &PoolRow) -> Result<(PoolGates, Vec<PoolMember>), EngineError> {
        self.pool_gates_with(row, None).await
    }

    /// [`Engine::pool_gates`] with secret presence from the relay's cache (no keychain call once
    /// a credential was read), as the router's pool snapshot takes it.
    pub(crate) async fn pool_gates_with(
        &self,
        row: &PoolRow,
        secrets: Option<&crate::router::secret_cache::SecretCache>,
    ) -> Result<(PoolGates, Vec<PoolMember>), EngineError> {
        let protocol: Protocol = row.protocol.parse()?;
        let all = self.pool_connections().await?;
        let stored = decode_members(row);
        let mut lines = Vec::with_capacity(stored.len());
        let mut members = Vec::with_capacity(stored.len());
        for s in &stored {
            let member = s.member(&all);
            let target = all.iter().find(|c| c.id == s.connection_id);
            let served = match target {
                Some(c) => evidenced_models(&self.readiness_with(c.clone(), secrets).await?),
                None => Vec::new(),
            };
            lines.push(member_gate(&member, protocol, target.map(|c| (c, served.as_slice()))));
            members.push(member);
        }
        Ok((PoolGates { members: lines }, members))
    }

    /// Activates `name` in `mode` (`balanced` or `priority`) if its gates hold; otherwise fails
    /// with the report (exit 5) and changes nothing.
    pub async fn pool_activate(&self, name: &str, mode: Strategy) -> Result<PoolStatus, EngineError> {
        let row = self.pool_row(name).await?;
        let (gates, _) = self.pool_gates(&row).await?;
        if !gates.activation_ok() {
            let why = gates.why_not();
            return Err(EngineError::GateFailed {
                message: format!("cannot activate pool '{name}': {why}"),
                gates: Box::new(GateRefusal::of_failures(failures(&gates))),
            });
        }
        let mut conn = self.store.acquire().await?;
        pools::set_active(&mut conn, &row.id, Some(mode.as_str()), true, row.revision, self.now_ms())
            .await
            .map_err(|e| EngineError::from_store("pool", name, e))?;
        let mut activated =
            crate::config::audit::change("pool.activate", name, Some(row.revision), Some(row.revision + 1));
        activated.detail = Some(serde_json::json!({"mode": mode.as_str()}));
        self.audit(&mut conn, activated).await?;
        drop(conn);
        self.pool_status(name).await
    }

    /// Deactivates `name` (its mode is kept for the next activation).
    pub async fn pool_deactivate(&self, name: &str) -> Result<PoolStatus, EngineError> {
        let row = self.pool_row(name).await?;
        let mut conn = self.store.acquire().await?;
        pools::set_active(&mut conn, &row.id, None, false, row.revision, self.now_ms())
            .await
            .map_err(|e| EngineError::from_store("pool", name, e))?;
        self.audit(
            &mut conn,
            crate::config::audit::change("pool.deactivate", name, Some(row.revision), Some(row.revision + 1)),
        )
        .await?;
        drop(conn);
        self.pool_status(name).await
    }

    /// Every pool, by name.
    pub async fn pool_list(&self) -> Result<Vec<PoolView>, EngineError> {
        self.restore_pending_pools().await?;
        let rows = {
            let mut conn = self.store.acquire().await?;
            pools::all(&mut conn).await?
        };
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let (gates, members) = self.pool_gates(&row).await?;
            out.push(pool_view(&row, &gates, &members));
        }
        Ok(out)
    }

    /// One pool: members, gates, state and why, shares against weights.
    pub async fn pool_status(&self, name: &str) -> Result<PoolStatus, EngineError> {
        self.restore_pending_pools().await?;
        let row = self.pool_row(name).await?;
        let (gates, members) = self.pool_gates(&row).await?;
        let view = pool_view(&row, &gates, &members);
        let note = match view.state {
            PoolState::Suspended => Some(format!(
                "suspended: no member can serve ({}); run `switchyard verify` on the members to restore them",
                gates.why_not()
            )),
            PoolState::Pending => Some("imported active: it activates once its gates hold".to_string()),
            PoolState::Active | PoolState::Inactive => None,
        };
        let shares = self.pool_shares(&row, &members).await?;
        Ok(PoolStatus {
            pool: view,
            gates: PoolGateView {
                ok: gates.activation_ok(),
                counting: i32::try_from(gates.counting()).unwrap_or(i32::MAX),
                failures: failures(&gates),
            },
            note,
            shares,
        })
    }

    /// Activates every imported pool that was active once its gates hold.
    pub(crate) async fn restore_pending_pools(&self) -> Result<(), EngineError> {
        let rows = {
            let mut conn = self.store.acquire().await?;
            pools::all(&mut conn).await?
        };
        for row in rows.into_iter().filter(|r| r.wanted && !r.active) {
            if !self.pool_gates(&row).await?.0.activation_ok() {
                continue;
            }
            let mut conn = self.store.acquire().await?;
            match pools::set_active(&mut conn, &row.id, None, true, row.revision, self.now_ms()).await {
                Ok(_) => tracing::info!(pool = %row.name, "imported pool activated: its gates hold"),
                Err(switchyard_store::StoreError::Conflict { .. }) => {}
                Err(e) => return Err(EngineError::from_store("pool", &row.name, e)),
            }
        }
        Ok(())
    }

    /// Shares of the pool's recent ledger: conversations by the member that opened them,
    /// tokens (input + output of answered attempts) by the member that served them.
    async fn pool_shares(&self, row: &PoolRow, members: &[PoolMember]) -> Result<Vec<PoolShareView>, EngineError> {
        let rows = {
            let mut conn = self.store.acquire().await?;
            attempts::for_pool(&mut conn, &row.id, 0, SHARE_ROWS).await?
        };
        let stored = decode_members(row);
        let member_of = |connection_id: &str, model: Option<&str>| -> Option<usize> {
            stored
                .iter()
                .position(|s| s.connection_id == connection_id && (s.model.is_none() || s.model.as_deref() == model))
        };
        let mut opened: HashMap<&str, usize> = HashMap::new();
        let mut tokens = vec![0f64; members.len()];
        let mut conversations = vec![0i32; members.len()];
        // Newest first: the last row seen of a conversation is its opener.
        for r in &rows {
            let Some(i) = member_of(&r.connection_id, r.model.as_deref()) else { continue };
            if let Some(c) = r.conversation.as_deref() {
                opened.insert(c, i);
            }
            if r.status.is_some_and(|s| (200..300).contains(&s)) {
                tokens[i] += (r.input_tokens.unwrap_or(0) + r.output_tokens.unwrap_or(0)) as f64;
            }
        }
        for &i in opened.values() {
            conversations[i] += 1;
        }
        let total_w: f64 = members.iter().map(|m| f64::from(m.weight)).sum();
        let total_c: f64 = conversations.iter().map(|&c| f64::from(c)).sum();
        let total_t: f64 = tokens.iter().sum();
        let share = |x: f64, total: f64| if total > 0.0 { x / total } else { 0.0 };
        Ok(members
            .iter()
            .enumerate()
            .map(|(i, m)| PoolShareView {
                member: m.key(),
                weight_share: share(f64::from(m.weight), total_w),
                conversations: conversations[i],
                conversation_share: share(f64::from(conversations[i]), total_c),
                tokens: tokens[i],
                token_share: share(tokens[i], total_t),
            })
            .collect())
    }

    pub(crate) async fn pool_connections(&self) -> Result<Vec<ConnectionRow>, EngineError> {
        let mut conn = self.store.acquire().await?;
        Ok(connections::list(&mut conn).await?)
    }
}

/// The gate failures in words, one per member out, and the count rule.
fn failures(gates: &PoolGates) -> Vec<String> {
    let mut out: Vec<String> =
        gates.members.iter().filter_map(|m| m.out.as_ref().map(|o| format!("member '{}': {o}", m.key))).collect();
    if gates.counting() < switchyard_core::routing::pool::MIN_ACTIVATION_MEMBERS {
        out.push(format!("{} member(s) can serve; a pool needs at least 2", gates.counting()));
    }
    out
}

/// The state of a pool.
pub(crate) fn pool_state(row: &PoolRow, gates: &PoolGates) -> PoolState {
    match (row.active, row.wanted) {
        (true, _) if gates.routes() => PoolState::Active,
        (true, _) => PoolState::Suspended,
        (false, true) => PoolState::Pending,
        (false, false) => PoolState::Inactive,
    }
}

pub(crate) fn pool_view(row: &PoolRow, gates: &PoolGates, members: &[PoolMember]) -> PoolView {
    let last = row
        .launch
        .as_deref()
        .and_then(|l| serde_json::from_str::<crate::config::exec_pool::LaunchState>(l).ok())
        .and_then(|l| l.last);
    PoolView {
        name: row.name.clone(),
        protocol: row.protocol.clone(),
        mode: row.mode.as_deref().and_then(Strategy::from_word),
        state: pool_state(row, gates),
        members: members
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let out = gates.members.get(i).and_then(|g| g.out.as_ref());
                PoolMemberView {
                    member: m.key(),
                    slug: m.slug.clone(),
                    model: m.model.clone(),
                    weight: i32::try_from(m.weight).unwrap_or(i32::MAX),
                    order: i32::try_from(i).unwrap_or(i32::MAX),
                    ready: out.is_none(),
                    why_out: out.map(ToString::to_string),
                }
            })
            .collect(),
        last_launched: last,
        revision: i32::try_from(row.revision).unwrap_or(i32::MAX),
    }
}
