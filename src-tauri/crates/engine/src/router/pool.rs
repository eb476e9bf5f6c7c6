//! Pools in the routing loop (invariant 24): the member above the key. A request to
//! `/c/POOL/…` is given a member before the one routing loop starts — the member a request
//! continuing a Responses answer came from (`continuity`), the warm conversation's member, or
//! SWRR over conversations (balanced) / the first member of the order (priority), among the
//! members whose gates hold and whose connection can serve the (mapped) model now — and the
//! other able members become the request's hand-off hops, tried in weight or priority order
//! by the same code that follows a fallback chain (`fallback.rs`) when the member has no
//! eligible key or all of its keys failed credential-scoped before output. The first attempt
//! on a hop is recorded `pool:<kind>`; on delivery the conversation is kept on the member
//! that served. Inside the member, its own routing (mode, affinity, circuits) picks the key.
//! A path naming the member (`/c/POOL@MEMBER/…`, what `exec POOL` launches on) goes there only.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError};
use std::time::Instant;

use switchyard_core::conversation::ConversationKey;
use switchyard_core::routing::{
    choose_member, hand_off_order, Hop, MemberPick, MemberReason, MemberSlot, PoolBindings, PoolMember, Strategy, Swrr,
};
use switchyard_core::Protocol;

use crate::error::EngineError;
use crate::router::snapshot::SNAPSHOT_TTL;
use crate::router::{Router, Snapshot};

/// What a pool routes by, reloaded at most once a second like a connection's snapshot.
#[derive(Debug)]
pub struct PoolSnapshot {
    pub id: String,
    pub name: String,
    pub protocol: Protocol,
    /// `None`: the pool does not route now (not activated, or suspended).
    pub strategy: Option<Strategy>,
    /// Why it does not route, in words (`pool_unavailable`'s message).
    pub why_not: String,
    pub members: Vec<PoolMember>,
    pub(crate) slots: Vec<MemberSlot>,
    /// Per member: its gates hold.
    counting: Vec<bool>,
    loaded: Instant,
}

impl PoolSnapshot {
    /// The member named `key` (`CONN` or `CONN=MODEL`), or the only member on connection `key`.
    fn member_index(&self, key: &str) -> Option<usize> {
        self.slots.iter().position(|s| s.key == key).or_else(|| {
            let on: Vec<usize> = (0..self.members.len()).filter(|&i| self.members[i].slug == key).collect();
            (on.len() == 1).then(|| on[0])
        })
    }
}

/// The member a pool request starts on, and where it may go next: carried by the run.
#[derive(Debug, Clone)]
pub struct PoolRoute {
    pub pool_id: String,
    pub pool: String,
    /// The model the client asked for.
    pub requested: Option<String>,
    /// The member serving now (`CONN` or `CONN=MODEL`).
    pub member: String,
    pub reason: MemberReason,
    /// The other members in hand-off order, as hops (each with the model it is asked for),
    /// and their names.
    pub hops: Vec<Hop>,
    pub hop_members: Vec<String>,
    /// The conversation was on another member that can no longer serve: account-bound items
    /// of the old member's account are dropped.
    pub moved: bool,
    conversation: Option<String>,
    /// The member chosen at the start (`member` changes on a hand-off).
    chosen: String,
}

impl PoolRoute {
    /// The conversation key the member is kept for, if the request has one.
    pub(crate) fn conversation(&self) -> Option<&str> {
        self.conversation.as_deref()
    }

    /// Whether the request was handed to another member than the one chosen at its start.
    pub(crate) fn handed_off(&self) -> bool {
        self.member != self.chosen
    }
}

/// A pool request that cannot start, and why (the relay answers 503 `pool_unavailable`, or
/// `continuity`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoolRefusal {
    Unavailable(String),
    Continuity(String),
}

/// A pool request ready to route: the member's snapshot, the model it is asked for, the route.
#[derive(Debug)]
pub struct PoolStart {
    pub snapshot: Arc<Snapshot>,
    pub model: Option<String>,
    pub route: PoolRoute,
}

/// The pool boards of a router: snapshots, warm conversations, SWRR per (pool, model).
#[derive(Debug, Default)]
pub(crate) struct PoolBoard {
    snapshots: HashMap<String, Arc<PoolSnapshot>>,
    pub(crate) bindings: PoolBindings,
    swrr: HashMap<(String, String), Swrr>,
}

impl Router {
    pub(crate) fn pools_lock(&self) -> std::sync::MutexGuard<'_, PoolBoard> {
        self.pools.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The routing snapshot of pool `name` (`None`: no such pool), reloaded when older than
    /// a second. A change of members or mode forgets its conversations and SWRR state.
    pub async fn pool_snapshot(&self, name: &str) -> Result<Option<Arc<PoolSnapshot>>, EngineError> {
        let now = self.engine.monotonic();
        let cached = self.pools_lock().snapshots.get(name).cloned();
        if let Some(s) = cached.as_ref().filter(|s| now.saturating_duration_since(s.loaded) < SNAPSHOT_TTL) {
            return Ok(Some(s.clone()));
        }
        let mut conn = self.engine.store.acquire().await?;
        let row = switchyard_store::pools::by_name(&mut conn, name).await?;
        drop(conn);
        let Some(row) = row else {
            self.pools_lock().snapshots.remove(name);
            return Ok(None);
        };
        let (gates, members) = self.engine.pool_gates_with(&row, Some(&self.secrets)).await?;
        let strategy = match (row.active, row.mode.as_deref()) {
            (true, Some("priority")) if gates.routes() => Some(Strategy::Priority),
            (true, Some(_)) if gates.routes() => Some(Strategy::Balanced),
            _ => None,
        };
        let why_not = match (row.active, strategy) {
            (_, Some(_)) => String::new(),
            (false, _) => format!("pool '{name}' is not active (switchyard pool activate {name} balanced|priority)"),
            (true, None) => format!("pool '{name}' is suspended: {}", gates.why_not()),
        };
        let fresh = Arc::new(PoolSnapshot {
            id: row.id.clone(),
            name: row.name.clone(),
            protocol: row.protocol.parse()?,
            strategy,
            why_not,
            slots: MemberSlot::of(&members),
            counting: gates.members.iter().map(|g| g.out.is_none()).collect(),
            members,
            loaded: now,
        });
        let mut board = self.pools_lock();
        if cached.is_some_and(|c| c.members != fresh.members || c.strategy != fresh.strategy) {
            board.bindings.forget_pool(&fresh.id);
            board.swrr.retain(|(p, _), _| p != &fresh.id);
        }
        board.snapshots.insert(name.to_string(), fresh.clone());
        Ok(Some(fresh))
    }

    /// Chooses the member a pool request starts on (see the module's first lines), or why it
    /// cannot start. `pinned`: the member the path names.
    pub async fn pool_start(
        &self,
        pool: &PoolSnapshot,
        pinned: Option<&str>,
        model: Option<&str>,
        conversation: Option<&ConversationKey>,
        previous_response_id: Option<&str>,
    ) -> Result<Result<PoolStart, PoolRefusal>, EngineError> {
        let Some(strategy) = pool.strategy else {
            return Ok(Err(PoolRefusal::Unavailable(pool.why_not.clone())));
        };
        let requested = model.unwrap_or("");
        // Every member's snapshot and whether it can serve the request now.
        let mut snaps: Vec<Option<Arc<Snapshot>>> = Vec::with_capacity(pool.members.len());
        let mut able = Vec::new();
        for (i, m) in pool.members.iter().enumerate() {
            let snap = if pool.counting[i] { self.snapshot(&m.slug).await.ok() } else { None };
            if let Some(s) = &snap {
                if model.is_none() || self.hop_serves(s, m.model_for(requested)) {
                    able.push(i);
                }
            }
            snaps.push(snap);
        }
        let pick = if let Some(key) = pinned {
            let Some(i) = pool.member_index(key) else {
                return Ok(Err(PoolRefusal::Unavailable(format!("pool '{}' has no member '{key}'", pool.name))));
            };
            if !able.contains(&i) {
                return Ok(Err(PoolRefusal::Unavailable(format!(
                    "member '{}' of pool '{}' cannot serve this request now",
                    pool.slots[i].key, pool.name
                ))));
            }
            MemberPick { index: i, reason: MemberReason::Pinned }
        } else if let Some(i) = self.continued_member(&snaps, previous_response_id) {
            if !able.contains(&i) {
                return Ok(Err(PoolRefusal::Continuity(format!(
                    "the response this request continues was made by member '{}', which cannot serve now",
                    pool.slots[i].key
                ))));
            }
            MemberPick { index: i, reason: MemberReason::Continuity }
        } else if self.shared().is_some() {
            let Some((pick, sticky)) = self.shared_member(pool, strategy, &able, conversation, requested).await? else {
                return Ok(Err(PoolRefusal::Unavailable(format!(
                    "no member of pool '{}' can serve model '{requested}' now",
                    pool.name
                ))));
            };
            let moved = sticky.is_some_and(|s| s != pick.index);
            return Ok(self
                .pool_route(pool, strategy, &snaps, &able, pick, model, conversation, moved)
                .ok_or_else(|| PoolRefusal::Unavailable(format!("pool '{}': its member is gone", pool.name))));
        } else {
            let now = self.engine.monotonic();
            let mut board = self.pools_lock();
            let sticky = conversation
                .and_then(|c| board.bindings.get(&pool.id, c.as_str(), requested, now).map(str::to_string))
                .and_then(|k| pool.slots.iter().position(|s| s.key == k));
            let swrr = board.swrr.entry((pool.id.clone(), requested.to_string())).or_default();
            let Some(pick) = choose_member(strategy, &pool.slots, &able, sticky, swrr) else {
                return Ok(Err(PoolRefusal::Unavailable(format!(
                    "no member of pool '{}' can serve model '{requested}' now",
                    pool.name
                ))));
            };
            if let Some(c) = conversation {
                board.bindings.bind(&pool.id, c.as_str(), requested, &pool.slots[pick.index].key, now);
            }
            let moved = sticky.is_some_and(|s| s != pick.index);
            drop(board);
            return Ok(self
                .pool_route(pool, strategy, &snaps, &able, pick, model, conversation, moved)
                .ok_or_else(|| PoolRefusal::Unavailable(format!("pool '{}': its member is gone", pool.name))));
        };
        Ok(self
            .pool_route(pool, strategy, &snaps, &able, pick, model, conversation, false)
            .ok_or_else(|| PoolRefusal::Unavailable(format!("pool '{}': its member is gone", pool.name))))
    }

    /// The member of the pool whose connection produced the continued response, if known.
    fn continued_member(&self, snaps: &[Option<Arc<Snapshot>>], previous: Option<&str>) -> Option<usize> {
        let previous = previous?;
        let mut origins = self.responses_lock();
        snaps.iter().position(|s| s.as_ref().is_some_and(|s| origins.origin(&s.connection_id, previous).is_some()))
    }

    #[allow(clippy::too_many_arguments)]
    fn pool_route(
        &self,
        pool: &PoolSnapshot,
        strategy: Strategy,
        snaps: &[Option<Arc<Snapshot>>],
        able: &[usize],
        pick: MemberPick,
        model: Option<&str>,
        conversation: Option<&ConversationKey>,
        moved: bool,
    ) -> Option<PoolStart> {
        let requested = model.unwrap_or("");
        // A named or continued member is the only one the request may use.
        let order = match pick.reason {
            MemberReason::Pinned | MemberReason::Continuity => Vec::new(),
            _ => hand_off_order(strategy, &pool.slots, able, pick.index),
        };
        let member = &pool.members[pick.index];
        let route = PoolRoute {
            pool_id: pool.id.clone(),
            pool: pool.name.clone(),
            requested: model.map(str::to_string),
            member: pool.slots[pick.index].key.clone(),
            reason: pick.reason,
            hops: order
                .iter()
                .map(|&i| Hop {
                    slug: pool.members[i].slug.clone(),
                    model: Some(pool.members[i].model_for(requested).to_string()),
                })
                .collect(),
            hop_members: order.iter().map(|&i| pool.slots[i].key.clone()).collect(),
            moved,
            conversation: conversation.map(|c| c.as_str().to_string()),
            chosen: pool.slots[pick.index].key.clone(),
        };
        // `able` holds only members with a snapshot.
        let snapshot = snaps.get(pick.index).cloned().flatten()?;
        Some(PoolStart { snapshot, model: model.map(|_| member.model_for(requested).to_string()), route })
    }

    /// The models a pool lists (`GET …/models`): what its members that count serve now —
    /// a member naming its model lists that name.
    pub async fn pool_models(&self, pool: &PoolSnapshot) -> Vec<String> {
        let mut out = Vec::new();
        for (_, m) in pool.members.iter().enumerate().filter(|(i, _)| pool.counting[*i]) {
            let Ok(snap) = self.snapshot(&m.slug).await else { continue };
            let served = self.served_models(&snap);
            match &m.model {
                Some(model) if served.contains(model) => out.push(model.clone()),
                Some(_) => {}
                None => out.extend(served),
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// A pool request was delivered: its conversation is kept on the member that served.
    pub(crate) fn pool_delivered(&self, route: &PoolRoute) {
        let Some(conversation) = &route.conversation else { return };
        let requested = route.requested.as_deref().unwrap_or("");
        let now = self.engine.monotonic();
        self.pools_lock().bindings.bind(&route.pool_id, conversation, requested, &route.member, now);
        self.share_pool_binding(route);
    }
}
