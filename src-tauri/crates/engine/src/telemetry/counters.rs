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
use std::sync::{Mutex, PoisonError, RwLock};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};
use switchyard_core::connection::Protocol;
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

/// The label values a written row counts under, borrowed from the row and its snapshot.
struct RowValues<'a> {
    connection: &'a str,
    pool: &'a str,
    profile: &'a str,
    model: &'a str,
    user: &'a str,
    protocol: Option<Protocol>,
    kind: &'static str,
    /// The attempt's outcome: a 2xx and no failure kind.
    ok: bool,
    ends: Option<Ending>,
}

impl RowValues<'_> {
    /// Every value, each length-prefixed (two rows write the same key only when every value is
    /// the same): the key of [`Found`].
    fn write_key(&self, key: &mut Vec<u8>) {
        key.clear();
        let ends = self.ends.map_or("", Ending::as_str);
        let outcome = self.outcome();
        let provider = labels::provider(self.protocol);
        for value in
            [self.connection, self.pool, self.profile, self.model, self.user, provider, self.kind, outcome, ends]
        {
            key.extend_from_slice(&(value.len() as u32).to_le_bytes());
            key.extend_from_slice(value.as_bytes());
        }
    }

    /// The attempt's `outcome` label.
    fn outcome(&self) -> &'static str {
        if self.ok {
            "ok"
        } else {
            "failed"
        }
    }

    fn attempt(&self) -> AttemptLabels {
        AttemptLabels {
            connection: self.connection.to_string(),
            pool: self.pool.to_string(),
            profile: self.profile.to_string(),
            model: self.model.to_string(),
            outcome: self.outcome(),
            failure_kind: self.kind,
        }
    }

    fn request(&self) -> RequestLabels {
        let ending = self.ends.unwrap_or(Ending::Failed);
        RequestLabels {
            connection: self.connection.to_string(),
            pool: self.pool.to_string(),
            profile: self.profile.to_string(),
            model: self.model.to_string(),
            user: self.user.to_string(),
            outcome: ending.as_str(),
            failure_kind: if ending == Ending::Delivered { "" } else { self.kind },
        }
    }

    fn tokens(&self, token_type: &'static str) -> TokenLabels {
        TokenLabels {
            gen_ai_operation_name: labels::operation(self.protocol),
            gen_ai_provider_name: labels::provider(self.protocol),
            gen_ai_request_model: self.model.to_string(),
            gen_ai_token_type: token_type,
            connection: self.connection.to_string(),
        }
    }

    fn duration(&self) -> DurationLabels {
        DurationLabels {
            gen_ai_operation_name: labels::operation(self.protocol),
            gen_ai_provider_name: labels::provider(self.protocol),
            gen_ai_request_model: self.model.to_string(),
            error_type: self.kind,
            connection: self.connection.to_string(),
        }
    }
}

/// The series rows with the same [`RowValues`] count into, each taken from its family the
/// first time a row counts into it (so `/metrics` shows the series it showed before: none
/// made empty) and kept. Building a family's label set and SipHashing it under the family's
/// lock for every series of every row cost the writer ~7k instructions per row (issue 40).
#[derive(Default)]
struct Series {
    attempt: Option<Counter>,
    /// Input, output.
    tokens: [Option<Histogram>; 2],
    duration: Option<Histogram>,
    first_chunk: Option<Histogram>,
    request: Option<Counter>,
    user_requests: Option<Counter>,
    user_cost: Option<Counter<f64>>,
}

/// Rows' series by their label values. Label values are configured names (invariant 32), so
/// the keys are as bounded as the families' series; past [`FOUND_MAX`] the map starts again
/// (the families keep every series).
#[derive(Default)]
struct Found {
    key: Vec<u8>,
    index: HashMap<Box<[u8]>, usize, foldhash::fast::RandomState>,
    series: Vec<Series>,
}

const FOUND_MAX: usize = 4096;

impl Found {
    fn series(&mut self, values: &RowValues<'_>) -> &mut Series {
        values.write_key(&mut self.key);
        let at = match self.index.get(self.key.as_slice()) {
            Some(&at) => at,
            None => {
                if self.series.len() >= FOUND_MAX {
                    self.index.clear();
                    self.series.clear();
                }
                self.index.insert(self.key.as_slice().into(), self.series.len());
                self.series.push(Series::default());
                self.series.len() - 1
            }
        };
        &mut self.series[at]
    }
}

impl std::fmt::Debug for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Found").field("series", &self.series.len()).finish()
    }
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
    found: Mutex<Found>,
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
            found: Mutex::new(Found::default()),
        }
    }

    pub(crate) fn set_prices(&self, prices: HashMap<String, Rates>) {
        *self.prices.write().unwrap_or_else(PoisonError::into_inner) = prices;
    }

    pub(crate) fn row(&self, row: &AttemptRow, told: &Told) {
        let snapshot = told.snapshot.as_deref();
        let kind = labels::failure_kind(row.failure_kind.as_deref());
        let values = RowValues {
            connection: labels::connection(snapshot),
            pool: told.pool.as_deref().unwrap_or(""),
            profile: labels::profile(snapshot, Some(&row.profile_id)),
            model: labels::model(snapshot, row.model.as_deref()),
            user: row.user_name.as_deref().unwrap_or(""),
            protocol: snapshot.map(|s| s.protocol),
            kind,
            ok: row.status.is_some_and(|s| (200..300).contains(&s)) && kind.is_empty(),
            ends: told.ends,
        };
        let mut found = self.found.lock().unwrap_or_else(PoisonError::into_inner);
        let series = found.series(&values);
        if row.attempt > 0 {
            series.attempt.get_or_insert_with(|| self.attempts.get_or_create_owned(&values.attempt())).inc();
            let (word, cause) = labels::reason(&row.reason);
            if matches!(word, "failover" | "fallback" | "pool") {
                let key = MoveLabels {
                    connection: values.connection.to_string(),
                    pool: values.pool.to_string(),
                    kind: word,
                    reason: cause,
                };
                self.moves.get_or_create(&key).inc();
            }
            self.gen_ai(row, &values, series);
        }
        if let Some(limit) = &row.limit_id {
            self.limit_refusals.get_or_create(&LimitLabels { limit: limit.clone() }).inc();
        }
        if values.ends.is_some() {
            series.request.get_or_insert_with(|| self.requests.get_or_create_owned(&values.request())).inc();
            let user = || UserLabels { user: values.user.to_string() };
            if !values.user.is_empty() {
                series.user_requests.get_or_insert_with(|| self.user_requests.get_or_create_owned(&user())).inc();
            }
            if row.user_name.is_some() {
                if let Some(micro) = self.cost_micro_usd(row, told) {
                    // The label set only when the series is taken, as for the others.
                    let cost = series.user_cost.get_or_insert_with(|| self.user_cost.get_or_create_owned(&user()));
                    cost.inc_by(micro as f64 / 1e6);
                }
            }
        }
    }

    pub(crate) fn ended(&self, end: &RequestEnd) {
        let snapshot = end.told.snapshot.as_deref();
        self.request(RequestLabels {
            connection: labels::connection(snapshot).to_string(),
            pool: end.told.pool.clone().unwrap_or_default(),
            profile: labels::profile(snapshot, end.profile_id.as_deref()).to_string(),
            model: labels::model(snapshot, end.model.as_deref()).to_string(),
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

    fn gen_ai(&self, row: &AttemptRow, values: &RowValues<'_>, series: &mut Series) {
        for (slot, (tokens, token_type)) in
            [(row.input_tokens, "input"), (row.output_tokens, "output")].into_iter().enumerate()
        {
            if let Some(n) = tokens.filter(|&n| n >= 0) {
                let histogram = series.tokens[slot]
                    .get_or_insert_with(|| self.tokens.get_or_create_owned(&values.tokens(token_type)));
                histogram.observe(n as f64);
            }
        }
        if let Some(ms) = row.duration_ms {
            let histogram =
                series.duration.get_or_insert_with(|| self.duration.get_or_create_owned(&values.duration()));
            histogram.observe(ms as f64 / 1000.0);
        }
        if let Some(ms) = row.ttfb_ms.filter(|_| values.kind.is_empty()) {
            let histogram =
                series.first_chunk.get_or_insert_with(|| self.first_chunk.get_or_create_owned(&values.duration()));
            histogram.observe(ms as f64 / 1000.0);
        }
    }

    /// What a user's answer cost at the configured prices (`None`: no price for its model).
    fn cost_micro_usd(&self, row: &AttemptRow, told: &Told) -> Option<i64> {
        let (model, snapshot) = (row.model.as_deref()?, told.snapshot.as_ref()?);
        let prices = self.prices.read().unwrap_or_else(PoisonError::into_inner);
        prices.get(model).and_then(|r| r.micro_usd(snapshot.protocol, row))
    }

    /// The families in the text format, without `# EOF`.
    pub(crate) fn encode(&self, out: &mut String) {
        if let Err(e) = prometheus_client::encoding::text::encode_registry(out, &self.registry) {
            tracing::warn!(error = %e, "metrics not encoded");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn told(ends: Option<Ending>, pool: Option<&str>) -> Told {
        Told { snapshot: None, pool: pool.map(str::to_string), mark: super::super::RequestMark { span: None }, ends }
    }

    fn row(attempt: i64, status: Option<i64>, kind: Option<&str>, user: Option<&str>) -> AttemptRow {
        AttemptRow {
            attempt,
            profile_id: "p-1".into(),
            reason: "swrr".into(),
            status,
            failure_kind: kind.map(str::to_string),
            user_name: user.map(str::to_string),
            input_tokens: Some(10),
            output_tokens: Some(3),
            duration_ms: Some(120),
            ttfb_ms: status.filter(|s| *s == 200).map(|_| 40),
            ..AttemptRow::default()
        }
    }

    fn text(counts: &Counts) -> String {
        let mut out = String::new();
        counts.encode(&mut out);
        out
    }

    fn line<'t>(text: &'t str, starts: &str) -> Vec<&'t str> {
        text.lines().filter(|l| l.starts_with(starts)).collect()
    }

    #[test]
    fn rows_with_the_same_values_count_into_the_same_series_and_others_into_their_own() {
        let counts = Counts::new();
        for _ in 0..3 {
            counts.row(&row(1, Some(200), None, Some("ana")), &told(Some(Ending::Delivered), None));
        }
        counts.row(&row(1, Some(429), Some("rate_limited"), Some("ana")), &told(None, None));
        counts.row(&row(2, Some(200), None, Some("bo")), &told(Some(Ending::Delivered), Some("team")));
        let out = text(&counts);
        let attempts = line(&out, "switchyard_attempts_total{");
        assert_eq!(attempts.len(), 3, "ok without a pool, failed, ok in a pool: three series ({attempts:?})");
        assert!(
            attempts.iter().any(|l| l.contains("pool=\"\"") && l.contains("outcome=\"ok\"") && l.ends_with(" 3")),
            "the three same rows counted in one series, not three ({attempts:?})"
        );
        assert!(
            attempts.iter().any(|l| l.contains("failure_kind=\"rate_limited\"") && l.ends_with(" 1")),
            "the failed attempt in its own series ({attempts:?})"
        );
        let requests = line(&out, "switchyard_requests_total{");
        assert_eq!(requests.len(), 2, "the row that did not end a request counts no request ({requests:?})");
        let users = line(&out, "switchyard_user_requests_total{");
        assert!(users.iter().any(|l| l.contains("user=\"ana\"") && l.ends_with(" 3")), "{users:?}");
        assert!(users.iter().any(|l| l.contains("user=\"bo\"") && l.ends_with(" 1")), "{users:?}");
        let first = line(&out, "gen_ai_client_operation_time_to_first_chunk_seconds_count{");
        assert_eq!(first.len(), 1, "the four answers share one series (no pool label there) ({first:?})");
        assert!(first[0].contains("error_type=\"\"") && first[0].ends_with(" 4"), "{first:?}");
        let durations = line(&out, "gen_ai_client_operation_duration_seconds_count{");
        assert!(
            durations.iter().any(|l| l.contains("error_type=\"rate_limited\"") && l.ends_with(" 1")),
            "the failed attempt's duration in its own series ({durations:?}), and no empty first-chunk one beside it"
        );
        let tokens = line(&out, "gen_ai_client_token_usage_count{");
        assert!(
            tokens.iter().any(|l| l.contains("gen_ai_token_type=\"input\"") && l.ends_with(" 5")),
            "the five rows' input tokens in one series (no pool, profile or user label there) ({tokens:?})"
        );
    }

    #[test]
    fn a_user_s_cost_counts_priced_answers_that_end_a_request_and_nothing_else() {
        let counts = Counts::new();
        // $3 and $15 per million tokens: a row's 10 input and 3 output tokens cost 75 µUSD.
        let rates = Rates { input: 3.0, output: 15.0, cache_read: None, cache_write: None };
        counts.set_prices(HashMap::from([("m1".to_string(), rates)]));
        let snapshot = std::sync::Arc::new(crate::router::Snapshot::for_test("leg", Protocol::Openai, &["m1", "m2"]));
        let told = |ends: Option<Ending>| Told { snapshot: Some(snapshot.clone()), ..told(ends, None) };
        let priced =
            |user: Option<&str>, model: &str| AttemptRow { model: Some(model.into()), ..row(1, Some(200), None, user) };
        for _ in 0..2 {
            counts.row(&priced(Some("ana"), "m1"), &told(Some(Ending::Delivered)));
        }
        // A failed attempt the request went on from (it ended no request), a model without a
        // price, and the install's own token (no user): none of them is a user's cost.
        counts.row(&priced(Some("ana"), "m1"), &told(None));
        counts.row(&priced(Some("bo"), "m2"), &told(Some(Ending::Delivered)));
        counts.row(&priced(None, "m1"), &told(Some(Ending::Delivered)));
        let out = text(&counts);
        let cost = line(&out, "switchyard_user_cost_usd_total{");
        assert_eq!(cost.len(), 1, "only ana's priced answers make a cost series ({cost:?})");
        let (labels, value) = cost[0].rsplit_once(' ').unwrap_or_default();
        assert_eq!(labels, "switchyard_user_cost_usd_total{user=\"ana\"}", "{cost:?}");
        let usd: f64 = value.parse().unwrap_or(f64::NAN);
        assert!((usd - 150e-6).abs() < 1e-12, "two answers of 75 µUSD each, the third row ended nothing: {usd}");
        let users = line(&out, "switchyard_user_requests_total{");
        assert!(
            users.iter().any(|l| l.contains("user=\"bo\"") && l.ends_with(" 1")),
            "bo's unpriced request is counted as a request all the same ({users:?})"
        );
    }

    #[test]
    fn a_full_map_starts_again_and_the_families_keep_counting() {
        let counts = Counts::new();
        let ended = told(Some(Ending::Delivered), None);
        for i in 0..FOUND_MAX + 2 {
            let user = format!("u{i}");
            counts.row(&row(1, Some(200), None, Some(&user)), &ended);
        }
        counts.row(&row(1, Some(200), None, Some("u0")), &ended);
        let out = text(&counts);
        let u0 = line(&out, "switchyard_user_requests_total{user=\"u0\"}");
        assert_eq!(
            u0,
            vec!["switchyard_user_requests_total{user=\"u0\"} 2"],
            "u0's series found again after the map restarted"
        );
        let attempts = line(&out, "switchyard_attempts_total{");
        assert_eq!(attempts.len(), 1, "{attempts:?}");
        assert!(attempts[0].ends_with(&format!(" {}", FOUND_MAX + 3)), "every row counted once: {attempts:?}");
    }
}
