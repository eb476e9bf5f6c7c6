//! The original of a client's file, kept under the data dir (`client-backups/<client>-<hash of
//! the path>/`: `original` and `manifest.json`, owner-only) until `client restore`; and the
//! atomic write (temp file in the same dir + rename, the original's permissions).
//!
//! A provider key moved into the keychain is not kept here: `original` holds [`MOVED_KEY`] in
//! its place and restore puts the profile's secret back, so the restored file is byte-identical.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::EngineError;

/// Stands for a moved provider key inside a kept original.
pub const MOVED_KEY: &str = "__switchyard_moved_key__";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub client: String,
    pub path: String,
    /// Whether the file existed before set-up (restore removes it otherwise).
    pub existed: bool,
    /// Unix mode of the original file.
    pub mode: Option<u32>,
    /// SHA-256 of the original bytes (with the moved key in place).
    pub original_sha256: String,
    /// SHA-256 of what set-up wrote last.
    pub written_sha256: String,
    pub slug: String,
    pub created_at_ms: i64,
    /// The profile that holds the moved key, when one was moved.
    pub moved_profile: Option<String>,
    pub moved_slug: Option<String>,
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

pub fn dir_for(data_dir: &Path, client: &str, path: &Path) -> PathBuf {
    let tag = &sha256_hex(path.to_string_lossy().as_bytes())[..12];
    data_dir.join("client-backups").join(format!("{client}-{tag}"))
}

fn io(what: &str, path: &Path, e: std::io::Error) -> EngineError {
    EngineError::Internal(format!("cannot {what} {}: {e}", path.display()))
}

pub fn read_manifest(dir: &Path) -> Result<Option<Manifest>, EngineError> {
    let path = dir.join("manifest.json");
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| EngineError::Internal(format!("unreadable backup manifest {}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io("read", &path, e)),
    }
}

pub fn read_original(dir: &Path) -> Result<Vec<u8>, EngineError> {
    let path = dir.join("original");
    std::fs::read(&path).map_err(|e| io("read", &path, e))
}

/// Keeps `original` (when given: the first set-up) and writes the manifest.
pub fn save(dir: &Path, manifest: &Manifest, original: Option<&[u8]>) -> Result<(), EngineError> {
    std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for d in [dir, dir.parent().unwrap_or(dir)] {
            let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700));
        }
    }
    if let Some(bytes) = original {
        write_atomic(&dir.join("original"), bytes, Some(0o600))?;
    }
    let json = serde_json::to_vec_pretty(manifest).map_err(|e| EngineError::Internal(e.to_string()))?;
    write_atomic(&dir.join("manifest.json"), &json, Some(0o600))
}

pub fn remove(dir: &Path) -> Result<(), EngineError> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("remove", dir, e)),
        _ => Ok(()),
    }
}

/// The unix mode of `path`, if it exists.
pub fn mode_of(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).ok().map(|m| m.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// The file a symlinked config (dotfile managers) points at, so the rename replaces the target
/// and keeps the link; `path` itself otherwise.
pub fn real_path(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    }
}

/// Writes `bytes` to a temp file next to `path`, with `mode` (unix), syncs it and renames it
/// over `path`: a reader sees the old file or the new one, never half of one.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: Option<u32>) -> Result<(), EngineError> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.switchyard-{}.tmp", std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            f.set_permissions(std::fs::Permissions::from_mode(mode.unwrap_or(0o600)))?;
        }
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io("write", path, e));
    }
    Ok(())
}
