//! The user's price table and key fees (`switchyard prices`).

use serde::Serialize;
use specta::Type;

/// One model's price, USD per million tokens; `None`: not given.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct PriceView {
    pub model: String,
    pub input: f64,
    pub output: f64,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
    pub updated_at: String,
}

/// A subscription key's monthly fee.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct KeyFeeView {
    pub connection: String,
    /// Stable profile id.
    pub profile: String,
    pub label: String,
    pub monthly_usd: f64,
}

/// The whole table.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct PriceTable {
    pub prices: Vec<PriceView>,
    pub fees: Vec<KeyFeeView>,
}
