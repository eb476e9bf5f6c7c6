//! What interleaved rounds say about two targets' ratio: the median of the per-round ratios and
//! a 90 % bootstrap interval of that median. One run of `--hop` on a shared 2-core VM moves
//! ±8 % at the median (the same binary served twice gave 0.96 and 1.04, rounds 0.79–1.24), so a
//! ratio is printed with the interval it can claim.

/// Resamples drawn for the interval (seeded: the same rounds print the same interval).
const RESAMPLES: usize = 2000;

/// `median (90 % lo–hi)` of `ratios`; `-` when there are none.
pub fn summary(ratios: &[f64]) -> String {
    match interval(ratios) {
        Some((median, lo, hi)) => format!("{median:.2} (90 %: {lo:.2}–{hi:.2})"),
        None => "-".to_string(),
    }
}

/// The median of `ratios` and the 5th and 95th percentiles of the medians of resamples drawn
/// with replacement; `None` for no ratios.
pub fn interval(ratios: &[f64]) -> Option<(f64, f64, f64)> {
    if ratios.is_empty() {
        return None;
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: usize| {
        // xorshift64: enough to pick rounds, and the same picks every run.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut medians: Vec<f64> =
        (0..RESAMPLES).map(|_| median((0..ratios.len()).map(|_| ratios[next(ratios.len())]).collect())).collect();
    medians.sort_by(f64::total_cmp);
    let at = |q: f64| medians[((RESAMPLES as f64 - 1.0) * q).round() as usize];
    Some((median(ratios.to_vec()), at(0.05), at(0.95)))
}

/// The middle value (the upper of the two middles for an even count, as the bench's tables).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_rounds_give_a_point_and_spread_rounds_an_interval_inside_them() {
        assert_eq!(interval(&[0.9; 7]), Some((0.9, 0.9, 0.9)), "no spread, no interval");
        let rounds = [0.79, 0.87, 0.96, 1.02, 1.04, 1.08, 1.11, 1.19, 1.24];
        let (median, lo, hi) = interval(&rounds).unwrap_or_default();
        assert_eq!(median, 1.04, "the median of nine rounds is the fifth");
        assert!(
            0.79 <= lo && lo < median && median < hi && hi <= 1.24,
            "{lo}–{hi} inside the rounds, around the median"
        );
        assert_eq!(summary(&rounds), summary(&rounds), "seeded: the same rounds print the same interval");
        assert_eq!(summary(&[]), "-");
    }
}
