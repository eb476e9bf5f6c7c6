//! The selection path (eligibility into a reused buffer + SWRR pick, also under conversation
//! affinity: `select_for_call` keeping, assigning and moving conversations) must not heap-allocate
//! once the eligible set is steady. A counting global allocator measures it; this file holds
//! a single test so no other test allocates concurrently.

#[path = "it/fixture/mod.rs"]
mod fixture;

use std::alloc::System;
use std::hint::black_box;

use fixture::{basis, criteria, pool, NOW};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::time::{Duration, Instant};
use switchyard_core::routing::{
    select_for_call, select_for_turn, Affinity, CallInput, CircuitBoard, ConversationBinding, Eligibility, Failure,
    FailureKind, Scope, Strategy, Swrr, SwrrTable, TokenLoad,
};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn steady_eligibility_and_selection_do_not_allocate() {
    let models: Vec<String> = (0..16).map(|i| format!("model-{i:02}")).collect();
    let model_refs: Vec<&str> = models.iter().map(String::as_str).collect();
    let profiles = pool(8, &model_refs);
    let board = CircuitBoard::default();
    let forbidden = Failure::new(FailureKind::ModelForbidden, Scope::CredentialModel);
    let _ = board.record_failure("p03", "model-05", &forbidden, NOW);
    let b = basis();
    let crit = criteria(&b);
    let mut table = SwrrTable::default();
    let mut e = Eligibility::default();
    let t0 = Instant::now();
    let window = Duration::from_secs(600);
    // p03 is excluded for model-05 only: conversations bound to it move there.
    let bound = |id: &str| ConversationBinding { profile_id: id.to_string(), last_call: t0, window };
    let conversations = [bound("p02"), bound("p03")];
    // p02 carries far more than its share of the load: balance moves are considered too.
    let mut load = TokenLoad::default();
    for p in 0..8 {
        load.record(&format!("p{p:02}"), if p == 2 { 9_000_000 } else { 1_000_000 }, t0);
    }
    let mut run = |rounds: usize| {
        let mut picked = 0usize;
        for r in 0..rounds {
            let model = models[r % models.len()].as_str();
            e.evaluate(&profiles, model, &crit, &board.view());
            let bound = (r % 3 == 0).then_some("p01");
            let sel = table
                .with_state("conn", model, |s| select_for_turn(Strategy::Balanced, bound, &profiles, e.eligible(), s));
            let prio = select_for_turn(Strategy::Priority, None, &profiles, e.eligible(), &mut Swrr::default());
            picked += sel.map_or(0, |s| s.index) + prio.map_or(0, |s| s.index);
            let input = CallInput {
                strategy: Strategy::Balanced,
                affinity: Affinity::Conversation { window },
                turn_bound: (r % 5 == 0).then_some("p01"),
                conversation: Some(&conversations[r % 2]),
                candidates: &profiles,
                eligible: e.eligible(),
                excluded: e.excluded(),
                load: Some(&load),
                now: t0 + Duration::from_secs(if r % 7 == 0 { 601 } else { 60 }),
            };
            let call = table.with_state("conn", model, |s| select_for_call(&input, s));
            picked += call.map_or(0, |c| c.selection.index);
        }
        picked
    };
    black_box(run(64)); // warm up: every (connection, model) state and buffer exists now
                        // The allocator counts the whole process, and the test harness's own thread may allocate
                        // once while this one runs (seen under load: 4 allocations, none freed). An allocation in
                        // the selection path would show in every measurement, so the quietest of three counts.
    let stats = (0..3)
        .map(|_| {
            let region = Region::new(GLOBAL);
            black_box(run(10_000));
            region.change()
        })
        .min_by_key(|s| (s.allocations, s.reallocations))
        .unwrap_or_default();
    assert_eq!(
        (stats.allocations, stats.reallocations),
        (0, 0),
        "a steady eligible set must be selected without touching the heap: {stats:?}"
    );
}
