//! The limits as the router reads them ([`LimitBook`]): every configured limit, the price
//! table (a USD reservation and its settlement) and the time zone windows are counted in —
//! read together from the store, kept for [`BOOK_TTL`](super::BOOK_TTL). An empty book costs a
//! request one check and nothing else.

use std::collections::HashMap;

use jiff::tz::TimeZone;
use switchyard_core::connection::Protocol;
use switchyard_core::limit::{LimitScope, LimitSpec, Measure, Period};
use switchyard_core::prompt_cache::uncached_tokens;
use switchyard_store::attempts::AttemptRow;
use switchyard_store::prices::PriceRow;
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

impl Rates {
    /// A price row's rates.
    pub(crate) fn of(p: &PriceRow) -> Self {
        Rates {
            input: p.input_usd_per_mtok,
            output: p.output_usd_per_mtok,
            cache_read: p.cache_read_usd_per_mtok,
            cache_write: p.cache_write_usd_per_mtok,
        }
    }

    /// What `row`'s tokens cost at these rates, in millionths of a USD (rounded up); `None`
    /// when the row reported no usage or has tokens of a kind without a rate. (A limit's
    /// settlement and the relay users' cost counter both price a row so.)
    pub(crate) fn micro_usd(&self, protocol: Protocol, row: &AttemptRow) -> Option<i64> {
        if row.input_tokens.is_none() && row.output_tokens.is_none() {
            return None;
        }
        let n = |v: Option<i64>| v.unwrap_or(0).max(0);
        let (read, write) = (n(row.cache_read_tokens), n(row.cache_write_tokens));
        let uncached = uncached_tokens(protocol, row.input_tokens, row.cache_read_tokens, row.cache_write_tokens);
        let fresh = (uncached.unwrap_or(0) - write).max(0);
        let part =
            |tokens: i64, rate: Option<f64>| if tokens == 0 { Some(0.0) } else { rate.map(|r| tokens as f64 * r) };
        let micro = part(fresh, Some(self.input))?
            + part(n(row.output_tokens), Some(self.output))?
            + part(read, self.cache_read)?
            + part(write, self.cache_write)?;
        Some(micro.max(0.0).ceil() as i64)
    }
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
                let rates = Rates::of(&p);
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
