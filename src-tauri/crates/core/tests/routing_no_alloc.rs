//! The selection path (eligibility into a reused buffer + SWRR pick) must not heap-allocate
//! once the eligible set is steady. A counting global allocator measures it; this file holds
//! a single test so no other test allocates concurrently.

mod fixture;

use std::alloc::System;
use std::hint::black_box;

use fixture::{basis, criteria, pool, NOW};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use switchyard_core::routing::{
    select_for_turn, CircuitBoard, Eligibility, Failure, FailureKind, Scope, Strategy, Swrr, SwrrTable,
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
        }
        picked
    };
    black_box(run(64)); // warm up: every (connection, model) state and buffer exists now
    let region = Region::new(GLOBAL);
    black_box(run(10_000));
    let stats = region.change();
    assert_eq!(
        (stats.allocations, stats.reallocations),
        (0, 0),
        "a steady eligible set must be selected without touching the heap: {stats:?}"
    );
}
