//! Pending routing modes: an imported configuration records the mode its exporter used;
//! the connection stays legacy until its own profiles, verified here, pass the gates. Then
//! the mode is restored automatically (docs/design.md, invariant 14) and the change is logged.

use switchyard_core::RoutingMode;
use switchyard_store::connections::{self, ConnectionRow, Routing};

use crate::config::portable::IMPORT_ACTOR;
use crate::context::Context;
use crate::error::EngineError;

impl Context {
    /// Switches a legacy connection with a pending mode to that mode if the gates hold now.
    /// Returns the restored mode; `None` when nothing changed.
    pub(crate) async fn restore_pending(&self, row: ConnectionRow) -> Result<Option<RoutingMode>, EngineError> {
        let Some(wanted) = row.wanted_mode.as_deref() else {
            return Ok(None);
        };
        let Ok(mode) = wanted.parse::<RoutingMode>() else {
            tracing::warn!(slug = %row.slug, "ignoring an unreadable pending routing mode");
            return Ok(None);
        };
        if row.routing_mode != RoutingMode::Legacy.as_str() || mode == RoutingMode::Legacy {
            return Ok(None);
        }
        let ready = self.readiness(row).await?;
        if !ready.gates().ok {
            return Ok(None);
        }
        let c = &ready.connection;
        let now = self.now_ms();
        let routing = Routing {
            mode: mode.as_str().to_string(),
            state: "active".to_string(),
            note: None,
            wanted_mode: None,
            activated_at: Some(now),
            activated_by: Some(IMPORT_ACTOR.to_string()),
        };
        let mut conn = self.store.acquire().await?;
        match connections::update_routing(&mut conn, &c.id, c.revision, &routing, now).await {
            Ok(_) => {
                tracing::info!(
                    slug = %c.slug,
                    mode = mode.as_str(),
                    "pending routing mode from import restored: verification proves the gates"
                );
                Ok(Some(mode))
            }
            // Someone else changed the row meanwhile; the next look reconciles again.
            Err(switchyard_store::StoreError::Conflict { .. }) => Ok(None),
            Err(e) => Err(EngineError::from_store("connection", &c.slug, e)),
        }
    }
}
