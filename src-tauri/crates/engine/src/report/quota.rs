//! `Engine::quota`: the latest limit readings of a connection's profiles as front ends show
//! them (docs/interface.md, `switchyard quota`), read from the `quota` table the router writes.
//! Each reading carries its age; one whose window has reset since it was seen is marked
//! stale — its numbers no longer hold (invariant 18). Unknown values stay `None`, and so does a
//! reset no window can have (further than a week from when it was seen).

pub use crate::views::{ProfileQuota, QuotaView, QuotaWindowView};
use switchyard_core::routing::believable_reset;
use switchyard_store::{profiles, quota};

use crate::clock::rfc3339;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::views::small;

impl Engine {
    /// The latest quota readings of every profile of `slug`.
    pub async fn quota(&self, slug: &str) -> Result<QuotaView, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let mut conn = self.store.acquire().await?;
        let rows = profiles::for_connection(&mut conn, &connection.id).await?;
        let mut readings = quota::for_connection(&mut conn, &connection.id).await?;
        drop(conn);
        let now = self.now_ms();
        let profiles = rows
            .into_iter()
            .map(|p| {
                let mine: Vec<quota::QuotaRow> = extract(&mut readings, |r| r.profile_id == p.id);
                ProfileQuota {
                    id: p.id,
                    label: p.label,
                    windows: mine.into_iter().map(|r| window_view(r, now)).collect(),
                }
            })
            .collect();
        Ok(QuotaView { slug: connection.slug, profiles })
    }
}

/// Moves the rows matching `keep` out of `rows`, in order.
fn extract<T>(rows: &mut Vec<T>, keep: impl Fn(&T) -> bool) -> Vec<T> {
    let (mine, rest): (Vec<T>, Vec<T>) = std::mem::take(rows).into_iter().partition(|r| keep(r));
    *rows = rest;
    mine
}

fn window_view(r: quota::QuotaRow, now_ms: i64) -> QuotaWindowView {
    let secs = |ms: i64| small(ms.div_euclid(1000));
    let count = |v: Option<i64>| v.and_then(|v| i32::try_from(v).ok());
    // A reset no window can have (a row written before resets were bounded) is unknown.
    let resets_at_ms = r.resets_at_ms.filter(|at| believable_reset(*at, r.seen_at_ms));
    QuotaWindowView {
        name: r.name,
        model: Some(r.model).filter(|m| !m.is_empty()),
        limit: count(r.limit_value),
        remaining: count(r.remaining),
        utilization: r.utilization,
        resets_at: resets_at_ms.map(rfc3339),
        seen_at: rfc3339(r.seen_at_ms),
        status: r.status,
        window_minutes: count(r.window_minutes),
        age_secs: secs(now_ms.saturating_sub(r.seen_at_ms).max(0)),
        resets_in_secs: resets_at_ms.map(|at| secs(at.saturating_sub(now_ms))),
        stale: resets_at_ms.is_some_and(|at| at <= now_ms),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(resets_at_ms: Option<i64>) -> quota::QuotaRow {
        quota::QuotaRow {
            profile_id: "p".into(),
            name: "requests".into(),
            model: String::new(),
            limit_value: Some(50),
            remaining: Some(3_000_000_000),
            utilization: None,
            resets_at_ms,
            status: None,
            window_minutes: None,
            seen_at_ms: 1_000_000,
        }
    }

    #[test]
    fn age_reset_and_staleness_are_from_the_clock() {
        let v = window_view(row(Some(1_090_000)), 1_060_500);
        assert_eq!((v.age_secs, v.resets_in_secs, v.stale), (60, Some(29), false), "a live window");
        assert_eq!(v.model, None, "'' is a window of the whole account");
        assert_eq!(v.remaining, None, "a count beyond i32 is unknown, not clamped");
        let v = window_view(row(Some(1_090_000)), 1_090_000);
        assert!(v.stale, "at its reset the reading stops holding");
        assert_eq!(v.resets_in_secs, Some(0), "reset now");
        let v = window_view(row(None), 9_000_000);
        assert!(!v.stale, "without a known reset only the age tells");
    }

    #[test]
    fn an_unbelievable_reset_reads_as_unknown() {
        for (what, at) in [("past year 9999", 1_000_000_000_000 * 3_600_000), ("before year 0", -62_167_222_800_000)] {
            let v = window_view(row(Some(at)), 1_060_500);
            assert_eq!(v.resets_at, None, "{what}: unknown, not an empty or non-RFC-3339 time");
            assert_eq!((v.resets_in_secs, v.stale), (None, false), "{what}: nothing follows from it");
        }
    }
}
