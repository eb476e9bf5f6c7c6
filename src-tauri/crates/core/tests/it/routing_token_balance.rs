//! Token balance under conversation affinity (issue 14, invariant 15): balance moves keep the
//! counts of new conversations exactly the weights, happen only at turn boundaries, and bring
//! heavy-tailed token shares within 15 % of the weights — on the affinity driver
//! (`affinity_world`), seeded, deterministic.

use std::collections::HashMap;
use std::time::Duration;

use proptest::prelude::*;
use switchyard_core::routing::{ConversationStep, MoveCause, TokenLoad};

use crate::affinity_world::*;

/// splitmix64, for the seeded workloads below.
fn mix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One balanced run with token balance on: `sizes[c]` tokens per call of conversation `c`,
/// its turns `turns[c]` with `calls[c]` calls each, turns interleaved by `schedule`; tokens
/// are recorded for the key each call went to, as the engine records an attempt's usage.
/// Returns every call (conversation, turn, call number, what was chosen) and the load.
struct Balanced {
    calls: Vec<(usize, usize, usize, Call)>,
    /// Tokens per profile, over the whole run.
    tokens: HashMap<String, u64>,
}

fn run_balanced(
    weights: &[u32],
    turns: &[usize],
    calls: &[usize],
    sizes: &[u64],
    schedule: &[usize],
    balance: bool,
) -> Balanced {
    let mut w = World::new(weights);
    w.load = balance.then(TokenLoad::default);
    let mut next_turn = vec![0usize; turns.len()];
    let mut out = Balanced { calls: Vec::new(), tokens: HashMap::new() };
    for &c in schedule {
        let turn = next_turn[c];
        next_turn[c] += 1;
        let conversation = explicit(&format!("conv-{c}"));
        for call in 0..calls[c] {
            let turn_key = format!("conv-{c}/turn-{turn}");
            let Some(got) = w.call(&conversation, &turn_key) else { continue };
            // The context grows with the turns: later calls send more.
            let tokens = sizes[c] * (turn as u64 + 1);
            if let Some(load) = w.load.as_mut() {
                load.record(&got.profile, tokens, w.now);
            }
            *out.tokens.entry(got.profile.clone()).or_default() += tokens;
            out.calls.push((c, turn, call, got));
            w.later(Duration::from_millis(100));
        }
    }
    out
}

/// The new conversations' keys in order of assignment.
fn assignments(run: &Balanced) -> Vec<String> {
    run.calls
        .iter()
        .filter(|(_, turn, call, _)| *turn == 0 && *call == 0)
        .map(|(_, _, _, got)| got.profile.clone())
        .collect()
}

/// Each key's token share against its weight share, as a fraction off (+0.1 = 10 % over).
fn token_offsets(weights: &[u32], run: &Balanced) -> Vec<f64> {
    let total: u64 = run.tokens.values().sum();
    let weight_sum: u32 = weights.iter().sum();
    (0..weights.len())
        .map(|i| {
            let t = run.tokens.get(&format!("p{i:02}")).copied().unwrap_or(0) as f64 / total.max(1) as f64;
            t / (f64::from(weights[i]) / f64::from(weight_sum)) - 1.0
        })
        .collect()
}

/// Heavy-tailed conversation sizes: tokens per call, 20k to 2M, most small.
fn sizes_strategy() -> impl proptest::strategy::Strategy<Value = Vec<u64>> {
    prop::collection::vec(0u64..1000, 100).prop_map(|u| u.iter().map(|&u| 20_000 + u * u * 2).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn token_balance_keeps_new_conversation_counts_exact_and_moves_only_at_turn_boundaries(
        (turns, calls, schedule) in conversations_strategy(),
        sizes in sizes_strategy(),
    ) {
        let run = run_balanced(&[5, 3, 2], &turns, &calls, &sizes, &schedule, true);
        let assigned = assignments(&run);
        let count = |seq: &[String], id: &str| seq.iter().filter(|p| p.as_str() == id).count();
        prop_assert_eq!(
            [count(&assigned, "p00"), count(&assigned, "p01"), count(&assigned, "p02")],
            [50, 30, 20],
            "balance moves never change how SWRR assigns new conversations: 5:3:2 over 100 exactly"
        );
        for window in assigned.windows(10) {
            prop_assert_eq!(
                [count(window, "p00"), count(window, "p01"), count(window, "p02")],
                [5, 3, 2],
                "any sum(weights) consecutive new conversations split by the weights"
            );
        }
        let mut on: HashMap<usize, String> = HashMap::new();
        for (c, turn, call, got) in &run.calls {
            if let ConversationStep::Moved(m) = got.step {
                prop_assert_eq!(m.why, MoveCause::Balance, "every key stays eligible: only balance moves");
                prop_assert!(*call == 0 && *turn > 0, "a balance move is made at a turn boundary only: {:?}", got);
                let from = m.from.map(|i| format!("p{i:02}"));
                prop_assert_eq!(from.as_ref(), on.get(c), "it leaves the key it was on");
            } else if let Some(key) = on.get(c) {
                prop_assert_eq!(&got.profile, key, "between moves conversation {} stays on its key", c);
                prop_assert_eq!(got.step, ConversationStep::Kept, "and is kept");
            }
            on.insert(*c, got.profile.clone());
        }
        let again = run_balanced(&[5, 3, 2], &turns, &calls, &sizes, &schedule, true);
        prop_assert_eq!(&again.calls, &run.calls, "the same calls and loads make the same choices and moves");
    }
}

#[test]
fn token_balance_brings_heavy_tailed_token_shares_within_15_percent() {
    // 200 conversations of 1–20 turns, 1–10 calls each, sizes heavy-tailed, 8 in flight.
    let mut state = 14u64;
    let n = 200;
    let turns: Vec<usize> = (0..n).map(|_| 1 + (mix(&mut state) % 20) as usize).collect();
    let calls: Vec<usize> = (0..n).map(|_| 1 + (mix(&mut state) % 10) as usize).collect();
    let sizes: Vec<u64> = (0..n)
        .map(|_| {
            let u = (mix(&mut state) % 1000) as f64 / 1000.0;
            20_000 + (200_000.0 * u.powi(4)) as u64
        })
        .collect();
    let mut schedule = Vec::new();
    let (mut active, mut next): (Vec<usize>, usize) = ((0..8).collect(), 8);
    let mut left: Vec<usize> = turns.clone();
    while !active.is_empty() {
        let i = (mix(&mut state) % active.len() as u64) as usize;
        let c = active[i];
        schedule.push(c);
        left[c] -= 1;
        if left[c] == 0 {
            if next < n {
                active[i] = next;
                next += 1;
            } else {
                active.remove(i);
            }
        }
    }
    let weights = [2, 1, 1];
    let plain = run_balanced(&weights, &turns, &calls, &sizes, &schedule, false);
    let balanced = run_balanced(&weights, &turns, &calls, &sizes, &schedule, true);
    let worst = |offsets: Vec<f64>| offsets.iter().fold(0.0f64, |m, o| m.max(o.abs()));
    let (plain_off, balanced_off) = (worst(token_offsets(&weights, &plain)), worst(token_offsets(&weights, &balanced)));
    let moves = balanced.calls.iter().filter(|(.., got)| matches!(got.step, ConversationStep::Moved(_))).count();
    let plain_counts: Vec<usize> = {
        let a = assignments(&plain);
        (0..3).map(|i| a.iter().filter(|p| **p == format!("p{i:02}")).count()).collect()
    };
    assert_eq!(plain_counts, [100, 50, 50], "the workload's new conversations split 2:1:1");
    assert_eq!(assignments(&balanced), assignments(&plain), "balance changes no assignment of a new conversation");
    assert!(
        balanced_off <= 0.15,
        "with balance every key's token share is within 15 % of its weight's: worst {:.1} % (without {:.1} %)",
        100.0 * balanced_off,
        100.0 * plain_off
    );
    assert!(balanced_off < plain_off, "balance narrows the spread: {balanced_off} vs {plain_off}");
    assert!(
        moves > 0 && moves < n / 4,
        "a few conversations move for it, not most: {moves} of {n} (spread without: {:.1} %)",
        100.0 * plain_off
    );
}
