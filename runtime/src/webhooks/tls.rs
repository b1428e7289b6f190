//! The server certificate (`--tls-cert-file`, `--tls-private-key-file`, PEM), loaded at start
//! and reloaded when either file changes: a good new pair replaces the served one for new
//! connections; a bad one is logged and the last good pair stays (nothing is lost).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_rustls::rustls::ServerConfig;

/// Reads a certificate chain and its key.
///
/// Errors: a file that cannot be read, holds no PEM certificate or key, or a key that does not
/// belong to the certificate, naming the flag and the file.
pub fn load(cert: &Path, key: &Path) -> Result<Arc<CertifiedKey>, String> {
    let cert_pem = fs::read(cert).map_err(|e| format!("--tls-cert-file {}: {e}", cert.display()))?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("--tls-cert-file {}: not a PEM certificate: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!("--tls-cert-file {}: no PEM certificate in the file", cert.display()));
    }
    let key_pem = fs::read(key).map_err(|e| format!("--tls-private-key-file {}: {e}", key.display()))?;
    let der = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| format!("--tls-private-key-file {}: not a PEM private key: {e}", key.display()))?;
    let signing = ring::default_provider()
        .key_provider
        .load_private_key(der)
        .map_err(|e| format!("--tls-private-key-file {}: {e}", key.display()))?;
    let ck = CertifiedKey::new(certs, signing);
    ck.keys_match().map_err(|e| {
        format!("--tls-private-key-file {} does not match --tls-cert-file {}: {e}", key.display(), cert.display())
    })?;
    Ok(Arc::new(ck))
}

fn modified(p: &Path) -> Option<SystemTime> {
    fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// The served certificate, swapped on reload.
#[derive(Debug)]
pub struct ReloadingCert {
    current: RwLock<Arc<CertifiedKey>>,
    cert: PathBuf,
    key: PathBuf,
    seen: Mutex<(Option<SystemTime>, Option<SystemTime>, u64, u64)>,
}

impl ReloadingCert {
    /// Loads the pair. Errors as [`load`].
    pub fn new(cert: &Path, key: &Path) -> Result<Self, String> {
        let ck = load(cert, key)?;
        Ok(ReloadingCert {
            current: RwLock::new(ck),
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            seen: Mutex::new((modified(cert), modified(key), file_len(cert), file_len(key))),
        })
    }

    /// Reloads when either file's modification time or size changed since the last look:
    /// `Ok(true)` when a new pair is served, `Ok(false)` when nothing changed, `Err` (the last
    /// good pair still served) when the new files are bad. A bad pair is not retried until the
    /// files change again.
    pub fn reload_if_changed(&self) -> Result<bool, String> {
        let now = (modified(&self.cert), modified(&self.key), file_len(&self.cert), file_len(&self.key));
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if *seen == now {
            return Ok(false);
        }
        *seen = now;
        let ck = load(&self.cert, &self.key)?;
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = ck;
        Ok(true)
    }

    /// The pair served now.
    pub fn current(&self) -> Arc<CertifiedKey> {
        self.current.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

fn file_len(p: &Path) -> u64 {
    fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

/// A TLS server config (TLS 1.2 and 1.3, ring, HTTP/1.1) serving `cert`.
///
/// Errors: the provider refuses the protocol versions (not expected).
pub fn server_config(cert: Arc<ReloadingCert>) -> Result<Arc<ServerConfig>, String> {
    let mut cfg = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_cert_resolver(cert);
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}
