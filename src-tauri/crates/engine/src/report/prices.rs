//! The user's price table (`switchyard prices`): USD per million tokens per model, and a
//! subscription key's monthly fee. Prices are what the user typed, never looked up or
//! guessed; a model without a price costs "unknown" in usage (invariant 18).

pub use crate::views::{KeyFeeView, PriceTable, PriceView};
use switchyard_core::validate::validate_model;
use switchyard_core::InvalidInput;
use switchyard_store::key_fees::{self, KeyFeeRow};
use switchyard_store::prices::{self, PriceRow};
use switchyard_store::{connections, profiles};

use crate::clock::rfc3339;
use crate::context::Context;
use crate::error::EngineError;

/// The highest price accepted, USD per million tokens (and per month for a fee).
pub const MAX_USD: f64 = 100_000.0;

/// A price as given: input and output required, cache prices optional.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewPrice {
    pub input: f64,
    pub output: f64,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
}

impl Context {
    pub async fn prices(&self) -> Result<PriceTable, EngineError> {
        let mut conn = self.store.acquire().await?;
        let prices = prices::list(&mut conn).await?.into_iter().map(price_view).collect();
        let mut fees = Vec::new();
        for c in connections::list(&mut conn).await? {
            let by_id: Vec<KeyFeeRow> = key_fees::for_connection(&mut conn, &c.id).await?;
            for f in by_id {
                let label = profiles::by_id(&mut conn, &f.profile_id).await?.map(|p| p.label).unwrap_or_default();
                fees.push(KeyFeeView {
                    connection: c.slug.clone(),
                    profile: f.profile_id,
                    label,
                    monthly_usd: f.monthly_usd,
                });
            }
        }
        Ok(PriceTable { prices, fees })
    }

    /// Sets a model's price (the whole row: a cache price left out is cleared).
    pub async fn set_price(&self, model: &str, price: NewPrice) -> Result<PriceView, EngineError> {
        validate_model(model)?;
        let usd = |field: &str, v: f64| check_usd(field, v);
        usd("input", price.input)?;
        usd("output", price.output)?;
        price.cache_read.map(|v| usd("cache_read", v)).transpose()?;
        price.cache_write.map(|v| usd("cache_write", v)).transpose()?;
        let row = PriceRow {
            model: model.to_string(),
            input_usd_per_mtok: price.input,
            output_usd_per_mtok: price.output,
            cache_read_usd_per_mtok: price.cache_read,
            cache_write_usd_per_mtok: price.cache_write,
            updated_at: self.now_ms(),
        };
        let mut conn = self.store.acquire().await?;
        prices::put(&mut conn, &row).await?;
        Ok(price_view(row))
    }

    /// Removes a model's price (its cost becomes unknown again). Any stored name may be
    /// removed, even one [`validate_model`] would refuse today.
    pub async fn remove_price(&self, model: &str) -> Result<(), EngineError> {
        let mut conn = self.store.acquire().await?;
        if !prices::remove(&mut conn, model).await? {
            return Err(EngineError::not_found("price", model));
        }
        Ok(())
    }

    /// Sets (or with `None` removes) the monthly fee of a subscription key: its rows are then
    /// costed by the fee spread over the key's tokens of each month, not by model prices.
    pub async fn set_key_fee(&self, slug: &str, profile: &str, monthly_usd: Option<f64>) -> Result<(), EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let profile = self.profile_by_ref(&connection, profile).await?;
        let mut conn = self.store.acquire().await?;
        match monthly_usd {
            Some(usd) => {
                check_usd("monthly_usd", usd)?;
                let row = KeyFeeRow { profile_id: profile.id, monthly_usd: usd, updated_at: self.now_ms() };
                key_fees::put(&mut conn, &row).await?;
            }
            None => {
                key_fees::remove(&mut conn, &profile.id).await?;
            }
        }
        Ok(())
    }
}

fn check_usd(field: &str, v: f64) -> Result<(), InvalidInput> {
    if v.is_finite() && (0.0..=MAX_USD).contains(&v) {
        Ok(())
    } else {
        Err(InvalidInput::new(field, format!("must be a price in USD between 0 and {MAX_USD}")))
    }
}

fn price_view(r: PriceRow) -> PriceView {
    PriceView {
        model: r.model,
        input: r.input_usd_per_mtok,
        output: r.output_usd_per_mtok,
        cache_read: r.cache_read_usd_per_mtok,
        cache_write: r.cache_write_usd_per_mtok,
        updated_at: rfc3339(r.updated_at),
    }
}
