//! `Engine::usage`: requests, tokens, errors and cost of a connection's attempts, summed from
//! the attempt ledger by profile, model, day or caller tag (docs/interface.md, `switchyard
//! usage`). Days and months are the user's (`time_zone.rs`). Cost comes only from the user's
//! price table (`prices.rs`): a row whose price is not known has an unknown cost, its group's
//! cost is `None` and the result is marked incomplete — never estimated (invariant 18). The
//! ledger is read page by page (`attempts::page_since`), never all at once.

pub use crate::views::{UsageChart, UsageRow, UsageSeries, UsageView};
use std::collections::{BTreeMap, HashMap};

use jiff::civil::Date;
use jiff::tz::TimeZone;
use switchyard_core::prompt_cache::uncached_tokens;
use switchyard_core::tag::parse_tags_json;
use switchyard_core::{InvalidInput, Protocol};
use switchyard_store::attempts::{self, AttemptRow};
use switchyard_store::prices::PriceRow;
use switchyard_store::{key_fees, prices, profiles};

use crate::clock::rfc3339;
use crate::context::Context;
use crate::error::EngineError;
use crate::report::attempts::profile_labels;
use crate::report::time_zone::{date_of, parse_since, start_of, zone_name};

/// Rows read per page of the ledger.
const PAGE: i64 = 2_000;

/// The key of rows whose request named no model.
pub const NO_MODEL: &str = "(none)";
/// The key of rows without tags in `--by tag`.
pub const UNTAGGED: &str = "(untagged)";

/// What usage groups on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageBy {
    /// The stable profile id (each row's `label` names it for tables).
    Profile,
    /// The client-facing model name (`(none)` when the request named none).
    Model,
    /// `YYYY-MM-DD` in the user's time zone.
    Day,
    /// `name=value` per tag (a row with two tags counts in both; `(untagged)` for none).
    Tag,
    /// The relay user the requests came from (`(local)` for the install's own token).
    User,
    /// A pool's member that served (`CONN` or `CONN=MODEL`; a connection's rows: its slug).
    Member,
}

/// The key of rows made with the install's own (local) relay token in `--by user`.
pub const LOCAL_USER: &str = "(local)";

impl UsageBy {
    pub fn parse(text: &str) -> Result<Self, InvalidInput> {
        match text {
            "profile" => Ok(Self::Profile),
            "model" => Ok(Self::Model),
            "day" => Ok(Self::Day),
            "tag" => Ok(Self::Tag),
            "user" => Ok(Self::User),
            "member" => Ok(Self::Member),
            _ => Err(InvalidInput::new("by", "must be profile, model, day, tag, user or member")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Profile => "profile",
            Self::Model => "model",
            Self::Day => "day",
            Self::Tag => "tag",
            Self::User => "user",
            Self::Member => "member",
        }
    }
}

impl Context {
    /// Usage of `slug` since `since` (RFC 3339 or `Nd`; `None`: everything), grouped `by`.
    pub async fn usage(&self, slug: &str, since: Option<&str>, by: UsageBy) -> Result<UsageView, EngineError> {
        let connection = match self.connection_by_slug(slug).await {
            Err(EngineError::NotFound { .. }) if self.is_pool(slug).await? => {
                return self.pool_usage(slug, since, by).await;
            }
            other => other?,
        };
        let tz = self.zone().await?;
        let since_ms = since.map(|s| parse_since(s, self.now_ms(), &tz)).transpose()?;
        let pricing = self.pricing(&connection.id, &connection.protocol, since_ms, &tz).await?;
        let mut groups: BTreeMap<String, Sums> = BTreeMap::new();
        let mut total = Sums::default();
        self.each_row(&connection.id, since_ms.unwrap_or(i64::MIN), |r| {
            let cost = pricing.cost(r, &tz);
            total.add(r, cost);
            for key in keys(r, by, &tz, &|_| connection.slug.clone()) {
                groups.entry(key).or_default().add(r, cost);
            }
        })
        .await?;
        let mut rows: Vec<UsageRow> = groups.into_iter().map(|(k, s)| s.row(k)).collect();
        if by == UsageBy::Profile {
            let labels = profile_labels(&mut *self.store.acquire().await?, &connection.id).await?;
            for row in &mut rows {
                row.label = labels.get(&row.key).cloned();
            }
        }
        Ok(UsageView {
            slug: connection.slug,
            by: by.as_str().to_string(),
            since: since_ms.map(rfc3339),
            time_zone: zone_name(&tz),
            rows,
            complete: total.cost.is_some(),
            total: total.row("total".to_string()),
        })
    }

    /// Usage of pool `name`: its rows (whichever member served), grouped `by` (`member`: the
    /// member that served). Priced by the price table (members' key fees are their own
    /// connections' business).
    async fn pool_usage(&self, name: &str, since: Option<&str>, by: UsageBy) -> Result<UsageView, EngineError> {
        let row = self.pool_row(name).await?;
        let members = crate::config::pools::decode_members(&row);
        let tz = self.zone().await?;
        let since_ms = since.map(|s| parse_since(s, self.now_ms(), &tz)).transpose()?;
        let pricing = self.pricing("", &row.protocol, since_ms, &tz).await?;
        let member_of = |r: &AttemptRow| {
            members
                .iter()
                .find(|m| m.connection_id == r.connection_id && (m.model.is_none() || m.model == r.model))
                .map_or_else(|| r.connection_id.clone(), |m| m.member(&[]).key())
        };
        let mut groups: BTreeMap<String, Sums> = BTreeMap::new();
        let mut total = Sums::default();
        let mut after = 0;
        loop {
            let page = {
                let mut conn = self.store.acquire().await?;
                attempts::pool_page_since(&mut conn, &row.id, since_ms.unwrap_or(i64::MIN), after, PAGE).await?
            };
            for r in &page {
                let cost = pricing.cost(&r.row, &tz);
                total.add(&r.row, cost);
                for key in keys(&r.row, by, &tz, &member_of) {
                    groups.entry(key).or_default().add(&r.row, cost);
                }
            }
            match page.last() {
                Some(last) if page.len() as i64 == PAGE => after = last.id,
                _ => break,
            }
        }
        Ok(UsageView {
            slug: row.name,
            by: by.as_str().to_string(),
            since: since_ms.map(rfc3339),
            time_zone: zone_name(&tz),
            rows: groups.into_iter().map(|(k, s)| s.row(k)).collect(),
            complete: total.cost.is_some(),
            total: total.row("total".to_string()),
        })
    }

    /// Usage of `slug` over the last `days` calendar days (1–366, today included), per day
    /// and profile.
    pub async fn usage_chart(&self, slug: &str, days: i64) -> Result<UsageChart, EngineError> {
        if !(1..=366).contains(&days) {
            return Err(InvalidInput::new("days", "must be between 1 and 366").into());
        }
        let connection = self.connection_by_slug(slug).await?;
        let tz = self.zone().await?;
        let since_ms = parse_since(&format!("{days}d"), self.now_ms(), &tz)?;
        let pricing = self.pricing(&connection.id, &connection.protocol, Some(since_ms), &tz).await?;
        let mut cells: HashMap<(String, String), Sums> = HashMap::new();
        let mut total = Sums::default();
        self.each_row(&connection.id, since_ms, |r| {
            let cost = pricing.cost(r, &tz);
            total.add(r, cost);
            cells.entry((r.profile_id.clone(), date_of(r.at_ms, &tz).to_string())).or_default().add(r, cost);
        })
        .await?;
        let first = date_of(since_ms, &tz);
        let labels: Vec<String> = (0..days)
            .filter_map(|i| first.checked_add(jiff::Span::new().days(i)).ok())
            .map(|d| d.to_string())
            .collect();
        let mut conn = self.store.acquire().await?;
        let mut series = Vec::new();
        for p in profiles::for_connection(&mut conn, &connection.id).await? {
            series.push(series_of(&p.id, p.label, &labels, &mut cells));
        }
        // Rows of profiles removed since: still counted, under their id.
        let mut gone: Vec<String> = cells.keys().map(|(p, _)| p.clone()).collect();
        gone.sort();
        gone.dedup();
        for id in gone {
            series.push(series_of(&id, String::new(), &labels, &mut cells));
        }
        Ok(UsageChart {
            slug: connection.slug,
            time_zone: zone_name(&tz),
            days: labels,
            series,
            complete: total.cost.is_some(),
            total: total.row("total".to_string()),
        })
    }

    /// Calls `f` on every ledger row of the connection at or after `since_ms`, oldest first,
    /// one page at a time.
    pub(crate) async fn each_row(
        &self,
        connection_id: &str,
        since_ms: i64,
        mut f: impl FnMut(&AttemptRow),
    ) -> Result<(), EngineError> {
        let start = {
            let mut conn = self.store.acquire().await?;
            attempts::page_start(&mut conn, connection_id, since_ms).await?
        };
        let Some(mut after) = start else { return Ok(()) };
        loop {
            let page = {
                let mut conn = self.store.acquire().await?;
                attempts::page_since(&mut conn, connection_id, since_ms, after, PAGE).await?
            };
            for r in &page {
                f(&r.row);
            }
            match page.last() {
                Some(last) if page.len() as i64 == PAGE => after = last.id,
                _ => return Ok(()),
            }
        }
    }

    /// The prices, the connection's key fees and, for keys with a fee, their tokens per month
    /// (whole months: from the start of the month `since_ms` falls in).
    async fn pricing(
        &self,
        connection_id: &str,
        protocol: &str,
        since_ms: Option<i64>,
        tz: &TimeZone,
    ) -> Result<Pricing, EngineError> {
        let (price_rows, fee_rows) = {
            let mut conn = self.store.acquire().await?;
            (prices::list(&mut conn).await?, key_fees::for_connection(&mut conn, connection_id).await?)
        };
        let mut pricing = Pricing {
            prices: price_rows.into_iter().map(|p| (p.model.clone(), p)).collect(),
            fees: fee_rows.into_iter().map(|f| (f.profile_id, f.monthly_usd)).collect(),
            protocol: protocol.parse().unwrap_or(Protocol::Anthropic),
            month_tokens: HashMap::new(),
        };
        if !pricing.fees.is_empty() {
            let from = since_ms.map_or(i64::MIN, |ms| start_of(date_of(ms, tz).first_of_month(), tz));
            let mut month_tokens = HashMap::new();
            self.each_row(connection_id, from, |r| {
                if pricing.fees.contains_key(&r.profile_id) {
                    let month = date_of(r.at_ms, tz).first_of_month();
                    *month_tokens.entry((r.profile_id.clone(), month)).or_insert(0) +=
                        pricing.billed_tokens(r).unwrap_or(0);
                }
            })
            .await?;
            pricing.month_tokens = month_tokens;
        }
        Ok(pricing)
    }
}

fn series_of(id: &str, label: String, days: &[String], cells: &mut HashMap<(String, String), Sums>) -> UsageSeries {
    let days =
        days.iter().map(|d| cells.remove(&(id.to_string(), d.clone())).unwrap_or_default().row(d.clone())).collect();
    UsageSeries { profile: id.to_string(), label, days }
}

/// The group keys of a row.
fn keys(r: &AttemptRow, by: UsageBy, tz: &TimeZone, member_of: &dyn Fn(&AttemptRow) -> String) -> Vec<String> {
    match by {
        UsageBy::Member => vec![member_of(r)],
        UsageBy::Profile => vec![r.profile_id.clone()],
        UsageBy::Model => vec![r.model.clone().unwrap_or_else(|| NO_MODEL.to_string())],
        UsageBy::Day => vec![date_of(r.at_ms, tz).to_string()],
        UsageBy::User => vec![r.user_name.clone().unwrap_or_else(|| LOCAL_USER.to_string())],
        UsageBy::Tag => {
            let tags = parse_tags_json(r.tags.as_deref());
            if tags.is_empty() {
                vec![UNTAGGED.to_string()]
            } else {
                tags.into_iter().map(|(k, v)| format!("{k}={v}")).collect()
            }
        }
    }
}

/// Running sums of a group; `cost` turns `None` at the first unknown.
#[derive(Debug, Clone)]
struct Sums {
    requests: i64,
    errors: i64,
    input: i64,
    output: i64,
    cache_read: i64,
    cache_write: i64,
    cost: Option<f64>,
}

impl Default for Sums {
    fn default() -> Self {
        Sums { requests: 0, errors: 0, input: 0, output: 0, cache_read: 0, cache_write: 0, cost: Some(0.0) }
    }
}

impl Sums {
    fn add(&mut self, r: &AttemptRow, cost: Option<f64>) {
        let n = |v: Option<i64>| v.unwrap_or(0).max(0);
        self.requests += 1;
        self.errors += i64::from(is_error(r));
        self.input += n(r.input_tokens);
        self.output += n(r.output_tokens);
        self.cache_read += n(r.cache_read_tokens);
        self.cache_write += n(r.cache_write_tokens);
        self.cost = match (self.cost, cost) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }

    fn row(self, key: String) -> UsageRow {
        UsageRow {
            key,
            label: None,
            requests: self.requests,
            errors: self.errors,
            input_tokens: self.input,
            output_tokens: self.output,
            cache_read_tokens: self.cache_read,
            cache_write_tokens: self.cache_write,
            cost_usd: self.cost,
        }
    }
}

/// A failed attempt, or one that got no answer.
pub fn is_error(r: &AttemptRow) -> bool {
    r.failure_kind.is_some() || !r.status.is_some_and(|s| (200..300).contains(&s))
}

/// What the cost of a row is computed from.
#[derive(Debug)]
struct Pricing {
    prices: HashMap<String, PriceRow>,
    /// Monthly fee by profile id.
    fees: HashMap<String, f64>,
    /// The connection's dialect: OpenAI and Gemini count cached input inside `input_tokens`,
    /// Anthropic reports it apart (core `prompt_cache`).
    protocol: Protocol,
    /// Billed tokens of each fee key per month (first day of the month).
    month_tokens: HashMap<(String, Date), i64>,
}

impl Pricing {
    /// The row's tokens, each counted once (`None`: the answer reported no usage).
    fn billed_tokens(&self, r: &AttemptRow) -> Option<i64> {
        let (fresh, output, read, write) = self.split(r)?;
        Some(fresh + output + read + write)
    }

    /// Uncached input, output, cache read, cache write.
    fn split(&self, r: &AttemptRow) -> Option<(i64, i64, i64, i64)> {
        if r.input_tokens.is_none() && r.output_tokens.is_none() {
            return None;
        }
        let n = |v: Option<i64>| v.unwrap_or(0).max(0);
        let (read, write) = (n(r.cache_read_tokens), n(r.cache_write_tokens));
        let uncached = uncached_tokens(self.protocol, r.input_tokens, r.cache_read_tokens, r.cache_write_tokens);
        let fresh = (uncached.unwrap_or(0) - write).max(0);
        Some((fresh, n(r.output_tokens), read, write))
    }

    /// The row's cost in USD; `None` when it is not known: a model without a price, a
    /// cache count without a cache price, or an answer for a model that reported no usage.
    /// A key with a monthly fee costs its share of the fee (by tokens) and nothing else; an
    /// attempt that reported no usage costs nothing when it failed or named no model, and
    /// tokens of a request that named no model are unknown (no price to apply).
    fn cost(&self, r: &AttemptRow, tz: &TimeZone) -> Option<f64> {
        if let Some(fee) = self.fees.get(&r.profile_id) {
            let tokens = self.billed_tokens(r).unwrap_or(0);
            let month = date_of(r.at_ms, tz).first_of_month();
            let of_month = self.month_tokens.get(&(r.profile_id.clone(), month)).copied().unwrap_or(0);
            return Some(if tokens > 0 && of_month > 0 { fee * tokens as f64 / of_month as f64 } else { 0.0 });
        }
        let Some((fresh, output, read, write)) = self.split(r) else {
            let answered = r.status.is_some_and(|s| (200..300).contains(&s)) && r.failure_kind.is_none();
            return if answered && r.model.is_some() { None } else { Some(0.0) };
        };
        if fresh + output + read + write == 0 {
            return Some(0.0);
        }
        let p = self.prices.get(r.model.as_deref()?)?;
        let part = |tokens: i64, price: Option<f64>| -> Option<f64> {
            if tokens == 0 {
                Some(0.0)
            } else {
                price.map(|usd| tokens as f64 * usd)
            }
        };
        let sum = part(fresh, Some(p.input_usd_per_mtok))?
            + part(output, Some(p.output_usd_per_mtok))?
            + part(read, p.cache_read_usd_per_mtok)?
            + part(write, p.cache_write_usd_per_mtok)?;
        Some(sum / 1_000_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(input: i64, read: i64, write: i64) -> AttemptRow {
        AttemptRow {
            input_tokens: Some(input),
            output_tokens: Some(10),
            cache_read_tokens: Some(read),
            cache_write_tokens: Some(write),
            ..AttemptRow::default()
        }
    }

    fn pricing(protocol: Protocol) -> Pricing {
        Pricing { prices: HashMap::new(), fees: HashMap::new(), protocol, month_tokens: HashMap::new() }
    }

    #[test]
    fn cached_input_is_billed_once_in_every_dialect() {
        let anthropic = pricing(Protocol::Anthropic).split(&row(3, 4000, 120));
        assert_eq!(anthropic, Some((3, 10, 4000, 120)), "Anthropic's input_tokens exclude the cache: kept as fresh");
        let openai = pricing(Protocol::Openai).split(&row(1200, 1024, 0));
        assert_eq!(
            openai,
            Some((176, 10, 1024, 0)),
            "OpenAI's prompt includes the cached part: only the rest is fresh"
        );
        let gemini = pricing(Protocol::Gemini).split(&row(1200, 1024, 0));
        assert_eq!(gemini, Some((176, 10, 1024, 0)), "Gemini's promptTokenCount includes cachedContentTokenCount too");
    }
}
