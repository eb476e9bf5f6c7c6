//! `limits set|list|remove|status` (invariants 28 and 31): caps on a user, on each user, on a
//! connection or on a pool. A limit's id is stable (by default its scope, measure and period):
//! setting it again changes its capacity and keeps what its window holds; its measure and
//! period never change under one id. Every change is an audit row.

use switchyard_core::limit::{default_id, LimitScope, LimitSpec, Measure, Period};
use switchyard_core::InvalidInput;
use switchyard_store::limits::{self, LimitRow};
use switchyard_store::{attempts, connections, limit_counters, pools, relay_users};

use crate::clock::rfc3339;
use crate::config::audit::Change;
use crate::context::Context;
use crate::error::EngineError;
use crate::limits::book::spec_of;
use crate::limits::window::window;
use crate::views::{CapKind, LimitStatusView, LimitView};

/// The largest capacity accepted (requests, tokens, slots; USD is at most a million).
pub const MAX_CAPACITY: i64 = 1_000_000_000_000;

/// A limit as `limits set` takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewLimit {
    pub scope: String,
    pub measure: Measure,
    /// In the measure's unit (USD for `usd`; whole numbers otherwise).
    pub amount: f64,
    /// Required for every measure but concurrency, refused with it.
    pub period: Option<Period>,
    pub id: Option<String>,
}

fn capacity_of(measure: Measure, amount: f64) -> Result<i64, InvalidInput> {
    if !amount.is_finite() || amount < 0.0 {
        return Err(InvalidInput::new("capacity", "must be a number of at least 0"));
    }
    match measure {
        Measure::Usd if amount <= 1_000_000.0 => Ok((amount * 1e6).round() as i64),
        Measure::Usd => Err(InvalidInput::new("usd", "at most 1000000")),
        _ if amount.fract() != 0.0 => Err(InvalidInput::new(measure.as_str(), "must be a whole number")),
        _ if amount > MAX_CAPACITY as f64 => Err(InvalidInput::new(measure.as_str(), "is too large")),
        _ => Ok(amount as i64),
    }
}

fn amount_of(measure: Measure, units: i64) -> f64 {
    match measure {
        Measure::Usd => units as f64 / 1e6,
        _ => units as f64,
    }
}

fn validate_id(id: &str) -> Result<(), InvalidInput> {
    let ok = !id.is_empty()
        && id.len() <= 100
        && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b));
    if !ok {
        return Err(InvalidInput::new("id", "must be 1-100 characters of a-z, 0-9, '.', '_' or '-'"));
    }
    Ok(())
}

pub(crate) fn limit_view(row: &LimitRow) -> LimitView {
    let measure = Measure::parse(&row.measure).unwrap_or(Measure::Requests);
    LimitView {
        id: row.id.clone(),
        scope: row.scope.clone(),
        measure: row.measure.clone(),
        capacity: amount_of(measure, row.capacity),
        period: row.period.clone(),
        revision: row.revision,
    }
}

impl Context {
    /// Sets a limit: a new one, or a new capacity for the one with the same id.
    pub async fn limit_set(&self, new: &NewLimit) -> Result<LimitView, EngineError> {
        let scope = LimitScope::parse(&new.scope)?;
        match (new.measure, new.period) {
            (Measure::Concurrency, Some(_)) => {
                return Err(InvalidInput::new("per", "a concurrency limit has no period").into())
            }
            (Measure::Concurrency, None) => {}
            (_, None) => return Err(InvalidInput::new("per", "say per minute, hour, day, week or month").into()),
            _ => {}
        }
        let capacity = capacity_of(new.measure, new.amount)?;
        let id = match &new.id {
            Some(id) => {
                validate_id(id)?;
                id.clone()
            }
            None => default_id(&scope, new.measure, new.period),
        };
        let mut tx = self.store.begin().await?;
        self.scope_exists(&mut tx, &scope).await?;
        let now = self.now_ms();
        let period = new.period.map(|p| p.as_str().to_string());
        let (before, after) = match limits::by_id(&mut tx, &id).await? {
            Some(row) => {
                if row.scope != scope.to_string() || row.measure != new.measure.as_str() || row.period != period {
                    return Err(EngineError::Precondition(format!(
                        "limit '{id}' caps {} {} per {}; its scope, measure and period never change under one id \
                         (remove it with `switchyard limits remove {id}`, or give the new limit another --id)",
                        row.scope,
                        row.measure,
                        row.period.as_deref().unwrap_or("request in flight")
                    )));
                }
                let after = limits::set_capacity(&mut tx, &id, capacity, row.revision, now)
                    .await
                    .map_err(|e| EngineError::from_store("limit", &id, e))?;
                (Some(row.revision), after)
            }
            None => {
                let row = LimitRow {
                    id: id.clone(),
                    scope: scope.to_string(),
                    measure: new.measure.as_str().to_string(),
                    capacity,
                    period: period.clone(),
                    revision: 1,
                    created_at: now,
                    updated_at: now,
                };
                limits::insert(&mut tx, &row).await.map_err(|e| EngineError::from_store("limit", &id, e))?;
                (None, 1)
            }
        };
        let detail = serde_json::json!({
            "scope": scope.to_string(), "measure": new.measure.as_str(),
            "capacity": amount_of(new.measure, capacity), "period": period,
        });
        let change = Change { action: "limit.set", subject: &id, before, after: Some(after), detail: Some(detail) };
        self.audit(&mut tx, change).await?;
        tx.commit().await.map_err(switchyard_store::StoreError::from)?;
        tracing::info!(limit = %id, "limit set");
        let row = LimitRow {
            id,
            scope: scope.to_string(),
            measure: new.measure.as_str().to_string(),
            capacity,
            period,
            revision: after,
            created_at: now,
            updated_at: now,
        };
        Ok(limit_view(&row))
    }

    /// A named user, connection or pool must exist when its limit is set (a typo would cap no one).
    async fn scope_exists(
        &self,
        conn: &mut switchyard_store::AnyConnection,
        scope: &LimitScope,
    ) -> Result<(), EngineError> {
        let (what, name, found) = match scope {
            LimitScope::Users => return Ok(()),
            LimitScope::User(n) => ("relay user", n, relay_users::live(conn, n).await?.is_some()),
            LimitScope::Connection(n) => ("connection", n, connections::by_slug(conn, n).await?.is_some()),
            LimitScope::Pool(n) => ("pool", n, pools::by_name(conn, n).await?.is_some()),
        };
        if found {
            Ok(())
        } else {
            Err(EngineError::not_found(what, name))
        }
    }

    /// The caps on connection `slug` (each limit on `connection:SLUG`) as they stand: the
    /// desktop's Limits tab.
    pub async fn connection_limits(&self, slug: &str) -> Result<Vec<LimitStatusView>, EngineError> {
        self.connection_by_slug(slug).await?;
        self.limit_status(Some(&format!("connection:{slug}"))).await
    }

    /// Sets one of the desktop's caps on connection `slug` (its default id: the same kind set
    /// again changes its amount and keeps what was spent).
    pub async fn connection_cap_set(&self, slug: &str, kind: CapKind, amount: f64) -> Result<LimitView, EngineError> {
        let (measure, period) = match kind {
            CapKind::UsdDay => (Measure::Usd, Period::Day),
            CapKind::UsdMonth => (Measure::Usd, Period::Month),
            CapKind::RequestsMinute => (Measure::Requests, Period::Minute),
        };
        let new = NewLimit { scope: format!("connection:{slug}"), measure, amount, period: Some(period), id: None };
        self.limit_set(&new).await
    }

    pub async fn limit_list(&self) -> Result<Vec<LimitView>, EngineError> {
        let mut conn = self.store.acquire().await?;
        Ok(limits::list(&mut conn).await?.iter().map(limit_view).collect())
    }

    /// Removes a limit, its counters and its slots.
    pub async fn limit_remove(&self, id: &str) -> Result<(), EngineError> {
        let mut tx = self.store.begin().await?;
        let Some(revision) = limits::remove(&mut tx, id).await? else {
            return Err(EngineError::not_found("limit", id));
        };
        let change = Change { action: "limit.remove", subject: id, before: Some(revision), after: None, detail: None };
        self.audit(&mut tx, change).await?;
        tx.commit().await.map_err(switchyard_store::StoreError::from)?;
        tracing::info!(limit = %id, "limit removed");
        Ok(())
    }

    /// Each limit's current window (per user for a `users` limit; a limit nobody used yet shows
    /// its whole capacity), narrowed to limits whose scope is `scope` when given.
    pub async fn limit_status(&self, scope: Option<&str>) -> Result<Vec<LimitStatusView>, EngineError> {
        let scope = scope.map(LimitScope::parse).transpose()?.map(|s| s.to_string());
        let zone = self.zone().await?;
        let now = self.now_ms();
        let mut conn = self.store.acquire().await?;
        let mut out = Vec::new();
        for row in limits::list(&mut conn).await? {
            if scope.as_ref().is_some_and(|s| *s != row.scope) {
                continue;
            }
            let Some(spec) = spec_of(&row) else { continue };
            out.extend(status_of(&mut conn, &spec, now, &zone).await?);
        }
        Ok(out)
    }
}

/// The rows of one limit's current window.
pub(crate) async fn status_of(
    conn: &mut switchyard_store::AnyConnection,
    spec: &LimitSpec,
    now: i64,
    zone: &jiff::tz::TimeZone,
) -> Result<Vec<LimitStatusView>, EngineError> {
    let m = spec.measure;
    let view = |subject: String, used: i64, reserved: i64, resets: Option<i64>, refused: i64| LimitStatusView {
        id: spec.id.clone(),
        scope: spec.scope.to_string(),
        measure: m.as_str().to_string(),
        period: spec.period.map(|p| p.as_str().to_string()),
        subject,
        capacity: amount_of(m, spec.capacity),
        used: amount_of(m, used),
        reserved: amount_of(m, reserved),
        remaining: amount_of(m, (spec.capacity - used - reserved).max(0)),
        resets_at: resets.map(rfc3339),
        refused,
    };
    let rows = match spec.period {
        Some(period) => {
            let (start, end) = window(period, now, zone);
            let windows = limit_counters::windows(conn, &spec.id, start).await?;
            let mut rows = Vec::with_capacity(windows.len().max(1));
            for w in windows {
                let user = (!w.subject.is_empty()).then_some(w.subject.as_str());
                let refused = attempts::limit_refusals(conn, &spec.id, user, start).await?;
                rows.push(view(w.subject, w.used, w.reserved, Some(end), refused));
            }
            if rows.is_empty() {
                let refused = attempts::limit_refusals(conn, &spec.id, None, start).await?;
                rows.push(view(String::new(), 0, 0, Some(end), refused));
            }
            rows
        }
        None => {
            let slots = limit_counters::slots(conn, &spec.id, now).await?;
            let mut rows: Vec<LimitStatusView> = slots.into_iter().map(|(s, n)| view(s, n, 0, None, 0)).collect();
            if rows.is_empty() {
                rows.push(view(String::new(), 0, 0, None, 0));
            }
            rows
        }
    };
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacities_are_whole_units_or_micro_usd() {
        assert_eq!(capacity_of(Measure::Usd, 0.10), Ok(100_000), "$0.10 is 100,000 micro-USD");
        assert_eq!(capacity_of(Measure::Requests, 30.0), Ok(30));
        assert!(capacity_of(Measure::Requests, 1.5).is_err(), "half a request is refused");
        assert!(capacity_of(Measure::Tokens, -1.0).is_err());
        assert!(capacity_of(Measure::Usd, f64::NAN).is_err());
    }
}
