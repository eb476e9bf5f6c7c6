//! Test/discovery calls: list a key's models in the connection's dialect (all pages), and
//! the deep check's one minimal request per model. Error answers are classified with the
//! dialect's table; transport failures and timeouts are `network` and produce no evidence.

use std::time::SystemTime;

use serde_json::{json, Value};
use switchyard_core::Protocol;
use switchyard_vault::Secret;

use crate::classify::{classify, Classified};
use crate::endpoint::Endpoint;

/// What a models listing said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// The model ids the key may use, as the provider spells them.
    Listed(Vec<String>),
    /// The endpoint has no models listing (404): support must be inferred.
    Unsupported,
}

/// Why a discovery call proved nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// The provider answered with an error, classified.
    Rejected { status: u16, classified: Classified },
    /// No usable answer: connect, TLS, timeout or an unreadable body.
    Transport(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Rejected { status, classified } => {
                write!(f, "HTTP {status}: {} ({})", classified.failure.kind.as_str(), classified.rule)
            }
            CallError::Transport(why) => write!(f, "network: {why}"),
        }
    }
}

/// The HTTP client for test/discovery. It never follows a redirect (docs/design.md, invariant 19):
/// reqwest strips `Authorization` across origins but not `x-api-key`, so a followed
/// redirect would hand an Anthropic key to wherever it points. A 3xx is an outcome instead.
pub fn http_client() -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(5))
        .timeout(std::time::Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .build()
}

/// A redirect answer as an outcome: where it points (scheme, host and port only — a query
/// could carry anything), and that the key was not resent.
fn redirected(status: u16, headers: &reqwest::header::HeaderMap) -> CallError {
    let target = headers
        .get("location")
        .and_then(|v| v.to_str().ok())
        .and_then(|l| url::Url::parse(l).ok())
        .map(|u| {
            format!(
                "{}://{}{}",
                u.scheme(),
                u.host_str().unwrap_or("?"),
                u.port().map(|p| format!(":{p}")).unwrap_or_default()
            )
        })
        .unwrap_or_else(|| "another address".to_string());
    CallError::Transport(format!(
        "the endpoint redirects (HTTP {status}) to {target}; Switchyard never resends a key to a redirect target — set the base URL to where the provider really is"
    ))
}

/// Most pages followed for one Anthropic or Gemini listing (1000 models per page asked).
const MAX_PAGES: usize = 50;

/// Lists the models the key may use.
pub async fn list_models(client: &reqwest::Client, ep: &Endpoint<'_>, secret: &Secret) -> Result<Listing, CallError> {
    let mut models = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let mut req = client.get(ep.models_url());
        if ep.protocol == Protocol::Anthropic {
            req = req.query(&[("limit", "1000")]);
            if let Some(a) = &after {
                req = req.query(&[("after_id", a.as_str())]);
            }
        }
        if ep.protocol == Protocol::Gemini {
            req = req.query(&[("pageSize", "1000")]);
            if let Some(token) = &after {
                req = req.query(&[("pageToken", token.as_str())]);
            }
        }
        let resp = ep.authorize(req, secret).send().await.map_err(transport)?;
        let status = resp.status().as_u16();
        if status == 404 {
            return Ok(Listing::Unsupported);
        }
        if (300..400).contains(&status) {
            return Err(redirected(status, resp.headers()));
        }
        let headers = resp.headers().clone();
        let body = resp.bytes().await.map_err(transport)?;
        if !(200..300).contains(&status) {
            let classified = classify(ep.protocol, status, &headers, &body, SystemTime::now());
            return Err(CallError::Rejected { status, classified });
        }
        let page: Value = serde_json::from_slice(&body)
            .map_err(|e| CallError::Transport(format!("models listing is not JSON ({e})")))?;
        if ep.protocol == Protocol::Gemini {
            models.extend(gemini_generating_models(&page));
            after = page.get("nextPageToken").and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_string);
            if after.is_none() {
                models.sort();
                models.dedup();
                return Ok(Listing::Listed(models));
            }
            continue;
        }
        let data = page
            .get("data")
            .and_then(Value::as_array)
            .ok_or_else(|| CallError::Transport("models listing has no `data` array".to_string()))?;
        models.extend(data.iter().filter_map(|m| m.get("id").and_then(Value::as_str)).map(str::to_string));
        let more = page.get("has_more").and_then(Value::as_bool).unwrap_or(false);
        after = page.get("last_id").and_then(Value::as_str).map(str::to_string);
        if ep.protocol != Protocol::Anthropic || !more || after.is_none() {
            models.sort();
            models.dedup();
            return Ok(Listing::Listed(models));
        }
    }
    Err(CallError::Transport(format!("models listing has more than {MAX_PAGES} pages")))
}

/// Sends one minimal request (1 output token) for `model` and reports whether it was served.
pub async fn probe_model(
    client: &reqwest::Client,
    ep: &Endpoint<'_>,
    secret: &Secret,
    model: &str,
) -> Result<(), CallError> {
    // OpenAI and Anthropic accept the same minimal shape; Gemini names the model in the path.
    let body = match ep.protocol {
        Protocol::Gemini => json!({"contents": [{"role": "user", "parts": [{"text": "ping"}]}],
            "generationConfig": {"maxOutputTokens": 1}}),
        Protocol::Openai | Protocol::Anthropic => {
            json!({"model": model, "max_tokens": 1, "messages": [{"role": "user", "content": "ping"}]})
        }
    };
    let req = client.post(ep.generate_url_for(model)).json(&body);
    let resp = ep.authorize(req, secret).send().await.map_err(transport)?;
    let status = resp.status().as_u16();
    if (300..400).contains(&status) {
        return Err(redirected(status, resp.headers()));
    }
    let headers = resp.headers().clone();
    let bytes = resp.bytes().await.map_err(transport)?;
    if (200..300).contains(&status) {
        return Ok(());
    }
    let classified = classify(ep.protocol, status, &headers, &bytes, SystemTime::now());
    Err(CallError::Rejected { status, classified })
}

/// A Gemini listing page's models that support `generateContent`, without the `models/`
/// prefix of their `name` (the id a path takes).
fn gemini_generating_models(page: &Value) -> impl Iterator<Item = String> + '_ {
    page.get("models").and_then(Value::as_array).into_iter().flatten().filter_map(|m| {
        let generates = m
            .get("supportedGenerationMethods")
            .and_then(Value::as_array)
            .is_some_and(|ms| ms.iter().any(|x| x.as_str() == Some("generateContent")));
        let name = m.get("name").and_then(Value::as_str)?;
        generates.then(|| name.strip_prefix("models/").unwrap_or(name).to_string())
    })
}

/// Transport errors never carry the request (and so never the credential header).
fn transport(e: reqwest::Error) -> CallError {
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_body() || e.is_decode() {
        "the answer was cut off"
    } else {
        "request failed"
    };
    let host = e.url().and_then(|u| u.host_str().map(str::to_string)).unwrap_or_default();
    CallError::Transport(format!("{what} ({host})"))
}
