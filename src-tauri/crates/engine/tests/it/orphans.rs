//! Start-up clean-up on the real keychain: a secret another live process is writing
//! (journaled with its pid and a fresh lease, not yet committed) is left alone; once that
//! process is gone, or the lease has run out, it is an orphan and is collected.

use std::path::Path;
use std::process::{Child, Command};
use std::sync::Arc;

use crate::common::{open, TestResult};
use switchyard_engine::{Clock, Engine, SystemClock, LEASE_MS};
use switchyard_store::{journal, Store};
use switchyard_vault::{Keychain, Locator, Secret, Vault};

/// The system clock moved ahead by `.0` milliseconds.
#[derive(Debug)]
struct Shifted(i64);

impl Clock for Shifted {
    fn now_ms(&self) -> i64 {
        SystemClock.now_ms() + self.0
    }
}

/// Another process standing in for a writer that is still running.
fn live_writer() -> Result<Child, std::io::Error> {
    Command::new("sleep").arg("60").spawn()
}

/// What a writer in another process has done between its journal and commit steps: the
/// entry names it and the secret is in the keychain; no profile points at it yet.
async fn stage_as(dir: &Path, install_id: &str, writer_pid: u32) -> Result<Locator, Box<dyn std::error::Error>> {
    let loc = Locator::for_profile(install_id, "p_in_flight", "n0nce");
    let store = Store::open_at(&switchyard_engine::store_location(dir).await?).await?;
    let mut conn = store.acquire().await?;
    let now = SystemClock.now_ms();
    journal::record_write(&mut conn, &loc.service, &loc.account, i64::from(writer_pid), now + LEASE_MS, now).await?;
    drop(conn);
    store.close().await;
    Keychain::new().put(&loc, &Secret::new("sk-canary-in-flight"))?;
    Ok(loc)
}

async fn journaled(dir: &Path) -> Result<usize, Box<dyn std::error::Error>> {
    let store = Store::open_at(&switchyard_engine::store_location(dir).await?).await?;
    let mut conn = store.acquire().await?;
    let n = journal::list(&mut conn).await?.len();
    drop(conn);
    store.close().await;
    Ok(n)
}

#[tokio::test]
async fn a_secret_a_live_process_is_writing_survives_start_up_until_that_process_ends() -> TestResult {
    let dir = tempfile::tempdir()?;
    let install_id = open(dir.path()).await?.install_id().to_string();
    let mut writer = live_writer()?;
    let loc = stage_as(dir.path(), &install_id, writer.id()).await?;

    let engine = open(dir.path()).await?;
    engine.close().await;
    assert!(
        Keychain::new().get(&loc)?.is_some(),
        "a start-up must not delete a secret a live writer journaled and has not committed yet"
    );
    assert_eq!(journaled(dir.path()).await?, 1, "the in-flight entry stays journaled for its writer's commit");

    writer.kill()?;
    writer.wait()?;
    let engine = open(dir.path()).await?;
    engine.close().await;
    assert!(Keychain::new().get(&loc)?.is_none(), "once its writer is gone the uncommitted secret is an orphan");
    assert_eq!(journaled(dir.path()).await?, 0, "and its journal entry is cleared");
    Ok(())
}

#[tokio::test]
async fn a_lapsed_lease_makes_an_orphan_even_while_the_writer_runs() -> TestResult {
    let dir = tempfile::tempdir()?;
    let install_id = open(dir.path()).await?.install_id().to_string();
    let mut writer = live_writer()?;
    let loc = stage_as(dir.path(), &install_id, writer.id()).await?;

    let later = Engine::open_with(dir.path(), Arc::new(Keychain::new()), Arc::new(Shifted(LEASE_MS + 1))).await?;
    later.close().await;
    let gone = Keychain::new().get(&loc)?.is_none();
    writer.kill()?;
    writer.wait()?;
    assert!(gone, "past the lease the write is abandoned: its secret is collected");
    assert_eq!(journaled(dir.path()).await?, 0, "and its journal entry is cleared");
    Ok(())
}
