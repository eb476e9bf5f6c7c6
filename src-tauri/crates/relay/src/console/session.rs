//! `/console/api/session`: `POST {"token"}` signs an admin in (the token in the body, never in a
//! URL; 401 for anything but a live admin's token, alike for all), `GET` resumes a session after
//! a reload (a new CSRF token: the browser keeps it in memory only), `DELETE` signs out (with
//! the CSRF header). The cookie: `sy_console`, `Path=/console`, HttpOnly, SameSite=Strict,
//! Secure under TLS, Max-Age the session's 12 hours.

use std::sync::Arc;

use http::{header, HeaderValue, Method, Request, StatusCode};
use hyper::body::Incoming;
use serde::Deserialize;
use serde_json::json;
use switchyard_engine::{Secret, CONSOLE_SESSION_MS};

use crate::body::client_body::{bare, json, Response};
use crate::conn::Peer;
use crate::reply;
use crate::state::RelayState;

pub(crate) const COOKIE: &str = "sy_console";

#[derive(Deserialize)]
struct SignIn {
    token: String,
}

pub(crate) async fn session(state: &Arc<RelayState>, peer: Peer, req: Request<Incoming>) -> Response {
    let engine = state.router.engine().clone();
    match *req.method() {
        Method::POST => {
            let Some(body) = super::body_of(req).await else { return bare(StatusCode::PAYLOAD_TOO_LARGE) };
            let Ok(SignIn { token }) = serde_json::from_slice::<SignIn>(&body) else {
                return reply::neutral_error(StatusCode::BAD_REQUEST, "invalid", "send {\"token\": \"…\"}");
            };
            match engine.console_sign_in(&Secret::new(token)).await {
                Ok(Some(s)) => {
                    let mut resp = json(StatusCode::OK, &json!({"user": s.user, "csrf": s.csrf.expose()}));
                    set_cookie(&mut resp, s.cookie.expose(), CONSOLE_SESSION_MS / 1000, peer.tls);
                    resp
                }
                Ok(None) => refused(),
                Err(e) => reply::neutral_engine_error(&e),
            }
        }
        Method::GET => {
            let Some(cookie) = super::cookie(req.headers()) else { return refused() };
            match engine.console_resume(&cookie).await {
                Ok(Some((user, csrf))) => json(StatusCode::OK, &json!({"user": user, "csrf": csrf.expose()})),
                Ok(None) => refused(),
                Err(e) => reply::neutral_engine_error(&e),
            }
        }
        Method::DELETE => {
            let Some(cookie) = super::cookie(req.headers()) else { return refused() };
            match engine.console_caller(&cookie).await {
                Ok(Some(caller)) if csrf_of(req.headers()).is_some_and(|c| caller.csrf_matches(c)) => {
                    if let Err(e) = engine.console_sign_out(&cookie).await {
                        return reply::neutral_engine_error(&e);
                    }
                    let mut resp = bare(StatusCode::NO_CONTENT);
                    set_cookie(&mut resp, "", 0, peer.tls);
                    resp
                }
                Ok(Some(_)) => csrf_refused(),
                Ok(None) => refused(),
                Err(e) => reply::neutral_engine_error(&e),
            }
        }
        _ => reply::method_not_allowed("GET, POST, DELETE"),
    }
}

fn set_cookie(resp: &mut Response, value: &str, max_age_secs: i64, tls: bool) {
    let secure = if tls { "; Secure" } else { "" };
    let text = format!("{COOKIE}={value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age={max_age_secs}{secure}");
    if let Ok(v) = HeaderValue::from_str(&text) {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
}

pub(super) fn csrf_of(headers: &http::HeaderMap) -> Option<&str> {
    headers.get(super::CSRF_HEADER).and_then(|v| v.to_str().ok())
}

/// 401 for every refused sign-in or session (the same answer whatever was wrong).
pub(super) fn refused() -> Response {
    reply::with_reason(
        reply::neutral_error(StatusCode::UNAUTHORIZED, "unauthorized", "sign in with an admin user's relay token"),
        "console_unauthorized",
    )
}

pub(super) fn csrf_refused() -> Response {
    reply::with_reason(
        reply::neutral_error(
            StatusCode::FORBIDDEN,
            "csrf",
            "the console's CSRF header is missing or wrong; reload the page",
        ),
        "console_csrf",
    )
}
