//! The Anthropic dialect (`/v1/messages`, `count_tokens`, `GET /v1/models`; bases carry no
//! version): the key in `x-api-key` and the `anthropic-version` header, typed
//! `{"type": "error", "error": {"type", …}}` errors (`crate::anthropic` the table),
//! `anthropic-ratelimit-*` limit headers (subscription windows included), named stream events,
//! signed thinking as the account-bound items, the subscription token's beta, and the official
//! CLI (`claude -p`) as a backend.

use reqwest::header::HeaderName;
use serde_json::{json, Value};
use switchyard_core::routing::TOKEN_BETA;
use switchyard_core::Protocol;

use super::{typed_error, Dialect, ListingPage};
use crate::quota::anthropic as quota_rows;
use crate::quota::row::QuotaRow;
use crate::rule::Rule;
use crate::sse::{EventRole, SseEvent};

/// The `anthropic-version` sent when the connection does not set one.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

pub(super) struct Anthropic;

fn is_account_bound_thinking(block: &Value) -> bool {
    match block.get("type").and_then(Value::as_str) {
        Some("thinking") => block.get("signature").is_some_and(|s| !s.is_null()),
        Some("redacted_thinking") => true,
        _ => false,
    }
}

impl Dialect for Anthropic {
    fn protocol(&self) -> Protocol {
        Protocol::Anthropic
    }

    fn account_state_needle(&self) -> &'static [u8] {
        b"thinking"
    }

    /// Signed `thinking` and `redacted_thinking` blocks of assistant messages (thinking from
    /// earlier turns may be omitted; Anthropic leaves it out of the context anyway); an assistant
    /// message left without content goes too (an empty one would be refused; consecutive user
    /// turns are combined). Returns how many blocks went.
    fn drop_account_state(&self, body: &mut Value) -> usize {
        let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else { return 0 };
        let mut dropped = 0;
        let mut emptied = Vec::new();
        for (i, message) in messages.iter_mut().enumerate() {
            if message.get("role").and_then(Value::as_str) != Some("assistant") {
                continue;
            }
            let Some(content) = message.get_mut("content").and_then(Value::as_array_mut) else { continue };
            let before = content.len();
            content.retain(|block| !is_account_bound_thinking(block));
            if content.len() < before {
                dropped += before - content.len();
                if content.is_empty() {
                    emptied.push(i);
                }
            }
        }
        for i in emptied.into_iter().rev() {
            messages.remove(i);
        }
        dropped
    }

    fn credential_header_name(&self) -> (HeaderName, &'static str) {
        (HeaderName::from_static("x-api-key"), "")
    }

    fn token_beta(&self) -> Option<&'static str> {
        Some(TOKEN_BETA)
    }

    fn required_header(&self) -> Option<(&'static str, &'static str)> {
        Some(("anthropic-version", ANTHROPIC_VERSION))
    }

    fn rules(&self) -> &'static [Rule] {
        crate::anthropic::RULES
    }

    fn quota_rows(&self) -> &'static [QuotaRow] {
        quota_rows::ROWS
    }

    fn quota_prefixes(&self) -> &'static [&'static str] {
        quota_rows::PREFIXES
    }

    fn event_role(&self, e: &SseEvent<'_>) -> EventRole {
        match e.event.unwrap_or("") {
            "message_start" | "ping" | "content_block_start" => EventRole::Preamble,
            "content_block_delta" => EventRole::Content,
            "error" => EventRole::Error,
            "message_stop" => EventRole::Terminal,
            _ => EventRole::Other,
        }
    }

    fn interrupted_event(&self, _responses_api: bool) -> Vec<u8> {
        format!("event: error\ndata: {}\n\n", typed_error("api_error", super::INTERRUPTED)).into_bytes()
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        let kind = match status {
            400 => "invalid_request_error",
            403 => "permission_error",
            404 => "not_found_error",
            429 => "rate_limit_error",
            503 | 529 => "overloaded_error",
            _ => "api_error",
        };
        typed_error(kind, message)
    }

    fn models_body(&self, models: &[String]) -> Value {
        json!({
            "data": models.iter().map(|m| json!({"type": "model", "id": m, "display_name": m, "created_at": "1970-01-01T00:00:00Z"})).collect::<Vec<_>>(),
            "has_more": false,
            "first_id": models.first(),
            "last_id": models.last(),
        })
    }

    fn models_url(&self, base: &str) -> String {
        format!("{base}/v1/models")
    }

    /// 1000 models a page, after the last id of the previous one.
    fn listing_query(&self, after: Option<&str>) -> Vec<(&'static str, String)> {
        let mut q = vec![("limit", "1000".to_string())];
        if let Some(a) = after {
            q.push(("after_id", a.to_string()));
        }
        q
    }

    fn listing_page(&self, page: &Value) -> Result<ListingPage, String> {
        let models = super::data_ids(page)?;
        let more = page.get("has_more").and_then(Value::as_bool).unwrap_or(false);
        let next = page.get("last_id").and_then(Value::as_str).filter(|_| more).map(str::to_string);
        Ok(ListingPage { models, next })
    }

    fn probe(&self, base: &str, model: &str) -> (String, Value) {
        let body = json!({"model": model, "max_tokens": 1, "messages": [{"role": "user", "content": "ping"}]});
        (format!("{base}/v1/messages"), body)
    }

    fn has_cli_backend(&self) -> bool {
        true
    }
}
