//! TLS for a relay that listens beyond loopback (invariant 27): the certificate chain and the
//! private key are PEM files (`relay serve --tls-cert FILE --tls-key FILE`), read once at start;
//! rustls with ring, TLS 1.2 and 1.3, HTTP/1.1 only (the relay speaks nothing else). A file
//! that does not read or parse stops the start with a message naming it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
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

/// A TLS acceptor for `files`.
pub fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor, String> {
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
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS set-up failed: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("the TLS key {} does not fit the certificate: {e}", files.key.display()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
