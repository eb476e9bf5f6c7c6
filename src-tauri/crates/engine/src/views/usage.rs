//! Usage and cost as `switchyard usage` and the Activity chart show them.

use serde::Serialize;
use specta::Type;

/// One group's sums. `requests` counts physical attempts (each one provider call). Counts are
/// i64 here and in JSON; TypeScript reads them as `number` (`specta(type = u32)` only names the
/// TS type: the bindings refuse 64-bit integers, and `f64` would read as `number | null`).
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct UsageRow {
    pub key: String,
    /// Grouped by profile: the label of the profile `key` names, now (`None` when it has been
    /// removed since); `None` for other groupings and the total. For tables; not serialised
    /// (JSON and IPC keep the id in `key`).
    #[serde(skip)]
    pub label: Option<String>,
    #[specta(type = u32)]
    pub requests: i64,
    /// Attempts that failed or got no answer.
    #[specta(type = u32)]
    pub errors: i64,
    #[specta(type = u32)]
    pub input_tokens: i64,
    #[specta(type = u32)]
    pub output_tokens: i64,
    #[specta(type = u32)]
    pub cache_read_tokens: i64,
    #[specta(type = u32)]
    pub cache_write_tokens: i64,
    /// USD; `None` when the cost of some attempt in the group is not known.
    pub cost_usd: Option<f64>,
}

/// A connection's usage since a time, grouped.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct UsageView {
    pub slug: String,
    pub by: String,
    /// The first instant counted (RFC 3339); `None`: the whole ledger.
    pub since: Option<String>,
    pub time_zone: String,
    pub rows: Vec<UsageRow>,
    /// Every attempt, once (a tag row may count an attempt twice; the total does not).
    pub total: UsageRow,
    /// Every attempt's cost is known (a price for its model, or its key's fee).
    pub complete: bool,
}

/// A connection's usage per day and profile (the desktop's chart).
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct UsageChart {
    pub slug: String,
    pub time_zone: String,
    /// Every day of the range, oldest first (`YYYY-MM-DD`).
    pub days: Vec<String>,
    pub series: Vec<UsageSeries>,
    pub total: UsageRow,
    pub complete: bool,
}

/// One profile's bars: `days[i]` is the i-th day of the chart (key = the day).
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct UsageSeries {
    pub profile: String,
    pub label: String,
    pub days: Vec<UsageRow>,
}
