//! Credential storage and rotation, ordered for crash safety (docs/design.md, invariant 13):
//! journal the new locator (with this process as writer and a lease) → write the secret →
//! swap the row (journaling the old locator in the same transaction) → delete the old secret
//! → clear the journal. The journal and commit steps run under the data-dir lock; start-up
//! clean-up (`orphans.rs`) removes journaled secrets no profile references and no live
//! writer will commit.

use switchyard_core::profile::{credential_spec, validate_token};
use switchyard_core::routing::ResetCause;
use switchyard_core::states::{CredentialPresence, ProfileKind};
use switchyard_store::{journal, profiles, AnyConnection};
use switchyard_vault::{Locator, Secret};

use crate::config::rows::{client_of, credential_facts, locator_of};
use crate::config::staging::{own_pid, Staged, LEASE_MS};
use crate::context::Context;
use crate::error::EngineError;
use crate::fault::FaultPoint;
use crate::views::ProfileView;

impl Context {
    /// A fresh keychain locator for `profile_id` in this install.
    pub(crate) fn new_locator(&self, profile_id: &str) -> Locator {
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        Locator::for_profile(&self.install_id, profile_id, &nonce[..12])
    }

    /// Journals `locator` (this process as writer, with a lease) then writes `secret` there.
    /// The returned [`Staged`] keeps the write in flight for clean-up in this process; hold
    /// it until [`settle_staged`] has committed. On failure the journal entry is cleared
    /// (nothing was written) and the error returned.
    pub(crate) async fn stage_secret(&self, locator: &Locator, secret: Secret) -> Result<Staged, EngineError> {
        if secret.is_empty() {
            return Err(EngineError::Invalid(switchyard_core::InvalidInput::new("secret", "is empty")));
        }
        let staged = Staged::register(locator);
        let held = self.lock_data_dir().await?;
        let mut conn = self.store.acquire().await?;
        {
            let now = self.now_ms();
            journal::record_write(&mut conn, &locator.service, &locator.account, own_pid(), now + LEASE_MS, now)
                .await?;
        }
        drop(held);
        self.faults.check(FaultPoint::AfterJournal)?;
        if let Err(e) = self.vault_put(locator.clone(), secret).await {
            journal::clear(&mut conn, &locator.service, &locator.account).await?;
            return Err(e);
        }
        self.faults.check(FaultPoint::AfterSecretWrite)?;
        Ok(staged)
    }

    /// Stages `secret` (when there is one) under a fresh locator for a new profile:
    /// [`stage_secret`](Self::stage_secret) behind [`new_locator`](Self::new_locator).
    pub(crate) async fn stage_new_secret(
        &self,
        profile_id: &str,
        secret: Option<Secret>,
    ) -> Result<Option<(Locator, Staged)>, EngineError> {
        let Some(secret) = secret else { return Ok(None) };
        let loc = self.new_locator(profile_id);
        let staged = self.stage_secret(&loc, secret).await?;
        Ok(Some((loc, staged)))
    }

    /// Best-effort removal of a secret whose row write failed after it was staged.
    pub(crate) async fn unstage_secret(&self, locator: &Locator) {
        if self.vault_delete(locator.clone()).await.is_ok() {
            if let Ok(mut conn) = self.store.acquire().await {
                let _ = journal::clear(&mut conn, &locator.service, &locator.account).await;
            }
        }
    }

    /// Deletes journaled secrets; returns how many were deleted. Failures stay journaled.
    pub(crate) async fn delete_journaled(&self, locators: Vec<Locator>) -> (i32, i32) {
        let (mut deleted, mut pending) = (0, 0);
        for loc in locators {
            match self.vault_delete(loc.clone()).await {
                Ok(_) => {
                    deleted += 1;
                    if let Ok(mut conn) = self.store.acquire().await {
                        let _ = journal::clear(&mut conn, &loc.service, &loc.account).await;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "secret left for start-up clean-up");
                    pending += 1;
                }
            }
        }
        (deleted, pending)
    }

    /// Replaces a profile's credential. Evidence taken under the old credential revision is
    /// stale from now on; circuits of the profile are reset.
    pub async fn profile_rotate(&self, slug: &str, profile: &str, secret: Secret) -> Result<ProfileView, EngineError> {
        self.profile_rotate_until(slug, profile, secret, None).await
    }

    /// [`Engine::profile_rotate`] with the new credential's expiry (RFC 3339, `token` only):
    /// pasting a new token brings an expired profile back with its id, weight, order and
    /// history; its old expiry goes with the old token (`None`: unknown). A token's shape is
    /// checked; an external profile has no secret to replace (it signs in again instead).
    pub async fn profile_rotate_until(
        &self,
        slug: &str,
        profile: &str,
        secret: Secret,
        expires: Option<&str>,
    ) -> Result<ProfileView, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let row = self.profile_by_ref(&connection, profile).await?;
        let kind = credential_facts(&row).kind;
        if !kind.has_secret() {
            return Err(EngineError::Precondition(format!(
                "'{}' is an external profile: it has no secret to replace; sign in again with switchyard profile login {slug} {}",
                row.label, row.label
            )));
        }
        if kind == ProfileKind::Oauth {
            return Err(EngineError::Precondition(format!(
                "'{}' is an oauth profile: Switchyard owns and renews its login; sign in again with switchyard profile login {slug} {}",
                row.label, row.label
            )));
        }
        let client = client_of(&row).map(|c| c.as_str());
        let spec = credential_spec(Some(kind.as_str()), client, expires, Some(self.now_ms()))?;
        if let (ProfileKind::Token, Some(client)) = (kind, spec.client) {
            validate_token(secret.expose(), client)?;
        }
        self.swap_credential(slug, &row, secret, spec.expires_at_ms, None).await
    }

    /// Replaces `row`'s secret through the journal (new locator → row swap → old secret
    /// deleted), with the new credential's expiry and, for an owned login's sign-in, the login's
    /// columns in the same transaction. Circuits of the profile are reset.
    pub(crate) async fn swap_credential(
        &self,
        slug: &str,
        row: &profiles::ProfileRow,
        secret: Secret,
        expires_at_ms: Option<i64>,
        sign_in: Option<profiles::SignIn<'_>>,
    ) -> Result<ProfileView, EngineError> {
        let new_loc = self.new_locator(&row.id);
        let staged = self.stage_secret(&new_loc, secret).await?;

        let swapped: Result<(), EngineError> = async {
            let _held = self.lock_data_dir().await?;
            let now = self.now_ms();
            let mut tx = self.store.begin().await?;
            if let Some(old) = locator_of(row) {
                journal::record(&mut tx, &old.service, &old.account, now).await?;
            }
            let locator = (new_loc.service.as_str(), new_loc.account.as_str());
            profiles::replace_credential(&mut tx, &row.id, row.revision, locator, expires_at_ms, now)
                .await
                .map_err(|e| EngineError::from_store("profile", &row.label, e))?;
            if let Some(sign_in) = &sign_in {
                profiles::record_sign_in(&mut tx, &row.id, sign_in, expires_at_ms, now).await?;
            }
            switchyard_store::circuits::clear_profile(&mut tx, &row.id).await?;
            settle_staged(&mut tx, &new_loc).await?;
            let subject = format!("{slug}/{}", row.label);
            let rotated =
                crate::config::audit::change("profile.rotate", &subject, Some(row.revision), Some(row.revision + 1));
            self.audit(&mut tx, rotated).await?;
            tx.commit().await.map_err(switchyard_store::StoreError::from)?;
            Ok(())
        }
        .await;
        if let Err(e) = swapped {
            self.unstage_secret(&new_loc).await;
            return Err(e);
        }
        drop(staged);
        self.board.reset_profile(&row.id, ResetCause::CredentialReplaced);
        self.faults.check(FaultPoint::AfterRowSwap)?;

        if let Some(old) = locator_of(row) {
            // The rotation has taken effect; a keychain hiccup here only leaves the old
            // secret journaled for start-up clean-up.
            match self.vault_delete(old.clone()).await {
                Ok(_) => {
                    self.faults.check(FaultPoint::AfterOldDelete)?;
                    let mut conn = self.store.acquire().await?;
                    journal::clear(&mut conn, &old.service, &old.account).await?;
                }
                Err(e) => tracing::warn!(error = %e, "old secret left for start-up clean-up"),
            }
        }
        self.reconcile_routing(slug).await?;
        let mut conn = self.store.acquire().await?;
        let fresh =
            profiles::by_id(&mut conn, &row.id).await?.ok_or_else(|| EngineError::not_found("profile", &row.label))?;
        Ok(self.profile_view(slug, &fresh, CredentialPresence::Present))
    }

    /// `present`, `missing`, or `unknown` when the keychain cannot be asked; for an external
    /// profile, whether the official CLI's credential file exists in its config directory.
    pub(crate) async fn credential_state(&self, row: &profiles::ProfileRow) -> CredentialPresence {
        if !credential_facts(row).kind.has_secret() {
            return self.login_presence(row);
        }
        let Some(loc) = locator_of(row) else {
            return CredentialPresence::Missing;
        };
        if let Some(known) = self.presence.get(&loc, row.credential_revision) {
            return known;
        }
        let state = match self.vault_get(loc.clone()).await {
            Ok(Some(_)) => CredentialPresence::Present,
            Ok(None) => CredentialPresence::Missing,
            Err(_) => CredentialPresence::Unknown,
        };
        self.presence.put(loc, row.credential_revision, state);
        state
    }
}

/// The commit step of a staged secret, inside the transaction that makes a profile row point
/// at it (and under the data-dir lock): its journal entry is cleared. When start-up clean-up
/// has already taken the entry (the write outlived its lease) the commit fails instead of
/// pointing the row at a deleted secret.
pub(crate) async fn settle_staged(tx: &mut AnyConnection, locator: &Locator) -> Result<(), EngineError> {
    if journal::clear(tx, &locator.service, &locator.account).await? {
        return Ok(());
    }
    Err(EngineError::Precondition(format!(
        "the new secret was removed by another switchyard process's start-up clean-up before it was saved \
         (writing it took longer than {} minutes); nothing changed, run the command again",
        LEASE_MS / 60_000
    )))
}
