//! The web console (`relay serve --console`; docs/design.md §18): the desktop's screens, built
//! once in `ui/` and embedded in the binary (`assets.rs`), served at `/console/` to admins only.
//! `/console/api/session` exchanges an `admin` user's relay token for a session cookie
//! (`session.rs`: HttpOnly, SameSite=Strict, Secure under TLS, 12 hours, ended with the token);
//! `/console/api/call/{command}` runs one engine use case with the desktop command's name and
//! arguments (`api.rs`), for a valid session with its CSRF header, its changes recorded as the
//! admin's. Without `--console` nothing under `/console` exists (404).

mod api;
pub(crate) mod assets;
mod session;

use std::sync::Arc;

use http::{header, HeaderValue, Method, Request, StatusCode};
use hyper::body::Incoming;

use crate::body::client_body::{bare, Response};
use crate::conn::Peer;
use crate::state::RelayState;

/// The header every console API call carries its session's CSRF token in.
pub(crate) const CSRF_HEADER: &str = "x-switchyard-csrf";
/// Largest console API request body (forms, not conversations).
const MAX_API_BODY: usize = 256 * 1024;

/// Whether `path` is the console's.
pub(crate) fn is_console(path: &str) -> bool {
    path == "/console" || path.starts_with("/console/")
}

pub(crate) async fn handle(state: &Arc<RelayState>, peer: Peer, req: Request<Incoming>) -> Response {
    if !state.console() {
        return bare(StatusCode::NOT_FOUND);
    }
    if let Err(refusal) = crate::guard::before_auth(req.method(), req.headers(), peer.tls) {
        return refusal.response();
    }
    let path = req.uri().path().to_string();
    if path == "/console" {
        let mut resp = bare(StatusCode::PERMANENT_REDIRECT);
        resp.headers_mut().insert(header::LOCATION, HeaderValue::from_static("/console/"));
        return resp;
    }
    let rest = path.strip_prefix("/console/").unwrap_or("");
    let mut resp = match rest.strip_prefix("api/") {
        Some("session") => session::session(state, peer, req).await,
        Some(call) => match call.strip_prefix("call/") {
            Some(name) if req.method() == Method::POST => {
                let name = name.to_string();
                api::call(state, &name, req).await
            }
            Some(_) => crate::reply::method_not_allowed("POST"),
            None => bare(StatusCode::NOT_FOUND),
        },
        None if req.method() == Method::GET || req.method() == Method::HEAD => {
            return assets::serve(rest, req.method() == Method::HEAD);
        }
        None => crate::reply::method_not_allowed("GET, HEAD"),
    };
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    assets::harden(&mut resp);
    resp
}

/// A request's body, up to [`MAX_API_BODY`] (`None`: too large or broken).
async fn body_of(req: Request<Incoming>) -> Option<bytes::Bytes> {
    use http_body_util::BodyExt;
    let limited = http_body_util::Limited::new(req.into_body(), MAX_API_BODY);
    limited.collect().await.ok().map(|c| c.to_bytes())
}

/// The session cookie's value in `headers`, if any.
fn cookie(headers: &http::HeaderMap) -> Option<String> {
    headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(';')).find_map(|pair| {
        let (name, value) = pair.trim().split_once('=')?;
        (name == session::COOKIE && !value.is_empty()).then(|| value.to_string())
    })
}
