//! TLS for a relay that listens beyond loopback (invariant 27): the certificate chain and the
//! private key are PEM files (`relay serve --tls-cert FILE --tls-key FILE`), read at start and
//! again on [`Certificate::reload`] (`relay serve` on SIGHUP: a renewed certificate is served to
//! every new connection without a restart; a reload that fails keeps serving the old one);
//! rustls with ring, TLS 1.2 and 1.3, HTTP/1.1 only (the relay speaks nothing else). A file
//! that does not read or parse stops the start with a message naming it; so does a key file that
//! group or others may read (as the master key file is refused) and a path that is not a
//! regular file. The files are read on a thread of their own, bounded by [`READ_TIMEOUT`]: a FIFO
//! or a hung mount at the path never stalls the runtime that serves requests.

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio_rustls::TlsAcceptor;

/// Where the certificate chain and its key are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// How long reading the certificate and key may take before the reload (or start) gives up.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// `path`'s bytes: a regular file (a FIFO, a device or a directory is refused before it is
/// opened), owner-only when `private` (a key group or others may read is no secret).
fn read(path: &Path, what: &str, private: bool) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read the TLS {what} {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("the TLS {what} {shown} is not a regular file"));
    }
    if let Some(mode) = private.then(|| switchyard_vault::loose_mode(&meta)).flatten() {
        return Err(format!(
            "the TLS {what} {shown} has mode {mode:04o}; it must be readable by its owner only (chmod 600)"
        ));
    }
    std::fs::read(path).map_err(|e| format!("cannot read the TLS {what} {shown}: {e}"))
}

/// Runs `work` on a thread of its own and waits at most `bound` for it: file reads that may
/// block (a FIFO opened by a race, a hung network mount) never hold a runtime thread. A thread
/// that never returns is left behind; its answer is dropped.
async fn off_runtime<T: Send + 'static>(
    bound: Duration,
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("switchyard-tls-read".into())
        .spawn(move || drop(tx.send(work())))
        .map_err(|e| format!("cannot start a thread to read the TLS files: {e}"))?;
    match tokio::time::timeout(bound, rx).await {
        Ok(Ok(done)) => done,
        Ok(Err(_)) => Err("reading the TLS files failed".into()),
        Err(_) => Err(format!("reading the TLS files took over {} s (a FIFO or a hung mount?)", bound.as_secs_f32())),
    }
}

/// The certificate a relay serves now, from its files; every handshake takes the current one.
#[derive(Debug)]
pub struct Certificate {
    files: TlsFiles,
    provider: Arc<CryptoProvider>,
    current: RwLock<Arc<CertifiedKey>>,
}

impl Certificate {
    /// Reads `files` (an error names the file that failed, never a key's bytes).
    pub async fn load(files: &TlsFiles) -> Result<Arc<Certificate>, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let current = RwLock::new(Arc::new(read_certified(files, &provider, READ_TIMEOUT).await?));
        Ok(Arc::new(Certificate { files: files.clone(), provider, current }))
    }

    /// Reads the files again; connections made from now on get the new certificate. On an
    /// error the one served so far stays.
    pub async fn reload(&self) -> Result<(), String> {
        let fresh = Arc::new(read_certified(&self.files, &self.provider, READ_TIMEOUT).await?);
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = fresh;
        Ok(())
    }

    /// An acceptor that serves this certificate (the current one at each handshake).
    pub fn acceptor(self: &Arc<Self>) -> Result<TlsAcceptor, String> {
        let mut config = rustls::ServerConfig::builder_with_provider(self.provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS set-up failed: {e}"))?
            .with_no_client_auth()
            .with_cert_resolver(self.clone());
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsAcceptor::from(Arc::new(config)))
    }
}

impl ResolvesServerCert for Certificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.read().unwrap_or_else(PoisonError::into_inner).clone())
    }
}

/// [`certified`] off the runtime, bounded by `bound`.
async fn read_certified(
    files: &TlsFiles,
    provider: &Arc<CryptoProvider>,
    bound: Duration,
) -> Result<CertifiedKey, String> {
    let (files, provider) = (files.clone(), provider.clone());
    off_runtime(bound, move || certified(&files, &provider)).await
}

/// The chain and key of `files`, the key checked against the chain's first certificate.
fn certified(files: &TlsFiles, provider: &CryptoProvider) -> Result<CertifiedKey, String> {
    let cert_pem = read(&files.cert, "certificate", false)?;
    let certs = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("the TLS certificate {} is not PEM: {e}", files.cert.display()))?;
    if certs.is_empty() {
        return Err(format!("the TLS certificate {} holds no certificate", files.cert.display()));
    }
    let key_pem = zeroize::Zeroizing::new(read(&files.key, "key", true)?);
    // The error names the file only: a key's bytes never reach a message.
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|_| format!("the TLS key {} holds no PEM private key", files.key.display()))?;
    CertifiedKey::from_der(certs, key, provider)
        .map_err(|e| format!("the TLS key {} does not fit the certificate: {e}", files.key.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_read_that_hangs_gives_up_at_its_bound_and_the_runtime_goes_on() {
        let started = std::time::Instant::now();
        let hung = off_runtime(Duration::from_millis(100), || {
            std::thread::sleep(Duration::from_secs(3));
            Ok(())
        })
        .await;
        let waited = started.elapsed();
        assert!(hung.is_err_and(|why| why.contains("took over")), "a hung read is an error that says so");
        assert!(waited < Duration::from_secs(1), "given up at the bound, not when the read ends: {waited:?}");
        let quick = off_runtime(Duration::from_secs(1), || Ok(7)).await;
        assert_eq!(quick, Ok(7), "a read that ends in time gives its answer");
    }
}
