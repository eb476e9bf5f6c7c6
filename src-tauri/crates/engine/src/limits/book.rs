//! The limits as the router reads them ([`LimitBook`]): every configured limit, the price
//! table (a USD reservation and its settlement) and the time zone windows are counted in —
//! read together from the store, kept for [`BOOK_TTL`](super::BOOK_TTL). An empty book costs a
//! request one check and nothing else.

use std::collections::HashMap;

use jiff::tz::TimeZone;
use switchyard_core::limit::{LimitScope, LimitSpec, Measure, Period};
use switchyard_store::{limits, prices};

use crate::context::Context;
use crate::error::EngineError;

/// A model's price: USD per million tokens (input, output, cache read, cache write).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rates {
    pub input: f64,
    pub output: f64,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
}

#[derive(Debug)]
pub(crate) struct LimitBook {
    pub specs: Vec<LimitSpec>,
    pub prices: HashMap<String, Rates>,
    pub zone: TimeZone,
    /// When it was read (engine clock).
    pub read_at: std::time::Instant,
}

impl LimitBook {
    /// Whether a limit counting tokens or USD could meet a request of `user` to `name` (the
    /// relay then reads the body before routing, for the estimate).
    pub(crate) fn counts_body(&self, user: Option<&str>, name: &str) -> bool {
        self.specs.iter().any(|s| {
            matches!(s.measure, Measure::Tokens | Measure::Usd)
                && match &s.scope {
                    LimitScope::User(n) => user == Some(n.as_str()),
                    LimitScope::Users => user.is_some(),
                    LimitScope::Connection(n) | LimitScope::Pool(n) => n == name,
                }
        })
    }
}

impl Context {
    /// Reads the book: limits, prices and the time zone.
    pub(crate) async fn limit_book(&self, read_at: std::time::Instant) -> Result<LimitBook, EngineError> {
        let (rows, price_rows) = {
            let mut conn = self.store.acquire().await?;
            (limits::list(&mut conn).await?, prices::list(&mut conn).await?)
        };
        let specs = rows.iter().filter_map(spec_of).collect();
        let prices = price_rows
            .into_iter()
            .map(|p| {
                let rates = Rates {
                    input: p.input_usd_per_mtok,
                    output: p.output_usd_per_mtok,
                    cache_read: p.cache_read_usd_per_mtok,
                    cache_write: p.cache_write_usd_per_mtok,
                };
                (p.model, rates)
            })
            .collect();
        let zone = self.zone().await.unwrap_or(TimeZone::UTC);
        Ok(LimitBook { specs, prices, zone, read_at })
    }
}

/// A stored row as a spec; a row that does not read (written by a newer version) is skipped.
pub(crate) fn spec_of(row: &limits::LimitRow) -> Option<LimitSpec> {
    Some(LimitSpec {
        id: row.id.clone(),
        scope: LimitScope::parse(&row.scope).ok()?,
        measure: Measure::parse(&row.measure)?,
        capacity: row.capacity,
        period: match &row.period {
            Some(p) => Some(Period::parse(p)?),
            None => None,
        },
    })
}
