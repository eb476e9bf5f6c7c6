//! Property tests for smooth weighted round robin: exact counts per window, deterministic
//! tie-breaks independent of input order, no starvation, no burst after set changes.

use std::collections::HashMap;

use crate::fixture::profile;
use proptest::prelude::*;
use switchyard_core::routing::{ProfileView, Swrr};

fn profiles(weights: &[u32]) -> Vec<ProfileView> {
    weights.iter().enumerate().map(|(i, &w)| profile(&format!("p{i}"), w, (i % 3) as i64, &["m"])).collect()
}

/// `n` selections from `state` over all of `ps`, as ids.
fn run(state: &mut Swrr, ps: &[ProfileView], n: usize) -> Vec<String> {
    let all: Vec<usize> = (0..ps.len()).collect();
    (0..n).filter_map(|_| state.select(ps, &all)).map(|i| ps[i].id.clone()).collect()
}

fn counts(seq: &[String]) -> HashMap<&str, u32> {
    let mut c = HashMap::new();
    for id in seq {
        *c.entry(id.as_str()).or_insert(0) += 1;
    }
    c
}

fn weights_strategy() -> impl Strategy<Value = Vec<u32>> {
    prop_oneof![
        Just(vec![1, 1]),
        Just(vec![2, 1]),
        Just(vec![5, 3, 2]),
        Just(vec![1, 1, 1, 7]),
        Just(vec![1, 100]),
        prop::collection::vec(1u32..=20, 1..=8),
    ]
}

proptest! {
    #[test]
    fn every_window_of_sum_weights_has_exact_counts(weights in weights_strategy(), k in 1usize..=4) {
        let ps = profiles(&weights);
        let sum: usize = weights.iter().map(|&w| w as usize).sum();
        let seq = run(&mut Swrr::default(), &ps, k * sum + sum);
        let total = counts(&seq[..k * sum]);
        for (p, &w) in ps.iter().zip(&weights) {
            prop_assert_eq!(
                total.get(p.id.as_str()).copied().unwrap_or(0),
                k as u32 * w,
                "over k*sum(weights) selections {} must be chosen exactly k*weight times", p.id
            );
        }
        for start in 0..=seq.len() - sum {
            let window = counts(&seq[start..start + sum]);
            for (p, &w) in ps.iter().zip(&weights) {
                prop_assert_eq!(
                    window.get(p.id.as_str()).copied().unwrap_or(0),
                    w,
                    "every sliding window of sum(weights) fresh turns is exact, so nobody starves (start {})", start
                );
            }
        }
    }

    #[test]
    fn selection_is_deterministic_and_independent_of_input_order(
        weights in weights_strategy(),
        rotate in 0usize..8,
    ) {
        let ps = profiles(&weights);
        let sum: usize = weights.iter().map(|&w| w as usize).sum();
        let a = run(&mut Swrr::default(), &ps, 2 * sum);
        let b = run(&mut Swrr::default(), &ps, 2 * sum);
        prop_assert_eq!(&a, &b, "the same history must give the same choices");
        let mut shuffled = ps.clone();
        shuffled.rotate_left(rotate % ps.len());
        shuffled.reverse();
        let c = run(&mut Swrr::default(), &shuffled, 2 * sum);
        prop_assert_eq!(&a, &c, "ties are broken by priority then id, not by input position");
    }

    #[test]
    fn set_changes_cause_no_burst_and_windows_become_exact_again(
        weights in prop::collection::vec(prop_oneof![Just(1u32), Just(2), Just(3), Just(5), Just(7), Just(100)], 2..=6),
        phases in prop::collection::vec((prop::collection::vec(any::<bool>(), 6), 0usize..40), 1..=6),
    ) {
        let ps = profiles(&weights);
        let mut state = Swrr::default();
        for (members, steps) in &phases {
            let mut subset: Vec<usize> = (0..ps.len()).filter(|&i| members[i]).collect();
            if subset.is_empty() {
                subset.push(0);
            }
            for _ in 0..*steps {
                prop_assert!(state.select(&ps, &subset).is_some(), "a non-empty set always selects");
            }
        }
        let sum: usize = weights.iter().map(|&w| w as usize).sum();
        let seq = run(&mut state, &ps, 3 * sum);
        let first = counts(&seq[..sum]);
        for (p, &w) in ps.iter().zip(&weights) {
            let got = first.get(p.id.as_str()).copied().unwrap_or(0);
            prop_assert!(
                got + 1 >= w && got <= w + 1,
                "right after a set change {} gets {} of {} turns: a (re-)entering profile must not burst",
                p.id, got, w
            );
        }
        for start in sum..=2 * sum {
            let window = counts(&seq[start..start + sum]);
            for (p, &w) in ps.iter().zip(&weights) {
                prop_assert_eq!(
                    window.get(p.id.as_str()).copied().unwrap_or(0),
                    w,
                    "once the set is steady for sum(weights) turns, windows are exact again"
                );
            }
        }
    }
}

#[test]
fn a_profile_leaving_loses_its_state_and_returns_at_zero() {
    let ps = profiles(&[1, 1, 1]);
    let mut s = Swrr::default();
    for _ in 0..2 {
        assert!(s.select(&ps, &[0, 1, 2]).is_some(), "selects");
    }
    assert!(s.select(&ps, &[0, 1]).is_some(), "p2 left");
    assert!(
        s.current_weights().all(|(id, _)| id != "p2"),
        "the state of a profile that left the eligible set is dropped"
    );
    assert!(s.select(&ps, &[0, 1, 2]).is_some(), "p2 is back");
    let p2 = s.current_weights().find(|(id, _)| *id == "p2").map(|(_, w)| w);
    assert_eq!(p2, Some(1), "a returning profile starts at 0 (plus its weight this round)");
}

#[test]
fn an_empty_eligible_set_selects_nothing() {
    let ps = profiles(&[1, 2]);
    assert_eq!(Swrr::default().select(&ps, &[]), None, "nothing eligible, nothing chosen");
}
