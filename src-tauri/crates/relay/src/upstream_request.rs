//! Building the upstream request from the client's: the provider URL for the path, the
//! client's headers minus hop-by-hop, client credentials and relay controls, plus the
//! connection's configured headers and the credential as the engine decided
//! (`CredentialUse`): the profile's key, a subscription token as a bearer with the oauth beta,
//! or — for an external login — the client's own `Authorization` left as it came. And the
//! reverse filter for response headers.

use http::{header, HeaderMap, HeaderName, HeaderValue};
use switchyard_core::routing::with_beta;
use switchyard_core::Protocol;
use switchyard_engine::{CredentialUse, Snapshot};
use switchyard_providers::dialect;
use switchyard_vault::Secret;

/// Headers never forwarded in either direction (RFC 9110 hop-by-hop, plus length, which is
/// recomputed).
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
];

/// Client headers that carry the relay token or the client's own credentials (cookies),
/// never forwarded upstream — in legacy mode too: the one documented exception to byte for
/// byte, together with the hop-by-hop headers (docs/design.md, invariant 19).
const CLIENT_CREDENTIALS: &[&str] = &["authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie"];

/// Headers the client's `Connection` header nominates as hop-by-hop (RFC 9110 §7.6.1).
fn nominated(client: &HeaderMap) -> Vec<String> {
    client
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|n| n.trim().to_ascii_lowercase())
        .filter(|n| !n.is_empty())
        .collect()
}

/// The URL for a relay path on `base` (a connection's base URL, or the one an attempt names:
/// `Target::base_url`), the path mapped as for the connection's dialect: OpenAI bases include
/// `/v1` (the client's `v1/` is dropped), Anthropic and Gemini bases do not.
pub fn url_on(base: &str, protocol: Protocol, rest: &str, query: Option<&str>) -> String {
    let tail = dialect::of(protocol).upstream_path(rest).trim_start_matches('/');
    let mut url = String::with_capacity(base.len() + tail.len() + 2 + query.map_or(0, str::len));
    url.push_str(base);
    url.push('/');
    url.push_str(tail);
    if let Some(q) = query {
        url.push('?');
        url.push_str(q);
    }
    url
}

/// The upstream request headers. The client's `accept-encoding` passes through in every mode
/// (a compressed answer is read through its coding on the side and relayed as it came).
/// `credential` says how the attempt authenticates (`secret` is empty for `Client`; `account` is
/// an owned login's ChatGPT account).
pub fn upstream_headers(
    client: &HeaderMap,
    snap: &Snapshot,
    secret: &Secret,
    credential: CredentialUse,
    account: Option<&str>,
) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(client.len() + snap.headers.len() + 1);
    let nominated = if client.contains_key(header::CONNECTION) { nominated(client) } else { Vec::new() };
    // An external login's request keeps its own `Authorization` (the relay token came in
    // `x-switchyard-token`); every other credential header of the client is dropped as always.
    let own_login = credential == CredentialUse::Client;
    for (name, value) in client {
        let n = name.as_str();
        if HOP_BY_HOP.contains(&n)
            || (CLIENT_CREDENTIALS.contains(&n) && !(own_login && name == header::AUTHORIZATION))
            || n.starts_with("x-switchyard-")
            || nominated.iter().any(|x| x == n)
        {
            continue;
        }
        let mut value = value.clone();
        if name == header::AUTHORIZATION {
            value.set_sensitive(true);
        }
        out.append(name.clone(), value);
    }
    for h in &snap.headers {
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(h.name.as_str()), HeaderValue::from_str(&h.value)) {
            if !out.contains_key(&name) {
                out.insert(name, value);
            }
        }
    }
    match credential {
        CredentialUse::Key => {
            let (name, value) = dialect::credential_header(dialect::of(snap.protocol), secret);
            out.insert(name, value);
        }
        CredentialUse::Token => token_headers(&mut out, secret, snap.protocol),
        CredentialUse::Login => login_headers(&mut out, secret, account),
        CredentialUse::Client => {}
    }
    out
}

/// A subscription token: `Authorization: Bearer`, no `x-api-key`, and the beta the dialect
/// requires for it (Anthropic's) appended to the client's `anthropic-beta` list when absent
/// (core `with_beta`); nothing else is touched.
fn token_headers(out: &mut HeaderMap, secret: &Secret, protocol: Protocol) {
    out.remove(crate::header_names::X_API_KEY);
    if let Ok(mut bearer) = HeaderValue::from_str(&format!("Bearer {}", secret.expose())) {
        bearer.set_sensitive(true);
        out.insert(header::AUTHORIZATION, bearer);
    }
    let Some(beta) = dialect::of(protocol).token_beta() else { return };
    // Several `anthropic-beta` lines read as one list; when the beta is added, the merged list
    // replaces them (the same betas, in their order, on one line).
    let lines: Vec<&str> =
        out.get_all(crate::header_names::ANTHROPIC_BETA).iter().filter_map(|v| v.to_str().ok()).collect();
    let list = (!lines.is_empty()).then(|| lines.join(","));
    if let Some(merged) = with_beta(list.as_deref(), beta).and_then(|m| HeaderValue::from_str(&m).ok()) {
        out.insert(crate::header_names::ANTHROPIC_BETA, merged);
    }
}

/// An owned login (docs/design.md, section 14): the access token as `Authorization: Bearer` and
/// the account the ChatGPT backend needs in `chatgpt-account-id` (a client's own value of that
/// header is replaced: the account is the login's). Nothing else is touched.
fn login_headers(out: &mut HeaderMap, secret: &Secret, account: Option<&str>) {
    if let Ok(mut bearer) = HeaderValue::from_str(&format!("Bearer {}", secret.expose())) {
        bearer.set_sensitive(true);
        out.insert(header::AUTHORIZATION, bearer);
    }
    out.remove(crate::header_names::CHATGPT_ACCOUNT_ID);
    if let Some(value) = account.and_then(|a| HeaderValue::from_str(a).ok()) {
        out.insert(crate::header_names::CHATGPT_ACCOUNT_ID, value);
    }
}

/// Response headers passed back to the client (hop-by-hop ones, including those the
/// provider's `Connection` nominates, stay on their hop). Room for the four route headers a
/// routed answer gets after them (`respond::with_route`): a full map grows by moving every entry
/// (issue 40: the four inserts were 1.2k instructions of a balanced request).
pub fn client_headers(upstream: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(upstream.len() + 4);
    let nominated = if upstream.contains_key(header::CONNECTION) { nominated(upstream) } else { Vec::new() };
    for (name, value) in upstream {
        if !HOP_BY_HOP.contains(&name.as_str()) && !nominated.iter().any(|x| x == name.as_str()) {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

/// Whether an answer is a server-sent event stream.
pub fn is_event_stream(headers: &HeaderMap) -> bool {
    headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("text/event-stream"))
}

/// Whether a path is the dialect's models listing.
pub fn is_models_listing(rest: &str) -> bool {
    matches!(rest.trim_end_matches('/'), "v1/models" | "models" | "v1beta/models")
}
