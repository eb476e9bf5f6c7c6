//! Fallback chain use cases (invariant 17): set a connection's chain (stored inactive),
//! clear it, activate it behind its gates (every hop has current evidence for the models it
//! will be asked for), deactivate it, and show it. The relay uses a chain only while it is
//! activated *and* its gates hold (`Engine::active_chain`, read into the routing snapshot), so
//! editing a hop's endpoint or keys suspends it like any stale evidence. The routing side is
//! `router/fallback.rs`; the pure rules are `switchyard_core::routing::fallback`. Every write
//! that can change a chain (set here, a connection's protocol edited, an import) checks the
//! whole graph of chains with [`ChainGraph`] in the write's transaction.

pub use crate::views::{FallbackHopView, FallbackStatus};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use switchyard_core::routing::fallback::{hop_gate, validate_chain, ChainError, ChainNode};
use switchyard_core::routing::{GateReport, Hop};
use switchyard_core::Protocol;
use switchyard_store::connections::{self, ConnectionRow};
use switchyard_store::fallback::{self as chains, ChainRow};

use crate::clock::rfc3339;
use crate::config::rows::Definition;
use crate::context::Context;
use crate::error::{EngineError, GateRefusal};
use crate::views::GateView;

/// How a hop is stored (`fallback_chains.hops`): by connection id, so a slug rename keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct StoredHop {
    connection_id: String,
    model: Option<String>,
}

impl Context {
    /// Sets the fallback chain of `slug` to `hops` (`OTHER` or `OTHER=MODEL`, in order). The
    /// chain is stored inactive; a previous chain is replaced (and so deactivated).
    /// Every chain of the graph is checked with the new one in place (a chain that reaches
    /// `slug` may grow too deep), in one transaction with the write.
    pub async fn fallback_set(&self, slug: &str, hops: &[String]) -> Result<FallbackStatus, EngineError> {
        let source = self.connection_by_slug(slug).await?;
        let parsed: Vec<Hop> = hops.iter().map(|h| Hop::parse(h)).collect::<Result<_, _>>()?;
        if parsed.is_empty() {
            return Err(switchyard_core::InvalidInput::from(ChainError::Empty).into());
        }
        let mut tx = self.store.begin().await?;
        let all = connections::list(&mut tx).await?;
        let rows = chains::all(&mut tx).await?;
        let mut graph = ChainGraph::of(&all, &rows);
        graph.set_hops(slug, parsed.clone());
        graph.check(slug).map_err(|(owner, e)| {
            let message = if owner == slug {
                e.to_string()
            } else {
                format!("this chain would make the chain of '{owner}' invalid: {e}")
            };
            switchyard_core::InvalidInput::new("fallback", message)
        })?;
        let stored: Vec<StoredHop> = parsed
            .iter()
            .filter_map(|h| {
                let c = all.iter().find(|c| c.slug == h.slug)?;
                Some(StoredHop { connection_id: c.id.clone(), model: h.model.clone() })
            })
            .collect();
        let json = serde_json::to_string(&stored).map_err(|e| EngineError::Internal(e.to_string()))?;
        let current = rows.iter().find(|r| r.connection_id == source.id).map(|r| r.revision);
        chains::put(&mut tx, &source.id, &json, current, self.now_ms())
            .await
            .map_err(|e| EngineError::from_store("fallback chain", slug, e))?;
        let mut set = crate::config::audit::change("fallback.set", slug, None, None);
        set.detail = Some(serde_json::json!({"hops": hops}));
        self.audit(&mut tx, set).await?;
        tx.commit().await.map_err(switchyard_store::StoreError::from)?;
        self.fallback_status(slug).await
    }

    /// Removes the chain of `slug` (nothing to remove is not an error).
    pub async fn fallback_clear(&self, slug: &str) -> Result<FallbackStatus, EngineError> {
        let source = self.connection_by_slug(slug).await?;
        let mut conn = self.store.acquire().await?;
        chains::delete(&mut conn, &source.id).await?;
        self.audit(&mut conn, crate::config::audit::change("fallback.clear", slug, None, None)).await?;
        drop(conn);
        self.fallback_status(slug).await
    }

    /// Activates the chain of `slug` if its gates hold; otherwise fails with the report
    /// (`GateFailed`, exit 5) and changes nothing.
    pub async fn fallback_activate(&self, slug: &str) -> Result<FallbackStatus, EngineError> {
        let source = self.connection_by_slug(slug).await?;
        let row = self.chain_row(&source, slug).await?;
        let gates = self.chain_gates(&source, &row).await?;
        if !gates.report.ok {
            let shown = gates.view().failures.join("; ");
            return Err(EngineError::GateFailed {
                message: format!("cannot activate the fallback chain of '{slug}': {shown}"),
                gates: Box::new(gates),
            });
        }
        let mut conn = self.store.acquire().await?;
        chains::set_active(&mut conn, &source.id, true, row.revision, self.now_ms())
            .await
            .map_err(|e| EngineError::from_store("fallback chain", slug, e))?;
        self.audit(
            &mut conn,
            crate::config::audit::change("fallback.activate", slug, Some(row.revision), Some(row.revision + 1)),
        )
        .await?;
        drop(conn);
        self.fallback_status(slug).await
    }

    /// Deactivates the chain of `slug` (it stays stored).
    pub async fn fallback_deactivate(&self, slug: &str) -> Result<FallbackStatus, EngineError> {
        let source = self.connection_by_slug(slug).await?;
        let row = self.chain_row(&source, slug).await?;
        let mut conn = self.store.acquire().await?;
        chains::set_active(&mut conn, &source.id, false, row.revision, self.now_ms())
            .await
            .map_err(|e| EngineError::from_store("fallback chain", slug, e))?;
        self.audit(
            &mut conn,
            crate::config::audit::change("fallback.deactivate", slug, Some(row.revision), Some(row.revision + 1)),
        )
        .await?;
        drop(conn);
        self.fallback_status(slug).await
    }

    /// The chain of `slug`, whether it is in use, and its gates (an empty chain: no gates).
    pub async fn fallback_status(&self, slug: &str) -> Result<FallbackStatus, EngineError> {
        let source = self.connection_by_slug(slug).await?;
        self.restore_pending_chains().await?;
        let mut conn = self.store.acquire().await?;
        let row = chains::get(&mut conn, &source.id).await?;
        drop(conn);
        let Some(row) = row else {
            return Ok(FallbackStatus {
                chain: Vec::new(),
                active: false,
                activated: false,
                activated_at: None,
                pending: false,
                note: None,
                gates: GateView { ok: false, models: Vec::new(), failures: vec!["no fallback chain".into()] },
            });
        };
        let all = self.all_connections().await?;
        let chain = decode(&row)
            .into_iter()
            .map(|h| FallbackHopView {
                slug: slug_of(&all, &h.connection_id).unwrap_or_else(|| format!("(removed {})", h.connection_id)),
                model: h.model,
            })
            .collect();
        let gates = self.chain_gates(&source, &row).await?.view();
        let note = (row.active && !gates.ok).then(|| {
            format!(
                "suspended (no fallback) because the chain's gates no longer hold: {}; run `switchyard verify` on the hops to restore them",
                gates.failures.join("; ")
            )
        });
        Ok(FallbackStatus {
            chain,
            active: row.active && gates.ok,
            activated: row.active,
            activated_at: row.activated_at.map(rfc3339),
            pending: row.wanted && !row.active,
            note,
            gates,
        })
    }

    /// The chain the relay may use for `connection` now: activated and its gates hold
    /// (empty otherwise).
    pub(crate) async fn active_chain(&self, connection: &ConnectionRow) -> Result<Vec<Hop>, EngineError> {
        let mut conn = self.store.acquire().await?;
        let row = chains::get(&mut conn, &connection.id).await?;
        drop(conn);
        let Some(row) = row.filter(|r| r.active) else {
            return Ok(Vec::new());
        };
        if !self.chain_gates(connection, &row).await?.report.ok {
            return Ok(Vec::new());
        }
        let all = self.all_connections().await?;
        Ok(decode(&row)
            .into_iter()
            .filter_map(|h| Some(Hop { slug: slug_of(&all, &h.connection_id)?, model: h.model }))
            .collect())
    }

    /// Activates every chain an imported file had activated whose gates now hold (called
    /// after verification, like the restore of a pending routing mode).
    pub(crate) async fn restore_pending_chains(&self) -> Result<(), EngineError> {
        let all = self.all_connections().await?;
        for row in self.all_chains().await?.into_iter().filter(|r| r.wanted && !r.active) {
            let Some(source) = all.iter().find(|c| c.id == row.connection_id) else { continue };
            if !self.chain_gates(source, &row).await?.report.ok {
                continue;
            }
            let mut conn = self.store.acquire().await?;
            match chains::set_active(&mut conn, &row.connection_id, true, row.revision, self.now_ms()).await {
                Ok(_) => tracing::info!(slug = %source.slug, "imported fallback chain activated: its gates hold"),
                Err(switchyard_store::StoreError::Conflict { .. }) => {}
                Err(e) => return Err(EngineError::from_store("fallback chain", &source.slug, e)),
            }
        }
        Ok(())
    }

    async fn chain_row(&self, source: &ConnectionRow, slug: &str) -> Result<ChainRow, EngineError> {
        let mut conn = self.store.acquire().await?;
        chains::get(&mut conn, &source.id).await?.ok_or_else(|| EngineError::not_found("fallback chain", slug))
    }

    /// The gates of a stored chain: each hop must still exist and have current evidence for
    /// every model it will be asked for (evidence only: cooldowns do not decide).
    async fn chain_gates(&self, source: &ConnectionRow, row: &ChainRow) -> Result<GateRefusal, EngineError> {
        let source_models = Definition::decode(source)?.models;
        let all = self.all_connections().await?;
        let mut models = Vec::new();
        let mut failures = Vec::new();
        let mut labels: Vec<(String, String)> = Vec::new();
        let hops = decode(row);
        if hops.is_empty() {
            failures.push("the chain has no hop".to_string());
        }
        for stored in hops {
            let Some(target) = all.iter().find(|c| c.id == stored.connection_id).cloned() else {
                failures.push(format!("a hop's connection ({}) was removed", stored.connection_id));
                continue;
            };
            let hop = Hop { slug: target.slug.clone(), model: stored.model };
            let ready = self.readiness(target).await?;
            let (lines, why) = hop_gate(&hop, &source_models, &ready.def.models, &ready.routes, &ready.criteria());
            labels.extend(ready.profiles.iter().map(|p| (p.id.clone(), format!("{}/{}", hop.slug, p.label))));
            models.extend(lines);
            failures.extend(why);
        }
        let report = GateReport { ok: failures.is_empty(), models };
        // `GateReport::failures` judges a connection's own gates (it wants two profiles for
        // some model); a chain's failures are the hops'.
        Ok(GateRefusal { report, labels, failures })
    }

    async fn all_connections(&self) -> Result<Vec<ConnectionRow>, EngineError> {
        let mut conn = self.store.acquire().await?;
        Ok(connections::list(&mut conn).await?)
    }

    async fn all_chains(&self) -> Result<Vec<ChainRow>, EngineError> {
        let mut conn = self.store.acquire().await?;
        Ok(chains::all(&mut conn).await?)
    }
}

/// Every connection as chain validation sees it (by slug: protocol and its chain's hops), to
/// check the whole graph before a write that can change it: a chain set, a connection's
/// protocol edited, an import. Hops to removed connections are left out (the gates report
/// them); a connection whose protocol no longer parses is unknown.
#[derive(Debug, Default)]
pub(crate) struct ChainGraph {
    nodes: BTreeMap<String, (Protocol, Vec<Hop>)>,
}

impl ChainGraph {
    pub(crate) fn of(all: &[ConnectionRow], rows: &[ChainRow]) -> Self {
        let mut nodes = BTreeMap::new();
        for c in all {
            let Ok(protocol) = c.protocol.parse::<Protocol>() else { continue };
            let hops = rows
                .iter()
                .find(|r| r.connection_id == c.id)
                .map(|r| {
                    decode(r)
                        .into_iter()
                        .filter_map(|h| Some(Hop { slug: slug_of(all, &h.connection_id)?, model: h.model }))
                        .collect()
                })
                .unwrap_or_default();
            nodes.insert(c.slug.clone(), (protocol, hops));
        }
        ChainGraph { nodes }
    }

    /// The graph with `slug`'s chain replaced.
    pub(crate) fn set_hops(&mut self, slug: &str, hops: Vec<Hop>) {
        if let Some(node) = self.nodes.get_mut(slug) {
            node.1 = hops;
        }
    }

    /// The graph with `slug` speaking `protocol`.
    pub(crate) fn set_protocol(&mut self, slug: &str, protocol: Protocol) {
        if let Some(node) = self.nodes.get_mut(slug) {
            node.0 = protocol;
        }
    }

    /// Validates every chain, `first`'s before the others (its own fault is the one to name);
    /// the first one that fails, with why.
    pub(crate) fn check(&self, first: &str) -> Result<(), (String, ChainError)> {
        let lookup = |s: &str| {
            self.nodes.get(s).map(|(protocol, hops)| ChainNode {
                protocol: *protocol,
                hops: hops.iter().map(|h| h.slug.clone()).collect(),
            })
        };
        let own = self.nodes.get_key_value(first);
        let others = self.nodes.iter().filter(|(slug, _)| slug.as_str() != first);
        for (slug, (protocol, hops)) in own.into_iter().chain(others).filter(|(_, (_, hops))| !hops.is_empty()) {
            validate_chain(slug, *protocol, hops, &lookup).map_err(|e| (slug.clone(), e))?;
        }
        Ok(())
    }
}

/// A stored chain's hops as (connection id, model) — for export.
pub(crate) fn decode_hops(row: &ChainRow) -> Vec<(String, Option<String>)> {
    decode(row).into_iter().map(|h| (h.connection_id, h.model)).collect()
}

/// Hops as (connection id, model) in the stored JSON form — for import.
pub(crate) fn encode_hops(hops: &[(String, Option<String>)]) -> Result<String, EngineError> {
    let stored: Vec<StoredHop> =
        hops.iter().map(|(id, m)| StoredHop { connection_id: id.clone(), model: m.clone() }).collect();
    serde_json::to_string(&stored).map_err(|e| EngineError::Internal(e.to_string()))
}

fn decode(row: &ChainRow) -> Vec<StoredHop> {
    serde_json::from_str(&row.hops).unwrap_or_default()
}

fn slug_of(all: &[ConnectionRow], id: &str) -> Option<String> {
    all.iter().find(|c| c.id == id).map(|c| c.slug.clone())
}
