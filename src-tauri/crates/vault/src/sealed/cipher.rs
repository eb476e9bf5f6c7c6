//! Sealing one secret: ChaCha20-Poly1305 (`ring`) under the master key, a fresh random 96-bit
//! nonce per seal, the locator as associated data (a row copied to another address does not
//! open). Random 96-bit nonces are safe far beyond the number of secrets a store holds (the
//! collision bound reaches 2^-32 only after ~2^32 seals under one key).

use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};
use zeroize::Zeroizing;

use super::master_key::MasterKey;
use crate::{Locator, Secret, VaultError};

/// What the sealed vault stores for one locator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedEntry {
    pub locator: Locator,
    /// The id of the master key it was sealed under.
    pub key_id: String,
    pub nonce: Vec<u8>,
    /// The ciphertext with its 16-byte tag appended.
    pub ciphertext: Vec<u8>,
}

/// A master key ready to seal and open.
pub struct Sealer {
    key: LessSafeKey,
    id: String,
    rng: SystemRandom,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sealer(key id {})", self.id)
    }
}

/// Associated data: a version label and the locator.
fn aad(locator: &Locator) -> Vec<u8> {
    let mut v = b"switchyard sealed v1\0".to_vec();
    v.extend_from_slice(locator.service.as_bytes());
    v.push(0);
    v.extend_from_slice(locator.account.as_bytes());
    v
}

impl Sealer {
    pub fn new(key: &MasterKey) -> Result<Self, VaultError> {
        let unbound = UnboundKey::new(&CHACHA20_POLY1305, key.bytes())
            .map_err(|_| VaultError::Sealed("the master key does not fit the cipher".into()))?;
        Ok(Sealer { key: LessSafeKey::new(unbound), id: key.id().to_string(), rng: SystemRandom::new() })
    }

    /// The id of the key this sealer uses.
    pub fn key_id(&self) -> &str {
        &self.id
    }

    pub fn seal(&self, locator: &Locator, secret: &Secret) -> Result<SealedEntry, VaultError> {
        let mut nonce = [0u8; NONCE_LEN];
        self.rng.fill(&mut nonce).map_err(|_| VaultError::Sealed("no randomness for a nonce".into()))?;
        let mut buf = secret.expose().as_bytes().to_vec();
        self.key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(aad(locator)), &mut buf)
            .map_err(|_| VaultError::Sealed("sealing failed".into()))?;
        Ok(SealedEntry { locator: locator.clone(), key_id: self.id.clone(), nonce: nonce.to_vec(), ciphertext: buf })
    }

    /// Opens `entry`. A row sealed under another key, or altered, or moved to another locator
    /// is an error naming what is wrong; it never returns garbage.
    pub fn open(&self, entry: &SealedEntry) -> Result<Secret, VaultError> {
        if entry.key_id != self.id {
            return Err(VaultError::Sealed(format!(
                "{} is sealed under master key {}, but this process holds master key {}: wrong master key file",
                entry.locator, entry.key_id, self.id
            )));
        }
        let nonce = <[u8; NONCE_LEN]>::try_from(entry.nonce.as_slice())
            .map_err(|_| VaultError::Sealed(format!("{} has a malformed nonce", entry.locator)))?;
        let mut buf = Zeroizing::new(entry.ciphertext.clone());
        let plain = self
            .key
            .open_in_place(Nonce::assume_unique_for_key(nonce), Aad::from(aad(&entry.locator)), &mut buf)
            .map_err(|_| {
                VaultError::Sealed(format!(
                    "{} does not open under master key {} (altered, moved or sealed under another key)",
                    entry.locator, self.id
                ))
            })?;
        let text = std::str::from_utf8(plain)
            .map_err(|_| VaultError::Sealed(format!("{} opened to bytes that are not UTF-8", entry.locator)))?;
        Ok(Secret::new(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(account: &str) -> Locator {
        Locator { service: "switchyard.i1".into(), account: account.into() }
    }

    fn sealer(byte: u8) -> Sealer {
        Sealer::new(&MasterKey::from_bytes([byte; 32])).unwrap_or_else(|e| panic!("sealer: {e}"))
    }

    #[test]
    fn seals_with_a_fresh_nonce_and_opens_only_where_it_was_sealed() {
        let s = sealer(1);
        let canary = Secret::new("sk-canary-sealed-0001");
        let a = s.seal(&loc("profile/p1/n"), &canary).unwrap_or_else(|e| panic!("seal: {e}"));
        let b = s.seal(&loc("profile/p1/n"), &canary).unwrap_or_else(|e| panic!("seal: {e}"));
        assert_ne!(a.nonce, b.nonce, "every seal draws a new nonce");
        assert_ne!(a.ciphertext, b.ciphertext, "so the same secret never seals to the same bytes");
        assert!(!a.ciphertext.windows(6).any(|w| w == b"canary"), "the ciphertext does not carry the plaintext");
        assert_eq!(s.open(&a).map(|x| x.expose().to_string()).ok().as_deref(), Some("sk-canary-sealed-0001"));

        let moved = SealedEntry { locator: loc("relay-token"), ..a.clone() };
        assert!(s.open(&moved).is_err(), "a row moved to another locator does not open");
        let mut altered = a.clone();
        altered.ciphertext[0] ^= 1;
        let e = s.open(&altered).map(|_| ()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("does not open"), "an altered row is a clear error: {e}");
        assert!(!e.contains("canary"), "errors never carry the secret: {e}");
    }

    #[test]
    fn another_key_is_named_not_decrypted_to_garbage() {
        let entry = sealer(1).seal(&loc("a"), &Secret::new("x")).unwrap_or_else(|e| panic!("seal: {e}"));
        let e = sealer(2).open(&entry).map(|_| ()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("wrong master key"), "a wrong key is named as such: {e}");
        let forged = SealedEntry { key_id: sealer(2).key_id().to_string(), ..entry };
        let e = sealer(2).open(&forged).map(|_| ()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("does not open"), "even with a forged key id the AEAD refuses: {e}");
    }
}
