//! `limits list|status` and `audit list`: limits as configured and as they stand (in the
//! measure's unit: requests, tokens, USD, requests in flight), and the audit's rows. Never a
//! secret.

use serde::{Deserialize, Serialize};
use specta::Type;

#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct LimitView {
    pub id: String,
    /// `user:NAME`, `users`, `connection:SLUG`, `pool:POOL`.
    pub scope: String,
    /// `requests`, `tokens`, `usd`, `concurrency`.
    pub measure: String,
    /// In the measure's unit (USD for `usd`).
    pub capacity: f64,
    /// `minute` … `month`; `None` for concurrency.
    pub period: Option<String>,
    #[specta(type = u32)]
    pub revision: i64,
}

/// One limit's current window for one subject.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct LimitStatusView {
    pub id: String,
    pub scope: String,
    pub measure: String,
    pub period: Option<String>,
    /// The user a `users` limit counts here ("" otherwise).
    pub subject: String,
    pub capacity: f64,
    /// Settled in this window (for concurrency: requests in flight).
    pub used: f64,
    /// Taken by requests still running, not settled yet.
    pub reserved: f64,
    pub remaining: f64,
    /// When the window ends (RFC 3339); `None` for concurrency.
    pub resets_at: Option<String>,
    /// Requests this limit refused in the window (for concurrency: since the limit was set).
    #[specta(type = u32)]
    pub refused: i64,
}

/// The caps one person sets on a connection from the desktop (each a limit on
/// `connection:SLUG`): USD per day, USD per month, requests per minute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum CapKind {
    UsdDay,
    UsdMonth,
    RequestsMinute,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct AuditView {
    pub at: String,
    pub actor: String,
    pub action: String,
    pub subject: String,
    #[specta(type = Option<u32>)]
    pub revision_before: Option<i64>,
    #[specta(type = Option<u32>)]
    pub revision_after: Option<i64>,
    /// The values set, as a JSON object (never a secret).
    #[specta(type = Option<std::collections::BTreeMap<String, AuditValue>>)]
    pub detail: Option<serde_json::Value>,
}

/// How TypeScript sees one value of an audit row's detail (names, scopes, capacities, times):
/// the type of the JSON the engine writes, never built in Rust.
// Never constructed: it only types `AuditView::detail` for TypeScript.
#[allow(dead_code)]
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
#[serde(untagged)]
pub enum AuditValue {
    Text(String),
    Number(f64),
    Flag(bool),
    List(Vec<String>),
}

/// `GET /v1/switchyard/me`: a token holder's own figures (never anyone else's).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeView {
    /// The relay user; `None` for the install's own token.
    pub name: Option<String>,
    /// `user`, `admin`, or `install` (the install's own token).
    pub role: String,
    /// Connections and pools the token reaches (empty: all).
    pub connections: Vec<String>,
    /// Model patterns the token may ask for (empty: all).
    pub models: Vec<String>,
    pub expires_at: Option<String>,
    /// Since midnight in the time zone setting.
    pub today: MeUsage,
    /// Since the first of the month.
    pub month: MeUsage,
    /// Each limit that applies to the token's requests, its current window.
    pub limits: Vec<LimitStatusView>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MeUsage {
    pub requests: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// USD; `None` when some request's cost is not known (a model without a price).
    pub cost_usd: Option<f64>,
}
