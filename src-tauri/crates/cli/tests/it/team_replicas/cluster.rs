//! A team relay for one test: the [`TeamStore`], the shared configuration made once through
//! the CLI on it (connection `c` on the in-process mock, keys `five`, `three`, `two` weighted
//! 5:3:2, verified, balanced routing), a relay user whose token every replica accepts, three
//! replicas and nginx in front of them; dropped in that order (replicas, nginx, mock, files).
//! Clusters run one at a time (a process-wide lock): their timing assertions must not share
//! two cores with another cluster's traffic.

use std::sync::{Mutex, MutexGuard, PoisonError};

use switchyard_mock_provider::{KeyScript, MockProvider};

use super::call::MODEL;
use super::nginx::Nginx;
use super::replica::{Replica, StoreEnv};
use super::team_store::TeamStore;

/// The three keys: label, secret (the mock's key), weight.
pub const KEYS: [(&str, &str, i64); 3] =
    [("five", "sk-rep-five", 5), ("three", "sk-rep-three", 3), ("two", "sk-rep-two", 2)];

/// The key the circuit tests cool down: the heaviest, so SWRR would pick it most.
pub const COOLED: &str = "sk-rep-five";

/// The probe lease the lease tests give the replicas (`relay serve --probe-lease-secs N`).
pub const PROBE_LEASE_SECS: u64 = 5;

/// The concurrency slots' lease the limit tests give the replicas (`--limit-lease-secs N`).
pub const LIMIT_LEASE_SECS: u64 = 3;

/// The fallback connection `d` of [`Options::fallback`]: label, secret, weight.
pub const FALLBACK_KEYS: [(&str, &str, i64); 2] = [("d-one", "sk-rep-d-one", 1), ("d-two", "sk-rep-d-two", 1)];

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// `routing affinity c turn`: only turn bindings keep calls together (no conversation ones).
    pub turn_affinity: bool,
    /// Start the replicas with `--probe-lease-secs` [`PROBE_LEASE_SECS`].
    pub probe_lease: bool,
    /// A second connection `d` ([`FALLBACK_KEYS`], balanced) as `c`'s active fallback.
    pub fallback: bool,
    /// Start the replicas with `--limit-lease-secs` [`LIMIT_LEASE_SECS`].
    pub limit_lease: bool,
}

pub struct Cluster {
    pub replicas: Vec<Replica>,
    pub nginx: Nginx,
    pub mock: MockProvider,
    /// A relay user's token (`relay users add team`): valid on every replica.
    pub token: String,
    pub store: TeamStore,
    _dir: tempfile::TempDir,
    _one_at_a_time: MutexGuard<'static, ()>,
}

/// Prints a measured number into the test output (shown with `--nocapture`, and with a
/// failing test's output).
#[allow(clippy::print_stderr)] // measurements are part of what these tests report
pub fn report(line: &str) {
    eprintln!("team_replicas: {line}");
}

impl Cluster {
    /// The cluster for test `name`, or `None` without SWITCHYARD_TEST_PG (the test then passes
    /// without running, as the other Postgres tests do).
    pub async fn start(name: &str, options: Options) -> Result<Option<Cluster>, Box<dyn std::error::Error>> {
        let Ok(server) = std::env::var("SWITCHYARD_TEST_PG") else { return Ok(None) };
        let mock = MockProvider::start().await?;
        // Taken after the last await: the rest of the set-up is blocking.
        let one_at_a_time = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
        let dir = tempfile::tempdir()?;
        let store = TeamStore::create(&server, name, dir.path())?;
        for (_, secret, _) in KEYS.iter().chain(&FALLBACK_KEYS) {
            mock.set_key(secret, KeyScript::new([MODEL]));
        }
        let token = configure(&store, &mock.base_url(), options)?;
        let lease = PROBE_LEASE_SECS.to_string();
        let slot_lease = LIMIT_LEASE_SECS.to_string();
        let mut extra: Vec<&str> = Vec::new();
        if options.probe_lease {
            extra.extend(["--probe-lease-secs", lease.as_str()]);
        }
        if options.limit_lease {
            extra.extend(["--limit-lease-secs", slot_lease.as_str()]);
        }
        let mut replicas = Vec::new();
        for name in ["a", "b", "c"] {
            let env = StoreEnv { url: &store.url, key_file: &store.key_file };
            replicas.push(Replica::spawn(dir.path(), name, &env, &extra)?);
        }
        let upstreams: Vec<String> = replicas.iter().map(|r| r.addr.clone()).collect();
        let nginx = Nginx::start(&dir.path().join("nginx"), &upstreams)?;
        mock.reset_counts();
        Ok(Some(Cluster { replicas, nginx, mock, token, store, _dir: dir, _one_at_a_time: one_at_a_time }))
    }

    /// Hits of the three keys since the last reset, in [`KEYS`] order.
    pub fn hits(&self) -> [u64; 3] {
        KEYS.map(|(_, secret, _)| self.mock.hits(secret))
    }

    /// Every replica's and nginx's last log lines, for assertion messages.
    pub fn logs(&self) -> String {
        let mut out = String::new();
        for r in &self.replicas {
            out.push_str(&format!("--- replica {} ({}) stderr\n{}\n", r.name, r.addr, r.log_tail()));
        }
        out.push_str(&self.nginx.log_tail());
        out
    }
}

/// The shared configuration, through the CLI on the store; the relay user's token.
fn configure(store: &TeamStore, base: &str, options: Options) -> Result<String, Box<dyn std::error::Error>> {
    balanced_connection(store, "c", base, &KEYS)?;
    if options.turn_affinity {
        store.cli_ok(&["routing", "affinity", "c", "turn"], None)?;
    }
    if options.fallback {
        balanced_connection(store, "d", base, &FALLBACK_KEYS)?;
        store.cli_ok(&["routing", "fallback", "c", "d"], None)?;
        store.cli_ok(&["routing", "fallback-activate", "c"], None)?;
    }
    store.user_add("team")
}

/// Connection `slug` on the mock with `keys` (label, secret, weight; the first is the
/// connection's own), verified, under balanced routing.
fn balanced_connection(
    store: &TeamStore,
    slug: &str,
    base: &str,
    keys: &[(&str, &str, i64)],
) -> Result<(), Box<dyn std::error::Error>> {
    let [(first_label, first_secret, first_weight), rest @ ..] = keys else { return Err("no keys".into()) };
    let add =
        ["connection", "add", slug, "--protocol", "anthropic", "--base-url", base, "--model", MODEL, "--secret-stdin"];
    store.cli_ok(&add, Some(first_secret))?;
    let weight = first_weight.to_string();
    store.cli_ok(&["profile", "edit", slug, "primary", "--label", first_label, "--weight", &weight], None)?;
    for (label, secret, weight) in rest {
        let weight = weight.to_string();
        store
            .cli_ok(&["profile", "add", slug, "--label", label, "--weight", &weight, "--secret-stdin"], Some(secret))?;
    }
    store.cli_ok(&["verify", slug], None)?;
    store.cli_ok(&["routing", "activate", slug, "balanced"], None)?;
    Ok(())
}
