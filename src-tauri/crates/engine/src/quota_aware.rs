//! The quota-aware selection setting of each connection (docs/design.md invariant 18): off by
//! default; when on, a key whose latest reading says a window is exhausted or under the
//! reserve is skipped until that window's reset (`switchyard_core::routing::quota_reserve`).
//! Kept in `settings` (`quota_aware:<connection id>` = `on:<reserve pct>` or
//! `off:<reserve pct>`; the reserve is kept while off, so switching back restores it).

use switchyard_core::routing::{QuotaBlocks, QuotaPolicy, QuotaReading, MAX_RESERVE_PCT};
use switchyard_core::InvalidInput;
use switchyard_store::quota::QuotaRow;
use switchyard_store::settings;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::views::{QuotaAwareView, RoutingStatus};

fn key(connection_id: &str) -> String {
    format!("quota_aware:{connection_id}")
}

/// `on:<pct>` / `off:<pct>`; anything else is the default (off, no reserve).
fn parse(stored: &str) -> QuotaPolicy {
    let parsed = stored.split_once(':').and_then(|(mode, pct)| {
        let reserve_pct = pct.parse::<u8>().ok().filter(|p| *p <= MAX_RESERVE_PCT)?;
        match mode {
            "on" => Some(QuotaPolicy { enabled: true, reserve_pct }),
            "off" => Some(QuotaPolicy { enabled: false, reserve_pct }),
            _ => None,
        }
    });
    parsed.unwrap_or_default()
}

fn stored(p: QuotaPolicy) -> String {
    format!("{}:{}", if p.enabled { "on" } else { "off" }, p.reserve_pct)
}

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
        blocks.judge(policy, &r.profile_id, &r.model, &reading, now_ms);
    }
    blocks
}

impl Engine {
    /// The quota-aware setting of `connection_id` (off when unset or unreadable).
    pub(crate) async fn quota_policy(&self, connection_id: &str) -> Result<QuotaPolicy, EngineError> {
        let mut conn = self.store.acquire().await?;
        let stored = settings::get(&mut conn, &key(connection_id)).await?;
        Ok(stored.map(|(v, _)| parse(&v)).unwrap_or_default())
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
            Some(p) => Some(u8::try_from(p).ok().filter(|p| *p <= MAX_RESERVE_PCT).ok_or_else(|| {
                EngineError::Invalid(InvalidInput::new(
                    "reserve_pct",
                    format!("must be between 0 and {MAX_RESERVE_PCT} percent (got {p})"),
                ))
            })?),
        };
        let connection = self.connection_by_slug(slug).await?;
        let key = key(&connection.id);
        let mut conn = self.store.acquire().await?;
        let current = settings::get(&mut conn, &key).await?;
        let before = current.as_ref().map(|(v, _)| parse(v)).unwrap_or_default();
        let next = QuotaPolicy { enabled, reserve_pct: reserve.unwrap_or(before.reserve_pct) };
        settings::put(&mut conn, &key, &stored(next), current.map(|(_, rev)| rev), self.now_ms()).await?;
        drop(conn);
        self.routing_status(slug).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_settings_read_back_and_garbage_is_off() {
        let on = QuotaPolicy { enabled: true, reserve_pct: 15 };
        assert_eq!(parse(&stored(on)), on, "a stored setting reads back as written");
        assert_eq!(parse("off:15"), QuotaPolicy { enabled: false, reserve_pct: 15 }, "off keeps the reserve");
        assert_eq!(parse("on:51"), QuotaPolicy::default(), "a reserve past the maximum is the default");
        assert_eq!(parse("maybe:5"), QuotaPolicy::default(), "an unknown mode is the default");
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
        };
        let on = QuotaPolicy { enabled: true, reserve_pct: 0 };
        let rows = [row];
        assert_eq!(blocks_from_rows(&on, &rows, 1_500).until("p", "m1", 1_500), Some(2_000), "exhausted: blocked");
        assert!(blocks_from_rows(&on, &rows, 2_000).is_empty(), "past its reset the reading is ignored");
        assert!(blocks_from_rows(&QuotaPolicy::default(), &rows, 1_500).is_empty(), "off: nothing is blocked");
    }
}
