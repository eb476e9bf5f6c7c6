//! The sealed vault's master key: 32 random bytes kept outside the store, in a file only its
//! owner can read (`SWITCHYARD_MASTER_KEY_FILE`) or a systemd credential
//! (`$CREDENTIALS_DIRECTORY/switchyard-master-key`). The file holds the 32 bytes raw, or as 64
//! hex digits (an optional trailing newline allowed: `openssl rand -hex 32 > key`). A file that
//! group or others may read is refused: a key anyone on the host can read seals nothing.

use std::fmt;
use std::path::{Path, PathBuf};

use ring::digest;
use zeroize::Zeroizing;

use crate::VaultError;

/// Environment variable naming the master key file.
pub const MASTER_KEY_FILE_ENV: &str = "SWITCHYARD_MASTER_KEY_FILE";
/// The systemd credential's name (`LoadCredential=switchyard-master-key:/etc/…`).
pub const CREDENTIAL_NAME: &str = "switchyard-master-key";
/// Length of a master key in bytes.
pub const KEY_BYTES: usize = 32;

/// What a key id is computed over besides the key (a hash of the bare key is never shown).
const KEY_ID_LABEL: &[u8] = b"switchyard sealed vault key id v1\0";

/// A master key. Never printed (its `Debug` shows only the id), zeroized on drop.
pub struct MasterKey {
    bytes: Zeroizing<[u8; KEY_BYTES]>,
    id: String,
}

impl fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MasterKey(id {})", self.id)
    }
}

impl MasterKey {
    /// A key from its 32 bytes.
    pub fn from_bytes(bytes: [u8; KEY_BYTES]) -> Self {
        let bytes = Zeroizing::new(bytes);
        let mut ctx = digest::Context::new(&digest::SHA256);
        ctx.update(KEY_ID_LABEL);
        ctx.update(bytes.as_ref());
        let id = hex16(ctx.finish().as_ref());
        MasterKey { bytes, id }
    }

    /// 32 fresh random bytes (tests; `vault rotate-master-key` takes a file the operator made).
    pub fn generate() -> Result<Self, VaultError> {
        let mut bytes = [0u8; KEY_BYTES];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
            .map_err(|_| VaultError::Sealed("no randomness for a master key".into()))?;
        Ok(Self::from_bytes(bytes))
    }

    /// The key's id: 16 hex digits of a labelled SHA-256 of it, stored beside each sealed
    /// secret so a wrong key is named at start instead of failing every read.
    pub fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn bytes(&self) -> &[u8; KEY_BYTES] {
        &self.bytes
    }

    /// Reads the key from `path`, refusing a file group or others may access.
    pub fn from_file(path: &Path) -> Result<Self, VaultError> {
        let shown = path.display();
        let meta = std::fs::metadata(path)
            .map_err(|e| VaultError::Sealed(format!("cannot read the master key file {shown}: {e}")))?;
        if let Some(mode) = loose_mode(&meta) {
            return Err(VaultError::Sealed(format!(
                "the master key file {shown} has mode {mode:04o}; it must be readable by its owner only (chmod 600)"
            )));
        }
        if !meta.is_file() {
            return Err(VaultError::Sealed(format!("the master key file {shown} is not a regular file")));
        }
        let raw = Zeroizing::new(
            std::fs::read(path)
                .map_err(|e| VaultError::Sealed(format!("cannot read the master key file {shown}: {e}")))?,
        );
        let bytes = parse(&raw).ok_or_else(|| {
            VaultError::Sealed(format!(
                "the master key file {shown} must hold 32 bytes (raw, or as 64 hex digits); it holds {} bytes",
                raw.len()
            ))
        })?;
        let distinct = distinct_bytes(&bytes);
        if distinct < MIN_DISTINCT_BYTES {
            return Err(VaultError::Sealed(format!(
                "the master key file {shown} holds {distinct} distinct byte values: it is not random (make one with \
                 `head -c 32 /dev/urandom > FILE` or `openssl rand -hex 32 > FILE`)"
            )));
        }
        Ok(Self::from_bytes(bytes))
    }

    /// Where this process's key comes from: `SWITCHYARD_MASTER_KEY_FILE`, else the systemd
    /// credential when `$CREDENTIALS_DIRECTORY` holds one; `None` when neither is given.
    pub fn source_from_env() -> Option<PathBuf> {
        if let Some(file) = std::env::var_os(MASTER_KEY_FILE_ENV).filter(|v| !v.is_empty()) {
            return Some(PathBuf::from(file));
        }
        let dir = std::env::var_os("CREDENTIALS_DIRECTORY").filter(|v| !v.is_empty())?;
        let file = Path::new(&dir).join(CREDENTIAL_NAME);
        file.exists().then_some(file)
    }

    /// The key from [`MasterKey::source_from_env`]; a missing key is an error that says how
    /// to give one.
    pub fn from_env() -> Result<Self, VaultError> {
        match Self::source_from_env() {
            Some(file) => Self::from_file(&file),
            None => Err(VaultError::Sealed(format!(
                "no master key: set {MASTER_KEY_FILE_ENV} to a file (mode 0600) holding 32 random bytes, \
                 or pass the systemd credential {CREDENTIAL_NAME}"
            ))),
        }
    }
}

/// Fewest distinct byte values a key file's 32 bytes may hold. 32 random bytes hold about 30; the
/// chance they hold fewer than 16 is below 1e-12, while an all-zero, constant, counting or
/// typed-in key (`0000…`, `abab…`) holds a handful.
pub const MIN_DISTINCT_BYTES: usize = 16;

fn distinct_bytes(bytes: &[u8; KEY_BYTES]) -> usize {
    let mut seen = [false; 256];
    bytes.iter().for_each(|b| seen[usize::from(*b)] = true);
    seen.iter().filter(|s| **s).count()
}

/// The permission bits of a file that group or others may access (`None`: owner only, or not
/// Unix). What holds a secret — the master key file, a relay's TLS key — is refused with it.
pub fn loose_mode(meta: &std::fs::Metadata) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        (mode & 0o077 != 0).then_some(mode)
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// 32 raw bytes, or 64 hex digits with an optional trailing newline.
fn parse(raw: &[u8]) -> Option<[u8; KEY_BYTES]> {
    if let Ok(bytes) = <[u8; KEY_BYTES]>::try_from(raw) {
        return Some(bytes);
    }
    let text = raw.strip_suffix(b"\n").unwrap_or(raw);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    if text.len() != KEY_BYTES * 2 {
        return None;
    }
    let mut out = [0u8; KEY_BYTES];
    for (i, pair) in text.chunks_exact(2).enumerate() {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = (pair[1] as char).to_digit(16)?;
        out[i] = u8::try_from(hi * 16 + lo).ok()?;
    }
    Some(out)
}

fn hex16(bytes: &[u8]) -> String {
    bytes.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, bytes: &[u8], mode: u32) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("write {name}: {e}"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
                .unwrap_or_else(|e| panic!("chmod {name}: {e}"));
        }
        path
    }

    #[test]
    fn a_key_file_is_raw_or_hex_and_owner_only() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let key: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(37).wrapping_add(7));
        let raw = write(dir.path(), "raw", &key, 0o600);
        let hex_text: String = key.iter().map(|b| format!("{b:02x}")).collect();
        let hex = write(dir.path(), "hex", format!("{hex_text}\n").as_bytes(), 0o400);
        let (a, b) = (MasterKey::from_file(&raw), MasterKey::from_file(&hex));
        let (a, b) = (a.unwrap_or_else(|e| panic!("raw: {e}")), b.unwrap_or_else(|e| panic!("hex: {e}")));
        assert_eq!(a.id(), b.id(), "the same 32 bytes, raw or hex, are the same key");
        assert_eq!(a.id().len(), 16, "a key id is 16 hex digits");

        let open = write(dir.path(), "open", &key, 0o644);
        let refused = MasterKey::from_file(&open).map(|_| ()).unwrap_err_or_panic("a 0644 key file");
        assert!(refused.to_string().contains("chmod 600"), "the refusal says what to do: {refused}");

        let short = write(dir.path(), "short", &key[..31], 0o600);
        let refused = MasterKey::from_file(&short).map(|_| ()).unwrap_err_or_panic("a 31-byte key file");
        assert!(refused.to_string().contains("32 bytes"), "the refusal names the size: {refused}");

        // Issue 39: an all-zero or constant key was accepted.
        let counting: [u8; 32] = std::array::from_fn(|i| (i % 8) as u8);
        for (name, bytes) in [("zero", [0u8; 32]), ("constant", [7u8; 32]), ("counting", counting)] {
            let typed = write(dir.path(), name, &bytes, 0o600);
            let refused = MasterKey::from_file(&typed).map(|_| ()).unwrap_err_or_panic(name);
            assert!(refused.to_string().contains("not random"), "{name}: the refusal says why: {refused}");
            assert!(refused.to_string().contains("/dev/urandom"), "{name}: and how to make one: {refused}");
        }
        let fresh = MasterKey::generate().unwrap_or_else(|e| panic!("generate: {e}"));
        assert!(distinct_bytes(fresh.bytes()) >= MIN_DISTINCT_BYTES, "a generated key passes the check");
    }

    #[test]
    fn debug_shows_the_id_not_the_key() {
        let key = MasterKey::from_bytes([0xab; 32]);
        let shown = format!("{key:?}");
        assert_eq!(shown, format!("MasterKey(id {})", key.id()), "only the id is shown, never the bytes");
    }

    trait ErrOrPanic {
        fn unwrap_err_or_panic(self, what: &str) -> VaultError;
    }

    impl ErrOrPanic for Result<(), VaultError> {
        fn unwrap_err_or_panic(self, what: &str) -> VaultError {
            match self {
                Ok(()) => panic!("{what} must be refused"),
                Err(e) => e,
            }
        }
    }
}
