//! The keychain journal on a real SQLite file: writes carry their writer and lease, a
//! deletion entry has none, and clearing says whether the entry was still there.

use switchyard_store::journal;
use switchyard_store::Store;

type TestResult = Result<(), Box<dyn std::error::Error>>;

async fn open() -> Result<(tempfile::TempDir, Store), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(&dir.path().join("t.db")).await?;
    Ok((dir, store))
}

#[tokio::test]
async fn a_write_entry_names_its_writer_and_lease() -> TestResult {
    let (_dir, store) = open().await?;
    let mut conn = store.acquire().await?;
    journal::record_write(&mut conn, "svc", "new", 4242, 9_000, 1_000).await?;
    journal::record(&mut conn, "svc", "old", 2_000).await?;
    let entries = journal::list(&mut conn).await?;
    assert_eq!(entries.len(), 2, "both entries are listed: {entries:?}");
    assert_eq!(
        (entries[0].account.as_str(), entries[0].owner_pid, entries[0].lease_until),
        ("new", Some(4242), Some(9_000)),
        "a secret being written carries its writer's pid and lease"
    );
    assert_eq!(
        (entries[1].account.as_str(), entries[1].owner_pid, entries[1].lease_until),
        ("old", None, None),
        "a secret to delete has no writer: it is an orphan once unreferenced"
    );
    Ok(())
}

#[tokio::test]
async fn recording_a_deletion_drops_the_writer() -> TestResult {
    let (_dir, store) = open().await?;
    let mut conn = store.acquire().await?;
    journal::record_write(&mut conn, "svc", "a", 4242, 9_000, 1_000).await?;
    journal::record(&mut conn, "svc", "a", 2_000).await?;
    let entries = journal::list(&mut conn).await?;
    assert_eq!(entries.len(), 1, "one entry per locator: {entries:?}");
    assert_eq!(entries[0].owner_pid, None, "a secret someone wants deleted is no longer in flight");
    Ok(())
}

#[tokio::test]
async fn clear_reports_whether_the_entry_was_there() -> TestResult {
    let (_dir, store) = open().await?;
    let mut conn = store.acquire().await?;
    journal::record_write(&mut conn, "svc", "a", 1, 9_000, 1_000).await?;
    assert!(journal::clear(&mut conn, "svc", "a").await?, "the writer's commit finds its entry");
    assert!(
        !journal::clear(&mut conn, "svc", "a").await?,
        "a second clear finds nothing: the writer can tell clean-up took its entry"
    );
    Ok(())
}
