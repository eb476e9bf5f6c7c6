//! When a subscription window runs out at the last hour's rate. Readings are facts with a
//! time; a window's [`History`] keeps a few of its own (at most one per [`SAMPLE_EVERY_MS`],
//! none older than [`FORECAST_SPAN_MS`] before the latest), so its oldest sample — the
//! **base** — is the first reading of the last hour. The rate is the utilization gained from
//! the base to the latest reading over the time between them; [`exhausts_at`] extends it to a
//! full window. A history starts over when the window rolls over (its reset moves a minute or
//! more, `kind::same_window`) or its utilization falls (it refilled). Pure: times are inputs.

use crate::quota::kind::same_window;

/// The span of readings the rate is taken over: the last hour.
pub const FORECAST_SPAN_MS: i64 = 3_600_000;

/// At most one sample is kept per this span (so an hour is at most 13 samples).
pub const SAMPLE_EVERY_MS: i64 = 5 * 60_000;

/// A rate over less than this is noise: no forecast.
pub const MIN_FORECAST_SPAN_MS: i64 = 60_000;

/// A fall in utilization smaller than this is rounding, not a refill.
const REFILL_EPSILON: f64 = 1e-9;

/// One reading of a window's utilization (share used, 0 ..= 1) at a time (unix ms).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub at_ms: i64,
    pub utilization: f64,
}

/// A window's recent readings in its current period.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    samples: Vec<Sample>,
    resets_at_ms: Option<i64>,
}

impl History {
    /// Takes the window's reading seen at `at_ms`: its utilization (when known) and reset.
    /// A reading older than the latest sample is ignored.
    pub fn record(&mut self, at_ms: i64, utilization: Option<f64>, resets_at_ms: Option<i64>) {
        if self.samples.last().is_some_and(|last| at_ms < last.at_ms) {
            return;
        }
        let rolled_over = same_window(self.resets_at_ms, resets_at_ms) == Some(false);
        let refilled = match (utilization, self.samples.last()) {
            (Some(u), Some(last)) => u + REFILL_EPSILON < last.utilization,
            _ => false,
        };
        if rolled_over || refilled {
            self.samples.clear();
        }
        if resets_at_ms.is_some() {
            self.resets_at_ms = resets_at_ms;
        }
        let Some(utilization) = utilization else { return };
        self.samples.retain(|s| at_ms.saturating_sub(s.at_ms) <= FORECAST_SPAN_MS);
        if self.samples.last().is_none_or(|last| at_ms.saturating_sub(last.at_ms) >= SAMPLE_EVERY_MS) {
            self.samples.push(Sample { at_ms, utilization });
        }
    }

    /// The first reading of the last hour (of the current period), if any.
    pub fn base(&self) -> Option<Sample> {
        self.samples.first().copied()
    }
}

/// When the window is used up if it keeps being used at the rate from `base` to `latest`
/// (unix ms, rounded to the millisecond). `None` when there is no such time before the window
/// resets: no use since the base (or less), a span under [`MIN_FORECAST_SPAN_MS`] or over
/// [`FORECAST_SPAN_MS`], a window already used up (its status says so), or a run-out at or
/// after `resets_at_ms`.
pub fn exhausts_at(base: Sample, latest: Sample, resets_at_ms: Option<i64>) -> Option<i64> {
    let span = latest.at_ms.checked_sub(base.at_ms)?;
    if !(MIN_FORECAST_SPAN_MS..=FORECAST_SPAN_MS).contains(&span) {
        return None;
    }
    let used = latest.utilization - base.utilization;
    let left = 1.0 - latest.utilization;
    if used <= 0.0 || left <= 0.0 {
        return None;
    }
    let ms = (left * span as f64 / used).round();
    if !ms.is_finite() || ms >= i64::MAX as f64 {
        return None;
    }
    let at = latest.at_ms.checked_add(ms as i64)?;
    match resets_at_ms {
        Some(reset) if at >= reset => None,
        _ => Some(at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600_000;
    const T0: i64 = 1_700_000_000_000;

    fn s(at_ms: i64, utilization: f64) -> Sample {
        Sample { at_ms, utilization }
    }

    #[test]
    fn an_hours_rate_is_extended_to_the_full_window() {
        assert_eq!(
            exhausts_at(s(T0, 0.25), s(T0 + H, 0.5), Some(T0 + 5 * H)),
            Some(T0 + 3 * H),
            "a quarter an hour with half left: two more hours"
        );
        assert_eq!(
            exhausts_at(s(T0, 0.25), s(T0 + H, 0.5), Some(T0 + 3 * H)),
            None,
            "the window resets exactly when it would run out: it does not run out"
        );
        assert_eq!(exhausts_at(s(T0, 0.5), s(T0 + H, 0.5), None), None, "no use, no run-out");
        assert_eq!(exhausts_at(s(T0, 0.5), s(T0 + H, 1.0), None), None, "used up already: the status says so");
        assert_eq!(exhausts_at(s(T0, 0.1), s(T0 + 30_000, 0.2), None), None, "30 s of readings is noise");
        assert_eq!(exhausts_at(s(T0, 0.1), s(T0 + 2 * H, 0.2), None), None, "older than the last hour");
        assert_eq!(exhausts_at(s(T0 + H, 0.1), s(T0, 0.2), None), None, "readings out of order");
    }

    #[test]
    fn the_base_is_the_first_reading_of_the_last_hour() {
        let mut h = History::default();
        let reset = Some(T0 + 4 * H);
        for minute in 0..=90 {
            h.record(T0 + minute * 60_000, Some(0.001 * minute as f64), reset);
        }
        let base = h.base().map(|b| b.at_ms);
        assert_eq!(base, Some(T0 + 30 * 60_000), "one sample per 5 min; 90 min in, the base is 60 min back");
        h.record(T0 + 90 * 60_000 + 1, None, reset);
        assert_eq!(h.base().map(|b| b.at_ms), base, "a reading without utilization changes nothing");
    }

    #[test]
    fn a_rolled_over_or_refilled_window_starts_over_but_jitter_does_not() {
        let mut h = History::default();
        h.record(T0, Some(0.2), Some(T0 + H));
        h.record(T0 + 10 * 60_000, Some(0.3), Some(T0 + H + 59_000));
        assert_eq!(h.base().map(|b| b.at_ms), Some(T0), "a reset 59 s later is the same window");
        h.record(T0 + 20 * 60_000, Some(0.35), Some(T0 + H + 59_000 + 60_000));
        assert_eq!(h.base().map(|b| b.at_ms), Some(T0 + 20 * 60_000), "a minute further: a new window");
        h.record(T0 + 30 * 60_000, Some(0.1), Some(T0 + H + 119_000));
        assert_eq!(h.base(), Some(s(T0 + 30 * 60_000, 0.1)), "utilization fell: the window refilled");
        h.record(T0 + 25 * 60_000, Some(0.9), Some(T0 + H + 119_000));
        assert_eq!(h.base(), Some(s(T0 + 30 * 60_000, 0.1)), "an older reading is ignored");
    }
}
