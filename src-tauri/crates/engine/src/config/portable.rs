//! Export and import of shared configurations (docs/design.md, invariant 14). Export writes format
//! v1 with export-local refs and no secret, locator, evidence or health; a profile's kind,
//! client and a token's expiry travel, a token or an official CLI's login never does. Import is
//! one transaction: connections (renamed or skipped on slug conflicts, never overwritten),
//! profiles disabled and without credentials (a token or external profile arrives `missing`
//! until the user pastes a token or signs in), the wanted routing mode recorded as pending.
//! The format itself (types, validation) lives in `switchyard_core::portable`.

pub use crate::views::{ImportReport, ImportedConnection, ImportedProfile};
use std::collections::BTreeSet;

use switchyard_core::portable::{
    parse, render, ConnectionEntry, Document, FallbackEntry, HeaderEntry, PoolEntry, PoolMemberEntry, ProfileEntry,
    FORMAT, VERSION,
};
use switchyard_core::validate::{InvalidInput, MAX_SLUG_LEN};
use switchyard_core::{Header, RoutingMode};
use switchyard_store::connections::{self, ConnectionRow, Routing};
use switchyard_store::{profiles, AnyConnection};

use crate::config::rows::{client_of, credential_facts, Definition};
use crate::context::Context;
use crate::error::EngineError;
use crate::fault::FaultPoint;

/// Who `activated_by` names when a pending imported mode is restored.
pub(crate) const IMPORT_ACTOR: &str = "import";

/// What import does with a connection whose slug already exists here: import it under a free
/// slug `SLUG-2`, `SLUG-3`, … (`rename`), or leave the existing connection alone and not import
/// this one (`skip`).
pub use switchyard_core::states::ConflictPolicy as Conflict;

const CREATE: &str = "create";
const RENAME: &str = "rename";
const SKIP: &str = "skip";

impl Context {
    /// The configuration of every connection (or of `slugs`) as format v1 pretty JSON.
    /// Refs are `c1…` in slug order and `p1…` in priority order, then id; stable for a
    /// given database. Fails rather than write anything the importer would refuse.
    pub async fn export(&self, slugs: Option<&[String]>) -> Result<String, EngineError> {
        let mut conn = self.store.acquire().await?;
        let rows = connections::list(&mut conn).await?;
        if let Some(wanted) = slugs {
            if let Some(missing) = wanted.iter().find(|s| !rows.iter().any(|r| &r.slug == *s)) {
                return Err(EngineError::not_found("connection", missing));
            }
        }
        let selected = rows.iter().filter(|r| slugs.is_none_or(|w| w.contains(&r.slug)));
        let mut doc =
            Document { format: FORMAT.to_string(), version: VERSION, connections: Vec::new(), pools: Vec::new() };
        let mut profile_count = 0;
        let selected: Vec<&ConnectionRow> = selected.collect();
        for (i, row) in selected.iter().enumerate() {
            let entry = export_connection(&mut conn, row, i + 1, &mut profile_count).await?;
            doc.connections.push(entry);
        }
        // Chains by export-local refs; a hop to a connection not exported is left out.
        let ref_of = |id: &str| selected.iter().position(|r| r.id == id).map(|i| format!("c{}", i + 1));
        for (row, entry) in selected.iter().zip(doc.connections.iter_mut()) {
            if let Some(chain) = switchyard_store::fallback::get(&mut conn, &row.id).await? {
                entry.fallback = crate::readiness::fallback::decode_hops(&chain)
                    .into_iter()
                    .filter_map(|(id, model)| Some(FallbackEntry { connection: ref_of(&id)?, model }))
                    .collect();
                entry.fallback_active = chain.active && !entry.fallback.is_empty();
            }
        }
        // Pools whose members are all exported, by refs.
        for pool in switchyard_store::pools::all(&mut conn).await? {
            let members: Option<Vec<PoolMemberEntry>> = crate::config::pools::decode_members(&pool)
                .into_iter()
                .map(|m| {
                    Some(PoolMemberEntry { connection: ref_of(&m.connection_id)?, model: m.model, weight: m.weight })
                })
                .collect();
            let (Some(members), Ok(protocol)) = (members.filter(|m| !m.is_empty()), pool.protocol.parse()) else {
                continue;
            };
            doc.pools.push(PoolEntry {
                name: pool.name.clone(),
                protocol,
                members,
                mode: pool.mode.as_deref().and_then(|m| m.parse().ok()),
                active: pool.active || pool.wanted,
            });
        }
        drop(conn);
        let text = render(&doc)?;
        parse(&text).map_err(|e| {
            let fix = if e.field.ends_with(".fallback") {
                "fix that fallback chain first (`switchyard routing fallback SLUG ...` or `--clear`)"
            } else {
                "change that value first so the file carries no secret-looking text"
            };
            EngineError::Precondition(format!("cannot export: {e}; {fix}"))
        })?;
        Ok(text)
    }

    /// Imports a format v1 document. With `dry_run` nothing is written; otherwise the whole
    /// import is one transaction, so on any error nothing is written.
    pub async fn import(&self, json: &str, dry_run: bool, on_conflict: Conflict) -> Result<ImportReport, EngineError> {
        let doc = parse(json)?;
        if dry_run {
            let mut conn = self.store.acquire().await?;
            let taken = existing_slugs(&mut conn).await?;
            return plan(&doc, &taken, on_conflict, true);
        }
        let mut tx = self.store.begin().await?;
        let taken = existing_slugs(&mut tx).await?;
        let report = plan(&doc, &taken, on_conflict, false)?;
        let now = self.now_ms();
        let mut written = 0;
        let mut ids: Vec<(String, String)> = Vec::new();
        let mut externals: Vec<String> = Vec::new();
        for (entry, planned) in doc.connections.iter().zip(&report.connections) {
            let Some(slug) = &planned.new_slug else {
                continue;
            };
            ids.push((entry.reference.clone(), write_connection(&mut tx, entry, slug, now, &mut externals).await?));
            written += 1;
            if written == 1 {
                self.faults.check(FaultPoint::ImportAfterFirstConnection)?;
            }
        }
        // Chains inactive; one the file had activated is turned on once its gates hold.
        for entry in doc.connections.iter().filter(|e| !e.fallback.is_empty()) {
            let id_of = |r: &str| ids.iter().find(|(rf, _)| rf == r).map(|(_, id)| id.clone());
            let Some(own) = id_of(&entry.reference) else { continue };
            let hops: Vec<(String, Option<String>)> =
                entry.fallback.iter().filter_map(|f| Some((id_of(&f.connection)?, f.model.clone()))).collect();
            if !hops.is_empty() {
                let json = crate::readiness::fallback::encode_hops(&hops)?;
                switchyard_store::fallback::insert_imported(&mut tx, &own, &json, entry.fallback_active, now).await?;
            }
        }
        // Pools inactive; one the file had active is turned on once its gates hold.
        let mut report = report;
        for pool in &doc.pools {
            let id_of = |r: &str| ids.iter().find(|(rf, _)| rf == r).map(|(_, id)| id.clone());
            let all = connections::list(&mut tx).await?;
            let members: Option<Vec<crate::config::pools::StoredMember>> = pool
                .members
                .iter()
                .map(|m| {
                    let id = id_of(&m.connection)?;
                    let slug = all.iter().find(|c| c.id == id)?.slug.clone();
                    Some(crate::config::pools::StoredMember {
                        connection_id: id,
                        slug,
                        model: m.model.clone(),
                        weight: m.weight,
                    })
                })
                .collect();
            let Some(members) = members else { continue };
            if switchyard_store::pools::by_name(&mut tx, &pool.name).await?.is_some()
                || connections::by_slug(&mut tx, &pool.name).await?.is_some()
            {
                continue;
            }
            let json = crate::config::pools::encode_members(&members)?;
            let id = format!("pl_{}", uuid::Uuid::new_v4().simple());
            let mode = pool.mode.map(|m| m.as_str());
            let new = switchyard_store::pools::NewPool {
                id: &id,
                name: &pool.name,
                protocol: pool.protocol.as_str(),
                members: &json,
                mode,
                wanted: pool.active,
            };
            switchyard_store::pools::insert(&mut tx, &new, now).await?;
            report.pools.push(pool.name.clone());
        }
        // The file's chains were checked among themselves; check the whole graph as written.
        let graph = crate::readiness::fallback::ChainGraph::of(
            &connections::list(&mut tx).await?,
            &switchyard_store::fallback::all(&mut tx).await?,
        );
        graph.check("").map_err(|(owner, e)| {
            InvalidInput::new("fallback", format!("the imported chain of '{owner}' is not valid here: {e}"))
        })?;
        tx.commit().await.map_err(switchyard_store::StoreError::from)?;
        for id in &externals {
            // The directory only; the profile reads `missing` until the user signs in (and
            // `profile login` creates it again if this fails).
            if let Err(e) = self.create_config_dir(id) {
                tracing::warn!(error = %e, "an imported external profile's directory was not created");
            }
        }
        tracing::info!(
            created = report.created,
            renamed = report.renamed,
            skipped = report.skipped,
            "imported a shared configuration"
        );
        Ok(report)
    }
}

async fn export_connection(
    conn: &mut AnyConnection,
    row: &ConnectionRow,
    index: usize,
    profile_count: &mut usize,
) -> Result<ConnectionEntry, EngineError> {
    let def = Definition::decode(row)?;
    let rows = profiles::for_connection(conn, &row.id).await?;
    let profiles = rows
        .iter()
        .map(|p| {
            *profile_count += 1;
            let facts = credential_facts(p);
            ProfileEntry {
                reference: format!("p{profile_count}"),
                label: p.label.clone(),
                weight: p.weight,
                priority: p.priority,
                primary: p.is_primary,
                kind: facts.kind,
                client: client_of(p),
                // A token's entered expiry travels; an owned login's access expiry is part of the
                // login, which never leaves (the profile arrives `missing`).
                expires_at: (facts.kind == switchyard_core::states::ProfileKind::Token)
                    .then_some(facts.expires_at_ms)
                    .flatten()
                    .map(crate::clock::rfc3339),
            }
        })
        .collect();
    Ok(ConnectionEntry {
        reference: format!("c{index}"),
        slug: row.slug.clone(),
        protocol: def.protocol,
        base_url: def.base_url,
        headers: def.headers.into_iter().map(|h| HeaderEntry { name: h.name, value: h.value }).collect(),
        models: def.models,
        mapping: def.mapping,
        routing: wanted_mode(row),
        profiles,
        fallback: Vec::new(),
        fallback_active: false,
    })
}

/// The mode a receiver should get: the active (or suspended) mode, else a pending one.
fn wanted_mode(row: &ConnectionRow) -> RoutingMode {
    let mode = if row.routing_mode == RoutingMode::Legacy.as_str() {
        row.wanted_mode.as_deref().unwrap_or("legacy")
    } else {
        row.routing_mode.as_str()
    };
    mode.parse().unwrap_or(RoutingMode::Legacy)
}

async fn existing_slugs(conn: &mut AnyConnection) -> Result<BTreeSet<String>, EngineError> {
    Ok(connections::list(conn).await?.into_iter().map(|r| r.slug).collect())
}

/// Decides each connection's fate. A renamed connection gets the first `SLUG-N` not used
/// here nor anywhere in the file.
fn plan(
    doc: &Document,
    existing: &BTreeSet<String>,
    on_conflict: Conflict,
    dry_run: bool,
) -> Result<ImportReport, EngineError> {
    let mut taken: BTreeSet<String> = existing.clone();
    taken.extend(doc.connections.iter().map(|c| c.slug.clone()));
    let mut report = ImportReport {
        dry_run,
        connections: Vec::with_capacity(doc.connections.len()),
        created: 0,
        renamed: 0,
        skipped: 0,
        pools: if dry_run { doc.pools.iter().map(|p| p.name.clone()).collect() } else { Vec::new() },
    };
    for c in &doc.connections {
        let (action, new_slug) = match (existing.contains(&c.slug), on_conflict) {
            (false, _) => {
                report.created += 1;
                (CREATE, Some(c.slug.clone()))
            }
            (true, Conflict::Skip) => {
                report.skipped += 1;
                (SKIP, None)
            }
            (true, Conflict::Rename) => {
                let fresh = free_slug(&c.slug, &taken)?;
                taken.insert(fresh.clone());
                report.renamed += 1;
                (RENAME, Some(fresh))
            }
        };
        report.connections.push(ImportedConnection {
            reference: c.reference.clone(),
            slug: c.slug.clone(),
            action: action.to_string(),
            new_slug,
            pending_mode: (c.routing != RoutingMode::Legacy).then(|| c.routing.to_string()),
            profiles: c
                .profiles
                .iter()
                .map(|p| ImportedProfile { reference: p.reference.clone(), label: p.label.clone(), primary: p.primary })
                .collect(),
        });
    }
    Ok(report)
}

/// `base-2`, `base-3`, … shortened so the result is still a valid slug.
fn free_slug(base: &str, taken: &BTreeSet<String>) -> Result<String, EngineError> {
    for n in 2..10_000 {
        let suffix = format!("-{n}");
        let keep = MAX_SLUG_LEN.saturating_sub(suffix.len()).min(base.len());
        let stem = base[..keep].trim_end_matches('-');
        let candidate = format!("{stem}{suffix}");
        if !taken.contains(&candidate) {
            return Ok(candidate);
        }
    }
    Err(EngineError::Precondition(format!("no free slug to rename '{base}' to; import with --on-conflict skip")))
}

/// Inserts one connection (legacy, the file's mode pending) and its profiles (disabled,
/// no locator, primary kept).
async fn write_connection(
    tx: &mut AnyConnection,
    entry: &ConnectionEntry,
    slug: &str,
    now: i64,
    externals: &mut Vec<String>,
) -> Result<String, EngineError> {
    let def = Definition {
        protocol: entry.protocol,
        base_url: entry.base_url.clone(),
        headers: entry.headers.iter().map(|h| Header { name: h.name.clone(), value: h.value.clone() }).collect(),
        models: entry.models.clone(),
        mapping: entry.mapping.clone(),
    };
    let id = format!("c_{}", uuid::Uuid::new_v4().simple());
    connections::insert(tx, &id, slug, &def.encode()?, now)
        .await
        .map_err(|e| EngineError::from_store("connection", slug, e))?;
    if entry.routing != RoutingMode::Legacy {
        let pending = Routing {
            mode: RoutingMode::Legacy.as_str().to_string(),
            state: "active".to_string(),
            note: None,
            wanted_mode: Some(entry.routing.as_str().to_string()),
            activated_at: None,
            activated_by: None,
        };
        connections::update_routing(tx, &id, 1, &pending, now)
            .await
            .map_err(|e| EngineError::from_store("connection", slug, e))?;
    }
    for p in &entry.profiles {
        let profile_id = format!("p_{}", uuid::Uuid::new_v4().simple());
        let row = profiles::NewProfile {
            id: &profile_id,
            connection_id: &id,
            label: &p.label,
            weight: p.weight,
            priority: p.priority,
            enabled: false,
            is_primary: p.primary,
            locator: None,
        };
        // The file was checked (`switchyard_core::portable`): the kind is creatable and its
        // client set; an expiry in the past is kept (the token itself never travels).
        let expires_at_ms = match &p.expires_at {
            Some(text) => Some(switchyard_core::profile::parse_expiry(text)?),
            None => None,
        };
        let spec = switchyard_core::profile::CredentialSpec { kind: p.kind, client: p.client, expires_at_ms };
        profiles::insert_kind(tx, &row, crate::config::profiles::kind_columns(&spec), now)
            .await
            .map_err(|e| EngineError::from_store("profile", &p.label, e))?;
        if !p.kind.has_secret() {
            externals.push(profile_id.clone());
        }
    }
    Ok(id)
}
