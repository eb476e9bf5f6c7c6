//! Pools as the user configures them (invariant 24): add a pool of `(connection, model)`
//! members of one protocol with weights and an order, replace its members, remove it. Every
//! write leaves the pool inactive until `pool activate` passes its gates
//! (`readiness/pools.rs`). Members are stored by connection id with the slug kept beside it,
//! so a removed connection is still named in the gate report.

use serde::{Deserialize, Serialize};
use switchyard_core::routing::pool::check_members;
use switchyard_core::routing::PoolMember;
use switchyard_core::validate::validate_slug;
use switchyard_core::{InvalidInput, Protocol};
use switchyard_store::connections::{self, ConnectionRow};
use switchyard_store::pools::{self, NewPool, PoolRow};

use crate::context::Context;
use crate::error::EngineError;
use crate::views::PoolStatus;

/// How a member is stored (`pools.members`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StoredMember {
    pub connection_id: String,
    pub slug: String,
    pub model: Option<String>,
    pub weight: u32,
}

impl StoredMember {
    /// The member as selection sees it, under its connection's current slug (`all`), or the
    /// slug it was stored with when the connection is gone.
    pub(crate) fn member(&self, all: &[ConnectionRow]) -> PoolMember {
        let slug = all.iter().find(|c| c.id == self.connection_id).map_or(self.slug.clone(), |c| c.slug.clone());
        PoolMember { slug, model: self.model.clone(), weight: self.weight }
    }
}

/// A stored pool's members, in order (an unreadable list reads as empty: the gates say so).
pub(crate) fn decode_members(row: &PoolRow) -> Vec<StoredMember> {
    serde_json::from_str(&row.members).unwrap_or_default()
}

pub(crate) fn encode_members(members: &[StoredMember]) -> Result<String, EngineError> {
    serde_json::to_string(members).map_err(|e| EngineError::Internal(e.to_string()))
}

impl Context {
    /// Adds pool `name` speaking `protocol` with `members` (`CONN[=MODEL][:WEIGHT]`, in
    /// priority order). Stored inactive.
    pub async fn pool_add(&self, name: &str, protocol: &str, members: &[String]) -> Result<PoolStatus, EngineError> {
        validate_slug(name).map_err(|e| InvalidInput::new("pool", e.message))?;
        let protocol: Protocol = protocol.parse()?;
        let mut tx = self.store.begin().await?;
        if connections::by_slug(&mut tx, name).await?.is_some() {
            return Err(InvalidInput::new(
                "pool",
                format!("'{name}' is a connection's slug; a pool needs its own name"),
            )
            .into());
        }
        let all = connections::list(&mut tx).await?;
        let stored = resolve_members(members, protocol, &all)?;
        let id = format!("pl_{}", uuid::Uuid::new_v4().simple());
        let json = encode_members(&stored)?;
        let new = NewPool { id: &id, name, protocol: protocol.as_str(), members: &json, mode: None, wanted: false };
        pools::insert(&mut tx, &new, self.now_ms()).await.map_err(|e| EngineError::from_store("pool", name, e))?;
        let mut added = crate::config::audit::change("pool.add", name, None, Some(1));
        added.detail = Some(serde_json::json!({"protocol": protocol.as_str(), "members": members}));
        self.audit(&mut tx, added).await?;
        tx.commit().await.map_err(switchyard_store::StoreError::from)?;
        self.pool_status(name).await
    }

    /// Replaces the members of `name` (the pool goes inactive until activated again).
    pub async fn pool_edit(
        &self,
        name: &str,
        members: &[String],
        if_revision: Option<i64>,
    ) -> Result<PoolStatus, EngineError> {
        let mut tx = self.store.begin().await?;
        let row = pools::by_name(&mut tx, name).await?.ok_or_else(|| EngineError::not_found("pool", name))?;
        let protocol: Protocol = row.protocol.parse()?;
        let all = connections::list(&mut tx).await?;
        let stored = resolve_members(members, protocol, &all)?;
        let json = encode_members(&stored)?;
        let before = if_revision.unwrap_or(row.revision);
        pools::set_members(&mut tx, &row.id, &json, before, self.now_ms())
            .await
            .map_err(|e| EngineError::from_store("pool", name, e))?;
        let mut edited = crate::config::audit::change("pool.edit", name, Some(before), Some(before + 1));
        edited.detail = Some(serde_json::json!({"members": members}));
        self.audit(&mut tx, edited).await?;
        tx.commit().await.map_err(switchyard_store::StoreError::from)?;
        self.pool_status(name).await
    }

    /// Removes pool `name`; its ledger rows stay (they name its id).
    pub async fn pool_remove(&self, name: &str) -> Result<(), EngineError> {
        let row = self.pool_row(name).await?;
        let mut conn = self.store.acquire().await?;
        pools::delete(&mut conn, &row.id).await?;
        self.audit(&mut conn, crate::config::audit::change("pool.remove", name, Some(row.revision), None)).await?;
        Ok(())
    }

    pub(crate) async fn pool_row(&self, name: &str) -> Result<PoolRow, EngineError> {
        let mut conn = self.store.acquire().await?;
        pools::by_name(&mut conn, name).await?.ok_or_else(|| EngineError::not_found("pool", name))
    }

    /// Whether `name` names a pool (the relay and the CLI tell pools from connections).
    pub async fn is_pool(&self, name: &str) -> Result<bool, EngineError> {
        let mut conn = self.store.acquire().await?;
        Ok(pools::by_name(&mut conn, name).await?.is_some())
    }
}

/// Parses and checks `specs` against the connections: each exists and speaks `protocol`.
fn resolve_members(
    specs: &[String],
    protocol: Protocol,
    all: &[ConnectionRow],
) -> Result<Vec<StoredMember>, EngineError> {
    let members: Vec<PoolMember> = specs.iter().map(|s| PoolMember::parse(s)).collect::<Result<_, _>>()?;
    check_members(&members).map_err(|e| InvalidInput::new("member", e.to_string()))?;
    members
        .into_iter()
        .map(|m| {
            let Some(c) = all.iter().find(|c| c.slug == m.slug) else {
                return Err(EngineError::not_found("connection", m.slug.clone()));
            };
            if c.protocol != protocol.as_str() {
                return Err(InvalidInput::new(
                    "member",
                    format!("'{}' speaks {}, the pool {}", m.slug, c.protocol, protocol.as_str()),
                )
                .into());
            }
            Ok(StoredMember { connection_id: c.id.clone(), slug: m.slug, model: m.model, weight: m.weight })
        })
        .collect()
}
