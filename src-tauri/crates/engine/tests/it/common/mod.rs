//! Shared set-up for engine tests: a temp data dir on the real keychain (Secret Service
//! under `dbus-run-session` in the test command), and a view of this install's entries.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use switchyard_engine::{Engine, EngineError, NewConnection, NewProfile, Secret};

pub type TestResult = Result<(), Box<dyn std::error::Error>>;

pub async fn open(dir: &Path) -> Result<Engine, EngineError> {
    Engine::open(dir).await
}

/// Accounts stored in the real keychain under this install's service, via `secret-tool`.
pub fn keychain_accounts(install_id: &str) -> Vec<String> {
    let service = format!("switchyard.{install_id}");
    let out = Command::new("secret-tool").args(["search", "--all", "--unlock", "service", &service]).output();
    let Ok(out) = out else { return vec![] };
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let mut accounts: Vec<String> =
        text.lines().filter_map(|l| l.strip_prefix("attribute.username = ")).map(str::to_string).collect();
    accounts.sort();
    accounts
}

pub fn legacy(slug: &str) -> NewConnection {
    NewConnection {
        slug: slug.into(),
        protocol: "openai".into(),
        base_url: "https://api.example.com/v1".into(),
        models: vec!["gpt-a".into(), "gpt-b".into()],
        mappings: vec![],
        headers: vec!["OpenAI-Organization: org-1".into()],
    }
}

pub fn profile(label: &str, weight: i64) -> NewProfile {
    NewProfile { label: label.into(), weight: Some(weight), priority: None }
}

pub fn secret(s: &str) -> Secret {
    Secret::new(s)
}

/// A clock the test moves by hand (`clock.0.store(ms, SeqCst)`).
#[derive(Debug)]
pub struct ManualClock(pub std::sync::atomic::AtomicI64);

impl switchyard_engine::Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// What the store of `dir` holds on disk, to grep for canaries: the SQLite file and its WAL, or
/// — when the suite runs under `scripts/with-postgres` — `pg_dump` of the dir's database.
pub async fn store_bytes(dir: &Path) -> Vec<u8> {
    let location = switchyard_engine::store_location(dir).await.expect("the store location of a test dir");
    match location {
        switchyard_engine::StoreLocation::File(db) => {
            let mut bytes = std::fs::read(&db).unwrap_or_default();
            let mut wal = db.into_os_string();
            wal.push("-wal");
            bytes.extend(std::fs::read(wal).unwrap_or_default());
            bytes
        }
        switchyard_engine::StoreLocation::Postgres(url) => pg_dump(&url),
    }
}

/// `pg_dump` of the database at `url` (schema and rows, plain SQL text).
pub fn pg_dump(url: &str) -> Vec<u8> {
    let bin = std::env::var("SWITCHYARD_TEST_PG_BIN").map(|b| format!("{b}/pg_dump")).unwrap_or("pg_dump".into());
    let out = Command::new(bin).arg("--dbname").arg(url).output().expect("pg_dump runs");
    assert!(out.status.success(), "pg_dump of the test database: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}
