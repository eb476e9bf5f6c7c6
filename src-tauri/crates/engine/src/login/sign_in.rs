//! Signing an owned login in with a device code (docs/design.md, section 14): the front end asks
//! for a code ([`Engine::oauth_sign_in_start`]), shows its URL and code, and polls
//! ([`Engine::oauth_sign_in_poll`]) at the code's interval until the user approved it. The
//! approved tokens become the profile's one keychain item through the rotation path (journal →
//! keychain → row swap → old item deleted), with a new login generation and a new credential
//! revision in the same transaction: a sign-in is a new credential, a refresh is not. Signing in
//! again keeps the profile's id, weight, order and history.

use switchyard_core::states::ProfileKind;
use switchyard_providers::dialect;
use switchyard_store::profiles::{ProfileRow, SignIn};

use crate::config::inputs::{NewCredential, NewProfile};
use crate::config::rows::credential_facts;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::login::endpoints::LoginEndpoints;
use crate::login::token_endpoint::{DeviceCode, Issued, Poll};
use crate::login::tokens::LoginTokens;
use crate::views::{DeviceCodeView, ProfileView};

impl Engine {
    /// Whether `profile login` on `slug`'s `profile` signs an owned login in: `--kind oauth`
    /// was given, or the profile exists and is an `oauth` one. Another `--kind` is refused (only
    /// `oauth` profiles are created by signing in; the others are added with `profile add`).
    pub async fn login_is_owned(&self, slug: &str, profile: &str, kind: Option<&str>) -> Result<bool, EngineError> {
        match kind {
            Some("oauth") => return Ok(true),
            Some(other) => {
                return Err(EngineError::Invalid(switchyard_core::InvalidInput::new(
                    "kind",
                    format!(
                        "profile login creates only oauth profiles ('{other}' profiles are added with profile add)"
                    ),
                )))
            }
            None => {}
        }
        let connection = self.connection_by_slug(slug).await?;
        let row = self.profile_by_ref(&connection, profile).await?;
        Ok(credential_facts(&row).kind == ProfileKind::Oauth)
    }

    /// Asks for a device code for `slug`'s `oauth` profile `new.label`, adding the profile first
    /// (signed out) when the connection has none of that name.
    pub async fn oauth_sign_in_begin(&self, slug: &str, new: NewProfile) -> Result<DeviceCode, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        if self.profile_by_ref(&connection, &new.label).await.is_err() {
            let kind = NewCredential { kind: Some("oauth".into()), client: None, expires_at: None };
            let label = new.label.clone();
            self.profile_add_kind(slug, new, kind, None).await?;
            tracing::info!(%slug, %label, "oauth profile added, signed out");
            return self.oauth_sign_in_start(slug, &label).await;
        }
        self.oauth_sign_in_start(slug, &new.label).await
    }

    /// Asks the issuer for a device code to sign `slug`'s `oauth` profile in.
    pub async fn oauth_sign_in_start(&self, slug: &str, profile: &str) -> Result<DeviceCode, EngineError> {
        self.oauth_row(slug, profile).await?;
        let endpoints = self.login_endpoints().await?;
        self.request_device_code(&endpoints).await
    }

    /// Polls `code` once: `None` while the user has not approved it; once approved, the profile
    /// is signed in and its view returned.
    pub async fn oauth_sign_in_poll(
        &self,
        slug: &str,
        profile: &str,
        code: &DeviceCode,
    ) -> Result<Option<ProfileView>, EngineError> {
        // The code's own endpoints: a setting changed since it was asked for moves nothing.
        match self.poll_device_code(&code.endpoints, code).await? {
            Poll::Pending => Ok(None),
            Poll::Approved(issued) => {
                let row = self.oauth_row(slug, profile).await?;
                self.write_sign_in(slug, &row, issued, &code.endpoints).await.map(Some)
            }
        }
    }

    /// The desktop's sign-in (no terminal): a device code for `slug`'s `oauth` profile, held by
    /// the engine (the front end shows its URL and code and calls
    /// [`Engine::oauth_device_check`] at its interval).
    pub async fn oauth_device_begin(&self, slug: &str, profile: &str) -> Result<DeviceCodeView, EngineError> {
        let row = self.oauth_row(slug, profile).await?;
        let code = self.oauth_sign_in_start(slug, profile).await?;
        let view = DeviceCodeView {
            verification_url: code.verification_url.clone(),
            user_code: code.user_code.clone(),
            interval_secs: i32::try_from(code.interval.as_secs()).unwrap_or(5),
        };
        self.logins.hold_code(&row.id, code);
        Ok(view)
    }

    /// Checks the held device code once: the signed-in profile, or `precondition` while it is not
    /// approved yet (or no sign-in was started).
    pub async fn oauth_device_check(&self, slug: &str, profile: &str) -> Result<ProfileView, EngineError> {
        let row = self.oauth_row(slug, profile).await?;
        let Some(code) = self.logins.held_code(&row.id) else {
            return Err(EngineError::Precondition(format!("no sign-in of '{}' is under way; start one", row.label)));
        };
        match self.oauth_sign_in_poll(slug, profile, &code).await {
            Ok(Some(view)) => {
                self.logins.drop_code(&row.id);
                Ok(view)
            }
            Ok(None) => Err(EngineError::Precondition(format!(
                "'{}' is not signed in yet: enter the code at {}",
                row.label, code.verification_url
            ))),
            Err(e) => {
                self.logins.drop_code(&row.id);
                Err(e)
            }
        }
    }

    /// Writes an approved sign-in onto `row`: a new generation, the tokens in a new keychain
    /// item bound to the `endpoints` it was signed in with, the account and plan on the row.
    pub(crate) async fn write_sign_in(
        &self,
        slug: &str,
        row: &ProfileRow,
        issued: Issued,
        endpoints: &LoginEndpoints,
    ) -> Result<ProfileView, EngineError> {
        let Some(refresh) = issued.refresh else {
            return Err(EngineError::Precondition(
                "the sign-in gave no refresh token; Switchyard cannot keep it".into(),
            ));
        };
        let generation = row.login_generation + 1;
        let tokens = LoginTokens {
            access: issued.access,
            refresh,
            expires_at_ms: issued.expires_at_ms,
            account_id: issued.claims.account_id.clone(),
            generation,
            endpoints: endpoints.clone(),
        };
        let sign_in =
            SignIn { account_id: issued.claims.account_id.as_deref(), plan: issued.claims.plan.as_deref(), generation };
        let view =
            self.swap_credential(slug, row, tokens.to_secret()?, Some(tokens.expires_at_ms), Some(sign_in)).await?;
        tracing::info!(profile = %row.id, generation, "owned login signed in");
        Ok(view)
    }

    /// `slug`'s profile `profile`, which must be an `oauth` profile of an OpenAI connection.
    pub(crate) async fn oauth_row(&self, slug: &str, profile: &str) -> Result<ProfileRow, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        if !dialect::of(crate::views::protocol_of(&connection)).has_owned_logins() {
            return Err(EngineError::Precondition(format!(
                "'{slug}' is an {} connection: Switchyard owns logins only for OpenAI (ChatGPT/Codex) accounts; \
                 use a token or external profile for other subscriptions",
                connection.protocol
            )));
        }
        let row = self.profile_by_ref(&connection, profile).await?;
        if credential_facts(&row).kind != ProfileKind::Oauth {
            return Err(EngineError::Precondition(format!(
                "'{}' is a {} profile, not an oauth one",
                row.label,
                credential_facts(&row).kind
            )));
        }
        Ok(row)
    }
}
