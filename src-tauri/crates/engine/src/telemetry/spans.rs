//! OpenTelemetry traces over OTLP/HTTP (`--otlp-endpoint`, `OTEL_EXPORTER_OTLP_ENDPOINT`;
//! `OTEL_EXPORTER_OTLP_PROTOCOL` picks `http/protobuf` — the default — or `http/json`, and
//! `OTEL_EXPORTER_OTLP_HEADERS` adds headers, as the crate reads them).
//!
//! One span per request (kind server) with one child per attempt (kind client), both named
//! as the GenAI conventions name an inference span (`chat claude-sonnet-4`,
//! `generate_content gemini-2.5-pro`), with `gen_ai.*` attributes (v1.41: operation, provider,
//! request and response model, input/output/cache tokens, `error.type`) and Switchyard's
//! routing facts (`switchyard.connection`, `.pool`, `.profile` — the label —, `.reason`,
//! `.attempt`, `.user`, `.outcome`). No prompt, answer or credential: the rows hold none.
//!
//! Built after the fact from the ledger's rows, with their real start and end times, and handed
//! to the SDK's batch processor (its own thread; export through `otlp_client.rs`), not through
//! `tracing` spans on the request path: the request thread only draws the request's ids (when
//! traces are on), and a collector that is down or slow costs a request nothing — the
//! processor's queue is bounded and drops when full. The request's span ids are drawn when it
//! starts, so each attempt's span names its parent before the request's own span is built.

use std::borrow::Cow;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{
    BatchSpanProcessor, IdGenerator, RandomIdGenerator, SpanData, SpanEvents, SpanExporter as _, SpanLinks,
    SpanProcessor,
};
use opentelemetry_sdk::Resource;
use switchyard_store::attempts::AttemptRow;

use crate::error::EngineError;
use crate::telemetry::otlp_client::OtlpClient;
use crate::telemetry::{labels, Ending, RequestEnd, SpanMark, Told};

/// The variable the OpenTelemetry SDKs read the collector's base URL from.
pub const OTLP_ENDPOINT_ENV: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// A request's trace and the id of its own span.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TraceIds {
    trace: TraceId,
    span: SpanId,
}

impl TraceIds {
    pub(crate) fn new() -> Self {
        let ids = RandomIdGenerator::default();
        TraceIds { trace: ids.new_trace_id(), span: ids.new_span_id() }
    }
}

/// The span export of a router.
pub(crate) struct Spans {
    processor: BatchSpanProcessor,
    scope: InstrumentationScope,
}

impl std::fmt::Debug for Spans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Spans")
    }
}

/// `endpoint` is the collector's base URL (as `OTEL_EXPORTER_OTLP_ENDPOINT`): spans go to
/// `{endpoint}/v1/traces`, unless it already names that path.
fn traces_url(endpoint: &str) -> Result<String, EngineError> {
    let base = endpoint.trim();
    let parsed = url::Url::parse(base).map_err(|e| {
        EngineError::Invalid(switchyard_core::InvalidInput::new("otlp-endpoint", format!("not a URL: {e}")))
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(EngineError::Invalid(switchyard_core::InvalidInput::new(
            "otlp-endpoint",
            "must be http:// or https://",
        )));
    }
    if base.trim_end_matches('/').ends_with("/v1/traces") {
        return Ok(base.to_string());
    }
    Ok(format!("{}/v1/traces", base.trim_end_matches('/')))
}

/// `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` or `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf` (also
/// when unset: the specification's default) or `http/json`; gRPC is not offered.
fn protocol_from_env() -> Result<opentelemetry_otlp::Protocol, EngineError> {
    let asked = ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()));
    match asked.as_deref().map(str::trim) {
        None | Some("http/protobuf") => Ok(opentelemetry_otlp::Protocol::HttpBinary),
        Some("http/json") => Ok(opentelemetry_otlp::Protocol::HttpJson),
        Some(other) => Err(EngineError::Invalid(switchyard_core::InvalidInput::new(
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            format!("{other} is not offered: use http/protobuf (the default) or http/json"),
        ))),
    }
}

impl Spans {
    pub(crate) fn start(endpoint: &str) -> Result<Self, EngineError> {
        use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};

        let url = traces_url(endpoint)?;
        let protocol = protocol_from_env()?;
        let client = OtlpClient::start()?;
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client)
            .with_endpoint(url)
            .with_protocol(protocol)
            .with_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| EngineError::Precondition(format!("the OTLP exporter could not start: {e}")))?;
        let resource = Resource::builder().with_service_name("switchyard-relay").build();
        exporter.set_resource(&resource);
        let processor = BatchSpanProcessor::builder(exporter).build();
        let scope = InstrumentationScope::builder("switchyard").with_version(env!("CARGO_PKG_VERSION")).build();
        Ok(Spans { processor, scope })
    }

    pub(crate) fn row(&self, row: &AttemptRow, told: &Told) {
        let Some(span) = told.mark.span.as_deref() else { return };
        let ended_ms = row.at_ms + row.duration_ms.unwrap_or(0);
        if row.attempt > 0 {
            self.attempt(row, told, span.ids);
        }
        if let Some(ending) = told.ends {
            let kind = labels::failure_kind(row.failure_kind.as_deref());
            let end = Facts {
                user: row.user_name.as_deref(),
                model: row.model.as_deref(),
                profile_id: (!row.profile_id.is_empty()).then_some(row.profile_id.as_str()),
                ending,
                error: if ending == Ending::Delivered { "" } else { kind },
                ended_ms,
                usage: (ending == Ending::Delivered).then_some(row),
                limit: row.limit_id.as_deref(),
            };
            self.request(told, span, &end);
        }
    }

    pub(crate) fn ended(&self, end: &RequestEnd) {
        let Some(span) = end.told.mark.span.as_deref() else { return };
        let facts = Facts {
            user: end.user.as_deref(),
            model: end.model.as_deref(),
            profile_id: end.profile_id.as_deref(),
            ending: end.told.ends.unwrap_or(Ending::Failed),
            error: labels::failure_kind(end.failure.map(|k| k.as_str())),
            ended_ms: end.ended_ms,
            usage: None,
            limit: None,
        };
        self.request(&end.told, span, &facts);
    }

    fn request(&self, told: &Told, span: &SpanMark, end: &Facts<'_>) {
        let ids = span.ids;
        let snapshot = told.snapshot.as_deref();
        let protocol = snapshot.map(|s| s.protocol);
        let model = labels::model(snapshot, end.model);
        let mut attributes = gen_ai(protocol, model);
        attributes.push(KeyValue::new("switchyard.outcome", end.ending.as_str()));
        push_str(&mut attributes, "switchyard.connection", labels::connection(snapshot));
        push_str(&mut attributes, "switchyard.pool", told.pool.as_deref().unwrap_or(""));
        push_str(&mut attributes, "switchyard.profile", labels::profile(snapshot, end.profile_id));
        push_str(&mut attributes, "switchyard.user", end.user.unwrap_or(""));
        push_str(&mut attributes, "switchyard.limit", end.limit.unwrap_or(""));
        push_str(&mut attributes, "error.type", end.error);
        if let Some(row) = end.usage {
            push_str(&mut attributes, "gen_ai.response.model", model);
            usage(&mut attributes, row);
        }
        let failed = end.ending != Ending::Delivered;
        self.export(SpanParts {
            name: span_name(protocol, model),
            kind: SpanKind::Server,
            context: context(ids.trace, ids.span),
            parent: SpanId::INVALID,
            start_ms: span.started_ms,
            end_ms: end.ended_ms.max(span.started_ms),
            attributes,
            error: failed.then(|| if end.error.is_empty() { end.ending.as_str() } else { end.error }),
        });
    }

    fn attempt(&self, row: &AttemptRow, told: &Told, ids: TraceIds) {
        let snapshot = told.snapshot.as_deref();
        let protocol = snapshot.map(|s| s.protocol);
        let model = labels::model(snapshot, row.model.as_deref());
        let kind = labels::failure_kind(row.failure_kind.as_deref());
        let (word, cause) = labels::reason(&row.reason);
        let mut attributes = gen_ai(protocol, model);
        push_str(&mut attributes, "switchyard.connection", labels::connection(snapshot));
        push_str(&mut attributes, "switchyard.pool", told.pool.as_deref().unwrap_or(""));
        push_str(&mut attributes, "switchyard.profile", labels::profile(snapshot, Some(&row.profile_id)));
        push_str(&mut attributes, "switchyard.user", row.user_name.as_deref().unwrap_or(""));
        attributes.push(KeyValue::new("switchyard.attempt", row.attempt));
        let reason = if cause.is_empty() { word.to_string() } else { format!("{word}:{cause}") };
        attributes.push(KeyValue::new("switchyard.reason", reason));
        push_str(&mut attributes, "error.type", kind);
        if let Some(status) = row.status {
            attributes.push(KeyValue::new("http.response.status_code", status));
        }
        let ok = kind.is_empty() && row.status.is_some_and(|s| (200..300).contains(&s));
        if ok {
            push_str(&mut attributes, "gen_ai.response.model", model);
            usage(&mut attributes, row);
        }
        let span = RandomIdGenerator::default().new_span_id();
        self.export(SpanParts {
            name: span_name(protocol, model),
            kind: SpanKind::Client,
            context: context(ids.trace, span),
            parent: ids.span,
            start_ms: row.at_ms,
            end_ms: row.at_ms + row.duration_ms.unwrap_or(0),
            attributes,
            error: (!ok).then_some(if kind.is_empty() { "http_error" } else { kind }),
        });
    }

    fn export(&self, parts: SpanParts) {
        let data = SpanData {
            span_context: parts.context,
            parent_span_id: parts.parent,
            parent_span_is_remote: false,
            span_kind: parts.kind,
            name: Cow::Owned(parts.name),
            start_time: at(parts.start_ms),
            end_time: at(parts.end_ms),
            attributes: parts.attributes,
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status: match parts.error {
                Some(why) => Status::error(why),
                None => Status::Unset,
            },
            instrumentation_scope: self.scope.clone(),
        };
        self.processor.on_end(data);
    }

    pub(crate) fn flush(&self) {
        if let Err(e) = self.processor.force_flush() {
            tracing::debug!(error = %e, "spans not flushed");
        }
    }
}

impl Drop for Spans {
    fn drop(&mut self) {
        let _ = self.processor.shutdown_with_timeout(Duration::from_secs(2));
    }
}

/// What a request span says of how it ended.
struct Facts<'a> {
    user: Option<&'a str>,
    model: Option<&'a str>,
    profile_id: Option<&'a str>,
    ending: Ending,
    error: &'static str,
    ended_ms: i64,
    /// The delivering row, whose usage the request reports.
    usage: Option<&'a AttemptRow>,
    limit: Option<&'a str>,
}

struct SpanParts {
    name: String,
    kind: SpanKind,
    context: SpanContext,
    parent: SpanId,
    start_ms: i64,
    end_ms: i64,
    attributes: Vec<KeyValue>,
    error: Option<&'static str>,
}

fn context(trace: TraceId, span: SpanId) -> SpanContext {
    SpanContext::new(trace, span, TraceFlags::SAMPLED, false, TraceState::NONE)
}

fn at(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// `{gen_ai.operation.name} {gen_ai.request.model}` (the operation alone without a model).
fn span_name(protocol: Option<switchyard_core::connection::Protocol>, model: &str) -> String {
    let operation = labels::operation(protocol);
    if model.is_empty() {
        operation.to_string()
    } else {
        format!("{operation} {model}")
    }
}

fn gen_ai(protocol: Option<switchyard_core::connection::Protocol>, model: &str) -> Vec<KeyValue> {
    let mut attributes = vec![KeyValue::new("gen_ai.operation.name", labels::operation(protocol))];
    push_str(&mut attributes, "gen_ai.provider.name", labels::provider(protocol));
    push_str(&mut attributes, "gen_ai.request.model", model);
    attributes
}

fn usage(attributes: &mut Vec<KeyValue>, row: &AttemptRow) {
    for (key, value) in [
        ("gen_ai.usage.input_tokens", row.input_tokens),
        ("gen_ai.usage.output_tokens", row.output_tokens),
        ("gen_ai.usage.cache_read.input_tokens", row.cache_read_tokens),
        ("gen_ai.usage.cache_creation.input_tokens", row.cache_write_tokens),
    ] {
        if let Some(v) = value {
            attributes.push(KeyValue::new(key, v));
        }
    }
}

fn push_str(attributes: &mut Vec<KeyValue>, key: &'static str, value: &str) {
    if !value.is_empty() {
        attributes.push(KeyValue::new(key, value.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_is_the_collector_s_base() {
        assert_eq!(traces_url("http://127.0.0.1:4318").ok().as_deref(), Some("http://127.0.0.1:4318/v1/traces"));
        assert_eq!(traces_url("http://c:4318/").ok().as_deref(), Some("http://c:4318/v1/traces"));
        assert_eq!(
            traces_url("https://c/v1/traces").ok().as_deref(),
            Some("https://c/v1/traces"),
            "a signal URL is kept"
        );
        assert!(traces_url("c:4318").is_err() || traces_url("grpc://c:4317").is_err(), "only http(s)");
        assert!(traces_url("not a url").is_err());
    }
}
