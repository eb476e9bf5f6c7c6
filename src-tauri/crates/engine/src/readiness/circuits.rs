//! Circuits as the engine keeps them: the in-memory board (claims, live cooldowns) written
//! through to the `circuits` table (cooldowns only), and `health reset` (which also clears the
//! profile's quota readings).

use switchyard_core::routing::{CircuitSnapshot, Failure, PersistedState, ResetCause};
use switchyard_store::circuits::{self, CircuitRow};
use switchyard_store::quota;

use crate::context::Context;
use crate::error::EngineError;

impl Context {
    /// Writes one circuit's state to the table (a closed circuit deletes its row).
    pub(crate) async fn persist_circuit(&self, snap: &CircuitSnapshot) -> Result<(), EngineError> {
        let mut conn = self.store.acquire().await?;
        if snap.state == PersistedState::Closed {
            circuits::clear_one(&mut conn, &snap.profile_id, &snap.model).await?;
            return Ok(());
        }
        let row = CircuitRow {
            profile_id: snap.profile_id.clone(),
            model: snap.model.clone(),
            state: snap.state.as_str().to_string(),
            kind: snap.kind.map(|k| k.as_str().to_string()),
            until_ms: snap.until_ms,
            backoff_level: i64::from(snap.backoff_level),
            revision: 0,
            updated_at: self.now_ms(),
            lease_owner: None,
            lease_until_ms: None,
        };
        circuits::upsert(&mut conn, &row).await?;
        Ok(())
    }

    /// Records a classified failure of `profile` (for `model`) and persists the change.
    pub(crate) async fn record_failure(
        &self,
        profile: &str,
        model: &str,
        failure: &Failure,
    ) -> Result<(), EngineError> {
        if let Some(snap) = self.board.record_failure(profile, model, failure, self.now_ms()) {
            self.persist_circuit(&snap).await?;
        }
        Ok(())
    }

    /// Closes every circuit of a profile and releases its probe claims, in memory and on disk.
    pub(crate) async fn reset_circuits(&self, profile: &str, cause: ResetCause) -> Result<(), EngineError> {
        self.board.reset_profile(profile, cause);
        let mut conn = self.store.acquire().await?;
        circuits::clear_profile(&mut conn, profile).await?;
        Ok(())
    }

    /// `health reset SLUG PROFILE [--model M]`: closes the credential-wide circuit and every
    /// model circuit, or only the one of `model`, and clears the profile's quota readings (all,
    /// or those of `model`), so a reading that keeps the key out of quota-aware selection goes
    /// too — from the store now, from a running relay's memory at its next quota pass (within
    /// `QUOTA_FLUSH_EVERY`, in any process on this data dir).
    pub async fn health_reset(&self, slug: &str, profile: &str, model: Option<&str>) -> Result<(), EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let row = self.profile_by_ref(&connection, profile).await?;
        {
            let mut conn = self.store.acquire().await?;
            quota::clear(&mut conn, &row.id, model, self.now_ms()).await?;
            let subject = format!("{slug}/{}", row.label);
            let mut reset = crate::config::audit::change("health.reset", &subject, None, None);
            reset.detail = model.map(|m| serde_json::json!({"model": m}));
            self.audit(&mut conn, reset).await?;
        }
        match model {
            None => self.reset_circuits(&row.id, ResetCause::Manual).await,
            Some(m) => {
                self.board.reset_circuit(&row.id, Some(m));
                let mut conn = self.store.acquire().await?;
                circuits::clear_one(&mut conn, &row.id, m).await?;
                Ok(())
            }
        }
    }
}
