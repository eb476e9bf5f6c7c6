//! Pools across connections, the pure rules (invariant 24): members assigned to new
//! conversations by SWRR over conversations (3:2:1 over 60 → 30/20/10 exactly), requested-model
//! filtering and mapping, a warm conversation kept on its member, hand-off order and only
//! before output, priority order, and the gates.

use std::time::{Duration, Instant};

use switchyard_core::routing::pool::{MIN_ACTIVATION_MEMBERS, POOL_WARM_WINDOW};
use switchyard_core::routing::{
    choose_member, hand_off_order, may_hand_off, MemberGate, MemberOut, MemberReason, MemberSlot, PoolBindings,
    PoolGates, PoolMember, Strategy, Swrr,
};

fn members(specs: &[&str]) -> Vec<PoolMember> {
    specs.iter().map(|s| PoolMember::parse(s).unwrap()).collect()
}

#[test]
fn weights_3_2_1_over_60_new_conversations_give_30_20_10_exactly() {
    let slots = MemberSlot::of(&members(&["glm:3", "kimi=kimi-k2:2", "deepseek:1"]));
    let able = [0, 1, 2];
    let mut swrr = Swrr::default();
    let mut bindings = PoolBindings::default();
    let now = Instant::now();
    let mut counts = [0usize; 3];
    for c in 0..60 {
        let conversation = format!("conv-{c}");
        let sticky = bindings.get("p", &conversation, "m", now).and_then(|k| slots.iter().position(|s| s.key == k));
        let pick = choose_member(Strategy::Balanced, &slots, &able, sticky, &mut swrr).unwrap();
        assert_eq!(pick.reason, MemberReason::Swrr, "a new conversation is assigned by SWRR");
        bindings.bind("p", &conversation, "m", &slots[pick.index].key, now);
        counts[pick.index] += 1;
    }
    assert_eq!(counts, [30, 20, 10], "weights hold exactly over conversations (invariants 15 and 24)");
}

#[test]
fn a_warm_conversation_keeps_its_member_and_a_cold_one_is_assigned_again() {
    let slots = MemberSlot::of(&members(&["a:1", "b:1"]));
    let mut swrr = Swrr::default();
    let mut bindings = PoolBindings::default();
    let t0 = Instant::now();
    let first = choose_member(Strategy::Balanced, &slots, &[0, 1], None, &mut swrr).unwrap();
    bindings.bind("p", "c1", "m", &slots[first.index].key, t0);
    for turn in 1..10u64 {
        let now = t0 + Duration::from_secs(turn * 60);
        let sticky = bindings.get("p", "c1", "m", now).and_then(|k| slots.iter().position(|s| s.key == k));
        let pick = choose_member(Strategy::Balanced, &slots, &[0, 1], sticky, &mut swrr).unwrap();
        assert_eq!(
            (pick.index, pick.reason),
            (first.index, MemberReason::Sticky),
            "turn {turn}: a warm conversation stays on its member"
        );
        bindings.bind("p", "c1", "m", &slots[pick.index].key, now);
    }
    let cold = t0 + Duration::from_secs(9 * 60) + POOL_WARM_WINDOW + Duration::from_secs(1);
    assert_eq!(bindings.get("p", "c1", "m", cold), None, "past the warm window the conversation is new again");
    // The sticky member is no longer able: the conversation is assigned again.
    let pick = choose_member(Strategy::Balanced, &slots, &[1 - first.index], Some(first.index), &mut swrr).unwrap();
    assert_eq!(pick.index, 1 - first.index, "a member that cannot serve does not keep its conversation");
    assert_eq!(pick.reason, MemberReason::Swrr);
}

#[test]
fn requested_model_filtering_and_mapping() {
    let m = members(&["glm", "kimi=kimi-k2", "deepseek=deepseek-chat"]);
    let glm_models = vec!["glm-4.6".to_string()];
    let kimi_models = vec!["kimi-k2".to_string()];
    let ds_models = vec!["deepseek-reasoner".to_string()];
    assert!(m[0].serves("glm-4.6", &glm_models), "a member without a model serves what its connection serves");
    assert!(!m[0].serves("claude-sonnet-4", &glm_models), "…and nothing else");
    assert!(m[1].serves("claude-sonnet-4", &kimi_models), "a mapped member serves any requested name");
    assert_eq!(m[1].model_for("claude-sonnet-4"), "kimi-k2", "…as its own model");
    assert!(!m[2].serves("claude-sonnet-4", &ds_models), "a mapped member whose connection lacks the model is out");
    assert_eq!(m[0].model_for("glm-4.6"), "glm-4.6", "unmapped: the requested name unchanged");
}

#[test]
fn priority_pools_take_the_first_able_member_in_order() {
    let slots = MemberSlot::of(&members(&["b:5", "a:1", "c:9"]));
    let mut swrr = Swrr::default();
    let pick = choose_member(Strategy::Priority, &slots, &[0, 1, 2], None, &mut swrr).unwrap();
    assert_eq!((pick.index, pick.reason), (0, MemberReason::Priority), "the order given, not the weight");
    let pick = choose_member(Strategy::Priority, &slots, &[1, 2], None, &mut swrr).unwrap();
    assert_eq!(pick.index, 1, "the next in order when the first cannot serve");
    assert_eq!(hand_off_order(Strategy::Priority, &slots, &[0, 1, 2], 1), vec![0, 2], "hand-off follows the order");
}

#[test]
fn balanced_hand_off_goes_to_the_heavier_members_first_and_only_before_output() {
    let slots = MemberSlot::of(&members(&["a:1", "b:3", "c:2", "d:3"]));
    assert_eq!(
        hand_off_order(Strategy::Balanced, &slots, &[0, 1, 2, 3], 2),
        vec![1, 3, 0],
        "heavier first, ties by order, the chosen member left out"
    );
    assert!(may_hand_off(false), "before output a turn may move to another member");
    assert!(!may_hand_off(true), "after output a turn never changes member (invariant 24)");
}

#[test]
fn gates_need_every_member_and_two_to_activate_and_one_to_route() {
    let ok = |k: &str| MemberGate { key: k.into(), out: None };
    let out = |k: &str| MemberGate { key: k.into(), out: Some(MemberOut::ConnectionMissing) };
    let all = PoolGates { members: vec![ok("a"), ok("b")] };
    assert!(all.activation_ok(), "two ready members pass");
    let one = PoolGates { members: vec![ok("a")] };
    assert!(!one.activation_ok(), "fewer than {MIN_ACTIVATION_MEMBERS} members never activates");
    let removed = PoolGates { members: vec![ok("a"), ok("b"), out("c")] };
    assert!(!removed.activation_ok(), "a member whose connection was removed fails activation");
    assert!(removed.why_not().contains("member 'c': its connection was removed"), "the report says why");
    assert!(removed.routes(), "an active pool keeps routing on the members that remain");
    assert!(!PoolGates { members: vec![out("a")] }.routes(), "suspended when no member remains");
}
