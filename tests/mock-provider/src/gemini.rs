//! The Gemini dialect: keys in `x-goog-api-key` only (a `?key=` is refused 400 and remembered,
//! so tests can assert no key ever travelled in a URL), paged `GET /v1beta/models`,
//! `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent` (with `alt=sse`
//! SSE `data:` chunks, without it a JSON array written in pieces) and `:countTokens`; answers
//! carry `usageMetadata`; errors are `{"error": {code, message, status, details}}` in the
//! shapes of the recorded samples in `providers/tests/fixtures/gemini/`.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{json, Value};

use crate::fault::Fault;
use crate::playbook::Call;
use crate::reply::Reply;
use crate::script::GeminiRefusal;
use crate::server::{Intake, Shared};
use crate::sse::{frame, Ending, Frame};
use crate::wire::{Dialect, Outlet};

/// The project number the mock's keys belong to (in `SERVICE_DISABLED` answers).
const PROJECT: &str = "123456789012";

/// `pageSize` when the request names none, and the most a page holds.
const DEFAULT_PAGE_SIZE: usize = 50;
const MAX_PAGE_SIZE: usize = 1000;

const SERVICE: &str = "generativelanguage.googleapis.com";
const RATE_LIMITS_URL: &str = "https://ai.google.dev/gemini-api/docs/rate-limits";

/// The query's pairs (no percent-decoding: the mock's keys and tokens are plain).
fn query_pairs(uri: &Uri) -> Vec<(String, String)> {
    uri.query()
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

fn query_value(uri: &Uri, name: &str) -> Option<String> {
    query_pairs(uri).into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

/// The query as recorded: a `key` value replaced by a marker, so the request log (and its
/// dump) never holds a key.
fn recorded_query(uri: &Uri) -> Option<String> {
    uri.query()?;
    let pairs: Vec<String> = query_pairs(uri)
        .into_iter()
        .map(|(k, v)| if k == "key" { format!("{k}=[redacted]") } else { format!("{k}={v}") })
        .collect();
    Some(pairs.join("&"))
}

/// Counts and records the request, then admits it: a key in the URL is refused (and
/// remembered); the key is read from `x-goog-api-key` only.
fn intake(
    shared: &Shared,
    method: Method,
    uri: &Uri,
    headers: HeaderMap,
    body: Bytes,
    model: Option<String>,
) -> Result<Intake, Fault> {
    let key = headers
        .get("x-goog-api-key")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_owned);
    let url_key = query_value(uri, "key");
    let hit = shared.intake_for(method, uri, recorded_query(uri), headers, body, key, model);
    if let Some(url_key) = url_key {
        if let Ok(mut keys) = shared.url_keys.lock() {
            keys.push(url_key);
        }
        return Err(Fault::BadRequest {
            message: "mock provider: a key in the URL (?key=) is refused; send it in x-goog-api-key".to_owned(),
        });
    }
    shared.playbook.authenticate(hit.key.as_deref())?;
    Ok(hit)
}

/// A fault as Gemini answers it.
pub(crate) fn error_response(fault: &Fault) -> Response {
    let (code, value) = error_body(fault);
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, value.to_string()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json; charset=UTF-8"));
    response
}

fn error(code: u16, status: &str, message: &str, details: Option<Value>) -> (u16, Value) {
    let mut error = json!({"code": code, "message": message, "status": status});
    if let Some(details) = details {
        error["details"] = details;
    }
    (code, json!({ "error": error }))
}

fn quota_violation(quota_id: &str, metric: &str) -> Value {
    json!({
        "quotaMetric": format!("{SERVICE}/{metric}"),
        "quotaId": quota_id,
        "quotaDimensions": {"location": "global", "model": "gemini-2.5-flash"},
    })
}

fn quota_refusal(violations: Vec<Value>, retry_delay: &str) -> (u16, Value) {
    let message = format!(
        "You exceeded your current quota, please check your plan and billing details. For more \
         information on this error, head to: {RATE_LIMITS_URL}."
    );
    error(
        429,
        "RESOURCE_EXHAUSTED",
        &message,
        Some(json!([
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": violations},
            {"@type": "type.googleapis.com/google.rpc.Help", "links": [
                {"description": "Learn more about Gemini API quotas", "url": RATE_LIMITS_URL},
            ]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay},
        ])),
    )
}

fn error_info(reason: &str, metadata: Value) -> Value {
    json!({"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "googleapis.com",
           "metadata": metadata})
}

const PER_MINUTE_REQUESTS: &str = "GenerateRequestsPerMinutePerProjectPerModel-FreeTier";
const REQUESTS_METRIC: &str = "generate_content_free_tier_requests";

fn refusal_body(refusal: GeminiRefusal) -> (u16, Value) {
    match refusal {
        GeminiRefusal::QuotaPerDay => quota_refusal(
            vec![
                quota_violation(
                    "GenerateContentInputTokensPerModelPerMinute-FreeTier",
                    "generate_content_free_tier_input_token_count",
                ),
                quota_violation(PER_MINUTE_REQUESTS, REQUESTS_METRIC),
                quota_violation("GenerateRequestsPerDayPerProjectPerModel-FreeTier", REQUESTS_METRIC),
            ],
            "39s",
        ),
        GeminiRefusal::QuotaPerMinute { retry_delay_secs } => {
            quota_refusal(vec![quota_violation(PER_MINUTE_REQUESTS, REQUESTS_METRIC)], &format!("{retry_delay_secs}s"))
        }
        GeminiRefusal::ResourceExhausted => {
            error(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).", None)
        }
        GeminiRefusal::ServiceDisabled => {
            let url = format!("https://console.developers.google.com/apis/api/{SERVICE}/overview?project={PROJECT}");
            let message = format!(
                "Generative Language API has not been used in project {PROJECT} before or it is disabled. \
                 Enable it by visiting {url} then retry."
            );
            let metadata = json!({"service": SERVICE, "consumer": format!("projects/{PROJECT}"), "activationUrl": url,
                                  "serviceTitle": "Generative Language API", "containerInfo": PROJECT});
            error(403, "PERMISSION_DENIED", &message, Some(json!([error_info("SERVICE_DISABLED", metadata)])))
        }
        GeminiRefusal::PermissionDenied => {
            let method = "google.ai.generativelanguage.v1beta.GenerativeService.GenerateContent";
            let metadata = json!({"service": SERVICE, "consumer": format!("projects/{PROJECT}"), "methodName": method});
            error(
                403,
                "PERMISSION_DENIED",
                &format!("Requests to this API {SERVICE} method {method} are blocked."),
                Some(json!([error_info("API_KEY_SERVICE_BLOCKED", metadata)])),
            )
        }
    }
}

fn error_body(fault: &Fault) -> (u16, Value) {
    match fault {
        Fault::MissingKey => error(
            403,
            "PERMISSION_DENIED",
            "Method doesn't allow unregistered callers (callers without established identity). Please use API \
             Key or other form of API consumer identity to call this API.",
            None,
        ),
        Fault::InvalidKey { .. } => {
            let message = "API key not valid. Please pass a valid API key.";
            let localized = json!({"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US", "message": message});
            error(
                400,
                "INVALID_ARGUMENT",
                message,
                Some(json!([error_info("API_KEY_INVALID", json!({"service": SERVICE})), localized])),
            )
        }
        Fault::RateLimited { retry_after_secs } => {
            refusal_body(GeminiRefusal::QuotaPerMinute { retry_delay_secs: *retry_after_secs })
        }
        Fault::QuotaExhausted => refusal_body(GeminiRefusal::QuotaPerDay),
        Fault::UsageLimit { .. } | Fault::ExtraUsageRequired => refusal_body(GeminiRefusal::ResourceExhausted),
        Fault::ModelForbidden { .. } | Fault::ClientNotAllowed => refusal_body(GeminiRefusal::PermissionDenied),
        Fault::Gemini(refusal) => refusal_body(*refusal),
        Fault::ModelNotFound { model } => error(
            404,
            "NOT_FOUND",
            &format!(
                "models/{model} is not found for API version v1beta, or is not supported for generateContent. \
                 Call ListModels to see the list of available models and their supported methods."
            ),
            None,
        ),
        Fault::ListingUnsupported => error(404, "NOT_FOUND", "Requested entity was not found.", None),
        Fault::ServerError => error(
            500,
            "INTERNAL",
            "An internal error has occurred. Please retry or report in \
             https://developers.generativeai.google/guide/troubleshooting",
            None,
        ),
        Fault::Overloaded => error(503, "UNAVAILABLE", "The model is overloaded. Please try again later.", None),
        Fault::BadRequest { message } | Fault::ForeignState { message, .. } => {
            error(400, "INVALID_ARGUMENT", message, None)
        }
    }
}

/// A listed model: `models/ID`; a model whose id says `embedding` supports only
/// `embedContent` (so a lister must filter by `supportedGenerationMethods`).
fn model_entry(id: &str) -> Value {
    let methods: &[&str] = if id.contains("embedding") {
        &["embedContent", "countTextTokens"]
    } else {
        &["generateContent", "countTokens", "createCachedContent", "batchGenerateContent"]
    };
    json!({
        "name": format!("models/{id}"),
        "version": "001",
        "displayName": id,
        "inputTokenLimit": 1_048_576,
        "outputTokenLimit": 65_536,
        "supportedGenerationMethods": methods,
    })
}

/// `GET /v1beta/models?pageSize=&pageToken=`: one page of the key's models, with a
/// `nextPageToken` while more remain.
pub(crate) async fn list_models(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let answer = async {
        let hit = intake(&shared, method, &uri, headers, body, None)?;
        let bad = |message: &str| Fault::BadRequest { message: message.to_owned() };
        let size = match query_value(&uri, "pageSize") {
            None => DEFAULT_PAGE_SIZE,
            Some(text) => text
                .parse::<usize>()
                .map_err(|_| bad("Invalid value at 'page_size' (TYPE_INT32)"))?
                .clamp(1, MAX_PAGE_SIZE),
        };
        let start = match query_value(&uri, "pageToken").filter(|t| !t.is_empty()) {
            None => 0,
            Some(token) => token
                .strip_prefix("mock-page-")
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| bad("Invalid page token."))?,
        };
        let plan = shared.playbook.play(hit.key.as_deref(), Call::Listing)?;
        plan.wait().await;
        let models = &plan.models;
        let start = start.min(models.len());
        let end = (start + size).min(models.len());
        let mut page = json!({"models": models[start..end].iter().map(|m| model_entry(m)).collect::<Vec<_>>()});
        if end < models.len() {
            page["nextPageToken"] = json!(format!("mock-page-{end}"));
        }
        Ok::<_, Fault>(Outlet::new(plan.wire, Dialect::Chat, hit.accept_encoding.as_deref()).json(&page, false))
    };
    answer.await.unwrap_or_else(|fault| error_response(&fault))
}

/// `POST /v1beta/models/{model}:{method}`.
pub(crate) async fn call(
    State(shared): State<Arc<Shared>>,
    Path(call): Path<String>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (model, verb) = match call.rsplit_once(':') {
        Some((model, verb)) if !model.is_empty() => (model.to_owned(), verb.to_owned()),
        _ => (call.clone(), String::new()),
    };
    let request = Request { uri: &uri, model, verb: &verb };
    answer(&shared, method, headers, body, request).await.unwrap_or_else(|fault| error_response(&fault))
}

/// What the path and query of a model call say.
struct Request<'a> {
    uri: &'a Uri,
    model: String,
    verb: &'a str,
}

async fn answer(
    shared: &Shared,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
    request: Request<'_>,
) -> Result<Response, Fault> {
    let Request { uri, model, verb } = request;
    let hit = intake(shared, method, uri, headers, body, Some(model.clone()))?;
    let stream = match verb {
        "generateContent" | "countTokens" => false,
        "streamGenerateContent" => true,
        _ => return Err(Fault::ListingUnsupported),
    };
    if hit.json.is_none() {
        return Err(Fault::BadRequest { message: "Invalid JSON payload received.".to_owned() });
    }
    let plan = shared.playbook.play(hit.key.as_deref(), Call::Model(&model))?;
    plan.wait().await;
    let reply = Reply::new(&model, &plan.reply, hit.body.len());
    if verb == "countTokens" {
        return Ok(axum::Json(json!({"totalTokens": reply.input_tokens})).into_response());
    }
    if !stream && plan.stream_error.is_some() {
        return Err(Fault::Overloaded);
    }
    let dies = plan.dies_after.is_some();
    let sse = query_value(uri, "alt").as_deref() == Some("sse");
    let mut wire = plan.wire;
    if !sse {
        // A JSON array: no SSE pings or line-end rewriting inside it.
        wire.pings = false;
        wire.crlf = false;
    }
    let out = Outlet::new(wire, Dialect::Chat, hit.accept_encoding.as_deref()).quota(plan.quota);
    let response_id = format!("mock-gemini-{}", reply.serial);
    // The key's scripted tool, when the request offers it and holds no result for it yet: one
    // candidate with a `functionCall` part (whole or as the stream's one chunk).
    if let Some(call) = plan.tool.as_ref().filter(|call| tool_due(call, hit.json.as_ref())) {
        let mut answer = chunk(&reply, &response_id, "", true);
        answer["candidates"][0]["content"]["parts"] =
            json!([{"functionCall": {"name": call.name, "args": call.input}}]);
        if !stream {
            return Ok(out.json(&answer, false));
        }
        if sse {
            return Ok(out.stream(vec![frame(None, &answer.to_string()).content()], Ending::Complete));
        }
        let frames = vec![
            Frame { bytes: Bytes::from(format!("[{answer}")), content: true },
            Frame { bytes: Bytes::from_static(b"]"), content: false },
        ];
        let mut response = out.stream(frames, Ending::Complete);
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json; charset=UTF-8"));
        return Ok(response);
    }
    if !stream {
        return Ok(out.json(&chunk(&reply, &response_id, &reply.text(), true), dies));
    }
    let cut = plan.dies_after.or(plan.stream_error);
    let pieces = reply.streamed_chunks(cut);
    let mut chunks: Vec<Value> = pieces
        .iter()
        .enumerate()
        .map(|(i, piece)| chunk(&reply, &response_id, piece, cut.is_none() && i + 1 == reply.chunks.len()))
        .collect();
    if plan.stream_error.is_some() {
        chunks.push(error_body(&Fault::Overloaded).1);
    }
    let ending = if dies { Ending::Dies } else { Ending::Complete };
    if sse {
        let frames = chunks.iter().map(|c| frame(None, &c.to_string()).content()).collect();
        return Ok(out.stream(frames, ending));
    }
    let mut frames: Vec<Frame> = chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let lead = if i == 0 { "[" } else { ",\r\n" };
            Frame { bytes: Bytes::from(format!("{lead}{c}")), content: true }
        })
        .collect();
    if !dies {
        let close: &'static [u8] = if chunks.is_empty() { b"[]" } else { b"]" };
        frames.push(Frame { bytes: Bytes::from_static(close), content: false });
    }
    let mut response = out.stream(frames, ending);
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json; charset=UTF-8"));
    Ok(response)
}

/// Whether `request` (a Gemini body) offers `call`'s function (`tools[].functionDeclarations[]`)
/// and its last `contents` item holds no `functionResponse` yet.
fn tool_due(call: &crate::script::ToolCall, request: Option<&Value>) -> bool {
    let Some(request) = request else { return false };
    let list = |v: Option<&Value>| v.and_then(Value::as_array).cloned().unwrap_or_default();
    let offered = list(request.get("tools")).iter().any(|tool| {
        list(tool.get("functionDeclarations")).iter().any(|f| f.get("name").and_then(Value::as_str) == Some(&call.name))
    });
    let answered = list(request.get("contents"))
        .last()
        .is_some_and(|item| list(item.get("parts")).iter().any(|p| p.get("functionResponse").is_some()));
    offered && !answered
}

/// One `GenerateContentResponse`: a candidate with `text`; the last one carries
/// `finishReason` and the output token count in `usageMetadata`.
fn chunk(reply: &Reply, response_id: &str, text: &str, last: bool) -> Value {
    let mut candidate = json!({"content": {"parts": [{"text": text}], "role": "model"}, "index": 0});
    let mut usage = json!({"promptTokenCount": reply.input_tokens, "totalTokenCount": reply.input_tokens});
    if last {
        candidate["finishReason"] = json!("STOP");
        usage["candidatesTokenCount"] = json!(reply.output_tokens);
        usage["totalTokenCount"] = json!(reply.input_tokens + reply.output_tokens);
    }
    json!({"candidates": [candidate], "usageMetadata": usage, "modelVersion": reply.model, "responseId": response_id})
}
