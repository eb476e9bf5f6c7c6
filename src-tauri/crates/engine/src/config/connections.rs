//! Connection use cases: add (optionally with the legacy key as primary profile), list,
//! show, edit (recomputing the basis fingerprint; a protocol change that would break a fallback
//! chain is refused) and remove (with its keychain entries).

use switchyard_core::header::parse_headers;
use switchyard_core::validate::{normalize_base_url, parse_mappings, validate_models, validate_slug};
use switchyard_core::InvalidInput;
use switchyard_core::Protocol;
use switchyard_store::{connections, fallback, journal, profiles};
use switchyard_vault::Secret;

use crate::config::credentials::settle_staged;
use crate::config::inputs::{ConnectionEdit, NewConnection};
use crate::config::rows::{connection_view, locator_of, Definition};
use crate::context::Context;
use crate::error::EngineError;
use crate::readiness::fallback::ChainGraph;
use crate::views::{ConnectionDetail, ConnectionView, Removal};

/// Label of the profile created from a legacy connection's key.
pub const PRIMARY_LABEL: &str = "primary";

impl Context {
    /// Adds a connection. With a secret it is a legacy single-key connection whose key
    /// becomes the primary profile; routing mode starts `legacy` either way.
    pub async fn connection_add(
        &self,
        new: NewConnection,
        secret: Option<Secret>,
    ) -> Result<ConnectionDetail, EngineError> {
        validate_slug(&new.slug)?;
        let def = Definition {
            protocol: new.protocol.parse::<Protocol>()?,
            base_url: normalize_base_url(&new.base_url)?,
            headers: parse_headers(&new.headers)?,
            models: new.models.clone(),
            mapping: parse_mappings(&new.mappings)?,
        };
        validate_models(&def.models)?;
        let encoded = def.encode()?;
        {
            let mut conn = self.store.acquire().await?;
            // A pool's name is routable like a slug: one name, one thing.
            if connections::by_slug(&mut conn, &new.slug).await?.is_some()
                || switchyard_store::pools::by_name(&mut conn, &new.slug).await?.is_some()
            {
                return Err(EngineError::Duplicate { field: "slug", value: new.slug });
            }
        }
        let connection_id = format!("c_{}", uuid::Uuid::new_v4().simple());
        let profile_id = format!("p_{}", uuid::Uuid::new_v4().simple());
        let staged = self.stage_new_secret(&profile_id, secret).await?;

        let written: Result<(), EngineError> = async {
            let _held = self.lock_data_dir().await?;
            let now = self.now_ms();
            let mut tx = self.store.begin().await?;
            connections::insert(&mut tx, &connection_id, &new.slug, &encoded, now)
                .await
                .map_err(|e| EngineError::from_store("connection", &new.slug, e))?;
            if let Some((loc, _)) = &staged {
                let row = profiles::NewProfile {
                    id: &profile_id,
                    connection_id: &connection_id,
                    label: PRIMARY_LABEL,
                    weight: 1,
                    priority: 0,
                    enabled: true,
                    is_primary: true,
                    locator: Some((&loc.service, &loc.account)),
                };
                profiles::insert(&mut tx, &row, now).await?;
                settle_staged(&mut tx, loc).await?;
            }
            let mut added = crate::config::audit::change("connection.add", &new.slug, None, Some(1));
            added.detail = Some(serde_json::json!({"protocol": new.protocol, "key": staged.is_some()}));
            self.audit(&mut tx, added).await?;
            tx.commit().await.map_err(switchyard_store::StoreError::from)?;
            Ok(())
        }
        .await;
        if let Err(e) = written {
            if let Some((loc, _)) = &staged {
                self.unstage_secret(loc).await;
            }
            return Err(e);
        }
        drop(staged);
        self.connection_show(&new.slug).await
    }

    pub async fn connection_list(&self) -> Result<Vec<ConnectionView>, EngineError> {
        let mut conn = self.store.acquire().await?;
        let rows = connections::list(&mut conn).await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let count = profiles::for_connection(&mut conn, &row.id).await?.len();
            out.push(connection_view(&row, count)?);
        }
        Ok(out)
    }

    /// A connection with its profiles (priority order) and whether each secret is present.
    pub async fn connection_show(&self, slug: &str) -> Result<ConnectionDetail, EngineError> {
        let row = self.connection_by_slug(slug).await?;
        let rows = {
            let mut conn = self.store.acquire().await?;
            profiles::for_connection(&mut conn, &row.id).await?
        };
        let mut views = Vec::with_capacity(rows.len());
        for p in &rows {
            views.push(self.profile_view(slug, p, self.credential_state(p).await));
        }
        Ok(ConnectionDetail { connection: connection_view(&row, rows.len())?, profiles: views })
    }

    /// Every connection with its profiles (the desktop's overview).
    pub async fn connection_overview(&self) -> Result<Vec<ConnectionDetail>, EngineError> {
        let mut out = Vec::new();
        for c in self.connection_list().await? {
            out.push(self.connection_show(&c.slug).await?);
        }
        Ok(out)
    }

    /// Edits the definition with compare-and-swap on the revision read (or `if_revision`).
    /// The basis fingerprint is recomputed, so evidence taken under the old basis is stale.
    pub async fn connection_edit(&self, slug: &str, edit: ConnectionEdit) -> Result<ConnectionView, EngineError> {
        let row = self.connection_by_slug(slug).await?;
        let mut def = Definition::decode(&row)?;
        let was = def.protocol;
        if let Some(p) = &edit.protocol {
            def.protocol = p.parse()?;
        }
        if let Some(url) = &edit.base_url {
            def.base_url = normalize_base_url(url)?;
        }
        if let Some(h) = &edit.headers {
            def.headers = parse_headers(h)?;
        }
        if let Some(m) = &edit.models {
            validate_models(m)?;
            def.models = m.clone();
        }
        if let Some(m) = &edit.mappings {
            def.mapping = parse_mappings(m)?;
        }
        let expected = edit.if_revision.unwrap_or(row.revision);
        let mut tx = self.store.begin().await?;
        if def.protocol != was {
            // A chain stays within one protocol: this connection's own, and every chain it is a hop of.
            let mut graph = ChainGraph::of(&connections::list(&mut tx).await?, &fallback::all(&mut tx).await?);
            graph.set_protocol(slug, def.protocol);
            graph.check(slug).map_err(|(owner, e)| {
                InvalidInput::new("protocol", format!("the fallback chain of '{owner}' would break: {e}"))
            })?;
        }
        connections::update_definition(&mut tx, &row.id, expected, &def.encode()?, self.now_ms())
            .await
            .map_err(|e| EngineError::from_store("connection", slug, e))?;
        let count = profiles::for_connection(&mut tx, &row.id).await?.len();
        let edited = crate::config::audit::change("connection.edit", slug, Some(expected), Some(expected + 1));
        self.audit(&mut tx, edited).await?;
        tx.commit().await.map_err(switchyard_store::StoreError::from)?;
        // A new basis makes every profile's evidence stale: suspend if the gates fail now.
        self.reconcile_routing(slug).await?;
        let fresh = self.connection_by_slug(slug).await?;
        connection_view(&fresh, count)
    }

    /// Removes a connection, its profiles and their keychain entries.
    pub async fn connection_remove(&self, slug: &str) -> Result<Removal, EngineError> {
        let row = self.connection_by_slug(slug).await?;
        let now = self.now_ms();
        let mut tx = self.store.begin().await?;
        let rows = profiles::for_connection(&mut tx, &row.id).await?;
        let locators: Vec<_> = rows.iter().filter_map(locator_of).collect();
        for loc in &locators {
            journal::record(&mut tx, &loc.service, &loc.account, now).await?;
        }
        connections::delete(&mut tx, &row.id, row.revision)
            .await
            .map_err(|e| EngineError::from_store("connection", slug, e))?;
        self.audit(&mut tx, crate::config::audit::change("connection.remove", slug, Some(row.revision), None)).await?;
        tx.commit().await.map_err(switchyard_store::StoreError::from)?;
        for p in &rows {
            self.board.reset_profile(&p.id, switchyard_core::routing::ResetCause::Deleted);
            if !crate::config::rows::credential_facts(p).kind.has_secret() {
                self.remove_config_dir(&p.id);
            }
        }
        let (deleted, pending) = self.delete_journaled(locators).await;
        Ok(Removal {
            slug: slug.to_string(),
            profiles_removed: i32::try_from(rows.len()).unwrap_or(i32::MAX),
            secrets_deleted: deleted,
            secrets_pending: pending,
        })
    }
}
