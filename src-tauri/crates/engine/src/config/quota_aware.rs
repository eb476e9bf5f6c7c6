//! The quota-aware selection setting of each connection (docs/design.md invariant 18): off by
//! default; when on, a key whose latest reading says a window is exhausted or under the
//! reserve is skipped until that window's reset (`switchyard_core::routing::quota_reserve`).
//! Kept in `settings` (`quota_aware:<connection id>` = `on:<reserve pct>` or
//! `off:<reserve pct>`; the reserve is kept while off, so switching back restores it).

use crate::settings::{Scope, QUOTA_AWARE};
use switchyard_core::routing::{QuotaBlocks, QuotaPolicy, QuotaReading, MAX_RESERVE_PCT};
use switchyard_core::InvalidInput;
use switchyard_store::quota::QuotaRow;

use crate::context::Context;
use crate::error::EngineError;
use crate::views::{QuotaAwareView, RoutingStatus};

/// The setting as `routing status` shows it.
pub(crate) fn view(p: QuotaPolicy) -> QuotaAwareView {
    QuotaAwareView { enabled: p.enabled, reserve_pct: i32::from(p.reserve_pct) }
}

/// The blocks `policy` puts on keys from stored readings (`routing status` runs outside the
/// relay and reads what its router wrote).
pub(crate) fn blocks_from_rows(policy: &QuotaPolicy, rows: &[QuotaRow], now_ms: i64) -> QuotaBlocks {
    let mut blocks = QuotaBlocks::default();
    if !policy.enabled {
        return blocks;
    }
    for r in rows {
        let reading = QuotaReading {
            limit: r.limit_value.and_then(|v| u64::try_from(v).ok()),
            remaining: r.remaining.and_then(|v| u64::try_from(v).ok()),
            utilization: r.utilization,
            resets_at_ms: r.resets_at_ms,
            status: r.status.as_deref(),
        };
        match switchyard_providers::quota::family_of(&r.name) {
            Some(family) => blocks.judge_family(policy, &r.profile_id, family, &reading, now_ms),
            None => blocks.judge(policy, &r.profile_id, &r.model, &reading, now_ms),
        }
    }
    blocks
}

impl Context {
    /// The quota-aware setting of `connection_id` (off when unset or unreadable).
    pub(crate) async fn quota_policy(&self, connection_id: &str) -> Result<QuotaPolicy, EngineError> {
        self.setting(&QUOTA_AWARE, Scope::Connection(connection_id)).await
    }

    /// Turns quota-aware selection of `slug` on or off and, when given, sets its reserve in
    /// percent (0 to 50; otherwise the current reserve stays). A running relay uses it within
    /// a second. Returns the routing status with the new setting.
    pub async fn set_quota_aware(
        &self,
        slug: &str,
        enabled: bool,
        reserve_pct: Option<i64>,
    ) -> Result<RoutingStatus, EngineError> {
        let reserve = match reserve_pct {
            None => None,
            // Past a u8 it is out of range anyway: the table's check says so, with the value.
            Some(p) => Some(u8::try_from(p).map_err(|_| {
                let why = format!("must be between 0 and {MAX_RESERVE_PCT} percent (got {p})");
                EngineError::Invalid(InvalidInput::new("reserve_pct", why))
            })?),
        };
        let connection = self.connection_by_slug(slug).await?;
        self.update_setting(&QUOTA_AWARE, Scope::Connection(&connection.id), |before| QuotaPolicy {
            enabled,
            reserve_pct: reserve.unwrap_or(before.reserve_pct),
        })
        .await?;
        self.routing_status(slug).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Stored;

    #[test]
    fn stored_settings_read_back_and_garbage_is_off() {
        let on = QuotaPolicy { enabled: true, reserve_pct: 15 };
        assert_eq!(QUOTA_AWARE.parse_stored(&on.write()), on, "a stored setting reads back as written");
        let off = QuotaPolicy { enabled: false, reserve_pct: 15 };
        assert_eq!(QUOTA_AWARE.parse_stored("off:15"), off, "off keeps the reserve");
        assert_eq!(
            QUOTA_AWARE.parse_stored("on:51"),
            QuotaPolicy::default(),
            "a reserve past the maximum is the default"
        );
        assert_eq!(QUOTA_AWARE.parse_stored("maybe:5"), QuotaPolicy::default(), "an unknown mode is the default");
        assert!(!QuotaPolicy::default().enabled, "quota-aware selection is off unless turned on");
        assert_eq!(view(on), QuotaAwareView { enabled: true, reserve_pct: 15 }, "the view shows the setting");
    }

    #[test]
    fn stored_readings_block_only_when_on() {
        let row = QuotaRow {
            profile_id: "p".into(),
            name: "requests".into(),
            model: "m1".into(),
            limit_value: Some(50),
            remaining: Some(0),
            utilization: None,
            resets_at_ms: Some(2_000),
            status: None,
            window_minutes: None,
            seen_at_ms: 1_000,
            claim: None,
            base_seen_at_ms: None,
            base_utilization: None,
        };
        let on = QuotaPolicy { enabled: true, reserve_pct: 0 };
        let rows = [row];
        assert_eq!(blocks_from_rows(&on, &rows, 1_500).until("p", "m1", 1_500), Some(2_000), "exhausted: blocked");
        assert!(blocks_from_rows(&on, &rows, 2_000).is_empty(), "past its reset the reading is ignored");
        assert!(blocks_from_rows(&QuotaPolicy::default(), &rows, 1_500).is_empty(), "off: nothing is blocked");
    }
}
