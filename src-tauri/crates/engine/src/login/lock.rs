//! One refresh at a time per login across processes: an advisory lock on
//! `<data dir>/logins/<profile id>.lock`, held for one refresh (the token call and both writes),
//! and on a shared store (Postgres) first the login's advisory lock there, so replicas with data
//! dirs of their own refresh it once too.
//! While a refresh runs the file says so (`refreshing <mark> <started ms>`), and it is emptied
//! when the refresh has been written: a process that finds the note left behind knows a refresh
//! died half-way (`refresh.rs` decides what that means). Lock files are removed with their
//! profile, and start-up removes those of profiles that no longer exist.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::context::Context;
use crate::error::EngineError;

/// The folder of the data dir that holds the logins' lock files.
pub const LOGINS_DIR: &str = "logins";

/// How long a refresh waits for another process's refresh of the same login.
const LOCK_WAIT: Duration = Duration::from_secs(30);

/// How often a waiting refresh tries again.
const RETRY: Duration = Duration::from_millis(10);

/// A login's refresh lock, held until dropped: the data dir's lock file and, on a shared store,
/// the login's advisory lock there (replicas with data dirs of their own, invariant 22).
#[derive(Debug)]
pub(crate) struct LoginLock {
    file: File,
    _store: Option<switchyard_store::Tx>,
}

/// The advisory lock key of `profile_id`'s login on a shared store: FNV-1a over a prefix and the
/// id (stable across builds and machines, unlike the std hasher).
fn store_lock_key(profile_id: &str) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in "switchyard-login:".bytes().chain(profile_id.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    i64::from_ne_bytes(h.to_ne_bytes())
}

impl Drop for LoginLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

impl LoginLock {
    /// What a refresh that died while holding the lock left: (refresh mark, started ms).
    pub fn interrupted(&mut self) -> Option<(String, i64)> {
        let mut text = String::new();
        self.file.seek(SeekFrom::Start(0)).ok()?;
        self.file.read_to_string(&mut text).ok()?;
        let mut words = text.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (Some("refreshing"), Some(mark), Some(at)) => Some((mark.to_string(), at.parse().ok()?)),
            _ => None,
        }
    }

    /// Notes that a refresh from the token with `mark` starts now.
    pub fn note_started(&mut self, mark: &str, now_ms: i64) {
        let _ = self.rewrite(&format!("refreshing {mark} {now_ms}\n"));
    }

    /// Clears the note: the refresh's outcome is written.
    pub fn note_done(&mut self) {
        let _ = self.rewrite("");
    }

    fn rewrite(&mut self, text: &str) -> std::io::Result<()> {
        self.file.set_len(0)?;
        self.file.seek(SeekFrom::Start(0))?;
        self.file.write_all(text.as_bytes())?;
        self.file.sync_data()
    }
}

impl Context {
    /// The lock file of `profile_id`'s login.
    pub(crate) fn login_lock_path(&self, profile_id: &str) -> PathBuf {
        self.data_dir().join(LOGINS_DIR).join(format!("{profile_id}.lock"))
    }

    /// Takes `profile_id`'s refresh lock, waiting up to 30 s for another process's (or, on a
    /// shared store, another replica's) refresh.
    pub(crate) async fn lock_login(&self, profile_id: &str) -> Result<LoginLock, EngineError> {
        let store = self.store.hold_lock(store_lock_key(profile_id), LOCK_WAIT).await.map_err(|e| {
            EngineError::Precondition(format!(
                "another replica has been refreshing this login for over {} s, or the store is unreachable ({e})",
                LOCK_WAIT.as_secs()
            ))
        })?;
        let path = self.login_lock_path(profile_id);
        let file = open_lock_file(&path)?;
        let deadline = Instant::now() + LOCK_WAIT;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(LoginLock { file, _store: store }),
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => tokio::time::sleep(RETRY).await,
                Err(TryLockError::WouldBlock) => {
                    return Err(EngineError::Precondition(format!(
                        "another switchyard process has been refreshing this login for over {} s",
                        LOCK_WAIT.as_secs()
                    )))
                }
                Err(TryLockError::Error(e)) => {
                    return Err(EngineError::Internal(format!("cannot lock {}: {e}", path.display())))
                }
            }
        }
    }

    /// Removes `profile_id`'s lock file (its profile was removed).
    pub(crate) fn remove_login_lock(&self, profile_id: &str) {
        let _ = std::fs::remove_file(self.login_lock_path(profile_id));
    }

    /// Removes lock files of logins no profile in `keep` has (start-up clean-up); returns how many.
    pub(crate) fn sweep_login_locks(&self, keep: &[String]) -> usize {
        let Ok(entries) = std::fs::read_dir(self.data_dir().join(LOGINS_DIR)) else { return 0 };
        let mut removed = 0;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            let Some(id) = name.strip_suffix(".lock") else { continue };
            if keep.iter().any(|k| k == id) {
                continue;
            }
            // Only a lock nobody holds goes: a live refresh of a just-created profile keeps its file.
            let free = File::open(entry.path()).is_ok_and(|f| f.try_lock().is_ok());
            if free && std::fs::remove_file(entry.path()).is_ok() {
                removed += 1;
            }
        }
        removed
    }
}

fn open_lock_file(path: &Path) -> Result<File, EngineError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| EngineError::Internal(format!("cannot create {}: {e}", dir.display())))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        }
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| EngineError::Internal(format!("cannot open {}: {e}", path.display())))
}
