//! The routing state in this process's memory ([`LocalState`]): SWRR positions with a revision
//! each (a decision made on a copy is written back by compare-and-swap, so concurrent requests
//! keep the weights exact), turn bindings, conversation bindings, pools' conversation members
//! and response origins, each a bounded table behind its own mutex. A desktop or a relay on its
//! own data dir keeps its state here; a team relay's [`SharedState`](super::shared::SharedState)
//! keeps these tables as its cache of the store.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use switchyard_core::routing::hasher::FastMap;
use switchyard_core::routing::{
    ConversationBinding, ConversationBindings, ConversationStep, PoolBindings, ProbeLease, Swrr, TurnBindings,
    POOL_WARM_WINDOW,
};

use super::origins::ResponseOrigins;
use super::{Claim, Going, RoutingState, Subject, View, ViewKeys};
use crate::error::EngineError;
use crate::router::quota::QuotaBoard;

/// A stored SWRR position and the revision it is at.
#[derive(Debug, Default)]
struct Position {
    swrr: Swrr,
    revision: i64,
}

/// SWRR positions by target (connection id or `pool:<id>`), then model.
type Positions = FastMap<String, FastMap<String, Position>>;

#[derive(Debug, Default)]
pub(crate) struct LocalState {
    positions: Mutex<Positions>,
    turns: Mutex<TurnBindings>,
    /// (conversation key, model) → the profile a conversation is kept on.
    conversations: Mutex<ConversationBindings>,
    /// (pool, conversation, model) → the member a pool conversation is kept on.
    members: Mutex<PoolBindings>,
    origins: Mutex<ResponseOrigins>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl LocalState {
    /// The SWRR position of (target, model) as a view, with the bindings of `keys`.
    pub(super) fn view(&self, keys: &ViewKeys<'_>) -> View {
        let target = keys.swrr_target();
        let (swrr, revision) = lock(&self.positions)
            .get(target.as_ref())
            .and_then(|m| m.get(keys.model))
            .map_or((Swrr::default(), 0), |p| (p.swrr.clone(), p.revision));
        let mut view = View::read(swrr, revision);
        view.turn = keys.turn.and_then(|t| lock(&self.turns).get(t, keys.now).map(|b| b.profile_id.clone()));
        view.conversation = self.conversation(keys);
        view
    }

    fn conversation(&self, keys: &ViewKeys<'_>) -> Option<ConversationBinding> {
        let key = keys.conversation?;
        match keys.subject {
            Subject::Connection { .. } => lock(&self.conversations).get(key, keys.model, keys.now).cloned(),
            Subject::Pool { id } => {
                let member = lock(&self.members).get(id, key.as_str(), keys.model, keys.now)?.to_string();
                Some(ConversationBinding { profile_id: member, last_call: keys.now, window: POOL_WARM_WINDOW })
            }
        }
    }

    /// Writes `view`'s position when nobody advanced it since it was read; otherwise refreshes
    /// `view` with the position as it is.
    pub(super) fn write_position(&self, keys: &ViewKeys<'_>, view: &mut View) -> bool {
        let target = keys.swrr_target();
        let mut positions = lock(&self.positions);
        // An existing position is compared and overwritten where it lies (one lookup, its
        // entries' buffer reused); only the first decision on a (target, model) allocates keys.
        let current = match positions.get_mut(target.as_ref()).and_then(|m| m.get_mut(keys.model)) {
            Some(p) if p.revision == view.revision => {
                p.swrr.clone_from(&view.swrr);
                let current = p.revision;
                p.revision = current + 1;
                current
            }
            Some(p) => {
                let moved = View::read(p.swrr.clone(), p.revision);
                *view = View { turn: view.turn.take(), conversation: view.conversation.take(), ..moved };
                return false;
            }
            None if view.revision != 0 => {
                *view = View {
                    turn: view.turn.take(),
                    conversation: view.conversation.take(),
                    ..View::read(Swrr::default(), 0)
                };
                return false;
            }
            None => {
                let position = Position { swrr: view.swrr.clone(), revision: 1 };
                positions.entry(target.into_owned()).or_default().insert(keys.model.to_string(), position);
                0
            }
        };
        view.revision = current + 1;
        view.moves = view.swrr.moves();
        true
    }

    /// Folds a binding another replica made into the tables (`None`: there is none).
    pub(super) fn adopt_turn(&self, turn: &str, target: Option<&str>, now: Instant) {
        let mut turns = lock(&self.turns);
        match target {
            Some(t) if turns.peek(turn, now).is_none_or(|b| b.profile_id != t) => turns.bind(turn, t, now),
            Some(_) => {}
            None => {
                turns.remove(turn);
            }
        }
    }

    /// Folds a conversation binding another replica made (last used `last`, bound with
    /// `window`) into the tables.
    pub(super) fn adopt_conversation(&self, keys: &ViewKeys<'_>, binding: Option<(&str, Instant, Duration)>) {
        let Some(key) = keys.conversation else { return };
        match (keys.subject, binding) {
            (Subject::Connection { .. }, Some((target, last, window))) => {
                lock(&self.conversations).bind(key, keys.model, target, window, last);
            }
            (Subject::Connection { .. }, None) => {
                lock(&self.conversations).remove(key);
            }
            (Subject::Pool { id }, Some((target, last, _))) => {
                lock(&self.members).bind(id, key.as_str(), keys.model, target, last);
            }
            (Subject::Pool { id }, None) => {
                lock(&self.members).remove(id, key.as_str(), keys.model);
            }
        }
    }
}

impl RoutingState for LocalState {
    async fn read(&self, keys: &ViewKeys<'_>) -> Result<View, EngineError> {
        Ok(self.view(keys))
    }

    async fn advance(&self, keys: &ViewKeys<'_>, view: &mut View) -> Result<bool, EngineError> {
        if !view.advanced() {
            return Ok(true);
        }
        Ok(self.write_position(keys, view))
    }

    async fn bind(&self, keys: &ViewKeys<'_>, _view: &View, going: Going<'_>) -> Result<(), EngineError> {
        if let Some(turn) = keys.turn {
            let mut turns = lock(&self.turns);
            if going.failover {
                let _ = turns.rebind(turn, going.target, keys.now);
            } else {
                turns.bind(turn, going.target, keys.now);
            }
        }
        let Some(key) = keys.conversation else { return Ok(()) };
        match keys.subject {
            Subject::Connection { .. } => {
                let Some(window) = keys.window else { return Ok(()) };
                let mut conversations = lock(&self.conversations);
                match going.step {
                    ConversationStep::Untracked => {}
                    ConversationStep::Kept => {
                        conversations.touch(key, keys.model, keys.now);
                    }
                    ConversationStep::Assigned { .. } | ConversationStep::Moved(_) => {
                        conversations.bind(key, keys.model, going.target, window, keys.now);
                    }
                }
            }
            // A pool conversation is kept on its member at every call that names it.
            Subject::Pool { id } => {
                if going.step != ConversationStep::Untracked {
                    lock(&self.members).bind(id, key.as_str(), keys.model, going.target, keys.now);
                }
            }
        }
        Ok(())
    }

    async fn claim_probe(&self, _lease: &ProbeLease, _now_ms: i64) -> Result<Claim, EngineError> {
        Ok(Claim::Ours(None))
    }

    async fn origin(&self, connection_id: &str, response_id: &str, now: Instant, _now_ms: i64) -> Option<String> {
        lock(&self.origins).origin(connection_id, response_id, now)
    }

    fn remember_origin(&self, connection_id: &str, response_id: &str, profile_id: &str, now: Instant, _now_ms: i64) {
        lock(&self.origins).remember(connection_id, response_id, profile_id, now);
    }

    async fn adopt_quota(&self, _board: &QuotaBoard, since: i64) -> i64 {
        since
    }

    fn committed(&self, turn: &str, now: Instant) -> bool {
        lock(&self.turns).peek(turn, now).is_some_and(|b| b.committed)
    }

    fn commit(&self, turn: &str, now: Instant) {
        lock(&self.turns).commit(turn, now);
    }

    fn forget(&self, subject: Subject<'_>) {
        match subject {
            Subject::Connection { id, .. } => {
                lock(&self.positions).remove(id);
            }
            Subject::Pool { id } => {
                lock(&self.members).forget_pool(id);
                lock(&self.positions).remove(&format!("pool:{id}"));
            }
        }
    }
}
