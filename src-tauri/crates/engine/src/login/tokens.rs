//! An owned login's keychain item: one JSON object per profile, `{access, refresh, expires_at,
//! account_id, generation}`, kept whole in the keychain and never anywhere else. Here it is read
//! into [`LoginTokens`] (the tokens as [`Secret`]s, so nothing prints them) and written back; the
//! id token's claims give the ChatGPT account and plan (`https://api.openai.com/auth`), an access
//! token's `exp` claim its expiry when the token endpoint does not say. The id token itself is not
//! kept: what Switchyard needs from it is the account.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use switchyard_vault::Secret;

use crate::error::EngineError;
use crate::login::endpoints::LoginEndpoints;

/// The claim OpenAI's id token keeps the ChatGPT account under.
pub const AUTH_CLAIM: &str = "https://api.openai.com/auth";

/// An owned login's tokens and what goes with them.
#[derive(Debug)]
pub(crate) struct LoginTokens {
    pub access: Secret,
    pub refresh: Secret,
    /// The access token's expiry (unix ms).
    pub expires_at_ms: i64,
    pub account_id: Option<String>,
    /// The sign-in this login came from (`profiles.login_generation`).
    pub generation: i64,
    /// Where it was signed in: its tokens go nowhere else.
    pub endpoints: LoginEndpoints,
}

/// The keychain item as stored (field names are the item's format).
#[derive(Serialize, Deserialize)]
struct Item<'a> {
    access: &'a str,
    refresh: &'a str,
    expires_at: i64,
    #[serde(default)]
    account_id: Option<String>,
    #[serde(default)]
    generation: i64,
    /// Where the login was signed in (absent in items written before logins were bound: read
    /// as [`LoginEndpoints::defaults`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    endpoints: Option<LoginEndpoints>,
}

impl LoginTokens {
    /// The item to store in the keychain.
    pub fn to_secret(&self) -> Result<Secret, EngineError> {
        let item = Item {
            access: self.access.expose(),
            refresh: self.refresh.expose(),
            expires_at: self.expires_at_ms,
            account_id: self.account_id.clone(),
            generation: self.generation,
            endpoints: Some(self.endpoints.clone()),
        };
        serde_json::to_string(&item)
            .map(Secret::new)
            .map_err(|e| EngineError::Internal(format!("cannot encode a login item: {e}")))
    }

    /// The tokens of a keychain item (`None`: not a login item — e.g. an API key).
    pub fn from_secret(secret: &Secret) -> Option<Self> {
        let item: Item<'_> = serde_json::from_str(secret.expose()).ok()?;
        if item.access.is_empty() || item.refresh.is_empty() {
            return None;
        }
        Some(LoginTokens {
            access: Secret::new(item.access),
            refresh: Secret::new(item.refresh),
            expires_at_ms: item.expires_at,
            account_id: item.account_id,
            generation: item.generation,
            endpoints: item.endpoints.unwrap_or_else(LoginEndpoints::defaults),
        })
    }

    /// A short fingerprint of the refresh token (SHA-256, 16 hex digits): what a refresh is
    /// compare-and-swap on. Never the token, and never logged.
    pub fn refresh_mark(&self) -> String {
        mark_of(self.refresh.expose())
    }
}

/// The fingerprint [`LoginTokens::refresh_mark`] gives for `refresh`.
pub(crate) fn mark_of(refresh: &str) -> String {
    let digest = Sha256::digest(refresh.as_bytes());
    hex::encode(&digest[..8])
}

/// What the id token says about the account: `chatgpt_account_id` and `chatgpt_plan_type` under
/// [`AUTH_CLAIM`]. The signature is not checked: the token came straight from the issuer over
/// TLS, and nothing here grants access — the provider checks every request.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct IdClaims {
    pub account_id: Option<String>,
    pub plan: Option<String>,
}

pub(crate) fn id_claims(id_token: &str) -> IdClaims {
    let Some(payload) = jwt_payload(id_token) else { return IdClaims::default() };
    let auth = payload.get(AUTH_CLAIM);
    let text = |key: &str| auth.and_then(|a| a.get(key)).and_then(|v| v.as_str()).map(str::to_string);
    IdClaims { account_id: text("chatgpt_account_id"), plan: text("chatgpt_plan_type") }
}

/// The `exp` claim (unix seconds) of a JWT access token, if it is one.
pub(crate) fn jwt_exp(token: &str) -> Option<i64> {
    jwt_payload(token)?.get("exp")?.as_i64()
}

fn jwt_payload(token: &str) -> Option<serde_json::Value> {
    let mut parts = token.split('.');
    let (_header, payload) = (parts.next()?, parts.next()?);
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(payload: &serde_json::Value) -> String {
        let enc = |v: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
        format!("{}.{}.sig", enc(br#"{"alg":"none"}"#), enc(payload.to_string().as_bytes()))
    }

    #[test]
    fn an_item_round_trips_and_its_debug_shows_no_token() {
        let t = LoginTokens {
            access: Secret::new("acc-CANARY"),
            refresh: Secret::new("ref-CANARY"),
            expires_at_ms: 5,
            account_id: Some("acct_1".into()),
            generation: 3,
            endpoints: LoginEndpoints {
                issuer: "http://127.0.0.1:9".into(),
                token_url: "http://127.0.0.1:9/oauth/token".into(),
                backend_url: "http://127.0.0.1:9/backend-api/codex".into(),
            },
        };
        let back = LoginTokens::from_secret(&t.to_secret().unwrap_or_else(|_| Secret::new(""))).map(|b| {
            (b.access.expose().to_string(), b.refresh.expose().to_string(), b.expires_at_ms, b.account_id, b.generation)
        });
        assert_eq!(
            back,
            Some(("acc-CANARY".into(), "ref-CANARY".into(), 5, Some("acct_1".into()), 3)),
            "every field survives the keychain"
        );
        let bound = LoginTokens::from_secret(&t.to_secret().unwrap_or_else(|_| Secret::new(""))).map(|b| b.endpoints);
        assert_eq!(bound.as_ref(), Some(&t.endpoints), "and where it was signed in");
        assert!(!format!("{t:?}").contains("CANARY"), "Debug never shows a token");
        assert_eq!(
            LoginTokens::from_secret(&Secret::new("sk-plain-api-key")).map(|t| t.generation),
            None,
            "a key is no item"
        );
    }

    #[test]
    fn an_item_written_before_logins_were_bound_reads_as_signed_in_with_the_defaults() {
        let old = Secret::new(r#"{"access":"a","refresh":"r","expires_at":5,"account_id":null,"generation":1}"#);
        let read = LoginTokens::from_secret(&old).map(|t| t.endpoints);
        assert_eq!(read, Some(LoginEndpoints::defaults()), "the endpoints every login used before the settings");
    }

    #[test]
    fn the_account_and_plan_come_from_the_auth_claim_and_exp_from_the_access_token() {
        let id = jwt(&serde_json::json!({AUTH_CLAIM: {"chatgpt_account_id": "acct_9", "chatgpt_plan_type": "pro"}}));
        assert_eq!(
            id_claims(&id),
            IdClaims { account_id: Some("acct_9".into()), plan: Some("pro".into()) },
            "the account is read from the namespaced claim"
        );
        assert_eq!(id_claims("not-a-jwt"), IdClaims::default(), "an opaque token names nothing");
        assert_eq!(jwt_exp(&jwt(&serde_json::json!({"exp": 1_900_000_000}))), Some(1_900_000_000), "exp read");
        assert_eq!(mark_of("a").len(), 16, "the mark is short");
        assert_ne!(mark_of("a"), mark_of("b"), "and tells refresh tokens apart");
    }
}
