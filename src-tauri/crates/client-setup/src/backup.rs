//! The original of a client's file, kept under the data dir (`client-backups/<client>-<hash of
//! the path>/`: `original` and `manifest.json`, owner-only) until `client restore`; and the
//! atomic write (temp file in the same dir + rename), which re-checks the file's hash right
//! before the rename so an edit made meanwhile is never overwritten.
//!
//! A provider key moved into the keychain is not kept here: `original` holds a placeholder in
//! each of its literals ([`MovedSpot`], `moved_key.rs`) and restore puts the profile's secret
//! back, so the restored file is byte-identical.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use switchyard_engine::EngineError;

/// Stands for a moved provider key inside a kept original.
pub const MOVED_KEY: &str = "__switchyard_moved_key__";

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

/// [`write_atomic`] with `before_rename` called between the temp file and the check (tests
/// edit the file there).
fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    mode: Option<u32>,
    expect: Option<&str>,
    before_rename: impl FnOnce(),
) -> Result<(), EngineError> {
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
        f.sync_all()
    })();
    if let Err(e) = written {
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
}
