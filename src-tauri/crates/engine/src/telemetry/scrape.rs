//! `/metrics`: the router's counters, then gauges read when scraped — each key's circuits
//! (`switchyard_circuit_open`: 1 open, 0.5 half-open, absent when closed), each subscription
//! or rate window's utilization as the provider last reported it
//! (`switchyard_quota_utilization`, `switchyard_quota_resets_in_seconds`), each limit's
//! window (`switchyard_limit_used`, `_remaining`, `_capacity`; absent without limits). Gauges
//! come from the same reports as `routing status`, `quota` and `limits status`, so a scrape
//! says what those say; they are computed per scrape (every 15 s or so), never per request.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::error::EngineError;
use crate::router::Router;
use crate::telemetry::labels;

/// The content type of [`Router::metrics`]'s text (OpenMetrics 1.0, which Prometheus reads).
pub const METRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CircuitLabels {
    connection: String,
    profile: String,
    /// The model of a model-scoped circuit; `""` for the key's own.
    model: String,
    kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QuotaLabels {
    connection: String,
    profile: String,
    window: String,
    model: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabels {
    limit: String,
    subject: String,
    measure: String,
}

type FloatGauge = Gauge<f64, std::sync::atomic::AtomicU64>;

impl Router {
    /// The text of `/metrics`: the counters (when metrics are on) and the gauges of this
    /// moment. Without metrics (`--no-metrics`) only the gauges.
    pub async fn metrics(&self) -> Result<String, EngineError> {
        let mut out = String::with_capacity(16 * 1024);
        self.telemetry.encode_counts(&mut out);
        let gauges = self.gauges().await?;
        if let Err(e) = prometheus_client::encoding::text::encode_registry(&mut out, &gauges) {
            tracing::warn!(error = %e, "metrics gauges not encoded");
        }
        let _ = prometheus_client::encoding::text::encode_eof(&mut out);
        Ok(out)
    }

    async fn gauges(&self) -> Result<Registry, EngineError> {
        let engine = &self.engine;
        let circuits = Family::<CircuitLabels, FloatGauge>::default();
        let quota = Family::<QuotaLabels, FloatGauge>::default();
        let resets = Family::<QuotaLabels, FloatGauge>::default();
        for connection in engine.connection_list().await? {
            let model = |m: Option<&str>| {
                labels::bounded(m, |m| {
                    connection.models.iter().any(|x| x == m) || connection.mapping.iter().any(|x| x.from == m)
                })
                .to_string()
            };
            match engine.routing_status(&connection.slug).await {
                Ok(status) => {
                    for p in &status.profiles {
                        for h in &p.health {
                            use switchyard_core::states::CircuitState;
                            let value = match h.state {
                                CircuitState::Open => 1.0,
                                CircuitState::HalfOpen => 0.5,
                                CircuitState::Closed => continue,
                            };
                            let key = CircuitLabels {
                                connection: connection.slug.clone(),
                                profile: p.label.clone(),
                                model: model(h.model.as_deref()),
                                kind: labels::failure_kind(h.kind.as_deref()).to_string(),
                            };
                            circuits.get_or_create(&key).set(value);
                        }
                    }
                }
                Err(e) => tracing::debug!(code = e.code().as_str(), "metrics: routing status not read"),
            }
            match engine.quota(&connection.slug).await {
                Ok(view) => {
                    for p in &view.profiles {
                        for w in &p.windows {
                            let key = QuotaLabels {
                                connection: connection.slug.clone(),
                                profile: p.label.clone(),
                                window: w.name.clone(),
                                model: model(w.model.as_deref()),
                            };
                            if let Some(u) = w.used_fraction() {
                                quota.get_or_create(&key).set(u);
                            }
                            if let Some(secs) = w.resets_in_secs {
                                resets.get_or_create(&key).set(f64::from(secs));
                            }
                        }
                    }
                }
                Err(e) => tracing::debug!(code = e.code().as_str(), "metrics: quota not read"),
            }
        }
        let mut registry = Registry::default();
        registry.register(
            "switchyard_circuit_open",
            "A key's open circuit: 1 open, 0.5 half-open (absent: closed)",
            circuits,
        );
        registry.register(
            "switchyard_quota_utilization",
            "A key's window as the provider last reported it: the fraction used (0-1; from its limit and remaining when it reports counts)",
            quota,
        );
        registry.register("switchyard_quota_resets_in_seconds", "Seconds until a key's window resets", resets);
        let limits = engine.limit_status(None).await?;
        if !limits.is_empty() {
            let used = Family::<LimitLabels, FloatGauge>::default();
            let remaining = Family::<LimitLabels, FloatGauge>::default();
            let capacity = Family::<LimitLabels, FloatGauge>::default();
            for l in &limits {
                let key = LimitLabels { limit: l.id.clone(), subject: l.subject.clone(), measure: l.measure.clone() };
                used.get_or_create(&key).set(l.used + l.reserved);
                remaining.get_or_create(&key).set(l.remaining);
                capacity.get_or_create(&key).set(l.capacity);
            }
            registry.register("switchyard_limit_used", "A limit's window: used and reserved", used);
            registry.register("switchyard_limit_remaining", "A limit's window: what is left", remaining);
            registry.register("switchyard_limit_capacity", "A limit's capacity per window", capacity);
        }
        Ok(registry)
    }
}
