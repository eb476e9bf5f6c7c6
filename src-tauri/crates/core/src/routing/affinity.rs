//! Affinity (docs/design.md invariant 15): what a balanced connection keeps on one key — a
//! turn's calls (`Affinity::Turn`, the first round's behaviour) or a conversation's turns
//! while its last call is younger than the window (`Affinity::Conversation`) — and
//! `select_for_call`, the selection for the first attempt of a request under it. The rules:
//!
//! - inside a turn (`turn_bound` is `Some`) the turn's binding wins while it is eligible
//!   (`sticky`), even when the conversation is bound elsewhere (the turn failed over, or a
//!   concurrent turn moved the conversation); if it left the eligible set, the turn is given
//!   the conversation's key when that is warm and eligible (`conversation`), else a fresh SWRR
//!   pick (`swrr`) — and the conversation binding stays where it is: a conversation never
//!   moves inside a turn;
//! - at a turn boundary (`turn_bound` is `None`) a warm conversation goes to its key if it is
//!   eligible (`conversation`, SWRR untouched); if not, it moves to the SWRR pick and the move
//!   is reported with its cause (`ConversationStep::Moved`); and when its key carries more
//!   than its weight's share of the token load (`token_load.rs`, `TokenLoad::balance_target`)
//!   it moves to the key furthest under its share (cause `balance`, SWRR untouched);
//! - a new or cold conversation is assigned by SWRR, so SWRR advances once per assignment and
//!   the weights hold over conversations exactly as they held over turns;
//! - `Priority` takes the first eligible key by (priority, id), `Affinity::Turn` is
//!   `select_for_turn`; neither tracks conversations.
//!
//! Failover attempts inside a request are the planner's (`planner.rs`) and never change the
//! conversation binding. Bindings are stored in `conversation_binding.rs`.

use std::time::{Duration, Instant};

use super::conversation_binding::ConversationBinding;
use super::eligibility::Exclusion;
use super::selection::{select_for_turn, Selection, SelectionReason, Strategy};
use super::swrr::{Candidate, Swrr};
use super::token_load::TokenLoad;

/// The affinity window of a balanced connection unless configured otherwise.
pub const DEFAULT_AFFINITY_WINDOW: Duration = Duration::from_secs(10 * 60);

/// What a balanced connection keeps on one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Affinity {
    /// A turn's calls; every new turn is an SWRR pick.
    Turn,
    /// A conversation's turns, while its last call is at most `window` old.
    Conversation { window: Duration },
}

impl Default for Affinity {
    /// Conversation affinity with a 10-minute window.
    fn default() -> Self {
        Affinity::Conversation { window: DEFAULT_AFFINITY_WINDOW }
    }
}

impl Affinity {
    /// The conversation window, `None` under turn affinity.
    pub fn window(self) -> Option<Duration> {
        match self {
            Affinity::Turn => None,
            Affinity::Conversation { window } => Some(window),
        }
    }
}

/// Why a warm conversation left its key at a turn boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MoveCause {
    /// The key is excluded for this model now, with its one reason (`eligibility.rs`).
    Excluded(Exclusion),
    /// The key is a profile of the connection but neither eligible nor given an exclusion
    /// (the caller left it out of `eligible`).
    Unavailable,
    /// The key is no longer a profile of the connection.
    Removed,
    /// The key carries more than its weight's share of the token load (`token_load.rs`).
    Balance,
}

impl std::fmt::Display for MoveCause {
    /// `excluded:<exclusion>`, `unavailable` or `removed`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MoveCause::Excluded(e) => write!(f, "excluded:{e}"),
            MoveCause::Unavailable => f.write_str("unavailable"),
            MoveCause::Removed => f.write_str("removed"),
            MoveCause::Balance => f.write_str("balance"),
        }
    }
}

/// A conversation moving to another key at a turn boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Move {
    /// Index of the key it leaves; `None` when that profile is gone (`MoveCause::Removed`).
    pub from: Option<usize>,
    /// Index of the key it moves to (the selection's).
    pub to: usize,
    pub why: MoveCause,
}

/// What the call does to the conversation binding; the caller applies it to its
/// `ConversationBindings` (`bind_to` says which profile to bind, if any).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConversationStep {
    /// Turn affinity or priority strategy: conversations are not tracked.
    Untracked,
    /// The conversation stays on its key: record the call (`touch`).
    Kept,
    /// A new or cold conversation is assigned to this index (bind it).
    Assigned { index: usize },
    /// A warm conversation leaves an ineligible key (bind it to `to`, record the move).
    Moved(Move),
}

/// The selection for a call and its effect on the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallSelection {
    pub selection: Selection,
    pub conversation: ConversationStep,
}

impl CallSelection {
    /// The candidate index the conversation must now be bound to, if the binding changes.
    pub fn bind_to(&self) -> Option<usize> {
        match self.conversation {
            ConversationStep::Assigned { index } | ConversationStep::Moved(Move { to: index, .. }) => Some(index),
            ConversationStep::Untracked | ConversationStep::Kept => None,
        }
    }
}

/// What `select_for_call` reads.
#[derive(Debug, Clone, Copy)]
pub struct CallInput<'a, C> {
    pub strategy: Strategy,
    pub affinity: Affinity,
    /// The turn's binding: `Some` on every call after the turn's first (a tool loop); `None`
    /// marks a turn boundary (a new turn of the conversation).
    pub turn_bound: Option<&'a str>,
    /// The conversation's binding for this model, if any (warmth is judged here, against
    /// `affinity`'s window).
    pub conversation: Option<&'a ConversationBinding>,
    pub candidates: &'a [C],
    pub eligible: &'a [usize],
    /// (index, reason) of the other candidates (`Eligibility::excluded`), for move causes.
    pub excluded: &'a [(usize, Exclusion)],
    /// The token load of this (connection, model), for balance moves at a turn boundary;
    /// `None`: no balance moves.
    pub load: Option<&'a TokenLoad>,
    pub now: Instant,
}

/// Picks the profile for the first attempt of a request under `input.affinity` (the rules
/// are in the module comment). `None` when nothing is eligible. Does not allocate once `swrr`
/// has seen this eligible set.
pub fn select_for_call<C: Candidate>(input: &CallInput<'_, C>, swrr: &mut Swrr) -> Option<CallSelection> {
    let window = match (input.strategy, input.affinity) {
        (Strategy::Balanced, Affinity::Conversation { window }) => window,
        _ => {
            let selection = select_for_turn(input.strategy, input.turn_bound, input.candidates, input.eligible, swrr)?;
            return Some(CallSelection { selection, conversation: ConversationStep::Untracked });
        }
    };
    let eligible_index =
        |id: &str| input.eligible.iter().copied().find(|&i| input.candidates.get(i).is_some_and(|c| c.id() == id));
    let warm = input.conversation.filter(|b| b.is_warm(window, input.now));
    let warm_index = warm.and_then(|b| eligible_index(&b.profile_id));

    // Inside a turn: the turn's binding, else the warm conversation's key, else SWRR.
    if let Some(turn) = input.turn_bound {
        if let Some(index) = eligible_index(turn) {
            let conversation = match warm {
                Some(_) => ConversationStep::Kept,
                None => ConversationStep::Assigned { index },
            };
            return Some(CallSelection {
                selection: Selection { index, reason: SelectionReason::Sticky },
                conversation,
            });
        }
        if let Some(index) = warm_index {
            let selection = Selection { index, reason: SelectionReason::Conversation };
            return Some(CallSelection { selection, conversation: ConversationStep::Kept });
        }
        let index = swrr.select(input.candidates, input.eligible)?;
        let conversation = match warm {
            Some(_) => ConversationStep::Kept,
            None => ConversationStep::Assigned { index },
        };
        return Some(CallSelection { selection: Selection { index, reason: SelectionReason::Swrr }, conversation });
    }

    // A turn boundary.
    if let Some(index) = warm_index {
        let target = input.load.and_then(|l| l.balance_target(index, input.candidates, input.eligible, input.now));
        if let Some(to) = target {
            let selection = Selection { index: to, reason: SelectionReason::Swrr };
            let moved = Move { from: Some(index), to, why: MoveCause::Balance };
            return Some(CallSelection { selection, conversation: ConversationStep::Moved(moved) });
        }
        let selection = Selection { index, reason: SelectionReason::Conversation };
        return Some(CallSelection { selection, conversation: ConversationStep::Kept });
    }
    let index = swrr.select(input.candidates, input.eligible)?;
    let selection = Selection { index, reason: SelectionReason::Swrr };
    let conversation = match warm {
        None => ConversationStep::Assigned { index },
        Some(b) => ConversationStep::Moved(leaving(input, &b.profile_id, index)),
    };
    Some(CallSelection { selection, conversation })
}

/// The move of a warm conversation off `from_id` to `to`, with its cause.
fn leaving<C: Candidate>(input: &CallInput<'_, C>, from_id: &str, to: usize) -> Move {
    let from = input.candidates.iter().position(|c| c.id() == from_id);
    let why = match from {
        None => MoveCause::Removed,
        Some(i) => input
            .excluded
            .iter()
            .find(|(e, _)| *e == i)
            .map_or(MoveCause::Unavailable, |&(_, r)| MoveCause::Excluded(r)),
    };
    Move { from, to, why }
}
