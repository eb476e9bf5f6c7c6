//! Profile use cases: add (an API key or token with its secret, or an external profile with
//! its config directory), list, show, edit (CAS; primary promotion), remove (with its keychain
//! entry or config directory). Rotation lives in `credentials.rs`, sign-in in `accounts.rs`.

use switchyard_core::profile::{credential_spec, validate_token, CredentialSpec};
use switchyard_core::routing::ResetCause;
use switchyard_core::states::{CredentialPresence, ProfileKind};
use switchyard_core::validate::{validate_label, validate_priority, validate_weight};
use switchyard_core::InvalidInput;
use switchyard_providers::dialect;
use switchyard_store::{circuits, journal, profiles};
use switchyard_vault::Secret;

use crate::config::credentials::settle_staged;
use crate::config::inputs::{NewCredential, NewProfile, ProfileEdit};
use crate::config::rows::{credential_facts, locator_of};
use crate::context::Context;
use crate::error::EngineError;
use crate::views::{ProfileView, Removal};

impl Context {
    /// Adds an API-key profile with its secret. The first profile of a connection becomes its
    /// primary. Adding never changes the routing mode (docs/design.md, invariant 2).
    pub async fn profile_add(&self, slug: &str, new: NewProfile, secret: Secret) -> Result<ProfileView, EngineError> {
        self.profile_add_kind(slug, new, NewCredential::default(), Some(secret)).await
    }

    /// Adds a profile of any creatable kind: `api_key` and `token` with their secret (a token's
    /// shape is checked, never echoed), `external` without one — its config directory is
    /// created (mode 0700) and it stays `missing` until `profile login`.
    pub async fn profile_add_kind(
        &self,
        slug: &str,
        new: NewProfile,
        credential: NewCredential,
        secret: Option<Secret>,
    ) -> Result<ProfileView, EngineError> {
        let spec = credential_spec(
            credential.kind.as_deref(),
            credential.client.as_deref(),
            credential.expires_at.as_deref(),
            Some(self.now_ms()),
        )?;
        let secret = match (spec.kind, secret) {
            (ProfileKind::External, Some(_)) => {
                return Err(EngineError::Invalid(InvalidInput::new(
                    "secret",
                    format!("an external profile takes no secret: the official CLI signs in with switchyard profile login {slug} LABEL"),
                )))
            }
            (ProfileKind::External, None) => None,
            // An owned login is created signed out: `profile login` signs it in.
            (ProfileKind::Oauth, None) => None,
            (ProfileKind::Oauth, Some(_)) => {
                return Err(EngineError::Invalid(InvalidInput::new(
                    "secret",
                    format!("an oauth profile takes no secret: Switchyard signs it in with switchyard profile login {slug} LABEL"),
                )))
            }
            (_, None) => {
                return Err(EngineError::Invalid(InvalidInput::new(
                    "secret",
                    "required: pass --secret-stdin or --secret-env NAME",
                )))
            }
            (kind, Some(secret)) => {
                if let (ProfileKind::Token, Some(client)) = (kind, spec.client) {
                    validate_token(secret.expose(), client)?;
                }
                Some(secret)
            }
        };
        validate_label(&new.label)?;
        let weight = new.weight.unwrap_or(1);
        validate_weight(weight)?;
        if let Some(p) = new.priority {
            validate_priority(p)?;
        }
        let connection = self.connection_by_slug(slug).await?;
        if spec.kind == ProfileKind::Oauth && !dialect::of(crate::views::protocol_of(&connection)).has_owned_logins() {
            return Err(EngineError::Invalid(InvalidInput::new(
                "kind",
                format!(
                    "oauth (a login Switchyard owns) is for OpenAI connections only (ChatGPT/Codex accounts); '{slug}' is {}: \
                     use token or external for its subscriptions",
                    connection.protocol
                ),
            )));
        }
        if let Some(client) = spec.client {
            if client.protocol().as_str() != connection.protocol {
                return Err(EngineError::Invalid(InvalidInput::new(
                    "client",
                    format!(
                        "{client} speaks the {} protocol; connection '{slug}' is {}",
                        client.protocol(),
                        connection.protocol
                    ),
                )));
            }
        }
        let existing = {
            let mut conn = self.store.acquire().await?;
            profiles::for_connection(&mut conn, &connection.id).await?
        };
        if existing.iter().any(|p| p.label == new.label) {
            return Err(EngineError::Duplicate { field: "label", value: new.label });
        }
        let priority = new.priority.unwrap_or_else(|| existing.iter().map(|p| p.priority + 1).max().unwrap_or(0));
        let profile_id = format!("p_{}", uuid::Uuid::new_v4().simple());
        if spec.kind == ProfileKind::External {
            self.create_config_dir(&profile_id)?;
        }
        let staged = self.stage_new_secret(&profile_id, secret).await?;

        let written: Result<(), EngineError> = async {
            let _held = self.lock_data_dir().await?;
            let now = self.now_ms();
            let mut tx = self.store.begin().await?;
            let has_primary = profiles::for_connection(&mut tx, &connection.id).await?.iter().any(|p| p.is_primary);
            let row = profiles::NewProfile {
                id: &profile_id,
                connection_id: &connection.id,
                label: &new.label,
                weight,
                priority,
                enabled: true,
                is_primary: !has_primary,
                locator: staged.as_ref().map(|(loc, _)| (loc.service.as_str(), loc.account.as_str())),
            };
            profiles::insert_kind(&mut tx, &row, kind_columns(&spec), now)
                .await
                .map_err(|e| EngineError::from_store("profile", &new.label, e))?;
            if let Some((loc, _)) = &staged {
                settle_staged(&mut tx, loc).await?;
            }
            let subject = format!("{slug}/{}", new.label);
            let mut added = crate::config::audit::change("profile.add", &subject, None, Some(1));
            added.detail =
                Some(serde_json::json!({"kind": spec.kind.as_str(), "weight": weight, "priority": priority}));
            self.audit(&mut tx, added).await?;
            tx.commit().await.map_err(switchyard_store::StoreError::from)?;
            Ok(())
        }
        .await;
        if let Err(e) = written {
            match &staged {
                Some((loc, _)) => self.unstage_secret(loc).await,
                None if spec.kind == ProfileKind::External => self.remove_config_dir(&profile_id),
                None => {}
            }
            return Err(e);
        }
        drop(staged);
        let mut conn = self.store.acquire().await?;
        let row = profiles::by_id(&mut conn, &profile_id)
            .await?
            .ok_or_else(|| EngineError::not_found("profile", &new.label))?;
        drop(conn);
        let presence = if staged_present(&spec.kind, row.locator_service.is_some()) {
            CredentialPresence::Present
        } else {
            self.credential_state(&row).await
        };
        Ok(self.profile_view(slug, &row, presence))
    }

    /// One profile of `slug` (PROFILE: an id or a label), as `profile list` shows it.
    pub async fn profile_show(&self, slug: &str, profile: &str) -> Result<ProfileView, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let row = self.profile_by_ref(&connection, profile).await?;
        Ok(self.profile_view(slug, &row, self.credential_state(&row).await))
    }

    /// The secret of the profile with id `profile_id` (`None`: no such profile, or no keychain
    /// entry). For client set-up's restore, which puts a moved key back where it came from.
    pub async fn profile_secret(&self, profile_id: &str) -> Result<Option<Secret>, EngineError> {
        let row = {
            let mut conn = self.store.acquire().await?;
            profiles::by_id(&mut conn, profile_id).await?
        };
        match row.as_ref().and_then(locator_of) {
            Some(locator) => self.vault_get(locator).await,
            None => Ok(None),
        }
    }

    pub async fn profile_list(&self, slug: &str) -> Result<Vec<ProfileView>, EngineError> {
        Ok(self.connection_show(slug).await?.profiles)
    }

    /// Edits label, weight, priority, enabled flag or primary status, compare-and-swap on
    /// the revision read (or `if_revision`). Disabling resets the profile's circuits.
    pub async fn profile_edit(&self, slug: &str, profile: &str, edit: ProfileEdit) -> Result<ProfileView, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let row = self.profile_by_ref(&connection, profile).await?;
        let settings = profiles::Settings {
            label: edit.label.clone().unwrap_or_else(|| row.label.clone()),
            weight: edit.weight.unwrap_or(row.weight),
            priority: edit.priority.unwrap_or(row.priority),
            enabled: edit.enabled.unwrap_or(row.enabled),
        };
        validate_label(&settings.label)?;
        validate_weight(settings.weight)?;
        validate_priority(settings.priority)?;
        let expected = edit.if_revision.unwrap_or(row.revision);
        if expected != row.revision {
            return Err(EngineError::Conflict { what: "profile", expected, found: row.revision });
        }
        // Only the step enabled → disabled is refused: an imported primary starts disabled
        // and must stay editable until its credential is added.
        if row.enabled && !settings.enabled && (row.is_primary && !edit.make_primary) {
            return Err(EngineError::Precondition(format!(
                "'{}' is the primary profile of '{slug}' (legacy mode uses it); make another profile primary first: \
                 switchyard profile edit {slug} OTHER --primary",
                row.label
            )));
        }
        if edit.make_primary && !settings.enabled {
            return Err(EngineError::Precondition("a disabled profile cannot become the primary".into()));
        }
        let now = self.now_ms();
        let mut tx = self.store.begin().await?;
        let mut rev = profiles::update_settings(&mut tx, &row.id, expected, &settings, now)
            .await
            .map_err(|e| EngineError::from_store("profile", &settings.label, e))?;
        if edit.make_primary && !row.is_primary {
            rev = profiles::make_primary(&mut tx, &row.id, rev, now).await?;
        }
        if row.enabled && !settings.enabled {
            circuits::clear_profile(&mut tx, &row.id).await?;
        }
        let fresh =
            profiles::by_id(&mut tx, &row.id).await?.ok_or_else(|| EngineError::not_found("profile", profile))?;
        debug_assert_eq!(fresh.revision, rev, "the row read back is the row just written");
        let subject = format!("{slug}/{}", fresh.label);
        let mut edited = crate::config::audit::change("profile.edit", &subject, Some(row.revision), Some(rev));
        edited.detail = Some(serde_json::json!({
            "enabled": fresh.enabled, "weight": fresh.weight, "priority": fresh.priority, "primary": fresh.is_primary
        }));
        self.audit(&mut tx, edited).await?;
        tx.commit().await.map_err(switchyard_store::StoreError::from)?;
        if row.enabled && !settings.enabled {
            self.board.reset_profile(&row.id, ResetCause::Disabled);
        }
        self.reconcile_routing(slug).await?;
        Ok(self.profile_view(slug, &fresh, self.credential_state(&fresh).await))
    }

    /// Removes a profile and its keychain entry. The primary cannot be removed while it is
    /// the primary: promote another profile first.
    pub async fn profile_remove(&self, slug: &str, profile: &str) -> Result<Removal, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let row = self.profile_by_ref(&connection, profile).await?;
        if row.is_primary {
            let others = {
                let mut conn = self.store.acquire().await?;
                profiles::for_connection(&mut conn, &connection.id).await?.len() - 1
            };
            let how = if others == 0 {
                format!("it is the only profile; remove the connection instead: switchyard connection remove {slug}")
            } else {
                format!("make another profile primary first: switchyard profile edit {slug} OTHER --primary")
            };
            return Err(EngineError::Precondition(format!(
                "'{}' is the primary profile of '{slug}'; {how}",
                row.label
            )));
        }
        let mut tx = self.store.begin().await?;
        let locator = locator_of(&row);
        if let Some(loc) = &locator {
            journal::record(&mut tx, &loc.service, &loc.account, self.now_ms()).await?;
        }
        profiles::delete(&mut tx, &row.id, row.revision)
            .await
            .map_err(|e| EngineError::from_store("profile", &row.label, e))?;
        let subject = format!("{slug}/{}", row.label);
        self.audit(&mut tx, crate::config::audit::change("profile.remove", &subject, Some(row.revision), None)).await?;
        tx.commit().await.map_err(switchyard_store::StoreError::from)?;
        self.board.reset_profile(&row.id, ResetCause::Deleted);
        match credential_facts(&row).kind {
            ProfileKind::External => self.remove_config_dir(&row.id),
            ProfileKind::Oauth => self.remove_login_lock(&row.id),
            _ => {}
        }
        let (deleted, pending) = self.delete_journaled(locator.into_iter().collect()).await;
        self.reconcile_routing(slug).await?;
        Ok(Removal { slug: slug.to_string(), profiles_removed: 1, secrets_deleted: deleted, secrets_pending: pending })
    }
}

/// Whether a just-added profile's credential is known present: a secret was just written.
fn staged_present(kind: &ProfileKind, has_locator: bool) -> bool {
    kind.has_secret() && has_locator
}

/// The store's columns for a checked credential spec.
pub(crate) fn kind_columns(spec: &CredentialSpec) -> profiles::Kind<'static> {
    profiles::Kind { kind: spec.kind.as_str(), client: spec.client.map(|c| c.as_str()), expires_at: spec.expires_at_ms }
}
