//! What the relay tells the outside about its traffic (docs/design.md, "Telemetry"; invariant
//! 32): Prometheus counters and histograms (`counters.rs`), gauges read from the store when
//! scraped (`scrape.rs`), and OpenTelemetry GenAI spans exported over OTLP/HTTP (`spans.rs`).
//!
//! Everything is computed on the attempt ledger's writer (its own thread), from the rows it
//! writes and what the router told it with them ([`Told`]): the request path clones an `Arc`
//! and makes no measurement of its own, and a dead collector costs a request nothing (spans
//! leave in batches from the exporter's thread). Label values come only from configured names
//! (`labels.rs`): a model the connection does not enable, a profile or reason it does not know,
//! is `other`. Nothing of a prompt, an answer or a credential is ever in a label or attribute:
//! the rows hold none.

mod counters;
mod labels;
mod otlp_client;
mod scrape;
mod spans;

use std::sync::Arc;

use switchyard_core::routing::FailureKind;
use switchyard_store::attempts::AttemptRow;

use crate::error::EngineError;
use crate::limits::book::Rates;
use crate::router::Snapshot;

pub(crate) use counters::PRICES_TTL;
pub use scrape::METRICS_CONTENT_TYPE;
pub use spans::OTLP_ENDPOINT_ENV;

/// What a router counts and exports.
#[derive(Debug, Clone)]
pub struct TelemetryOptions {
    /// Prometheus counters (`/metrics`); on by default (`relay serve --no-metrics` turns them off).
    pub metrics: bool,
    /// Where spans go (`--otlp-endpoint`, or `OTEL_EXPORTER_OTLP_ENDPOINT`); `None`: no spans.
    pub otlp_endpoint: Option<String>,
}

impl Default for TelemetryOptions {
    fn default() -> Self {
        TelemetryOptions { metrics: true, otlp_endpoint: None }
    }
}

impl TelemetryOptions {
    /// The default options with the endpoint from `OTEL_EXPORTER_OTLP_ENDPOINT` when set.
    pub fn from_env() -> Self {
        let otlp_endpoint = std::env::var(OTLP_ENDPOINT_ENV).ok().filter(|v| !v.trim().is_empty());
        TelemetryOptions { otlp_endpoint, ..TelemetryOptions::default() }
    }
}

/// A router's counters and span export (either may be off).
#[derive(Debug, Default)]
pub struct Telemetry {
    counts: Option<counters::Counts>,
    spans: Option<spans::Spans>,
}

/// What every row of a request carries for telemetry: with traces on, when the request
/// started and its span ids (one `Arc` per request: a pointer in each row, nothing read or
/// allocated per request when only metrics are on).
#[derive(Debug, Clone)]
pub(crate) struct RequestMark {
    pub span: Option<Arc<SpanMark>>,
}

/// A traced request's start and span ids.
#[derive(Debug)]
pub(crate) struct SpanMark {
    pub started_ms: i64,
    pub ids: spans::TraceIds,
}

/// How a request ended (`switchyard_requests_total{outcome}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// An attempt's answer went to the client.
    Delivered,
    /// Every attempt failed: the last provider error went to the client.
    Failed,
    /// The last attempt got no answer (network, timeout).
    NoAnswer,
    /// Switchyard refused it (a limit, nothing eligible, a pool that cannot take it).
    Refused,
}

impl Ending {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Ending::Delivered => "delivered",
            Ending::Failed => "failed",
            Ending::NoAnswer => "no_answer",
            Ending::Refused => "refused",
        }
    }
}

/// What the router tells the writer with a row, besides the row: the connection's snapshot the
/// row was made on (its slug, profile labels, enabled models and dialect name the labels), the
/// pool's name, the request's mark, and whether this row ends its request (a delivering
/// attempt, a refusal of ours).
#[derive(Debug, Clone)]
pub(crate) struct Told {
    pub snapshot: Option<Arc<Snapshot>>,
    pub pool: Option<String>,
    pub mark: RequestMark,
    pub ends: Option<Ending>,
}

/// A request that ended without a row of its own saying so (every attempt failed, or nothing
/// was eligible): sent to the writer after its last row.
#[derive(Debug)]
pub(crate) struct RequestEnd {
    pub told: Told,
    pub user: Option<String>,
    pub model: Option<String>,
    /// The profile of the last attempt (`None`: none was made).
    pub profile_id: Option<String>,
    pub failure: Option<FailureKind>,
    pub ended_ms: i64,
}

impl Telemetry {
    /// Starts what `options` ask for. A bad OTLP endpoint is an error (the relay does not start
    /// with telemetry it was asked for and cannot give).
    pub fn start(options: &TelemetryOptions) -> Result<Self, EngineError> {
        let counts = options.metrics.then(counters::Counts::new);
        let spans = options.otlp_endpoint.as_deref().map(spans::Spans::start).transpose()?;
        Ok(Telemetry { counts, spans })
    }

    /// Counters on, no spans (the default; never fails).
    pub fn counting() -> Self {
        Telemetry { counts: Some(counters::Counts::new()), spans: None }
    }

    /// Nothing counted, nothing exported.
    pub fn off() -> Self {
        Telemetry::default()
    }

    /// Whether requests need a [`RequestMark`] (anything is counted or exported).
    pub(crate) fn is_on(&self) -> bool {
        self.counts.is_some() || self.spans.is_some()
    }

    /// Whether `/metrics` has counters to show.
    pub fn metrics_on(&self) -> bool {
        self.counts.is_some()
    }

    /// A new request's mark (`None` when telemetry is off: the request carries nothing); the
    /// clock is read only when spans are exported.
    pub(crate) fn mark(&self, now_ms: impl FnOnce() -> i64) -> Option<RequestMark> {
        if !self.is_on() {
            return None;
        }
        let span =
            self.spans.as_ref().map(|_| Arc::new(SpanMark { started_ms: now_ms(), ids: spans::TraceIds::new() }));
        Some(RequestMark { span })
    }

    /// Reads the model prices the users' cost counter uses (on the ledger's writer, every
    /// [`PRICES_TTL`]); a failed read keeps the prices read before.
    pub(crate) async fn read_prices(&self, store: &switchyard_store::Store) {
        let Some(counts) = &self.counts else { return };
        let read = async {
            let mut conn = store.acquire().await?;
            switchyard_store::prices::list(&mut conn).await
        };
        match read.await {
            Ok(rows) => counts.set_prices(rows.iter().map(|p| (p.model.clone(), Rates::of(p))).collect()),
            Err(e) => tracing::debug!(error = %e, "metrics: prices not read"),
        }
    }

    /// Counts and traces one written row (on the ledger's writer).
    pub(crate) fn row(&self, row: &AttemptRow, told: &Told) {
        if let Some(counts) = &self.counts {
            counts.row(row, told);
        }
        if let Some(spans) = &self.spans {
            spans.row(row, told);
        }
    }

    /// Counts and traces a request that ended without a row saying so (on the ledger's writer).
    pub(crate) fn ended(&self, end: &RequestEnd) {
        if let Some(counts) = &self.counts {
            counts.ended(end);
        }
        if let Some(spans) = &self.spans {
            spans.ended(end);
        }
    }

    /// The counters in the Prometheus text format (OpenMetrics), without the closing `# EOF`.
    pub(crate) fn encode_counts(&self, out: &mut String) {
        if let Some(counts) = &self.counts {
            counts.encode(out);
        }
    }

    /// Sends what spans are queued (tests and shutdown).
    pub fn flush_spans(&self) {
        if let Some(spans) = &self.spans {
            spans.flush();
        }
    }
}
