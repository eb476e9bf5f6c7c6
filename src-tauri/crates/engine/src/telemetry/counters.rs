//! The counters and histograms of `/metrics`, counted on the ledger's writer from each row
//! ([`Counts::row`]) and each request that ended without a row saying so ([`Counts::ended`]).
//! Per process: in a team each replica counts its own traffic (`sum without (instance)` adds
//! them up; docs/team-relay.md).
//!
//! Names follow INTERFACE.md: `switchyard_*` for Switchyard's facts, the GenAI semantic
//! conventions' client metrics (v1.41: `gen_ai.client.token.usage`,
//! `gen_ai.client.operation.duration`, `gen_ai.client.operation.time_to_first_chunk`, with
//! their bucket boundaries) under their Prometheus names.

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};
use switchyard_store::attempts::AttemptRow;

use crate::limits::book::Rates;
use crate::telemetry::labels;
use crate::telemetry::{Ending, RequestEnd, Told};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    connection: String,
    pool: String,
    profile: String,
    model: String,
    user: String,
    outcome: &'static str,
    failure_kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AttemptLabels {
    connection: String,
    pool: String,
    profile: String,
    model: String,
    outcome: &'static str,
    failure_kind: &'static str,
}

/// A move to another key (`failover`), a fallback hop (`fallback`) or a pool's hand-off to
/// another member (`pool`), and the failure kind that caused it.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MoveLabels {
    connection: String,
    pool: String,
    kind: &'static str,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabels {
    limit: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct UserLabels {
    user: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TokenLabels {
    gen_ai_operation_name: &'static str,
    gen_ai_provider_name: &'static str,
    gen_ai_request_model: String,
    gen_ai_token_type: &'static str,
    connection: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DurationLabels {
    gen_ai_operation_name: &'static str,
    gen_ai_provider_name: &'static str,
    gen_ai_request_model: String,
    error_type: &'static str,
    connection: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn token_buckets() -> Histogram {
    // The conventions' boundaries: 1, 4, 16, … 67108864.
    Histogram::new(exponential_buckets(1.0, 4.0, 14))
}

fn second_buckets() -> Histogram {
    // The conventions' boundaries: 0.01, 0.02, 0.04, … 81.92.
    Histogram::new(exponential_buckets(0.01, 2.0, 14))
}

/// A router's counters.
#[derive(Debug)]
pub(crate) struct Counts {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    attempts: Family<AttemptLabels, Counter>,
    moves: Family<MoveLabels, Counter>,
    limit_refusals: Family<LimitLabels, Counter>,
    user_requests: Family<UserLabels, Counter>,
    user_cost: Family<UserLabels, Counter<f64>>,
    tokens: HistogramFamily<TokenLabels>,
    duration: HistogramFamily<DurationLabels>,
    first_chunk: HistogramFamily<DurationLabels>,
    /// Model prices, for the users' cost (read by the writer every [`PRICES_TTL`]).
    prices: RwLock<HashMap<String, Rates>>,
}

/// How long the writer keeps the prices it read before it reads them again.
pub(crate) const PRICES_TTL: std::time::Duration = std::time::Duration::from_secs(30);

impl Counts {
    pub(crate) fn new() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        let attempts = Family::<AttemptLabels, Counter>::default();
        let moves = Family::<MoveLabels, Counter>::default();
        let limit_refusals = Family::<LimitLabels, Counter>::default();
        let user_requests = Family::<UserLabels, Counter>::default();
        let user_cost = Family::<UserLabels, Counter<f64>>::default();
        let tokens: HistogramFamily<TokenLabels> = Family::new_with_constructor(token_buckets);
        let duration: HistogramFamily<DurationLabels> = Family::new_with_constructor(second_buckets);
        let first_chunk: HistogramFamily<DurationLabels> = Family::new_with_constructor(second_buckets);
        registry.register(
            "switchyard_requests",
            "Requests the relay routed, by how they ended (delivered, failed, no_answer, refused)",
            requests.clone(),
        );
        registry.register("switchyard_attempts", "Attempts upstream, by outcome and failure kind", attempts.clone());
        registry.register(
            "switchyard_failovers",
            "Attempts that moved on: to another key (failover), a fallback hop (fallback) or another pool member (pool), by failure kind",
            moves.clone(),
        );
        registry.register("switchyard_limit_refusals", "Requests a limit refused", limit_refusals.clone());
        registry.register("switchyard_user_requests", "Requests of each relay user", user_requests.clone());
        registry.register(
            "switchyard_user_cost_usd",
            "What each relay user's answers cost at the configured prices (USD)",
            user_cost.clone(),
        );
        registry.register("gen_ai_client_token_usage", "Number of input and output tokens used", tokens.clone());
        registry.register_with_unit(
            "gen_ai_client_operation_duration",
            "GenAI operation duration",
            Unit::Seconds,
            duration.clone(),
        );
        registry.register_with_unit(
            "gen_ai_client_operation_time_to_first_chunk",
            "Time to receive the first chunk of the answer",
            Unit::Seconds,
            first_chunk.clone(),
        );
        Counts {
            registry,
            requests,
            attempts,
            moves,
            limit_refusals,
            user_requests,
            user_cost,
            tokens,
            duration,
            first_chunk,
            prices: RwLock::new(HashMap::new()),
        }
    }

    pub(crate) fn set_prices(&self, prices: HashMap<String, Rates>) {
        *self.prices.write().unwrap_or_else(PoisonError::into_inner) = prices;
    }

    pub(crate) fn row(&self, row: &AttemptRow, told: &Told) {
        let snapshot = told.snapshot.as_deref();
        let connection = labels::connection(snapshot);
        let pool = told.pool.clone().unwrap_or_default();
        let model = labels::model(snapshot, row.model.as_deref());
        let kind = labels::failure_kind(row.failure_kind.as_deref());
        let profile = labels::profile(snapshot, Some(&row.profile_id));
        if row.attempt > 0 {
            let ok = row.status.is_some_and(|s| (200..300).contains(&s)) && kind.is_empty();
            self.attempts
                .get_or_create(&AttemptLabels {
                    connection: connection.clone(),
                    pool: pool.clone(),
                    profile: profile.clone(),
                    model: model.clone(),
                    outcome: if ok { "ok" } else { "failed" },
                    failure_kind: kind,
                })
                .inc();
            let (word, cause) = labels::reason(&row.reason);
            if matches!(word, "failover" | "fallback" | "pool") {
                let key = MoveLabels { connection: connection.clone(), pool: pool.clone(), kind: word, reason: cause };
                self.moves.get_or_create(&key).inc();
            }
            self.gen_ai(row, told, &connection, &model, kind);
        }
        if let Some(limit) = &row.limit_id {
            self.limit_refusals.get_or_create(&LimitLabels { limit: limit.clone() }).inc();
        }
        if let Some(ending) = told.ends {
            self.request(RequestLabels {
                profile,
                connection,
                pool,
                model,
                user: row.user_name.clone().unwrap_or_default(),
                outcome: ending.as_str(),
                failure_kind: if ending == Ending::Delivered { "" } else { kind },
            });
            if let Some(user) = &row.user_name {
                self.user_cost(user, row, told);
            }
        }
    }

    pub(crate) fn ended(&self, end: &RequestEnd) {
        let snapshot = end.told.snapshot.as_deref();
        self.request(RequestLabels {
            connection: labels::connection(snapshot),
            pool: end.told.pool.clone().unwrap_or_default(),
            profile: labels::profile(snapshot, end.profile_id.as_deref()),
            model: labels::model(snapshot, end.model.as_deref()),
            user: end.user.clone().unwrap_or_default(),
            outcome: end.told.ends.unwrap_or(Ending::Failed).as_str(),
            failure_kind: labels::failure_kind(end.failure.map(|k| k.as_str())),
        });
    }

    fn request(&self, labels: RequestLabels) {
        if !labels.user.is_empty() {
            self.user_requests.get_or_create(&UserLabels { user: labels.user.clone() }).inc();
        }
        self.requests.get_or_create(&labels).inc();
    }

    fn gen_ai(&self, row: &AttemptRow, told: &Told, connection: &str, model: &str, kind: &'static str) {
        let protocol = told.snapshot.as_ref().map(|s| s.protocol);
        let (operation, provider) = (labels::operation(protocol), labels::provider(protocol));
        for (tokens, token_type) in [(row.input_tokens, "input"), (row.output_tokens, "output")] {
            if let Some(n) = tokens.filter(|&n| n >= 0) {
                let key = TokenLabels {
                    gen_ai_operation_name: operation,
                    gen_ai_provider_name: provider,
                    gen_ai_request_model: model.to_string(),
                    gen_ai_token_type: token_type,
                    connection: connection.to_string(),
                };
                self.tokens.get_or_create(&key).observe(n as f64);
            }
        }
        let key = DurationLabels {
            gen_ai_operation_name: operation,
            gen_ai_provider_name: provider,
            gen_ai_request_model: model.to_string(),
            error_type: kind,
            connection: connection.to_string(),
        };
        if let Some(ms) = row.duration_ms {
            self.duration.get_or_create(&key).observe(ms as f64 / 1000.0);
        }
        if let Some(ms) = row.ttfb_ms.filter(|_| kind.is_empty()) {
            self.first_chunk.get_or_create(&key).observe(ms as f64 / 1000.0);
        }
    }

    fn user_cost(&self, user: &str, row: &AttemptRow, told: &Told) {
        let (Some(model), Some(snapshot)) = (row.model.as_deref(), told.snapshot.as_ref()) else { return };
        let prices = self.prices.read().unwrap_or_else(PoisonError::into_inner);
        let Some(micro) = prices.get(model).and_then(|r| r.micro_usd(snapshot.protocol, row)) else { return };
        self.user_cost.get_or_create(&UserLabels { user: user.to_string() }).inc_by(micro as f64 / 1e6);
    }

    /// The families in the text format, without `# EOF`.
    pub(crate) fn encode(&self, out: &mut String) {
        if let Err(e) = prometheus_client::encoding::text::encode_registry(out, &self.registry) {
            tracing::warn!(error = %e, "metrics not encoded");
        }
    }
}
