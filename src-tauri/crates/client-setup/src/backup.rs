//! The original of a client's file, kept under the data dir (`client-backups/<client>-<hash of
//! the path>/`: `original` and `manifest.json`, owner-only) until `client restore`; and the
//! atomic write (temp file in the same dir + rename), which re-checks the file's hash right
//! before the rename so an edit made meanwhile is never overwritten; its temp file is new and
//! owner-only (a link planted at its name is never followed). A set-up or restore of a file holds
//! [`lock`] (`client-backups/<client>-<hash>.lock`) from start to end, so two never interleave.
//!
//! A provider key moved into the keychain is not kept here: `original` holds a placeholder in
//! each of its literals ([`MovedSpot`], `moved_key.rs`) and restore puts the profile's secret
//! back, so the restored file is byte-identical.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use switchyard_engine::EngineError;

/// Stands for a moved provider key inside a kept original.
pub const MOVED_KEY: &str = "__switchyard_moved_key__";

/// Numbers temp files within this process (with the pid: unique per call).
static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);
/// How many temp names a write tries before giving up (each taken one was planted or left).
const TEMP_TRIES: usize = 8;

/// How long a set-up or restore waits for another one of the same file, and how often it looks.
const LOCK_WAIT: Duration = Duration::from_secs(10);
const LOCK_RETRY: Duration = Duration::from_millis(5);

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub client: String,
    pub path: String,
    /// Whether the file existed before set-up (restore removes it otherwise).
    pub existed: bool,
    /// Unix mode of the original file.
    pub mode: Option<u32>,
    /// SHA-256 of the original bytes (with the moved keys in place).
    pub original_sha256: String,
    /// SHA-256 of what set-up wrote last.
    pub written_sha256: String,
    pub slug: String,
    pub created_at_ms: i64,
    /// The profile that holds the first moved key, when one was moved.
    pub moved_profile: Option<String>,
    pub moved_slug: Option<String>,
    /// Where `original` holds a placeholder for a moved key (none in manifests written before
    /// spots existed: those hold [`MOVED_KEY`] in place of the key's characters).
    #[serde(default)]
    pub moved_keys: Vec<MovedSpot>,
}

/// One placeholder in a kept original: its byte offset, the profile whose secret goes there,
/// and the recipe of how the literal was written.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct MovedSpot {
    pub at: usize,
    pub profile: String,
    pub recipe: String,
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The hash set-up and restore compare: of the bytes, or `absent`.
pub(crate) fn hash_of(bytes: Option<&[u8]>) -> String {
    bytes.map_or_else(|| "absent".to_string(), sha256_hex)
}

pub(crate) fn dir_for(data_dir: &Path, client: &str, path: &Path) -> PathBuf {
    let tag = &sha256_hex(path.to_string_lossy().as_bytes())[..12];
    data_dir.join("client-backups").join(format!("{client}-{tag}"))
}

fn io(what: &str, path: &Path, e: std::io::Error) -> EngineError {
    EngineError::Internal(format!("cannot {what} {}: {e}", path.display()))
}

pub(crate) fn read_manifest(dir: &Path) -> Result<Option<Manifest>, EngineError> {
    let path = dir.join("manifest.json");
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| EngineError::Internal(format!("unreadable backup manifest {}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io("read", &path, e)),
    }
}

pub(crate) fn read_original(dir: &Path) -> Result<Vec<u8>, EngineError> {
    let path = dir.join("original");
    std::fs::read(&path).map_err(|e| io("read", &path, e))
}

/// Keeps `original` (when given) and writes the manifest.
pub(crate) fn save(dir: &Path, manifest: &Manifest, original: Option<&[u8]>) -> Result<(), EngineError> {
    std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for d in [dir, dir.parent().unwrap_or(dir)] {
            let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700));
        }
    }
    if let Some(bytes) = original {
        write_atomic(&dir.join("original"), bytes, Some(0o600), None)?;
    }
    let json = serde_json::to_vec_pretty(manifest).map_err(|e| EngineError::Internal(e.to_string()))?;
    write_atomic(&dir.join("manifest.json"), &json, Some(0o600), None)
}

pub(crate) fn remove(dir: &Path) -> Result<(), EngineError> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("remove", dir, e)),
        _ => Ok(()),
    }
}

/// One set-up or restore of a file at a time, across tasks and processes: held until dropped.
pub(crate) struct FileLock {
    _file: std::fs::File,
}

/// Takes the lock of the file whose backup is `dir` (`shown` names the file): an OS file lock on
/// `<dir>.lock` beside it, which the OS lets go if the process dies. Waits up to [`LOCK_WAIT`]
/// for another holder, then refuses (code `conflict`). The lock file stays (empty): removing it
/// would let two processes lock two different files.
pub(crate) async fn lock(dir: &Path, shown: &Path) -> Result<FileLock, EngineError> {
    let path = dir.with_extension("lock");
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| io("create", parent, e))?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        // Owner-only like the backups beside it ([`save`] sets the same).
        let _ = std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o700));
        options.mode(0o600);
    }
    let file = options.open(&path).map_err(|e| io("open", &path, e))?;
    let started = tokio::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(FileLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < LOCK_WAIT => {
                tokio::time::sleep(LOCK_RETRY).await;
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(EngineError::Changed(format!(
                    "another client set-up or restore of {} has run for over {} s; nothing was written — retry when it ends",
                    shown.display(),
                    LOCK_WAIT.as_secs()
                )))
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io("lock", &path, e)),
        }
    }
}

/// Writes `bytes` to a temp file next to `path`, with `mode` (unix), syncs it and renames it
/// over `path`: a reader sees the old file or the new one, never half of one. With `expect`
/// (a [`hash_of`]), the rename happens only if `path` still has that hash right before it.
pub(crate) fn write_atomic(
    path: &Path,
    bytes: &[u8],
    mode: Option<u32>,
    expect: Option<&str>,
) -> Result<(), EngineError> {
    write_atomic_with(path, bytes, mode, expect, || {})
}

/// A temp file next to the target, new (`create_new`: a link or file planted at its name is
/// never followed or reused) and owner-only from its first byte; the name is unique per call, so
/// two writes in one process never share one. A few numbers are tried when a name is taken.
fn create_temp(dir: &Path, name: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
    let mut taken = None;
    for _ in 0..TEMP_TRIES {
        let n = TEMP_SEQ.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.switchyard-{}-{n}.tmp", std::process::id()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        match options.open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => taken = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(taken.unwrap_or_else(|| std::io::Error::other("no free temp file name")))
}

/// Writes `bytes` to the temp file with `mode` (unix) and syncs it; the file is closed on return.
fn fill(mut file: std::fs::File, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(mode.unwrap_or(0o600)))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    file.write_all(bytes)?;
    file.sync_all()
}

/// [`write_atomic`] with `before_rename` called between the temp file and the check (tests
/// edit the file there).
fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    mode: Option<u32>,
    expect: Option<&str>,
    before_rename: impl FnOnce(),
) -> Result<(), EngineError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (tmp, file) = create_temp(dir, &name).map_err(|e| io("write", path, e))?;
    if let Err(e) = fill(file, bytes, mode) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io("write", path, e));
    }
    before_rename();
    if let Some(expect) = expect {
        let now = crate::config_read::read_bytes(path, path).map(|b| hash_of(b.as_deref()));
        if now.as_deref().ok() != Some(expect) {
            let _ = std::fs::remove_file(&tmp);
            return Err(EngineError::Changed(format!(
                "{} changed while set-up was writing it; nothing was written — preview again and retry",
                path.display()
            )));
        }
    }
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io("write", path, e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_edited_just_before_the_rename_is_not_overwritten() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{}")?;
        let expect = hash_of(Some(b"{}"));
        let e = write_atomic_with(&path, b"{\"new\": 1}", None, Some(&expect), || {
            let _ = std::fs::write(&path, "{\"edited\": true}");
        });
        assert!(matches!(e, Err(EngineError::Changed(_))), "the edit is noticed: {e:?}");
        assert_eq!(std::fs::read_to_string(&path)?, "{\"edited\": true}", "the user's edit stays");
        assert_eq!(std::fs::read_dir(dir.path())?.count(), 1, "no temp file left behind");
        write_atomic(&path, b"{\"new\": 1}", None, Some(&hash_of(Some(b"{\"edited\": true}"))))?;
        assert_eq!(std::fs::read_to_string(&path)?, "{\"new\": 1}", "an unchanged file is replaced");
        Ok(())
    }

    /// Issue 39: the temp name was one per process, opened with `File::create`, which follows a
    /// link planted at that name (the write went into the link's target) and starts readable by all.
    #[cfg(unix)]
    #[test]
    fn a_link_planted_at_a_temp_name_is_never_written_through() -> Result<(), Box<dyn std::error::Error>> {
        use std::os::unix::fs::PermissionsExt;
        let (dir, elsewhere) = (tempfile::tempdir()?, tempfile::tempdir()?);
        let path = dir.path().join("settings.json");
        let victim = elsewhere.path().join("victim");
        std::fs::write(&victim, "untouched")?;
        let pid = std::process::id();
        let next = TEMP_SEQ.load(Ordering::Relaxed);
        let mut planted = vec![format!(".settings.json.switchyard-{pid}.tmp")];
        planted.extend((next..next + 3).map(|n| format!(".settings.json.switchyard-{pid}-{n}.tmp")));
        for name in &planted {
            std::os::unix::fs::symlink(&victim, dir.path().join(name))?;
        }
        write_atomic(&path, b"{\"new\": 1}", Some(0o644), None)?;
        assert_eq!(std::fs::read_to_string(&victim)?, "untouched", "no planted link is written through");
        let meta = std::fs::symlink_metadata(&path)?;
        assert!(meta.is_file(), "the file is a fresh regular file, not a planted link renamed into place");
        assert_eq!(std::fs::read_to_string(&path)?, "{\"new\": 1}", "written in full");
        assert_eq!(meta.permissions().mode() & 0o777, 0o644, "the asked mode is set once the bytes are in");
        Ok(())
    }
}
