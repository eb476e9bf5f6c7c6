//! The OpenAI dialect (chat completions, Responses, `GET /models`; bases carry `/v1`): a bearer
//! key, `{"error": {"type", "code", …}}` errors (`crate::openai` the table), `x-ratelimit-*` and
//! Codex's `x-codex-*` limit headers, unnamed chat-completion chunks and named Responses events,
//! Responses ids for continuity, encrypted reasoning as the account-bound items, owned ChatGPT
//! logins.

use reqwest::header::{HeaderName, AUTHORIZATION};
use serde_json::{json, Value};
use switchyard_core::Protocol;

use super::{Dialect, ListingPage};
use crate::quota::row::QuotaRow;
use crate::quota::window::QuotaWindow;
use crate::quota::{codex, openai as quota_rows};
use crate::rule::Rule;
use crate::sse::{EventRole, SseEvent};

pub(super) struct Openai;

fn kind(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

impl Dialect for Openai {
    fn protocol(&self) -> Protocol {
        Protocol::Openai
    }

    /// OpenAI bases include `/v1`: the client's `v1/` is dropped.
    fn upstream_path<'a>(&self, rest: &'a str) -> &'a str {
        rest.strip_prefix("v1/").unwrap_or(rest)
    }

    fn account_state_needle(&self) -> &'static [u8] {
        b"encrypted_content"
    }

    /// Responses `input` items of type `reasoning` that carry `encrypted_content` (reasoning items
    /// are optional context; stateless `store: false` clients resend them every call).
    fn drop_account_state(&self, body: &mut Value) -> usize {
        let Some(input) = body.get_mut("input").and_then(Value::as_array_mut) else { return 0 };
        let before = input.len();
        input.retain(|item| {
            !(kind(item) == Some("reasoning") && item.get("encrypted_content").is_some_and(|c| !c.is_null()))
        });
        before - input.len()
    }

    fn credential_header_name(&self) -> (HeaderName, &'static str) {
        (AUTHORIZATION, "Bearer ")
    }

    fn rules(&self) -> &'static [Rule] {
        crate::openai::RULES
    }

    fn quota_rows(&self) -> &'static [QuotaRow] {
        quota_rows::ROWS
    }

    fn quota_prefixes(&self) -> &'static [&'static str] {
        quota_rows::PREFIXES
    }

    /// Codex's primary and secondary windows are told apart by their length.
    fn settle_windows(&self, windows: &mut Vec<QuotaWindow>) {
        codex::classify_by_length(windows);
    }

    fn event_role(&self, e: &SseEvent<'_>) -> EventRole {
        if e.data.trim() == "[DONE]" {
            return EventRole::Terminal;
        }
        match e.event.unwrap_or("") {
            "" => crate::chat_chunk::chunk_role(e.data),
            "error" | "response.failed" => EventRole::Error,
            "response.completed" | "response.incomplete" => EventRole::Terminal,
            n if n.ends_with(".delta")
                && (n.contains("output_text") || n.contains("arguments") || n.contains("refusal")) =>
            {
                EventRole::Content
            }
            n if n.starts_with("response.output_item.") || n == "response.created" || n == "response.in_progress" => {
                EventRole::Preamble
            }
            _ => EventRole::Other,
        }
    }

    /// A chat-completions chunk is parsed only when it may be an error (the common content chunk
    /// costs a substring search, not a JSON parse).
    fn event_role_after_output(&self, e: &SseEvent<'_>) -> EventRole {
        if e.event.is_none() && e.data.trim() != "[DONE]" && !e.data.contains("\"error\"") {
            return EventRole::Other;
        }
        self.event_role(e)
    }

    fn interrupted_event(&self, responses_api: bool) -> Vec<u8> {
        let msg = super::INTERRUPTED;
        let text = if responses_api {
            format!(
                "event: error\ndata: {}\n\n",
                json!({"type": "error", "code": "server_error", "message": msg, "param": null})
            )
        } else {
            format!(
                "data: {}\n\n",
                json!({"error": {"message": msg, "type": "server_error", "param": null, "code": "stream_interrupted"}})
            )
        };
        text.into_bytes()
    }

    fn response_id_from_event(&self, data: &str) -> Option<String> {
        crate::response_id::response_id_from_event(data)
    }

    fn response_id_from_body(&self, body: &[u8]) -> Option<String> {
        crate::response_id::response_id_from_body(body)
    }

    /// The Responses API (`responses`, `responses/{id}`, …): a chat completion names none.
    fn names_responses(&self, rest: &str) -> bool {
        rest.contains("responses")
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        let (kind, code) = match status {
            400 => ("invalid_request_error", "switchyard_invalid"),
            403 => ("invalid_request_error", "switchyard_forbidden"),
            404 => ("invalid_request_error", "switchyard_not_found"),
            429 => ("requests", "rate_limit_exceeded"),
            _ => ("server_error", "switchyard_unavailable"),
        };
        json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
    }

    /// Code `switchyard_continuity` and `param: "previous_response_id"`.
    fn continuity_body(&self, _status: u16, message: &str) -> Value {
        json!({"error": {
            "message": message, "type": "server_error", "param": "previous_response_id", "code": "switchyard_continuity",
        }})
    }

    fn models_body(&self, models: &[String]) -> Value {
        json!({
            "object": "list",
            "data": models.iter().map(|m| json!({"id": m, "object": "model", "created": 0, "owned_by": "switchyard"})).collect::<Vec<_>>()
        })
    }

    fn models_url(&self, base: &str) -> String {
        format!("{base}/models")
    }

    /// One page: `data[].id`.
    fn listing_page(&self, page: &Value) -> Result<ListingPage, String> {
        super::data_ids(page).map(|models| ListingPage { models, next: None })
    }

    fn probe(&self, base: &str, model: &str) -> (String, Value) {
        let body = json!({"model": model, "max_tokens": 1, "messages": [{"role": "user", "content": "ping"}]});
        (format!("{base}/chat/completions"), body)
    }

    fn has_owned_logins(&self) -> bool {
        true
    }
}
