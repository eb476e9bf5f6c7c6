//! A fake ChatGPT authorization server (issue 32): the device-code sign-in
//! (`/api/accounts/deviceauth/usercode`, `/api/accounts/deviceauth/token`), the token endpoint
//! (`/oauth/token`: authorization-code exchange and refresh) with rotating refresh tokens, reuse
//! detection (`refresh_token_reused`), `invalid_grant`, 429 with `Retry-After` and 5xx on demand;
//! and the browser sign-in (`/oauth/authorize`: redirects straight back to the `redirect_uri` with
//! a code, as if the user had approved; the code exchange checks the PKCE verifier against the
//! S256 challenge).
//! Every access token it issues becomes a key of the playbook with the configured script, so the
//! ChatGPT backend route (`/backend-api/codex/responses`) accepts it until it is expired by the
//! test; the account the id token names is the script's account. Off until configured.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::script::KeyScript;
use crate::server::Shared;

/// How the fake authorization server behaves.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OauthConfig {
    /// The script every issued access token follows on the backend.
    pub key: KeyScript,
    /// The ChatGPT account the id token names (sent back as `chatgpt-account-id`).
    pub account_id: String,
    /// The plan the id token names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// Every token starts with this (tests put a canary here).
    #[serde(default)]
    pub token_prefix: String,
    /// The access token's life (`expires_in`, seconds; default 3600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in_secs: Option<i64>,
    /// Polls answered "pending" before a device code is approved (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approve_after_polls: Option<u32>,
    /// How long a refresh takes to answer (ms; widens race windows in tests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_delay_ms: Option<u64>,
    /// The user code the device sign-in hands out (default `ABCD-1234`; tests put escape
    /// sequences here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_code: Option<String>,
}

/// A scripted answer to the next refresh instead of new tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefreshFault {
    /// 400 `{"error":"invalid_grant"}`.
    InvalidGrant,
    /// 429 with `Retry-After`.
    RateLimited { retry_after_secs: u64 },
    /// 503.
    ServerError,
}

#[derive(Debug, Default)]
struct State_ {
    config: Option<OauthConfig>,
    /// refresh token → whether it was used already (rotation: each is good once).
    refresh_tokens: HashMap<String, bool>,
    access_tokens: Vec<String>,
    /// device auth id → polls so far.
    devices: HashMap<String, u32>,
    /// browser authorization code → the S256 challenge it was asked with (each code is good once).
    challenges: HashMap<String, String>,
    serial: u64,
    refresh_calls: u64,
    faults: VecDeque<RefreshFault>,
}

/// The fake authorization server's state (inside the mock's shared state).
#[derive(Debug, Default)]
pub(crate) struct Oauth(Mutex<State_>);

impl Oauth {
    fn lock(&self) -> std::sync::MutexGuard<'_, State_> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn configure(&self, config: OauthConfig) {
        self.lock().config = Some(config);
    }

    pub fn refresh_calls(&self) -> u64 {
        self.lock().refresh_calls
    }

    pub fn fail_next_refresh(&self, fault: RefreshFault) {
        self.lock().faults.push_back(fault);
    }

    pub fn access_tokens(&self) -> Vec<String> {
        self.lock().access_tokens.clone()
    }

    /// Every refresh token ever issued (canary checks).
    pub fn refresh_tokens(&self) -> Vec<String> {
        self.lock().refresh_tokens.keys().cloned().collect()
    }

    /// Marks every refresh token used (the next refresh gets `refresh_token_reused`).
    pub fn revoke_refresh_tokens(&self) {
        self.lock().refresh_tokens.values_mut().for_each(|used| *used = true);
    }
}

fn base64url(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len() * 4 / 3 + 3);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(ABC[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// Issues a new token pair (the access token becomes a playbook key) and answers with it.
fn issue(shared: &Shared, state: &mut State_) -> Response {
    let Some(config) = state.config.clone() else { return not_configured() };
    state.serial += 1;
    let n = state.serial;
    let access = format!("{}at-{n}", config.token_prefix);
    let refresh = format!("{}rt-{n}", config.token_prefix);
    state.refresh_tokens.insert(refresh.clone(), false);
    state.access_tokens.push(access.clone());
    shared.playbook.set_key(&access, config.key.clone());
    let claims = json!({
        "https://api.openai.com/auth": {"chatgpt_account_id": config.account_id, "chatgpt_plan_type": config.plan},
        "email": "user@example.com",
    });
    let id_token = format!("{}.{}.sig", base64url(br#"{"alg":"none"}"#), base64url(claims.to_string().as_bytes()));
    let body = json!({
        "access_token": access,
        "refresh_token": refresh,
        "id_token": id_token,
        "expires_in": config.expires_in_secs.unwrap_or(3600),
        "token_type": "Bearer",
    });
    (StatusCode::OK, axum::Json(body)).into_response()
}

fn not_configured() -> Response {
    (StatusCode::NOT_FOUND, axum::Json(json!({"error": "not_found"}))).into_response()
}

fn error(status: StatusCode, code: &str) -> Response {
    (status, axum::Json(json!({"error": code, "error_description": "refused by the mock"}))).into_response()
}

/// `POST /api/accounts/deviceauth/usercode`.
pub(crate) async fn user_code(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let mut state = shared.oauth.lock();
    if state.config.is_none() {
        return not_configured();
    }
    let asked: Value = serde_json::from_slice(&body).unwrap_or_default();
    if asked.get("client_id").and_then(Value::as_str).is_none() {
        return error(StatusCode::BAD_REQUEST, "invalid_request");
    }
    let code = state.config.as_ref().and_then(|c| c.user_code.clone()).unwrap_or_else(|| "ABCD-1234".into());
    state.serial += 1;
    let id = format!("dev-{}", state.serial);
    state.devices.insert(id.clone(), 0);
    (StatusCode::OK, axum::Json(json!({"device_auth_id": id, "user_code": code, "interval": "1"}))).into_response()
}

/// `POST /api/accounts/deviceauth/token`: 403 while pending, then the authorization code.
pub(crate) async fn device_token(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let mut state = shared.oauth.lock();
    let approve_after = state.config.as_ref().map(|c| c.approve_after_polls.unwrap_or(1)).unwrap_or(1);
    let asked: Value = serde_json::from_slice(&body).unwrap_or_default();
    let id = asked.get("device_auth_id").and_then(Value::as_str).unwrap_or_default().to_string();
    let Some(polls) = state.devices.get_mut(&id) else { return error(StatusCode::NOT_FOUND, "unknown_device") };
    *polls += 1;
    if *polls <= approve_after {
        return error(StatusCode::FORBIDDEN, "authorization_pending");
    }
    let code = format!("code-{id}");
    (StatusCode::OK, axum::Json(json!({"authorization_code": code, "code_challenge": "c", "code_verifier": "v"})))
        .into_response()
}

/// `GET /oauth/authorize`: a browser sign-in, approved at once — a 302 to the `redirect_uri`
/// with a code and the `state`. Only `response_type=code` with an S256 challenge is accepted.
pub(crate) async fn authorize(
    State(shared): State<Arc<Shared>>,
    axum::extract::Query(q): axum::extract::Query<HashMap<String, String>>,
) -> Response {
    let mut state = shared.oauth.lock();
    if state.config.is_none() {
        return not_configured();
    }
    let field = |k: &str| q.get(k).map(String::as_str);
    let (Some(redirect), Some(challenge), Some(asked_state), Some(_client)) =
        (field("redirect_uri"), field("code_challenge"), field("state"), field("client_id"))
    else {
        return error(StatusCode::BAD_REQUEST, "invalid_request");
    };
    if field("response_type") != Some("code") || field("code_challenge_method") != Some("S256") {
        return error(StatusCode::BAD_REQUEST, "invalid_request");
    }
    state.serial += 1;
    let code = format!("code-pkce-{}", state.serial);
    state.challenges.insert(code.clone(), challenge.to_string());
    let sep = if redirect.contains('?') { '&' } else { '?' };
    // The state a client makes is URL-safe (base64url); the mock sends it back as it came.
    let location = format!("{redirect}{sep}code={code}&state={asked_state}");
    (StatusCode::FOUND, [(axum::http::header::LOCATION, location)]).into_response()
}

/// The S256 challenge of a PKCE verifier: base64url(SHA-256(verifier)), unpadded.
fn s256(verifier: &str) -> String {
    use sha2::Digest;
    base64url(&sha2::Sha256::digest(verifier.as_bytes()))
}

/// `POST /oauth/token`: a form body exchanges an authorization code, a JSON body refreshes.
pub(crate) async fn token(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let form = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    let fields: HashMap<String, String> = if form {
        String::from_utf8_lossy(&body)
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .map(|(k, v)| (k.to_string(), v.replace("%2F", "/").replace("%3A", ":")))
            .collect()
    } else {
        serde_json::from_slice::<HashMap<String, Value>>(&body)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(k, v)| v.as_str().map(|s| (k, s.to_string())))
            .collect()
    };
    match fields.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let mut state = shared.oauth.lock();
            if let Some(code) = fields.get("code").filter(|c| c.starts_with("code-pkce-")) {
                let challenge = state.challenges.remove(code);
                let verifier = fields.get("code_verifier").map(|v| s256(v));
                if challenge.is_none() || challenge != verifier || !fields.contains_key("redirect_uri") {
                    return error(StatusCode::BAD_REQUEST, "invalid_grant");
                }
                return issue(&shared, &mut state);
            }
            let known = fields.get("code").is_some_and(|c| c.starts_with("code-dev-"));
            if !known || !fields.contains_key("code_verifier") {
                return error(StatusCode::BAD_REQUEST, "invalid_grant");
            }
            issue(&shared, &mut state)
        }
        Some("refresh_token") => refresh(&shared, fields.get("refresh_token").cloned().unwrap_or_default()).await,
        _ => error(StatusCode::BAD_REQUEST, "unsupported_grant_type"),
    }
}

async fn refresh(shared: &Shared, token: String) -> Response {
    let delay = {
        let mut state = shared.oauth.lock();
        state.refresh_calls += 1;
        state.config.as_ref().and_then(|c| c.refresh_delay_ms)
    };
    if let Some(ms) = delay {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    let mut state = shared.oauth.lock();
    if let Some(fault) = state.faults.pop_front() {
        return match fault {
            RefreshFault::InvalidGrant => error(StatusCode::BAD_REQUEST, "invalid_grant"),
            RefreshFault::RateLimited { retry_after_secs } => {
                let mut r = error(StatusCode::TOO_MANY_REQUESTS, "rate_limit_exceeded");
                if let Ok(v) = retry_after_secs.to_string().parse() {
                    r.headers_mut().insert(axum::http::header::RETRY_AFTER, v);
                }
                r
            }
            RefreshFault::ServerError => error(StatusCode::SERVICE_UNAVAILABLE, "server_error"),
        };
    }
    match state.refresh_tokens.get(&token).copied() {
        None => error(StatusCode::BAD_REQUEST, "invalid_grant"),
        Some(true) => {
            let body = json!({"error": {"code": "refresh_token_reused", "message": "Your refresh token has already been used"}});
            (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response()
        }
        Some(false) => {
            state.refresh_tokens.insert(token, true);
            issue(shared, &mut state)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{base64url, s256};

    #[test]
    fn s256_is_base64url_of_the_sha256_without_padding() {
        assert_eq!(
            s256("a-verifier-of-the-test"),
            "nrD35X0oUd-IWKhzX1uuzlWthqxRNrmCa9l5qpz9o3w",
            "computed independently (Python hashlib)"
        );
    }

    #[test]
    fn base64url_without_padding() {
        assert_eq!(base64url(b"f"), "Zg", "one byte");
        assert_eq!(base64url(b"fo"), "Zm8", "two bytes");
        assert_eq!(base64url(b"foo"), "Zm9v", "three bytes");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8", "the URL-safe alphabet");
    }
}
