//! The built console, embedded at compile time (relay `build.rs` from `ui/dist-console`), served
//! with its content type, the console's security headers and caching: `index.html` revalidated
//! on every load, the hashed files under `assets/` cached for a year (their names change with
//! their content).

use http::{header, HeaderValue, StatusCode};

use crate::body::client_body::{bare, ClientBody, Response};

include!(concat!(env!("OUT_DIR"), "/console_assets.rs"));

/// Whether this binary carries a built console.
pub(crate) fn built() -> bool {
    ASSETS.iter().any(|(path, _, _)| *path == "index.html")
}

/// The Content-Security-Policy of every console response: scripts, styles and calls from the
/// relay itself only; no frames, no plugins, no inline script.
pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Adds the console's security headers to `resp`.
pub(crate) fn harden(resp: &mut Response) {
    let h = resp.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert("cross-origin-opener-policy", HeaderValue::from_static("same-origin"));
    h.insert("cross-origin-resource-policy", HeaderValue::from_static("same-origin"));
}

/// `rest`: the path after `/console/` (`""` is the page).
pub(crate) fn serve(rest: &str, head: bool) -> Response {
    let path = if rest.is_empty() { "index.html" } else { rest };
    let Some((_, content_type, bytes)) = ASSETS.iter().find(|(p, _, _)| *p == path) else {
        let mut resp = bare(StatusCode::NOT_FOUND);
        harden(&mut resp);
        return resp;
    };
    let body = if head { ClientBody::Empty } else { ClientBody::full(bytes::Bytes::from_static(bytes)) };
    let mut resp = Response::new(body);
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Ok(len) = HeaderValue::from_str(&bytes.len().to_string()) {
        h.insert(header::CONTENT_LENGTH, len);
    }
    let cache = if path.starts_with("assets/") { "public, max-age=31536000, immutable" } else { "no-cache" };
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    harden(&mut resp);
    resp
}
