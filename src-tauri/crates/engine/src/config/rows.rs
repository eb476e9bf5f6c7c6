//! Decoding store rows into domain values and views.

use std::collections::BTreeMap;
use switchyard_core::credential_health::{CredentialFacts, CredentialHealth, Refresh};
use switchyard_core::states::{CredentialHealthState, CredentialPresence, OfficialClient, ProfileKind};

use switchyard_core::{BasisFingerprint, Header, Protocol};
use switchyard_store::connections::ConnectionRow;
use switchyard_store::profiles::ProfileRow;
use switchyard_vault::Locator;

use crate::clock::rfc3339;
use crate::context::Context;
use crate::error::EngineError;
use crate::views::{small, ConnectionView, CredentialHealthView, HeaderView, ModelMapping, ProfileView};

/// The decoded definition of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Definition {
    pub protocol: Protocol,
    pub base_url: String,
    pub headers: Vec<Header>,
    pub models: Vec<String>,
    pub mapping: BTreeMap<String, String>,
}

impl Definition {
    pub fn decode(row: &ConnectionRow) -> Result<Self, EngineError> {
        let corrupt = |what: &str, e: &dyn std::fmt::Display| {
            EngineError::Internal(format!("connection '{}' has a corrupt {what}: {e}", row.slug))
        };
        Ok(Definition {
            protocol: row.protocol.parse().map_err(|e| corrupt("protocol", &e))?,
            base_url: row.base_url.clone(),
            headers: serde_json::from_str(&row.headers_json).map_err(|e| corrupt("header list", &e))?,
            models: serde_json::from_str(&row.models_json).map_err(|e| corrupt("model list", &e))?,
            mapping: serde_json::from_str(&row.mapping_json).map_err(|e| corrupt("mapping", &e))?,
        })
    }

    pub fn fingerprint(&self) -> BasisFingerprint {
        BasisFingerprint::compute(self.protocol, &self.base_url, &self.headers)
    }

    /// The row's columns.
    pub fn encode(&self) -> Result<switchyard_store::connections::Definition, EngineError> {
        let json = |v: Result<String, serde_json::Error>| v.map_err(|e| EngineError::Internal(e.to_string()));
        Ok(switchyard_store::connections::Definition {
            protocol: self.protocol.as_str().to_string(),
            base_url: self.base_url.clone(),
            headers_json: json(serde_json::to_string(&self.headers))?,
            models_json: json(serde_json::to_string(&self.models))?,
            mapping_json: json(serde_json::to_string(&self.mapping))?,
            basis_fingerprint: self.fingerprint().0,
        })
    }
}

pub(crate) fn connection_view(row: &ConnectionRow, profile_count: usize) -> Result<ConnectionView, EngineError> {
    let def = Definition::decode(row)?;
    Ok(ConnectionView {
        id: row.id.clone(),
        slug: row.slug.clone(),
        protocol: def.protocol.as_str().to_string(),
        base_url: def.base_url,
        headers: def.headers.into_iter().map(|h| HeaderView { name: h.name, value: h.value }).collect(),
        models: def.models,
        mapping: def.mapping.into_iter().map(|(from, to)| ModelMapping { from, to }).collect(),
        basis_fingerprint: row.basis_fingerprint.clone(),
        routing_mode: row.routing_mode.parse()?,
        routing_state: row.routing_state.parse()?,
        revision: small(row.revision),
        profile_count: small(i64::try_from(profile_count).unwrap_or(i64::MAX)),
        created_at: rfc3339(row.created_at),
        updated_at: rfc3339(row.updated_at),
    })
}

impl Context {
    /// The view of a profile row with its credential's presence; its health is judged at the
    /// engine clock's now.
    pub(crate) fn profile_view(&self, slug: &str, row: &ProfileRow, credential: CredentialPresence) -> ProfileView {
        let facts = credential_facts(row);
        let present = credential == CredentialPresence::Present;
        let health = switchyard_core::credential_health::credential_health(&facts, present, self.now_ms());
        let config_dir = (facts.kind == ProfileKind::External).then(|| self.config_dir(&row.id).display().to_string());
        profile_view(row, credential, self.health_view(health, facts.kind, slug, &row.label), config_dir)
    }

    /// `health` as front ends show it for profile `label` of `slug`: a login only a sign-in brings
    /// back (an owned login expired or never signed in, an official CLI's login missing or
    /// expired) ends with the command that does it.
    pub(crate) fn health_view(
        &self,
        health: CredentialHealth,
        kind: ProfileKind,
        slug: &str,
        label: &str,
    ) -> CredentialHealthView {
        let mut view = CredentialHealthView::from(health);
        let signs_in = matches!(kind, ProfileKind::Oauth | ProfileKind::External);
        if signs_in && matches!(health.state, CredentialHealthState::Expired | CredentialHealthState::Missing) {
            if let Some(reason) = view.reason.as_mut() {
                reason.push_str(&format!(": {}", self.login_command(slug, label)));
            }
        }
        view
    }
}

/// What the row says about its credential (kind and expiry). Only the engine writes these
/// columns, always with a contract word; the table's CHECK holds them to it.
/// An owned login's refresh facts: a login item is there to refresh once it has signed in
/// (generation ≥ 1), and the last refresh's outcome.
pub(crate) fn credential_facts(row: &ProfileRow) -> CredentialFacts {
    let kind = ProfileKind::from_word(&row.kind).unwrap_or(ProfileKind::ApiKey);
    let refresh = (kind == ProfileKind::Oauth).then(|| Refresh {
        possible: row.login_generation > 0,
        last: row.login_outcome.as_deref().and_then(switchyard_core::login::outcome_from_word),
    });
    CredentialFacts { kind, expires_at_ms: row.expires_at, refresh }
}

/// The official client of a `token` or `external` row.
pub(crate) fn client_of(row: &ProfileRow) -> Option<OfficialClient> {
    row.client.as_deref().and_then(OfficialClient::from_word)
}

fn profile_view(
    row: &ProfileRow,
    credential: CredentialPresence,
    credential_health: crate::views::CredentialHealthView,
    config_dir: Option<String>,
) -> ProfileView {
    ProfileView {
        id: row.id.clone(),
        connection_id: row.connection_id.clone(),
        label: row.label.clone(),
        weight: small(row.weight),
        priority: small(row.priority),
        enabled: row.enabled,
        primary: row.is_primary,
        credential,
        credential_revision: small(row.credential_revision),
        revision: small(row.revision),
        created_at: rfc3339(row.created_at),
        updated_at: rfc3339(row.updated_at),
        kind: ProfileKind::from_word(&row.kind).unwrap_or(ProfileKind::ApiKey),
        credential_health,
        client: client_of(row),
        config_dir,
        login: login_view(row),
    }
}

/// An `oauth` row's login facts.
fn login_view(row: &ProfileRow) -> Option<crate::views::LoginView> {
    (ProfileKind::from_word(&row.kind) == Some(ProfileKind::Oauth)).then(|| crate::views::LoginView {
        account_id: row.login_account_id.clone(),
        plan: row.login_plan.clone(),
        generation: small(row.login_generation),
        refreshed_at: row.login_refreshed_at.map(rfc3339),
        last_refresh: row.login_outcome.clone(),
        blocked_until: row.login_blocked_until.map(rfc3339),
    })
}

pub(crate) fn locator_of(row: &ProfileRow) -> Option<Locator> {
    match (&row.locator_service, &row.locator_account) {
        (Some(service), Some(account)) => Some(Locator { service: service.clone(), account: account.clone() }),
        _ => None,
    }
}
