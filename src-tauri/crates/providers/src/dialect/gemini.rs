//! The Gemini dialect (`/v1beta/models/{model}:generateContent`, `:streamGenerateContent`,
//! `:countTokens`, `GET /v1beta/models`): the model in the path, the key in `x-goog-api-key`
//! (never in a URL), `{"error": {"code", "status", "details"}}` errors whose structured signal
//! is in `details[]` (`crate::gemini::rules`), no limit headers — quota states are learned from
//! refusals (`crate::gemini::learned`) — unnamed `alt=sse` chunks or one JSON array of them,
//! thought signatures as the account-bound items.

use std::time::SystemTime;

use reqwest::header::HeaderName;
use serde_json::{json, Value};
use switchyard_core::Protocol;

use super::{Dialect, ListingPage};
use crate::gemini::path::{wants_sse, ModelCall};
use crate::quota::window::QuotaWindow;
use crate::rule::Rule;
use crate::sse::{EventRole, SseEvent};

pub(super) struct Gemini;

/// The value Gemini documents for a function call whose signature is not at hand (history
/// from another key or model): the API then skips the check a Gemini 3 model makes on the
/// current turn's function calls.
const GEMINI_UNSIGNED: &str = "skip_thought_signature_validator";

impl Dialect for Gemini {
    fn protocol(&self) -> Protocol {
        Protocol::Gemini
    }

    fn path_model<'a>(&self, rest: &'a str) -> Option<&'a str> {
        ModelCall::parse(rest).map(|call| call.model)
    }

    fn path_for_model(&self, rest: &str, model: &str) -> Option<String> {
        let call = ModelCall::parse(rest)?;
        (call.model != model).then(|| call.with_model(model))
    }

    fn body_names_model(&self) -> bool {
        false
    }

    /// `streamGenerateContent` without `alt=sse`: one JSON array whose elements are the chunks.
    fn json_array_stream(&self, rest: &str, query: Option<&str>) -> bool {
        ModelCall::parse(rest).is_some_and(|call| call.is_stream()) && !query.is_some_and(wants_sse)
    }

    fn account_state_needle(&self) -> &'static [u8] {
        b"thoughtSignature"
    }

    /// `thoughtSignature` of the parts of `model` turns (signatures are bound to the key's
    /// project); a `functionCall` part that carried one gets the documented placeholder instead,
    /// since Gemini 3 refuses a current-turn call without any. Returns how many signatures went.
    fn drop_account_state(&self, body: &mut Value) -> usize {
        let Some(contents) = body.get_mut("contents").and_then(Value::as_array_mut) else { return 0 };
        let mut dropped = 0;
        for content in contents.iter_mut().filter(|c| c.get("role").and_then(Value::as_str) == Some("model")) {
            let Some(parts) = content.get_mut("parts").and_then(Value::as_array_mut) else { continue };
            for part in parts.iter_mut().filter_map(Value::as_object_mut) {
                let Some(sig) = part.remove("thoughtSignature") else { continue };
                if sig.as_str() == Some(GEMINI_UNSIGNED) {
                    part.insert("thoughtSignature".into(), sig);
                    continue;
                }
                dropped += 1;
                if part.contains_key("functionCall") {
                    part.insert("thoughtSignature".into(), Value::String(GEMINI_UNSIGNED.into()));
                }
            }
        }
        dropped
    }

    /// Always a header, never `?key=` in the URL: a URL reaches logs and proxies.
    fn credential_header_name(&self) -> (HeaderName, &'static str) {
        (HeaderName::from_static("x-goog-api-key"), "")
    }

    fn key_in_query(&self) -> bool {
        true
    }

    fn rules(&self) -> &'static [Rule] {
        crate::gemini::RULES
    }

    /// `error.status` is the type, the structured signal of `details[]` the code.
    fn error_fields<'v>(&self, error: &'v Value) -> (Option<&'v str>, Option<&'v str>) {
        (error.get("status").and_then(Value::as_str), crate::gemini::rules::signal(error))
    }

    fn learned_quota(&self, status: u16, body: &[u8], now: SystemTime) -> Vec<QuotaWindow> {
        crate::gemini::learned::learned_windows(status, body, now)
    }

    /// `alt=sse`: unnamed events whose data is one chunk of the answer.
    fn event_role(&self, e: &SseEvent<'_>) -> EventRole {
        crate::gemini::chunk::chunk_role(e.data)
    }

    fn event_role_after_output(&self, e: &SseEvent<'_>) -> EventRole {
        crate::gemini::chunk::chunk_role_after_output(e.data)
    }

    /// `alt=sse`; the JSON-array stream ends with `gemini::array_stream::interrupted_tail`.
    fn interrupted_event(&self, _responses_api: bool) -> Vec<u8> {
        let error = json!({"error": {"code": 502, "message": super::INTERRUPTED, "status": "UNAVAILABLE"}});
        format!("data: {error}\r\n\r\n").into_bytes()
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        let word = match status {
            400 => "INVALID_ARGUMENT",
            401 => "UNAUTHENTICATED",
            403 => "PERMISSION_DENIED",
            404 => "NOT_FOUND",
            429 => "RESOURCE_EXHAUSTED",
            503 => "UNAVAILABLE",
            _ => "INTERNAL",
        };
        json!({"error": {"code": status, "message": message, "status": word}})
    }

    fn models_body(&self, models: &[String]) -> Value {
        json!({
            "models": models.iter().map(|m| json!({"name": format!("models/{m}"), "displayName": m,
                "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"]})).collect::<Vec<_>>(),
        })
    }

    fn models_url(&self, base: &str) -> String {
        format!("{base}/v1beta/models")
    }

    fn listing_query(&self, after: Option<&str>) -> Vec<(&'static str, String)> {
        let mut q = vec![("pageSize", "1000".to_string())];
        if let Some(token) = after {
            q.push(("pageToken", token.to_string()));
        }
        q
    }

    /// The models that support `generateContent`, without the `models/` prefix of their `name`
    /// (the id a path takes).
    fn listing_page(&self, page: &Value) -> Result<ListingPage, String> {
        let models = page
            .get("models")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|m| {
                let generates = m
                    .get("supportedGenerationMethods")
                    .and_then(Value::as_array)
                    .is_some_and(|ms| ms.iter().any(|x| x.as_str() == Some("generateContent")));
                let name = m.get("name").and_then(Value::as_str)?;
                generates.then(|| name.strip_prefix("models/").unwrap_or(name).to_string())
            })
            .collect();
        let next = page.get("nextPageToken").and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_string);
        Ok(ListingPage { models, next })
    }

    /// Gemini names the model in the path.
    fn probe(&self, base: &str, model: &str) -> (String, Value) {
        let body = json!({"contents": [{"role": "user", "parts": [{"text": "ping"}]}],
            "generationConfig": {"maxOutputTokens": 1}});
        (format!("{base}/v1beta/models/{model}:generateContent"), body)
    }
}
