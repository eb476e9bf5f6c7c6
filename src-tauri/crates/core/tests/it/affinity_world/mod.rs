//! The conversation-affinity driver shared by the affinity and token-balance tests: it plays
//! the engine's first-attempt path (eligibility → turn and conversation bindings →
//! `select_for_call` → bindings updated) over request bodies whose keys `turn.rs` and
//! `conversation.rs` compute, on a manual clock.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use crate::fixture::{basis, criteria, profile};
use proptest::prelude::*;
use proptest::strategy::Strategy as _;
use serde_json::{json, Value};
use switchyard_core::connection::Protocol;
use switchyard_core::conversation::{conversation_key, ConversationKey};
use switchyard_core::routing::{
    select_for_call, Affinity, CallInput, CircuitBoard, ConversationBindings, ConversationStep, Eligibility, Failure,
    FailureKind, Move, MoveCause, ProfileView, Scope, SelectionReason, Strategy, Swrr, TokenLoad, TurnBindings,
    DEFAULT_AFFINITY_WINDOW,
};
use switchyard_core::turn::{turn_key, ClientIds};

pub const M: &str = "m";
pub const WINDOW: Duration = DEFAULT_AFFINITY_WINDOW;
pub const SLUG: &str = "c";

/// One call as the driver saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub profile: String,
    pub reason: SelectionReason,
    pub step: ConversationStep,
    /// The turn already had a binding (a later call of the turn, e.g. a tool loop).
    pub inside_turn: bool,
}

pub struct World {
    pub profiles: Vec<ProfileView>,
    pub board: CircuitBoard,
    pub eligibility: Eligibility,
    pub swrr: Swrr,
    pub turns: TurnBindings,
    pub conversations: ConversationBindings,
    pub strategy: Strategy,
    pub affinity: Affinity,
    /// The token load balance moves read (`None`: no balance moves, the first cut's rules).
    pub load: Option<TokenLoad>,
    pub now: Instant,
}

impl World {
    pub fn new(weights: &[u32]) -> Self {
        World {
            profiles: weights.iter().enumerate().map(|(i, &w)| profile(&format!("p{i:02}"), w, 0, &[M])).collect(),
            board: CircuitBoard::default(),
            eligibility: Eligibility::default(),
            swrr: Swrr::default(),
            turns: TurnBindings::default(),
            conversations: ConversationBindings::default(),
            strategy: Strategy::Balanced,
            affinity: Affinity::default(),
            load: None,
            now: Instant::now(),
        }
    }

    pub fn evaluate(&mut self) {
        let b = basis();
        self.eligibility.evaluate(&self.profiles, M, &criteria(&b), &self.board.view());
    }

    /// The first attempt of one request of `turn` in `conversation`, as the engine would make it.
    pub fn call(&mut self, conversation: &ConversationKey, turn: &str) -> Option<Call> {
        self.evaluate();
        let turn_bound = self.turns.get(turn, self.now).map(|b| b.profile_id.clone());
        let conversation_bound = self.conversations.get(conversation, M, self.now).cloned();
        let input = CallInput {
            strategy: self.strategy,
            affinity: self.affinity,
            turn_bound: turn_bound.as_deref(),
            conversation: conversation_bound.as_ref(),
            candidates: &self.profiles,
            eligible: self.eligibility.eligible(),
            excluded: self.eligibility.excluded(),
            load: self.load.as_ref(),
            now: self.now,
        };
        let chosen = select_for_call(&input, &mut self.swrr)?;
        if let (ConversationStep::Moved(Move { why: MoveCause::Balance, .. }), Some(load)) =
            (chosen.conversation, self.load.as_mut())
        {
            load.note_move();
        }
        let profile = self.profiles[chosen.selection.index].id.clone();
        self.turns.bind(turn, &profile, self.now);
        match chosen.bind_to() {
            Some(i) => {
                let id = self.profiles[i].id.clone();
                self.conversations.bind(conversation, M, &id, WINDOW, self.now);
            }
            None if chosen.conversation == ConversationStep::Kept => {
                self.conversations.touch(conversation, M, self.now);
            }
            None => {}
        }
        Some(Call {
            profile,
            reason: chosen.selection.reason,
            step: chosen.conversation,
            inside_turn: turn_bound.is_some(),
        })
    }

    /// What SWRR would pick now, without advancing the world's state.
    pub fn swrr_would_pick(&mut self) -> Option<usize> {
        self.evaluate();
        self.swrr.clone().select(&self.profiles, self.eligibility.eligible())
    }

    pub fn bound_profile(&self, conversation: &ConversationKey) -> Option<String> {
        self.conversations.peek(conversation, M, self.now).map(|b| b.profile_id.clone())
    }

    pub fn later(&mut self, d: Duration) {
        self.now += d;
    }
}

/// The body of call `call` (0 = the human message, then tool-loop rounds) of turn `turn` of
/// task `task`: an Anthropic conversation over one system prompt.
pub fn body(task: usize, turn: usize, call: usize) -> Value {
    let mut messages = vec![json!({"role": "user", "content": format!("task {task}")})];
    for t in 1..=turn {
        messages.push(json!({"role": "assistant", "content": "done"}));
        messages.push(json!({"role": "user", "content": format!("turn {t} of task {task}")}));
    }
    for c in 0..call {
        let id = format!("toolu_{c}");
        messages
            .push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "ls", "input": {}}]}));
        messages
            .push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "ok"}]}));
    }
    json!({"model": M, "system": [{"type": "text", "text": "you are an agent"}], "messages": messages})
}

/// (conversation key, turn key) of a body, as the relay would compute them.
pub fn keys(ids: &ClientIds, body: &Value) -> (ConversationKey, String) {
    (conversation_key(Protocol::Anthropic, SLUG, ids, body).0, turn_key(Protocol::Anthropic, SLUG, ids, body).0)
}

/// A conversation named by `x-switchyard-conversation`.
pub fn explicit(name: &str) -> ConversationKey {
    let ids = ClientIds { explicit_conversation: Some(name.to_string()), ..ClientIds::default() };
    conversation_key(Protocol::Anthropic, SLUG, &ids, &Value::Null).0
}

pub fn rate_limited() -> Failure {
    Failure::new(FailureKind::RateLimited, Scope::Credential)
}

/// Turn counts (1–8) of 100 conversations, the calls per turn (1–3) of each, and an
/// interleaving of all their turns.
pub fn conversations_strategy() -> impl proptest::strategy::Strategy<Value = (Vec<usize>, Vec<usize>, Vec<usize>)> {
    (prop::collection::vec(1usize..=8, 100), prop::collection::vec(1usize..=3, 100)).prop_flat_map(|(turns, calls)| {
        let schedule: Vec<usize> = turns.iter().enumerate().flat_map(|(c, &n)| std::iter::repeat_n(c, n)).collect();
        (Just(turns), Just(calls), Just(schedule).prop_shuffle())
    })
}
