//! Three `switchyard relay serve` replicas on one Postgres store behind a round-robin nginx,
//! over real HTTP (issue 31 part B item 2; runs under `scripts/with-postgres`, skipped without
//! SWITCHYARD_TEST_PG, and without nginx it fails saying so). Each test gets a [`Cluster`]:
//! a fresh database, a sealed master key, one connection on the in-process mock with three
//! keys weighted 5:3:2 under balanced routing, three replicas (each its own data dir) and an
//! nginx in front of them — everything killed on drop. The tests prove that the routing
//! guarantees of one relay hold across replicas (SWRR, turn bindings, the single half-open
//! probe and its lease, cooldowns) and that a replica may die without losing configuration,
//! serving or more than a bounded slice of the ledger.
//!
//! [`Cluster`]: cluster::Cluster

mod call;
mod circuits;
mod cluster;
mod fallback;
mod limits;
mod nginx;
mod quota;
mod replica;
mod revocation;
mod routing;
mod survival;
mod team_store;
mod tether;
