//! The HTTP calls of an owned login: the device code (`deviceauth/usercode`), its poll
//! (`deviceauth/token`), the authorization-code exchange and the refresh (`/oauth/token`). Each
//! answer is classified here and only here; tokens go straight into [`Secret`]s, and no error
//! message carries a body (a body could echo a token).

use std::time::Duration;

use serde::Deserialize;
use switchyard_core::login::{access_expiry_ms, classify_refresh, RefreshVerdict};
use switchyard_vault::Secret;

use crate::context::Context;
use crate::error::EngineError;
use crate::login::endpoints::{LoginEndpoints, CLIENT_ID, REFRESH_SCOPE};
use crate::login::tokens::{id_claims, jwt_exp, IdClaims};

/// Tokens the token endpoint issued.
#[derive(Debug)]
pub(crate) struct Issued {
    pub access: Secret,
    /// `None` when a refresh answer keeps the old refresh token (no rotation).
    pub refresh: Option<Secret>,
    pub expires_at_ms: i64,
    pub claims: IdClaims,
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    id_token: Option<String>,
    #[serde(default)]
    expires_in: Option<i64>,
}

#[derive(Deserialize)]
struct ErrorAnswer {
    #[serde(default)]
    error: Option<serde_json::Value>,
}

/// The JSON `error` field: a string (RFC 6749), or an object with a `code` (OpenAI's own shape).
fn error_code(body: &[u8]) -> Option<String> {
    let e: ErrorAnswer = serde_json::from_slice(body).ok()?;
    match e.error? {
        serde_json::Value::String(s) => Some(s),
        serde_json::Value::Object(o) => o.get("code").and_then(|c| c.as_str()).map(str::to_string),
        _ => None,
    }
}

impl Issued {
    fn from_answer(a: TokenAnswer, now_ms: i64) -> Self {
        let expires_at_ms = access_expiry_ms(a.expires_in, jwt_exp(&a.access_token), now_ms);
        let claims = a.id_token.as_deref().map(id_claims).unwrap_or_default();
        Issued {
            access: Secret::new(a.access_token),
            refresh: a.refresh_token.filter(|r| !r.is_empty()).map(Secret::new),
            expires_at_ms,
            claims,
        }
    }
}

/// A device code the user enters at the verification URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceCode {
    pub verification_url: String,
    pub user_code: String,
    /// How often to poll.
    pub interval: Duration,
    pub(crate) device_auth_id: String,
    /// The endpoints the code was asked of: the poll and the login use these, whatever the
    /// settings say by then.
    pub(crate) endpoints: LoginEndpoints,
}

/// Longest user code shown (OpenAI's are nine characters, `ABCD-1234`).
const MAX_USER_CODE: usize = 32;

/// The issuer's user code when a person can read and type it: ASCII letters, digits, `-` and
/// spaces, at most [`MAX_USER_CODE`]. Anything else (an escape sequence, a line break) is refused
/// rather than shown on a terminal or in a window.
fn plain_user_code(code: &str) -> Option<&str> {
    let code = code.trim();
    let plain = !code.is_empty()
        && code.len() <= MAX_USER_CODE
        && code.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b' ');
    plain.then_some(code)
}

#[derive(Deserialize)]
struct UserCodeAnswer {
    device_auth_id: String,
    #[serde(alias = "usercode")]
    user_code: String,
    #[serde(default)]
    interval: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct CodeAnswer {
    authorization_code: String,
    code_verifier: String,
}

/// What one poll of a device code found.
#[derive(Debug)]
pub(crate) enum Poll {
    /// Not approved yet.
    Pending,
    Approved(Issued),
}

/// The outcome of a refresh call.
#[derive(Debug)]
pub(crate) struct RefreshAnswer {
    pub verdict: RefreshVerdict,
    pub issued: Option<Issued>,
}

fn call_failed(what: &str, e: reqwest::Error) -> EngineError {
    // reqwest's message names the URL, never a body or header.
    EngineError::Precondition(format!("the {what} request failed: {}", e.without_url()))
}

impl Context {
    /// Asks the issuer for a device code.
    pub(crate) async fn request_device_code(&self, ep: &LoginEndpoints) -> Result<DeviceCode, EngineError> {
        let resp = self
            .http
            .post(ep.user_code_url())
            .json(&serde_json::json!({ "client_id": CLIENT_ID }))
            .send()
            .await
            .map_err(|e| call_failed("device code", e))?;
        let status = resp.status().as_u16();
        if status == 404 {
            return Err(EngineError::Precondition(format!(
                "device code sign-in is not enabled at {} (HTTP 404)",
                ep.issuer
            )));
        }
        if !(200..300).contains(&status) {
            return Err(EngineError::Precondition(format!("the device code request was refused (HTTP {status})")));
        }
        let a: UserCodeAnswer = resp.json().await.map_err(|e| call_failed("device code", e))?;
        let secs = match a.interval {
            Some(serde_json::Value::Number(n)) => n.as_u64(),
            Some(serde_json::Value::String(s)) => s.trim().parse().ok(),
            _ => None,
        };
        let Some(user_code) = plain_user_code(&a.user_code).map(str::to_string) else {
            return Err(EngineError::Precondition(
                "the issuer's device code is not plain text (letters, digits and '-'), so it is not shown; check the \
                 oauth-issuer setting"
                    .into(),
            ));
        };
        Ok(DeviceCode {
            verification_url: ep.verification_url(),
            user_code,
            endpoints: ep.clone(),
            interval: Duration::from_secs(secs.unwrap_or(5).clamp(1, 60)),
            device_auth_id: a.device_auth_id,
        })
    }

    /// Polls a device code once; once approved, exchanges its authorization code for tokens.
    pub(crate) async fn poll_device_code(&self, ep: &LoginEndpoints, code: &DeviceCode) -> Result<Poll, EngineError> {
        let resp = self
            .http
            .post(ep.device_token_url())
            .json(&serde_json::json!({ "device_auth_id": code.device_auth_id, "user_code": code.user_code }))
            .send()
            .await
            .map_err(|e| call_failed("device code poll", e))?;
        let status = resp.status().as_u16();
        if status == 403 || status == 404 {
            return Ok(Poll::Pending);
        }
        if !(200..300).contains(&status) {
            return Err(EngineError::Precondition(format!("the sign-in was not approved (HTTP {status})")));
        }
        let a: CodeAnswer = resp.json().await.map_err(|e| call_failed("device code poll", e))?;
        let (code, verifier) = (Secret::new(a.authorization_code), Secret::new(a.code_verifier));
        self.exchange_code(ep, &code, &verifier, &ep.device_redirect_uri()).await.map(Poll::Approved)
    }

    /// Exchanges an authorization code for tokens with its PKCE `verifier` and the `redirect_uri`
    /// it was issued for (the device code's and the browser sign-in's last step).
    pub(crate) async fn exchange_code(
        &self,
        ep: &LoginEndpoints,
        code: &Secret,
        verifier: &Secret,
        redirect_uri: &str,
    ) -> Result<Issued, EngineError> {
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code.expose()),
            ("redirect_uri", redirect_uri),
            ("client_id", CLIENT_ID),
            ("code_verifier", verifier.expose()),
        ];
        let resp = self.http.post(&ep.token_url).form(&form).send().await.map_err(|e| call_failed("token", e))?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(EngineError::Precondition(format!("the code exchange was refused (HTTP {status})")));
        }
        let a: TokenAnswer = resp.json().await.map_err(|e| call_failed("token", e))?;
        if a.refresh_token.as_deref().is_none_or(str::is_empty) {
            return Err(EngineError::Precondition(
                "the sign-in gave no refresh token; Switchyard cannot keep it".into(),
            ));
        }
        Ok(Issued::from_answer(a, self.now_ms()))
    }

    /// One refresh call with `refresh`, classified (core `classify_refresh`).
    pub(crate) async fn call_refresh(&self, ep: &LoginEndpoints, refresh: &Secret) -> RefreshAnswer {
        let body = serde_json::json!({
            "client_id": CLIENT_ID,
            "grant_type": "refresh_token",
            "refresh_token": refresh.expose(),
            "scope": REFRESH_SCOPE,
        });
        let sent = self.http.post(&ep.token_url).json(&body).send().await;
        drop(body);
        let now = self.now_ms();
        let resp = match sent {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e.without_url(), "login refresh: no answer from the token endpoint");
                return RefreshAnswer { verdict: classify_refresh(None, None, None, now), issued: None };
            }
        };
        let status = resp.status().as_u16();
        let retry_after =
            resp.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
        let bytes = resp.bytes().await.unwrap_or_default();
        if (200..300).contains(&status) {
            return match serde_json::from_slice::<TokenAnswer>(&bytes) {
                Ok(a) => RefreshAnswer { verdict: RefreshVerdict::Renewed, issued: Some(Issued::from_answer(a, now)) },
                // A success we cannot read is trouble, not a refusal: the old token may stand.
                Err(_) => RefreshAnswer { verdict: classify_refresh(None, None, None, now), issued: None },
            };
        }
        let code = error_code(&bytes);
        RefreshAnswer { verdict: classify_refresh(Some(status), code.as_deref(), retry_after, now), issued: None }
    }
}

#[cfg(test)]
mod tests {
    use super::error_code;

    #[test]
    fn the_error_field_is_read_as_a_string_or_an_objects_code() {
        assert_eq!(error_code(br#"{"error":"invalid_grant"}"#).as_deref(), Some("invalid_grant"), "RFC 6749");
        assert_eq!(
            error_code(br#"{"error":{"code":"refresh_token_reused","message":"x"}}"#).as_deref(),
            Some("refresh_token_reused"),
            "OpenAI's object"
        );
        assert_eq!(error_code(b"<html>"), None, "not JSON");
    }
}
