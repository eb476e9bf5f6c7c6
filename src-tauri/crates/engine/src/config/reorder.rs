//! Reordering a connection's profiles in one step: priorities become 0, 1, 2… in the given
//! order, every row compare-and-swapped on the revision the caller read, all in one
//! transaction, so a drag in the desktop never leaves half the list renumbered.

use switchyard_store::profiles;

use crate::context::Context;
use crate::error::EngineError;
use crate::views::ProfileView;

/// One entry of a new order: a profile id and the revision the caller read it at.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, specta::Type)]
pub struct OrderEntry {
    pub id: String,
    #[specta(type = i32)]
    pub revision: i64,
}

impl Context {
    /// Sets the priorities of every profile of `slug` to their position in `order` (lower
    /// is tried first). `order` must name each profile of the connection exactly once; a
    /// profile changed since it was read fails the whole reorder with a conflict.
    pub async fn profile_reorder(&self, slug: &str, order: &[OrderEntry]) -> Result<Vec<ProfileView>, EngineError> {
        let connection = self.connection_by_slug(slug).await?;
        let now = self.now_ms();
        let mut tx = self.store.begin().await?;
        let rows = profiles::for_connection(&mut tx, &connection.id).await?;
        let mut wanted: Vec<&str> = order.iter().map(|e| e.id.as_str()).collect();
        let mut have: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        wanted.sort_unstable();
        have.sort_unstable();
        if wanted != have {
            return Err(EngineError::Invalid(switchyard_core::InvalidInput::new(
                "order",
                format!("must name each of the {} profiles of '{slug}' exactly once (reload and retry)", rows.len()),
            )));
        }
        for (position, entry) in order.iter().enumerate() {
            let Some(row) = rows.iter().find(|r| r.id == entry.id) else {
                continue;
            };
            if row.revision != entry.revision {
                return Err(EngineError::Conflict { what: "profile", expected: entry.revision, found: row.revision });
            }
            let priority = i64::try_from(position).unwrap_or(i64::MAX);
            if row.priority == priority {
                continue;
            }
            let settings =
                profiles::Settings { label: row.label.clone(), weight: row.weight, priority, enabled: row.enabled };
            profiles::update_settings(&mut tx, &row.id, entry.revision, &settings, now)
                .await
                .map_err(|e| EngineError::from_store("profile", &row.label, e))?;
        }
        let fresh = profiles::for_connection(&mut tx, &connection.id).await?;
        let mut reordered = crate::config::audit::change("profile.reorder", slug, None, None);
        reordered.detail =
            Some(serde_json::json!({"order": fresh.iter().map(|p| p.label.as_str()).collect::<Vec<_>>()}));
        self.audit(&mut tx, reordered).await?;
        tx.commit().await.map_err(switchyard_store::StoreError::from)?;
        let mut views = Vec::with_capacity(fresh.len());
        for p in &fresh {
            views.push(self.profile_view(&connection.slug, p, self.credential_state(p).await));
        }
        Ok(views)
    }
}
