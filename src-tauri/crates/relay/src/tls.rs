//! TLS for a relay that listens beyond loopback (invariant 27): the certificate chain and the
//! private key are PEM files (`relay serve --tls-cert FILE --tls-key FILE`), read at start and
//! again on [`Certificate::reload`] (`relay serve` on SIGHUP: a renewed certificate is served to
//! every new connection without a restart; a reload that fails keeps serving the old one);
//! rustls with ring, TLS 1.2 and 1.3, HTTP/1.1 only (the relay speaks nothing else). A file
//! that does not read or parse stops the start with a message naming it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

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

fn read(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read the TLS {what} {}: {e}", path.display()))
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
    pub fn load(files: &TlsFiles) -> Result<Arc<Certificate>, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let current = RwLock::new(Arc::new(certified(files, &provider)?));
        Ok(Arc::new(Certificate { files: files.clone(), provider, current }))
    }

    /// Reads the files again; connections made from now on get the new certificate. On an
    /// error the one served so far stays.
    pub fn reload(&self) -> Result<(), String> {
        let fresh = Arc::new(certified(&self.files, &self.provider)?);
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

/// The chain and key of `files`, the key checked against the chain's first certificate.
fn certified(files: &TlsFiles, provider: &CryptoProvider) -> Result<CertifiedKey, String> {
    let cert_pem = read(&files.cert, "certificate")?;
    let certs = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("the TLS certificate {} is not PEM: {e}", files.cert.display()))?;
    if certs.is_empty() {
        return Err(format!("the TLS certificate {} holds no certificate", files.cert.display()));
    }
    let key_pem = read(&files.key, "key")?;
    // The error names the file only: a key's bytes never reach a message.
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|_| format!("the TLS key {} holds no PEM private key", files.key.display()))?;
    CertifiedKey::from_der(certs, key, provider)
        .map_err(|e| format!("the TLS key {} does not fit the certificate: {e}", files.key.display()))
}
