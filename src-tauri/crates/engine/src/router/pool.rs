//! Pools in the routing loop (invariant 24): the member above the key. A request to
//! `/c/POOL/…` is given a member when its routing starts (`Router::start_pool`) — the member a
//! request continuing a Responses answer came from (`continuity`), the warm conversation's
//! member, or SWRR over conversations (balanced) / the first member of the order (priority),
//! decided on a view of the routing state like a connection's key, among the members whose
//! gates hold and whose connection can serve the (mapped) model now — and the other able
//! members become the request's hand-off hops ([`Hops::Pool`](super::policy::Hops)), tried in
//! weight or priority order by the same code that follows a fallback chain (`fallback.rs`) when
//! the member has no eligible key or all of its keys failed credential-scoped before output. The
//! first attempt on a hop is recorded `pool:<kind>`; on delivery the conversation is kept on the
//! member that served. Inside the member, its own routing (mode, affinity, circuits) picks the
//! key. A path naming the member (`/c/POOL@MEMBER/…`, what `exec POOL` launches on) goes there
//! only. A pool that cannot take a request is refused (`pool_unavailable`, or `continuity`).

use std::collections::HashMap;
use std::sync::{Arc, PoisonError};
use std::time::Instant;

use switchyard_core::conversation::ConversationKey;
use switchyard_core::routing::{
    choose_member, hand_off_order, ConversationStep, FallbackKind, Hop, MemberPick, MemberReason, MemberSlot,
    PoolMember, Strategy, POOL_WARM_WINDOW,
};
use switchyard_core::Protocol;

use crate::error::EngineError;
use crate::router::refusal::{Refusal, Unavailable};
use crate::router::run::RunKeys;
use crate::router::snapshot::SNAPSHOT_TTL;
use crate::router::state::{Going, RoutingState, Subject, ViewKeys};
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
    conversation: Option<ConversationKey>,
    /// The member chosen at the start (`member` changes on a hand-off).
    chosen: String,
    /// The next hop to consider.
    pub(crate) next: usize,
    /// Set while the next attempt is the first on a member handed the turn: why.
    pub(crate) fresh: Option<FallbackKind>,
}

impl PoolRoute {
    /// Whether the request was handed to another member than the one chosen at its start.
    pub(crate) fn handed_off(&self) -> bool {
        self.member != self.chosen
    }
}

/// A pool request ready to route: the member's snapshot, the model it is asked for, the route.
#[derive(Debug)]
pub(crate) struct PoolStart {
    pub snapshot: Arc<Snapshot>,
    pub model: Option<String>,
    pub route: PoolRoute,
}

/// The pools' snapshots a router keeps (their conversations and SWRR positions are routing
/// state: `state/`).
pub(crate) type PoolSnapshots = HashMap<String, Arc<PoolSnapshot>>;

impl Router {
    fn pools_lock(&self) -> std::sync::MutexGuard<'_, PoolSnapshots> {
        self.pools.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The routing snapshot of pool `name` (`None`: no such pool), reloaded when older than
    /// a second. A change of members or mode forgets its conversations and SWRR state.
    pub(crate) async fn pool_snapshot(&self, name: &str) -> Result<Option<Arc<PoolSnapshot>>, EngineError> {
        let now = self.engine.monotonic();
        let cached = self.pools_lock().get(name).cloned();
        if let Some(s) = cached.as_ref().filter(|s| now.saturating_duration_since(s.loaded) < SNAPSHOT_TTL) {
            return Ok(Some(s.clone()));
        }
        let mut conn = self.engine.store.acquire().await?;
        let row = switchyard_store::pools::by_name(&mut conn, name).await?;
        drop(conn);
        let Some(row) = row else {
            self.pools_lock().remove(name);
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
        if cached.is_some_and(|c| c.members != fresh.members || c.strategy != fresh.strategy) {
            self.state.forget(Subject::Pool { id: &fresh.id });
        }
        self.pools_lock().insert(name.to_string(), fresh.clone());
        Ok(Some(fresh))
    }

    /// Chooses the member a pool request starts on (see the module's first lines), or why it
    /// cannot start. `pinned`: the member the path names.
    pub(crate) async fn start_pool(
        &self,
        pool: &PoolSnapshot,
        pinned: Option<&str>,
        model: Option<&str>,
        keys: &RunKeys,
        previous_response_id: Option<&str>,
    ) -> Result<Result<PoolStart, Unavailable>, EngineError> {
        let refuse = |message: String| Ok(Err(Unavailable::new(Refusal::PoolUnavailable, 503, None, message)));
        let Some(strategy) = pool.strategy else {
            return refuse(pool.why_not.clone());
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
        let (pick, moved) = if let Some(key) = pinned {
            let Some(i) = pool.member_index(key) else {
                return refuse(format!("pool '{}' has no member '{key}'", pool.name));
            };
            if !able.contains(&i) {
                return refuse(format!(
                    "member '{}' of pool '{}' cannot serve this request now",
                    pool.slots[i].key, pool.name
                ));
            }
            (MemberPick { index: i, reason: MemberReason::Pinned }, false)
        } else if let Some(i) = self.continued_member(&snaps, previous_response_id).await {
            if !able.contains(&i) {
                let message = format!(
                    "the response this request continues was made by member '{}', which cannot serve now",
                    pool.slots[i].key
                );
                return Ok(Err(Unavailable::new(Refusal::Continuity, 503, None, message)));
            }
            (MemberPick { index: i, reason: MemberReason::Continuity }, false)
        } else {
            let Some(chosen) = self.choose_member(pool, strategy, &able, keys.conversation.as_ref(), requested).await?
            else {
                return refuse(format!("no member of pool '{}' can serve model '{requested}' now", pool.name));
            };
            chosen
        };
        let started = self.pool_route(pool, strategy, &snaps, &able, pick, model, keys.conversation.as_ref(), moved);
        match started {
            Some(start) => Ok(Ok(start)),
            None => refuse(format!("pool '{}': its member is gone", pool.name)),
        }
    }

    /// The member of a new or warm pool conversation, decided on a view of the routing state:
    /// the warm conversation's member while it is able, else SWRR over conversations or the
    /// order; the conversation is kept on it. Returns the pick and whether the conversation
    /// moved off another member. `None`: no able member.
    async fn choose_member(
        &self,
        pool: &PoolSnapshot,
        strategy: Strategy,
        able: &[usize],
        conversation: Option<&ConversationKey>,
        requested: &str,
    ) -> Result<Option<(MemberPick, bool)>, EngineError> {
        let keys = self.pool_keys(&pool.id, conversation, requested);
        let mut view = self.state.read(&keys).await?;
        let sticky = view.conversation.as_ref().and_then(|b| pool.slots.iter().position(|s| s.key == b.profile_id));
        let pick = loop {
            let pick = choose_member(strategy, &pool.slots, able, sticky, &mut view.swrr);
            if self.state.advance(&keys, &mut view).await? {
                break pick;
            }
        };
        let Some(pick) = pick else { return Ok(None) };
        let moved = sticky.is_some_and(|s| s != pick.index);
        let step = if sticky == Some(pick.index) {
            ConversationStep::Kept
        } else {
            ConversationStep::Assigned { index: pick.index }
        };
        let going = Going { target: &pool.slots[pick.index].key, failover: false, step };
        self.state.bind(&keys, &view, going).await?;
        Ok(Some((pick, moved)))
    }

    /// The keys of a pool decision.
    fn pool_keys<'a>(
        &self,
        pool_id: &'a str,
        conversation: Option<&'a ConversationKey>,
        model: &'a str,
    ) -> ViewKeys<'a> {
        ViewKeys {
            subject: Subject::Pool { id: pool_id },
            model,
            turn: None,
            conversation,
            window: Some(POOL_WARM_WINDOW),
            now: self.engine.monotonic(),
            now_ms: self.engine.now_ms(),
        }
    }

    /// The member of the pool whose connection produced the continued response, if known.
    async fn continued_member(&self, snaps: &[Option<Arc<Snapshot>>], previous: Option<&str>) -> Option<usize> {
        let previous = previous?;
        let (now, now_ms) = (self.engine.monotonic(), self.engine.now_ms());
        for (i, snap) in snaps.iter().enumerate() {
            let Some(snap) = snap else { continue };
            if self.state.origin(&snap.connection_id, previous, now, now_ms).await.is_some() {
                return Some(i);
            }
        }
        None
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
        // A named or continued member is the only one the request may use; a request naming no
        // model routes by nothing it could hand over.
        let order = match pick.reason {
            MemberReason::Pinned | MemberReason::Continuity => Vec::new(),
            _ if model.is_none() => Vec::new(),
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
            conversation: conversation.cloned(),
            chosen: pool.slots[pick.index].key.clone(),
            next: 0,
            fresh: None,
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

    /// A pool request was delivered: a conversation handed over to another member is kept on
    /// the member that served (its start kept it on the chosen one).
    pub(crate) async fn pool_delivered(&self, route: &PoolRoute) {
        let Some(conversation) = route.conversation.as_ref().filter(|_| route.handed_off()) else { return };
        let requested = route.requested.as_deref().unwrap_or("");
        let keys = self.pool_keys(&route.pool_id, Some(conversation), requested);
        let view = crate::router::state::View::default();
        let going = Going { target: &route.member, failover: false, step: ConversationStep::Assigned { index: 0 } };
        if let Err(e) = self.state.bind(&keys, &view, going).await {
            tracing::warn!(code = e.code().as_str(), "pool conversation not kept on its member");
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A pool route on member `a` with `n` members to hand over to.
    pub(crate) fn route_with_hops(n: usize) -> PoolRoute {
        let members: Vec<String> = (0..n).map(|i| format!("m{i}")).collect();
        PoolRoute {
            pool_id: "p1".into(),
            pool: "p".into(),
            requested: Some("m".into()),
            member: "a".into(),
            reason: MemberReason::Swrr,
            hops: members.iter().map(|m| Hop { slug: m.clone(), model: None }).collect(),
            hop_members: members,
            moved: false,
            conversation: None,
            chosen: "a".into(),
            next: 0,
            fresh: None,
        }
    }

    #[test]
    fn a_route_is_handed_off_once_its_member_is_another_than_the_chosen() {
        let mut route = route_with_hops(2);
        assert!(!route.handed_off(), "the chosen member serves");
        route.member = "m0".into();
        assert!(route.handed_off(), "another member took the turn");
    }
}
