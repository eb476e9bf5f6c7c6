//! Where an owned login talks to: the issuer (device code and code exchange), the token endpoint
//! (refresh) and the ChatGPT backend its requests go to. Each is a setting with the provider's
//! real default (`oauth-issuer`, `oauth-token-url`, `codex-backend-url`), so tests point them at
//! the mock provider; the client id is Codex's own, because this is Codex's sign-in.

use crate::context::Context;
use crate::error::EngineError;
use crate::settings::{Scope, CODEX_BACKEND, OAUTH_ISSUER, OAUTH_TOKEN_URL};

/// OpenAI's issuer for ChatGPT sign-ins.
pub const DEFAULT_ISSUER: &str = "https://auth.openai.com";

/// The OAuth client id of Codex's ChatGPT sign-in (the owned login signs in as Codex does).
pub const CLIENT_ID: &str = "app_EMoamEEZ73f0CkXaXp7hrann";

/// The scopes a refresh asks for (Codex's).
pub const REFRESH_SCOPE: &str = "openid profile email";

/// The endpoints of one sign-in or refresh, read once from the settings. A login is bound to
/// the ones it was signed in with (kept in its keychain item): its refresh token goes to no other
/// token endpoint and its access token to no other backend ([`EndpointMoved`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LoginEndpoints {
    /// Without a trailing slash.
    pub issuer: String,
    pub token_url: String,
    /// Where an owned login's requests go (`…/responses`); without a trailing slash.
    pub backend_url: String,
}

impl LoginEndpoints {
    /// The endpoints when no setting names any: what a login item written before logins were
    /// bound was signed in with (the settings exist for tests).
    pub(crate) fn defaults() -> Self {
        LoginEndpoints {
            issuer: DEFAULT_ISSUER.to_string(),
            token_url: format!("{DEFAULT_ISSUER}/oauth/token"),
            backend_url: crate::config::accounts::codex_backend_url(),
        }
    }

    pub fn user_code_url(&self) -> String {
        format!("{}/api/accounts/deviceauth/usercode", self.issuer)
    }

    pub fn device_token_url(&self) -> String {
        format!("{}/api/accounts/deviceauth/token", self.issuer)
    }

    /// Where the user enters the code.
    pub fn verification_url(&self) -> String {
        format!("{}/codex/device", self.issuer)
    }

    /// The redirect URI a device code's authorization code is exchanged with.
    pub fn device_redirect_uri(&self) -> String {
        format!("{}/deviceauth/callback", self.issuer)
    }
}

/// A setting names another endpoint than a login was signed in with: its tokens do not go there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EndpointMoved {
    /// The setting to set back.
    pub setting: &'static str,
    pub signed_in_with: String,
    pub now: String,
}

impl EndpointMoved {
    /// The token endpoint a refresh would go to now, when it is not the login's.
    pub(crate) fn token_url(bound: &LoginEndpoints, now: &LoginEndpoints) -> Option<Self> {
        (bound.token_url != now.token_url).then(|| EndpointMoved {
            setting: "oauth-token-url",
            signed_in_with: bound.token_url.clone(),
            now: now.token_url.clone(),
        })
    }

    /// The backend an attempt would go to now, when it is not the login's.
    pub(crate) fn backend(bound: &LoginEndpoints, now: &str) -> Option<Self> {
        (bound.backend_url != now).then(|| EndpointMoved {
            setting: "codex-backend-url",
            signed_in_with: bound.backend_url.clone(),
            now: now.to_string(),
        })
    }
}

impl Context {
    /// The login endpoints now: each setting, else its default (the token endpoint defaults to
    /// the issuer's `/oauth/token`; the backend to `SWITCHYARD_CODEX_BACKEND_URL`, else ChatGPT's).
    pub async fn login_endpoints(&self) -> Result<LoginEndpoints, EngineError> {
        let trim = |s: String| s.trim().trim_end_matches('/').to_string();
        let issuer = self.setting(&OAUTH_ISSUER, Scope::Global).await?.map(trim).unwrap_or(DEFAULT_ISSUER.into());
        let token_url = self
            .setting(&OAUTH_TOKEN_URL, Scope::Global)
            .await?
            .map(trim)
            .unwrap_or_else(|| format!("{issuer}/oauth/token"));
        let backend_url = self
            .setting(&CODEX_BACKEND, Scope::Global)
            .await?
            .map(trim)
            .unwrap_or_else(crate::config::accounts::codex_backend_url);
        Ok(LoginEndpoints { issuer, token_url, backend_url })
    }
}
