//! Quota-aware selection (invariant 18, opt-in per connection): a key whose latest trustworthy
//! quota reading says a window is exhausted, or below the reserve the user keeps, is left out
//! of selection until that window's reset (`Exclusion::QuotaReserve`). Pure: the readings and
//! the clock are inputs; the engine gathers them (`QuotaBlocks`) and eligibility asks them.

/// The largest reserve a user may keep, in percent of a window.
pub const MAX_RESERVE_PCT: u8 = 50;

/// The longest limit window any provider reports: a week (Anthropic's `unified_7d`, Codex's
/// secondary window). A reading's reset further than this from when it was seen is not
/// believed (each dialect's table bounds its windows tighter, `providers/src/quota`).
pub const MAX_QUOTA_WINDOW_MINUTES: u32 = 7 * 24 * 60;

/// How far a reset may lie past its window's length and still be believed: resets are rounded
/// to seconds and a countdown runs from our clock, not the provider's.
pub const QUOTA_RESET_SLACK_MS: i64 = 60_000;

/// The furthest a believed reset lies from the moment it is judged (or was seen).
pub const MAX_QUOTA_HORIZON_MS: i64 = MAX_QUOTA_WINDOW_MINUTES as i64 * 60_000 + QUOTA_RESET_SLACK_MS;

/// Whether a reset at `resets_at_ms` is believable from `at_ms`: within
/// [`MAX_QUOTA_HORIZON_MS`] either way (a reset long past is no more a fact than one years
/// ahead). An unbelievable reset is unknown: it never blocks a key and is shown as unknown.
pub fn believable_reset(resets_at_ms: i64, at_ms: i64) -> bool {
    resets_at_ms.abs_diff(at_ms) <= MAX_QUOTA_HORIZON_MS.unsigned_abs()
}

/// A connection's quota-aware setting. Off by default: readings are then shown, never acted on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuotaPolicy {
    pub enabled: bool,
    /// Percent of a window kept in reserve (0 ..= [`MAX_RESERVE_PCT`]); 0 skips exhausted
    /// windows only.
    pub reserve_pct: u8,
}

/// One quota reading as the policy judges it. `None` is unknown (never guessed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuotaReading<'a> {
    pub limit: Option<u64>,
    pub remaining: Option<u64>,
    /// Share used, 0.0 ..= 1.0.
    pub utilization: Option<f64>,
    /// When the window resets (unix ms).
    pub resets_at_ms: Option<i64>,
    /// The provider's status word, lower case (`rejected` means exhausted).
    pub status: Option<&'a str>,
}

impl QuotaPolicy {
    /// Until when `r` keeps its key out of selection at `now_ms`: its window's reset, when the
    /// policy is on, the reading is exhausted or under the reserve, and its reset is known,
    /// still ahead and believable (within a week: one answer cannot take a key out for years).
    /// A reading past its reset is ignored (its numbers no longer hold); one without a known
    /// reset is never acted on (it could not be seen to expire).
    pub fn blocks_until(&self, r: &QuotaReading<'_>, now_ms: i64) -> Option<i64> {
        let reset = r.resets_at_ms.filter(|&at| at > now_ms && believable_reset(at, now_ms))?;
        (self.enabled && (exhausted(r) || self.under_reserve(r))).then_some(reset)
    }

    fn under_reserve(&self, r: &QuotaReading<'_>) -> bool {
        let reserve = self.reserve_pct.min(MAX_RESERVE_PCT);
        let pct = u64::from(reserve);
        if pct == 0 {
            return false;
        }
        let by_count = match (r.remaining, r.limit) {
            (Some(left), Some(limit)) if limit > 0 => u128::from(left) * 100 < u128::from(pct) * u128::from(limit),
            _ => false,
        };
        let by_share = r.utilization.is_some_and(|u| u > 1.0 - f64::from(reserve) / 100.0);
        by_count || by_share
    }
}

/// The window is used up: nothing remaining, fully utilized, or refused by the provider.
fn exhausted(r: &QuotaReading<'_>) -> bool {
    r.remaining == Some(0) || r.utilization.is_some_and(|u| u >= 1.0) || r.status == Some("rejected")
}

/// One key kept out: for every model (`model` empty: a window of the whole account), one
/// model, or (`family`) every model whose name contains `model` (a model family's window).
#[derive(Debug, Clone, PartialEq, Eq)]
struct QuotaBlock {
    profile_id: String,
    model: String,
    family: bool,
    until_ms: i64,
}

impl QuotaBlock {
    fn covers(&self, model: &str) -> bool {
        if self.family {
            let (m, f) = (model.as_bytes(), self.model.as_bytes());
            return !f.is_empty() && m.windows(f.len()).any(|w| w.eq_ignore_ascii_case(f));
        }
        self.model.is_empty() || self.model == model
    }
}

/// The quota blocks of a connection's keys at one moment, as eligibility reads them. Empty
/// (`QuotaBlocks::NONE`) when quota-aware selection is off.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QuotaBlocks {
    blocks: Vec<QuotaBlock>,
}

impl QuotaBlocks {
    /// No key is blocked.
    pub const NONE: QuotaBlocks = QuotaBlocks { blocks: Vec::new() };

    /// Judges `reading` of `profile_id` (for `model`, `""` for the whole account) under
    /// `policy` at `now_ms` and keeps the block it puts on the key, if any.
    pub fn judge(
        &mut self,
        policy: &QuotaPolicy,
        profile_id: &str,
        model: &str,
        reading: &QuotaReading<'_>,
        now_ms: i64,
    ) {
        if let Some(until_ms) = policy.blocks_until(reading, now_ms) {
            let block =
                QuotaBlock { profile_id: profile_id.to_string(), model: model.to_string(), family: false, until_ms };
            self.blocks.push(block);
        }
    }

    /// Like [`QuotaBlocks::judge`] for a window of one model family (e.g. `opus`): its block
    /// holds for the models whose name contains `family` (ASCII case-insensitive), not others.
    pub fn judge_family(
        &mut self,
        policy: &QuotaPolicy,
        profile_id: &str,
        family: &str,
        reading: &QuotaReading<'_>,
        now_ms: i64,
    ) {
        if let Some(until_ms) = policy.blocks_until(reading, now_ms) {
            let block =
                QuotaBlock { profile_id: profile_id.to_string(), model: family.to_string(), family: true, until_ms };
            self.blocks.push(block);
        }
    }

    /// Until when `profile_id` is kept out for `model` at `now_ms` (the latest reset of the
    /// windows that block it), or `None` when no window does.
    pub fn until(&self, profile_id: &str, model: &str, now_ms: i64) -> Option<i64> {
        self.blocks
            .iter()
            .filter(|b| b.profile_id == profile_id && b.covers(model) && b.until_ms > now_ms)
            .map(|b| b.until_ms)
            .max()
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_000_000;

    fn reading(limit: u64, remaining: u64, resets_at_ms: Option<i64>) -> QuotaReading<'static> {
        QuotaReading { limit: Some(limit), remaining: Some(remaining), utilization: None, resets_at_ms, status: None }
    }

    fn on(reserve_pct: u8) -> QuotaPolicy {
        QuotaPolicy { enabled: true, reserve_pct }
    }

    #[test]
    fn an_exhausted_window_blocks_until_its_reset() {
        let reset = Some(NOW + 60_000);
        assert_eq!(on(0).blocks_until(&reading(50, 0, reset), NOW), reset, "nothing remaining");
        let used_up = QuotaReading { utilization: Some(1.0), remaining: None, ..reading(50, 0, reset) };
        assert_eq!(on(0).blocks_until(&used_up, NOW), reset, "fully utilized");
        let refused = QuotaReading { status: Some("rejected"), ..reading(50, 9, reset) };
        assert_eq!(on(0).blocks_until(&refused, NOW), reset, "the provider says rejected");
        assert_eq!(on(0).blocks_until(&reading(50, 1, reset), NOW), None, "one left is not exhausted");
        let unknown = QuotaReading { limit: None, remaining: None, ..reading(0, 0, reset) };
        assert_eq!(on(0).blocks_until(&unknown, NOW), None, "unknown values are not guessed to be exhausted");
    }

    #[test]
    fn a_window_under_the_reserve_blocks() {
        let reset = Some(NOW + 60_000);
        assert_eq!(on(10).blocks_until(&reading(100, 9, reset), NOW), reset, "9 % left is under a 10 % reserve");
        assert_eq!(on(10).blocks_until(&reading(100, 10, reset), NOW), None, "exactly the reserve left still serves");
        let share = |u| QuotaReading { utilization: Some(u), limit: None, remaining: None, ..reading(0, 0, reset) };
        assert_eq!(on(20).blocks_until(&share(0.85), NOW), reset, "85 % used is past a 20 % reserve");
        assert_eq!(on(20).blocks_until(&share(0.5), NOW), None, "half used is not");
        assert_eq!(on(0).blocks_until(&share(0.99), NOW), None, "no reserve: only exhaustion blocks");
    }

    #[test]
    fn stale_readings_and_unknown_resets_are_ignored() {
        assert_eq!(
            on(0).blocks_until(&reading(50, 0, Some(NOW - 1)), NOW),
            None,
            "a reading past its reset is ignored"
        );
        assert_eq!(on(0).blocks_until(&reading(50, 0, Some(NOW)), NOW), None, "at its reset it no longer holds");
        assert_eq!(on(0).blocks_until(&reading(50, 0, None), NOW), None, "without a known reset it is never acted on");
        let off = QuotaPolicy { enabled: false, reserve_pct: 50 };
        assert_eq!(off.blocks_until(&reading(50, 0, Some(NOW + 1)), NOW), None, "off: readings never block");
    }

    #[test]
    fn a_reset_past_the_longest_window_never_blocks() {
        let ten_years = NOW + 10 * 365 * 24 * 3_600_000;
        assert_eq!(
            on(0).blocks_until(&reading(50, 0, Some(ten_years)), NOW),
            None,
            "one answer cannot ban a key for years"
        );
        let week = NOW + 7 * 24 * 3_600_000;
        assert_eq!(on(0).blocks_until(&reading(50, 0, Some(week)), NOW), Some(week), "a weekly window is believed");
    }

    #[test]
    fn blocks_cover_their_scope_and_end_at_the_reset() {
        let mut blocks = QuotaBlocks::default();
        blocks.judge(&on(0), "a", "m1", &reading(50, 0, Some(NOW + 30_000)), NOW);
        blocks.judge(&on(0), "b", "", &reading(50, 0, Some(NOW + 60_000)), NOW);
        blocks.judge(&on(0), "c", "", &reading(50, 7, Some(NOW + 60_000)), NOW);
        assert_eq!(blocks.until("a", "m1", NOW), Some(NOW + 30_000), "a per-model window blocks its model");
        assert_eq!(blocks.until("a", "m2", NOW), None, "and only its model");
        assert_eq!(blocks.until("b", "m2", NOW), Some(NOW + 60_000), "an account window blocks every model");
        assert_eq!(blocks.until("c", "m1", NOW), None, "a key with quota left is not blocked");
        assert_eq!(blocks.until("a", "m1", NOW + 30_000), None, "once the reset passes the key is eligible again");
        assert!(QuotaBlocks::NONE.is_empty(), "NONE blocks nothing");
    }

    #[test]
    fn a_family_window_blocks_its_familys_models_only() {
        let mut blocks = QuotaBlocks::default();
        let spent = QuotaReading { status: Some("rejected"), ..reading(0, 0, Some(NOW + 60_000)) };
        blocks.judge_family(&on(0), "a", "opus", &spent, NOW);
        assert_eq!(blocks.until("a", "claude-Opus-4-1", NOW), Some(NOW + 60_000), "an Opus model is blocked");
        assert_eq!(blocks.until("a", "claude-sonnet-4", NOW), None, "a Sonnet model is not");
        assert_eq!(blocks.until("b", "claude-opus-4", NOW), None, "nor another key");
        blocks.judge_family(&on(0), "a", "", &spent, NOW);
        assert_eq!(blocks.until("a", "claude-sonnet-4", NOW), None, "an empty family names no model");
    }
}
