//! The admin use cases the desktop and the console share beyond the connection screens: relay
//! users from their forms' input (a token returned once, as [`NewUserToken`]), limits from a
//! form, and the attempts of one user. Thin: each is the CLI's use case with the form's input
//! turned into the engine's own.

use switchyard_core::limit::{Measure, Period};
use switchyard_core::InvalidInput;

use crate::config::limits::NewLimit;
use crate::config::relay_users::{Role, UserGrant};
use crate::context::Context;
use crate::error::EngineError;
use crate::views::{AttemptView, LimitInput, LimitView, NewUserToken, RelayUserInput, RelayUserView};

/// How many of a connection's newest rows a user's attempts are picked from.
pub const USER_ATTEMPTS_SCAN: i64 = 5_000;

impl RelayUserInput {
    /// The engine's grant, as `relay users add|edit` and the forms give it: an empty entry in a
    /// list is dropped (`--connections ''` means all, as an omitted scope does).
    pub fn grant(&self) -> Result<UserGrant, EngineError> {
        let clean = |v: &Option<Vec<String>>| v.as_ref().map(|v| v.iter().filter(|x| !x.is_empty()).cloned().collect());
        Ok(UserGrant {
            role: self.role.as_deref().map(Role::parse).transpose()?,
            connections: clean(&self.connections),
            models: clean(&self.models),
            expires: if self.no_expiry { Some(None) } else { self.expires.clone().map(Some) },
        })
    }
}

impl LimitInput {
    pub fn new_limit(&self) -> Result<NewLimit, EngineError> {
        let measure = Measure::parse(&self.measure)
            .ok_or_else(|| InvalidInput::new("measure", "must be requests, tokens, usd or concurrency"))?;
        let period = match self.period.as_deref().filter(|p| !p.is_empty()) {
            None => None,
            Some(p) => Some(
                Period::parse(p).ok_or_else(|| InvalidInput::new("per", "must be minute, hour, day, week or month"))?,
            ),
        };
        Ok(NewLimit {
            scope: self.scope.trim().to_string(),
            measure,
            amount: self.amount,
            period,
            id: self.id.clone().filter(|i| !i.trim().is_empty()),
        })
    }
}

impl Context {
    /// Adds a user from a form: their token, shown once.
    pub async fn relay_user_add_input(&self, name: &str, input: &RelayUserInput) -> Result<NewUserToken, EngineError> {
        let token = self.relay_user_add_with(name, &input.grant()?).await?;
        Ok(NewUserToken { user: name.to_string(), token: token.expose().to_string() })
    }

    /// Edits a user from a form (CAS on `if_revision`).
    pub async fn relay_user_edit_input(
        &self,
        name: &str,
        input: &RelayUserInput,
        if_revision: Option<i64>,
    ) -> Result<RelayUserView, EngineError> {
        self.relay_user_edit(name, &input.grant()?, if_revision).await
    }

    /// A new token for a user, shown once.
    pub async fn relay_user_rotate_token(&self, name: &str) -> Result<NewUserToken, EngineError> {
        let token = self.relay_user_rotate(name).await?;
        Ok(NewUserToken { user: name.to_string(), token: token.expose().to_string() })
    }

    /// Sets a limit from a form.
    pub async fn limit_set_input(&self, input: &LimitInput) -> Result<LimitView, EngineError> {
        self.limit_set(&input.new_limit()?).await
    }

    /// The newest `limit` attempts of a connection, of `user` only when named (from the newest
    /// [`USER_ATTEMPTS_SCAN`] rows).
    pub async fn attempts_of(
        &self,
        slug: &str,
        limit: i64,
        user: Option<&str>,
    ) -> Result<Vec<AttemptView>, EngineError> {
        let Some(user) = user.filter(|u| !u.is_empty()) else { return self.attempts(slug, limit).await };
        let rows = self.attempts(slug, USER_ATTEMPTS_SCAN).await?;
        let wanted = usize::try_from(limit).unwrap_or(0);
        Ok(rows.into_iter().filter(|r| r.user.as_deref() == Some(user)).take(wanted).collect())
    }
}
