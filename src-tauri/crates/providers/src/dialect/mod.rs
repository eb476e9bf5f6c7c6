//! One room per dialect: everything that differs by protocol is answered by that protocol's
//! [`Dialect`] — where a path goes upstream and whether it names the model, how the body names
//! it, how a stream is framed and what its events mean, the error bodies and model listings the
//! relay makes itself, which items in a body are bound to an account, the credential header,
//! the classification table, quota headers and the quota learned from refusals, and how
//! test/discovery lists and probes models. [`of`] is the one `match` on the protocol; the
//! relay, the engine and the rest of this crate ask the dialect instead of matching. The next
//! protocol is one file here plus its tables.

mod anthropic;
mod gemini;
mod openai;

use std::time::SystemTime;

use reqwest::header::{HeaderName, HeaderValue};
use serde_json::Value;
use switchyard_core::Protocol;
use switchyard_vault::Secret;

use crate::quota::row::QuotaRow;
use crate::quota::window::QuotaWindow;
use crate::rule::Rule;
use crate::sse::{EventRole, SseEvent};

/// The dialect `protocol` speaks.
pub fn of(protocol: Protocol) -> &'static dyn Dialect {
    match protocol {
        Protocol::Openai => &openai::Openai,
        Protocol::Anthropic => &anthropic::Anthropic,
        Protocol::Gemini => &gemini::Gemini,
    }
}

/// A page of a models listing, as the dialect reads it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListingPage {
    pub models: Vec<String>,
    /// Where the next page starts (`None`: the last page).
    pub next: Option<String>,
}

/// What differs by protocol. See the module.
pub trait Dialect: Sync {
    fn protocol(&self) -> Protocol;

    // -- Paths and bodies -------------------------------------------------------------------

    /// The path a relay path (`rest`, after `/c/NAME/`) takes on the connection's base URL.
    fn upstream_path<'a>(&self, rest: &'a str) -> &'a str {
        rest
    }

    /// The model a request names in its path, when the dialect puts it there.
    fn path_model<'a>(&self, _rest: &'a str) -> Option<&'a str> {
        None
    }

    /// The path asking `model` instead of the one it names (`None`: the path names none, or
    /// names that one already).
    fn path_for_model(&self, _rest: &str, _model: &str) -> Option<String> {
        None
    }

    /// Whether a request body names its model (a mapped model is then rewritten in the body).
    fn body_names_model(&self) -> bool {
        true
    }

    /// Whether a successful answer to `rest?query` is one JSON array of chunks rather than
    /// events or one JSON body.
    fn json_array_stream(&self, _rest: &str, _query: Option<&str>) -> bool {
        false
    }

    /// A needle every account-bound item of a body spells (a body without it is not parsed).
    fn account_state_needle(&self) -> &'static [u8];

    /// Drops the account-bound items from a parsed body; returns how many went.
    fn drop_account_state(&self, body: &mut Value) -> usize;

    // -- Credentials --------------------------------------------------------------------------

    /// The header a profile's key goes in, and the scheme before it.
    fn credential_header_name(&self) -> (HeaderName, &'static str);

    /// Whether this dialect's clients may carry their key in the URL (`?key=`): Gemini's SDKs and
    /// examples do; nobody sends an OpenAI or Anthropic key there, so there a query key is no
    /// credential.
    fn key_in_query(&self) -> bool {
        false
    }

    /// The beta a subscription token needs in the request (appended to the client's list).
    fn token_beta(&self) -> Option<&'static str> {
        None
    }

    /// A header the dialect requires, with the value sent when the connection sets none.
    fn required_header(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    // -- Errors and quota ---------------------------------------------------------------------

    /// The classification table.
    fn rules(&self) -> &'static [Rule];

    /// The structured type and code of an error object (what the table's rows match).
    fn error_fields<'v>(&self, error: &'v Value) -> (Option<&'v str>, Option<&'v str>) {
        let field = |name: &str| error.get(name).and_then(Value::as_str);
        (field("type"), field("code"))
    }

    /// The quota table (limit headers) and the prefixes its headers share.
    fn quota_rows(&self) -> &'static [QuotaRow] {
        &[]
    }

    fn quota_prefixes(&self) -> &'static [&'static str] {
        &[]
    }

    /// Settles windows read from headers (names that depend on the window's length).
    fn settle_windows(&self, _windows: &mut Vec<QuotaWindow>) {}

    /// The quota states a refusal's body teaches, for a dialect that sends no limit headers.
    fn learned_quota(&self, _status: u16, _body: &[u8], _now: SystemTime) -> Vec<QuotaWindow> {
        Vec::new()
    }

    // -- Streams and answers ------------------------------------------------------------------

    /// What an event of a stream means.
    fn event_role(&self, e: &SseEvent<'_>) -> EventRole;

    /// The role of an event after output started, when only errors and the clean end matter
    /// (cheaper where the dialect can tell without parsing).
    fn event_role_after_output(&self, e: &SseEvent<'_>) -> EventRole {
        self.event_role(e)
    }

    /// The event the relay sends when the upstream stream breaks after output, in the
    /// dialect's own error shape (`responses_api`: OpenAI's Responses events).
    fn interrupted_event(&self, responses_api: bool) -> Vec<u8>;

    /// The id of a Responses answer, from one of its stream events or its JSON body.
    fn response_id_from_event(&self, _data: &str) -> Option<String> {
        None
    }

    fn response_id_from_body(&self, _body: &[u8]) -> Option<String> {
        None
    }

    /// Whether a whole answer to `rest` may name a response ([`Dialect::response_id_from_body`]
    /// is asked only then: reading for an id that cannot be there costs every other answer).
    fn names_responses(&self, _rest: &str) -> bool {
        false
    }

    /// The body of an error the relay answers itself.
    fn error_body(&self, status: u16, message: &str) -> Value;

    /// The body of a continuity refusal (a continued response whose account cannot serve).
    fn continuity_body(&self, status: u16, message: &str) -> Value {
        self.error_body(status, message)
    }

    /// A models listing the relay answers itself.
    fn models_body(&self, models: &[String]) -> Value;

    // -- Test/discovery -----------------------------------------------------------------------

    /// The models listing URL on `base`.
    fn models_url(&self, base: &str) -> String;

    /// The query of a listing page starting `after` (`None`: the first).
    fn listing_query(&self, _after: Option<&str>) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// The models and the next page of a listing page.
    fn listing_page(&self, page: &Value) -> Result<ListingPage, String>;

    /// The URL of one minimal generation call for `model` on `base`, and its body.
    fn probe(&self, base: &str, model: &str) -> (String, Value);

    // -- What the provider's accounts offer ---------------------------------------------------

    /// The official CLI can serve this dialect's requests (`claude -p`: Anthropic).
    fn has_cli_backend(&self) -> bool {
        false
    }

    /// Switchyard can own a login of this provider (a ChatGPT/Codex sign-in: OpenAI).
    fn has_owned_logins(&self) -> bool {
        false
    }
}

/// The header carrying a profile's secret in `dialect`. The value is marked sensitive so HTTP
/// libraries never print it.
pub fn credential_header(dialect: &dyn Dialect, secret: &Secret) -> (HeaderName, HeaderValue) {
    let (name, scheme) = dialect.credential_header_name();
    // Written into one buffer (this runs on every relayed request).
    let mut text = Vec::with_capacity(scheme.len() + secret.expose().len());
    text.extend_from_slice(scheme.as_bytes());
    text.extend_from_slice(secret.expose().as_bytes());
    let mut value = HeaderValue::from_bytes(&text).unwrap_or_else(|_| HeaderValue::from_static("invalid-secret"));
    value.set_sensitive(true);
    (name, value)
}

/// The body without its account-bound items, or `None` when it has none (or is not JSON): the
/// original bytes then go unchanged. A body that cannot spell the dialect's needle is not parsed:
/// after a conversation moves every attempt asks, and parsing a 200 KB body into a `Value` to
/// find nothing cost 107k instructions per request.
pub fn strip_account_state(dialect: &dyn Dialect, body: &[u8]) -> Option<Vec<u8>> {
    if body.first() != Some(&b'{') || !crate::lenient::may_spell(body, dialect.account_state_needle()) {
        return None;
    }
    let mut json: Value = serde_json::from_slice(body).ok()?;
    if dialect.drop_account_state(&mut json) == 0 {
        return None;
    }
    serde_json::to_vec(&json).ok()
}

/// What the relay's own error event says when the upstream stream breaks after output.
const INTERRUPTED: &str = "the upstream stream ended before the response was complete (switchyard)";

/// A listing page's `data[].id` (OpenAI's and Anthropic's shape).
fn data_ids(page: &Value) -> Result<Vec<String>, String> {
    let data = page.get("data").and_then(Value::as_array).ok_or("models listing has no `data` array")?;
    Ok(data.iter().filter_map(|m| m.get("id").and_then(Value::as_str)).map(str::to_string).collect())
}

/// `{"type": "error", "error": {"type": kind, "message"}}`: the error shape both SDKs parse
/// (OpenAI clients read `error.message`).
fn typed_error(kind: &str, message: &str) -> Value {
    serde_json::json!({"type": "error", "error": {"type": kind, "message": message}})
}

#[cfg(test)]
mod tests;
