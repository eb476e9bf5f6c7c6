//! Conversation affinity (invariant 15), pure and on a manual clock: a small driver plays the
//! engine's first-attempt path (eligibility → turn and conversation bindings →
//! `select_for_call` → bindings updated) over request bodies whose turn and conversation keys
//! are computed by `turn.rs` and `conversation.rs`. Checks that SWRR weights hold over new
//! conversations, warm conversations keep their key, cold ones are re-assigned, a conversation
//! moves only at a turn boundary with its cause, turn affinity is the first round's selection,
//! choices are deterministic, the table is bounded and holds no raw ids.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::fixture::NOW;
use proptest::prelude::*;
use proptest::strategy::Strategy as _;
use serde_json::{json, Value};
use switchyard_core::routing::{
    select_for_call, select_for_turn, Affinity, CallInput, ConversationBindings, ConversationStep, Exclusion, Move,
    MoveCause, SelectionReason, Strategy, Swrr, TurnBindings,
};
use switchyard_core::turn::ClientIds;

use crate::affinity_world::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn weights_5_3_2_hold_over_100_new_conversations((turns, calls, schedule) in conversations_strategy()) {
        let mut w = World::new(&[5, 3, 2]);
        let mut next_turn = vec![0usize; turns.len()];
        let mut assigned: Vec<Option<String>> = vec![None; turns.len()];
        let mut assignments: Vec<String> = Vec::new();
        for &c in &schedule {
            let turn = next_turn[c];
            next_turn[c] += 1;
            for call in 0..calls[c] {
                let (conversation, turn_key) = keys(&ClientIds::default(), &body(c, turn, call));
                let got = w.call(&conversation, &turn_key);
                w.later(Duration::from_millis(100));
                prop_assert!(got.is_some(), "every profile is eligible");
                let Some(got) = got else { continue };
                let want = match (turn, call) {
                    (0, 0) => (SelectionReason::Swrr, "a new conversation is assigned by SWRR"),
                    (_, 0) => (SelectionReason::Conversation, "a new turn of a warm conversation keeps its key"),
                    _ => (SelectionReason::Sticky, "a later call of a turn keeps the turn's binding"),
                };
                prop_assert_eq!(got.reason, want.0, "{} (conversation {}, turn {}, call {})", want.1, c, turn, call);
                match &assigned[c] {
                    None => {
                        prop_assert!(matches!(got.step, ConversationStep::Assigned { .. }), "the first call binds it");
                        assigned[c] = Some(got.profile.clone());
                        assignments.push(got.profile.clone());
                    }
                    Some(key) => {
                        prop_assert_eq!(&got.profile, key, "conversation {} stays on its key in every call", c);
                        prop_assert_eq!(got.step, ConversationStep::Kept, "nothing moves with a steady eligible set");
                    }
                }
            }
        }
        let count = |seq: &[String], id: &str| seq.iter().filter(|p| p.as_str() == id).count();
        prop_assert_eq!(
            [count(&assignments, "p00"), count(&assignments, "p01"), count(&assignments, "p02")],
            [50, 30, 20],
            "over 100 new conversations the weights 5:3:2 hold exactly, however many turns each runs"
        );
        for window in assignments.windows(10) {
            prop_assert_eq!(
                [count(window, "p00"), count(window, "p01"), count(window, "p02")],
                [5, 3, 2],
                "any sum(weights) consecutive new conversations split by the weights"
            );
        }
    }
}

#[test]
fn a_warm_conversation_keeps_its_key_across_turns() {
    let mut w = World::new(&[1, 1]);
    let ids = ClientIds::default();
    let (a, a0) = keys(&ids, &body(0, 0, 0));
    let first = w.call(&a, &a0).map(|c| c.profile);
    let (b, b0) = keys(&ids, &body(1, 0, 0));
    let other = w.call(&b, &b0).map(|c| c.profile);
    assert_ne!(first, other, "two new conversations over 1:1 weights take both keys");
    for turn in 1..=4 {
        w.later(Duration::from_secs(9 * 60));
        let (a_again, a_turn) = keys(&ids, &body(0, turn, 0));
        assert_eq!(a_again, a, "later turns have the same conversation key (the opening)");
        let got = w.call(&a_again, &a_turn);
        assert_eq!(
            got.as_ref().map(|c| (c.profile.clone(), c.reason, c.step)),
            first.clone().map(|p| (p, SelectionReason::Conversation, ConversationStep::Kept)),
            "turn {turn}, 9 minutes after the last call: the conversation is warm and keeps its key"
        );
    }
    w.later(WINDOW);
    let (a_edge, a_turn) = keys(&ids, &body(0, 5, 0));
    assert_eq!(
        w.call(&a_edge, &a_turn).map(|c| c.reason),
        Some(SelectionReason::Conversation),
        "exactly the window after the last call is still warm"
    );

    // The same history under turn affinity rotates every new turn.
    let mut t = World::new(&[1, 1]);
    t.affinity = Affinity::Turn;
    let picks: Vec<Option<String>> = (0..4)
        .map(|turn| {
            let (c, k) = keys(&ids, &body(0, turn, 0));
            t.call(&c, &k).map(|c| c.profile)
        })
        .collect();
    assert_ne!(picks[0], picks[1], "turn affinity gives every new turn an SWRR pick");
}

#[test]
fn a_cold_conversation_is_reassigned_by_swrr() {
    let mut w = World::new(&[1, 1]);
    let (a, b, c) = (explicit("a"), explicit("b"), explicit("c"));
    let a0 = w.call(&a, "a/0").map(|c| c.profile);
    let _ = w.call(&b, "b/0");
    let _ = w.call(&c, "c/0");
    assert_eq!(a0.as_deref(), Some("p00"), "the first conversation takes p00 (tie → smaller id)");
    w.later(WINDOW + Duration::from_millis(1));
    let want = w.swrr_would_pick();
    let got = w.call(&a, "a/1");
    assert_eq!(want.and_then(|i| w.profiles.get(i)).map(|p| p.id.as_str()), Some("p01"), "SWRR's next pick is p01");
    assert_eq!(
        got.map(|c| (c.profile, c.reason, c.step)),
        want.map(|i| (w.profiles[i].id.clone(), SelectionReason::Swrr, ConversationStep::Assigned { index: i })),
        "older than the window, the conversation is cold: SWRR assigns it afresh (not a move)"
    );
    assert_eq!(w.bound_profile(&a).as_deref(), Some("p01"), "and it is bound to its new key");
}

#[test]
fn an_ineligible_key_moves_the_conversation_at_the_next_turn_boundary_and_never_inside_a_turn() {
    let mut w = World::new(&[1, 1, 1]);
    let a = explicit("a");
    let start = w.call(&a, "t0");
    assert_eq!(start.map(|c| c.profile), Some("p00".to_string()), "a new conversation on p00");
    let _ = w.board.record_failure("p00", M, &rate_limited(), NOW);

    // Inside turn t0 the turn must leave p00, but the conversation does not move.
    let want = w.swrr_would_pick();
    let looped = w.call(&a, "t0");
    assert_eq!(
        looped.as_ref().map(|c| (c.profile.clone(), c.reason, c.step, c.inside_turn)),
        want.map(|i| (w.profiles[i].id.clone(), SelectionReason::Swrr, ConversationStep::Kept, true)),
        "a turn whose key is excluded is re-picked by SWRR, and the conversation step is Kept, not Moved"
    );
    assert_eq!(w.bound_profile(&a).as_deref(), Some("p00"), "the conversation stays bound to p00 inside the turn");
    let turn_key = looped.map(|c| c.profile);
    let again = w.call(&a, "t0");
    assert_eq!(
        again.map(|c| (c.profile, c.reason)),
        turn_key.clone().map(|p| (p, SelectionReason::Sticky)),
        "the turn's later calls stay on its new binding"
    );
    assert_eq!(w.bound_profile(&a).as_deref(), Some("p00"), "still no move inside the turn");

    // The next turn boundary moves the conversation, to the SWRR pick, with the cause.
    let want = w.swrr_would_pick();
    let moved = w.call(&a, "t1");
    assert_eq!(
        moved.as_ref().map(|c| (c.reason, c.step)),
        want.map(|to| (
            SelectionReason::Swrr,
            ConversationStep::Moved(Move { from: Some(0), to, why: MoveCause::Excluded(Exclusion::CircuitOpen) })
        )),
        "at the turn boundary the warm conversation moves off its excluded key, reported with why"
    );
    let new_key = moved.map(|c| c.profile);
    assert_eq!(w.bound_profile(&a), new_key, "the conversation is bound to its new key");
    assert_eq!(w.call(&a, "t1").map(|c| c.reason), Some(SelectionReason::Sticky), "t1's tool loop is sticky");

    // p00 recovers: the conversation does not go back (it moved; its cache is elsewhere now).
    w.board.reset_circuit("p00", None);
    let back = w.call(&a, "t2");
    assert_eq!(
        back.map(|c| (c.profile, c.reason, c.step)),
        new_key.map(|p| (p, SelectionReason::Conversation, ConversationStep::Kept)),
        "after a move the conversation keeps its new key"
    );
}

#[test]
fn a_turns_later_calls_stay_on_its_binding_even_after_a_concurrent_turn_moved_the_conversation() {
    let mut w = World::new(&[1, 1, 1]);
    let a = explicit("a"); // e.g. an agent and its sub-agent: one conversation, two turns at once
    assert_eq!(w.call(&a, "main").map(|c| c.profile), Some("p00".to_string()), "the main turn takes p00");
    w.profiles[0].enabled = false;
    let sub = w.call(&a, "sub");
    let Some(sub) = sub else {
        unreachable!("two profiles are still eligible");
    };
    assert!(
        matches!(
            sub.step,
            ConversationStep::Moved(Move { from: Some(0), why: MoveCause::Excluded(Exclusion::Disabled), .. })
        ),
        "the sub-agent's new turn moves the conversation off the disabled key: {sub:?}"
    );
    w.profiles[0].enabled = true;
    let main = w.call(&a, "main");
    assert_eq!(
        main.map(|c| (c.profile, c.reason, c.step)),
        Some(("p00".to_string(), SelectionReason::Sticky, ConversationStep::Kept)),
        "the main turn's later calls stay on its own binding, not the conversation's new key"
    );
    assert_eq!(w.bound_profile(&a), Some(sub.profile.clone()), "and the conversation is not moved back inside a turn");
    assert_eq!(
        w.call(&a, "next").map(|c| c.profile),
        Some(sub.profile),
        "the next turn goes to the conversation's key"
    );
}

#[test]
fn a_removed_key_moves_the_conversation_with_cause_removed() {
    let mut w = World::new(&[1, 1]);
    let a = explicit("a");
    assert_eq!(w.call(&a, "t0").map(|c| c.profile), Some("p00".to_string()), "a new conversation on p00");
    w.profiles.remove(0);
    let got = w.call(&a, "t1").map(|c| c.step);
    assert_eq!(
        got,
        Some(ConversationStep::Moved(Move { from: None, to: 0, why: MoveCause::Removed })),
        "a deleted profile has no index and no exclusion: the move says removed"
    );
    assert_eq!(MoveCause::Excluded(Exclusion::CircuitOpen).to_string(), "excluded:circuit_open", "ledger wording");
}

/// One step of a random history.
#[derive(Debug, Clone)]
enum Op {
    /// A call of conversation `.0`: a new turn when `.1`, else the current turn's next call.
    Call(usize, bool),
    /// Flips profile `.0`'s enabled flag.
    Toggle(usize),
    /// The clock moves this many seconds.
    Wait(u64),
}

fn ops() -> impl proptest::strategy::Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        6 => (0usize..6, any::<bool>()).prop_map(|(c, t)| Op::Call(c, t)),
        1 => (0usize..3).prop_map(Op::Toggle),
        2 => (0u64..=400).prop_map(Op::Wait),
    ];
    prop::collection::vec(op, 1..120)
}

/// Plays `ops` on a fresh world; every call's outcome in order.
fn play(ops: &[Op], strategy: Strategy, affinity: Affinity) -> Vec<Option<Call>> {
    let mut w = World::new(&[3, 2, 1]);
    w.strategy = strategy;
    w.affinity = affinity;
    let mut turn_of: HashMap<usize, usize> = HashMap::new();
    let mut out = Vec::new();
    for op in ops {
        match *op {
            Op::Call(c, new_turn) => {
                let turn = turn_of.entry(c).or_insert(0);
                if new_turn {
                    *turn += 1;
                }
                let conversation = explicit(&format!("conv-{c}"));
                out.push(w.call(&conversation, &format!("conv-{c}/turn-{turn}")));
            }
            Op::Toggle(p) => w.profiles[p].enabled = !w.profiles[p].enabled,
            Op::Wait(s) => w.later(Duration::from_secs(s)),
        }
    }
    out
}

proptest! {
    #[test]
    fn same_history_same_choices_and_moves_only_at_turn_boundaries(history in ops()) {
        let first = play(&history, Strategy::Balanced, Affinity::default());
        let second = play(&history, Strategy::Balanced, Affinity::default());
        prop_assert_eq!(&first, &second, "the same history must give the same choices");
        for call in first.iter().flatten() {
            if call.inside_turn {
                prop_assert!(
                    !matches!(call.step, ConversationStep::Moved(_)),
                    "a conversation never moves inside a turn: {:?}", call
                );
            }
            if call.reason == SelectionReason::Conversation {
                prop_assert_eq!(call.step, ConversationStep::Kept, "a warm conversation's key keeps it");
            }
        }
    }

    #[test]
    fn turn_affinity_and_priority_select_exactly_as_select_for_turn(history in ops(), priority in any::<bool>()) {
        let strategy = if priority { Strategy::Priority } else { Strategy::Balanced };
        let mut w = World::new(&[3, 2, 1]);
        let (mut old_swrr, mut turns) = (Swrr::default(), TurnBindings::default());
        let affinity = if priority { Affinity::default() } else { Affinity::Turn };
        let mut turn_of: HashMap<usize, usize> = HashMap::new();
        for op in &history {
            match *op {
                Op::Call(c, new_turn) => {
                    let turn = turn_of.entry(c).or_insert(0);
                    if new_turn {
                        *turn += 1;
                    }
                    let turn = format!("conv-{c}/turn-{turn}");
                    w.evaluate();
                    let bound = turns.get(&turn, w.now).map(|b| b.profile_id.clone());
                    let old = select_for_turn(strategy, bound.as_deref(), &w.profiles, w.eligibility.eligible(), &mut old_swrr);
                    let input = CallInput {
                        strategy,
                        affinity,
                        turn_bound: bound.as_deref(),
                        conversation: None,
                        candidates: &w.profiles,
                        eligible: w.eligibility.eligible(),
                        excluded: w.eligibility.excluded(),
                        load: None,
                        now: w.now,
                    };
                    let new = select_for_call(&input, &mut w.swrr);
                    prop_assert_eq!(new.map(|s| s.selection), old, "the same profile for the same reason");
                    prop_assert!(new.is_none_or(|s| s.conversation == ConversationStep::Untracked), "no conversation state");
                    if let Some(s) = old {
                        turns.bind(&turn, &w.profiles[s.index].id, w.now);
                    }
                }
                Op::Toggle(p) => w.profiles[p].enabled = !w.profiles[p].enabled,
                Op::Wait(s) => w.later(Duration::from_secs(s)),
            }
        }
    }

    #[test]
    fn the_table_stays_within_its_bound(capacity in 1usize..8, steps in prop::collection::vec((0usize..40, 0u64..200), 1..200)) {
        let mut table = ConversationBindings::new(capacity);
        let mut now = Instant::now();
        for (c, wait) in steps {
            now += Duration::from_secs(wait);
            let key = explicit(&format!("conv-{c}"));
            if c % 3 == 0 && table.touch(&key, M, now) {
                prop_assert!(table.peek(&key, M, now).is_some(), "a touched binding is live");
            } else {
                table.bind(&key, M, "p00", WINDOW, now);
                prop_assert!(table.peek(&key, M, now).is_some(), "the conversation just bound is kept");
            }
            prop_assert!(table.len() <= capacity, "at most {} conversations, got {}", capacity, table.len());
        }
    }
}

#[test]
fn the_bindings_hold_hashes_never_raw_ids() {
    let mut w = World::new(&[1, 1]);
    let raw =
        ["raw-claude-session-1b2c", "raw-metadata-session-9f8e", "raw-prompt-cache-key-77aa", "raw-explicit-5d5d"];
    let requests: [(Vec<(&str, &str)>, Value); 4] = [
        (vec![("x-claude-code-session-id", raw[0])], body(0, 0, 0)),
        (vec![], json!({"metadata": {"user_id": format!(r#"{{"session_id":"{}"}}"#, raw[1])}, "messages": []})),
        (vec![], json!({"prompt_cache_key": raw[2], "input": "hi"})),
        (vec![("x-switchyard-conversation", raw[3])], body(1, 0, 0)),
    ];
    for (i, (headers, body)) in requests.iter().enumerate() {
        let ids = ClientIds::read(|name| headers.iter().find(|(n, _)| *n == name).map(|(_, v)| *v), body);
        let (conversation, turn) = keys(&ids, body);
        let k = conversation.as_str();
        assert!(!k.contains(raw[i]), "the key is not the raw id: {k}");
        assert!(k.len() == 34 && k[2..].chars().all(|c| c.is_ascii_hexdigit()), "a prefix and 32 hex chars: {k}");
        let _ = w.call(&conversation, &turn);
    }
    assert_eq!(w.conversations.len(), 4, "four conversations are bound");
    let stored = format!("{:?}", w.conversations);
    for id in raw {
        assert!(!stored.contains(id), "the table never holds a raw client id ({id})");
    }
}
