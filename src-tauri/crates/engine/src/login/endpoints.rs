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

/// The endpoints of one sign-in or refresh, read once from the settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginEndpoints {
    /// Without a trailing slash.
    pub issuer: String,
    pub token_url: String,
    /// Where an owned login's requests go (`…/responses`); without a trailing slash.
    pub backend_url: String,
}

impl LoginEndpoints {
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
