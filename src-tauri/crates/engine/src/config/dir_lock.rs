//! The data-dir lock: an advisory lock on `switchyard.lock` in the data dir, shared by every
//! process (and every engine) on that dir. It is held only for short steps that must not
//! interleave across processes: start-up clean-up, the journal and commit steps of a secret
//! write, and the first creation of the relay token. Never across a keychain write, which
//! can wait on the user, and never nested (a second acquisition would wait on the first).

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::context::Context;
use crate::error::EngineError;

/// File name of the lock inside a data dir.
pub const LOCK_FILE: &str = "switchyard.lock";

/// How long a step waits for another process to release the lock.
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(30);

/// How often a waiting step tries again.
const RETRY: Duration = Duration::from_millis(5);

/// The lock, held until dropped.
#[derive(Debug)]
pub(crate) struct DirLock {
    file: File,
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // Closing the file releases the lock too; unlocking first makes it immediate.
        let _ = self.file.unlock();
    }
}

impl Context {
    /// Takes the data-dir lock, waiting up to [`LOCK_WAIT`] for another process.
    pub(crate) async fn lock_data_dir(&self) -> Result<DirLock, EngineError> {
        self.try_lock_data_dir(LOCK_WAIT).await?.ok_or_else(|| {
            EngineError::Precondition(format!(
                "another switchyard process has held {} for over {} s; try again",
                self.data_dir().join(LOCK_FILE).display(),
                LOCK_WAIT.as_secs()
            ))
        })
    }

    /// Takes the data-dir lock, or `None` when another holder keeps it past `wait`.
    pub(crate) async fn try_lock_data_dir(&self, wait: Duration) -> Result<Option<DirLock>, EngineError> {
        let file = open_lock_file(self.data_dir())?;
        let deadline = Instant::now() + wait;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Some(DirLock { file })),
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => tokio::time::sleep(RETRY).await,
                Err(TryLockError::WouldBlock) => return Ok(None),
                Err(TryLockError::Error(e)) => {
                    return Err(EngineError::Internal(format!("cannot lock the data dir: {e}")));
                }
            }
        }
    }
}

fn open_lock_file(data_dir: &Path) -> Result<File, EngineError> {
    let path = data_dir.join(LOCK_FILE);
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| EngineError::Internal(format!("cannot open {}: {e}", path.display())))
}
