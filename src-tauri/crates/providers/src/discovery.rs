//! Test/discovery calls: list a key's models in the connection's dialect (all pages), and
//! the deep check's one minimal request per model. Error answers are classified with the
//! dialect's table; transport failures and timeouts are `network` and produce no evidence.

use std::time::SystemTime;

use serde_json::Value;
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

/// Lists the models the key may use, page by page as the dialect reads its listing.
pub async fn list_models(client: &reqwest::Client, ep: &Endpoint<'_>, secret: &Secret) -> Result<Listing, CallError> {
    let dialect = ep.dialect();
    let mut models = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let req = client.get(ep.models_url()).query(&dialect.listing_query(after.as_deref()));
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
        let page = dialect.listing_page(&page).map_err(CallError::Transport)?;
        models.extend(page.models);
        after = page.next;
        if after.is_none() {
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
    let (url, body) = ep.dialect().probe(ep.base_url, model);
    let req = client.post(url).json(&body);
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
