//! TLS for every network path: the client side (`https://` upstreams of `serve` and
//! `mcp-proxy`, `rediss://` state) and the server side (TLS listeners of both fronts).
//!
//! rustls with the `aws-lc-rs` provider (the one with post-quantum hybrid key exchange,
//! X25519MLKEM768, preferred), chosen explicitly per configuration (never the process
//! default, so another crate's provider cannot change what is accepted); TLS 1.2 and 1.3
//! with rustls's safe defaults; no OpenSSL.
//!
//! **Roots.** By default an upstream's certificate is verified against the operating
//! system's trust store, read once per process with `rustls-native-certs` (it honours
//! `SSL_CERT_FILE` and `SSL_CERT_DIR`). Chosen over the compiled-in `webpki-roots` bundle
//! because operators of gateways add their own CAs to the system store (corporate and
//! service-mesh CAs) and expect them honoured, and because a compiled-in bundle goes stale
//! with the binary. An extra CA file (PEM) is added to, or, with the system store turned off,
//! replaces the system roots. The name verified and sent as SNI is the upstream's host (an IP
//! address is verified against the certificate's IP addresses and sends no SNI, as RFC 6066
//! requires).
//!
//! **Server certificates** are read from PEM files and held behind a resolver that
//! [`ServerTls::reload`] swaps atomically: handshakes in progress keep the pair they
//! started with, new ones get the new pair, and a reload that fails (unreadable file, a key
//! that does not match the certificate) keeps the old pair and says why.
//!
//! Files read here are bounded ([`MAX_PEM_BYTES`]).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, PoisonError, RwLock};
use std::time::SystemTime;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, RootCertStore, ServerConfig};

/// Largest certificate, key or CA file read (1 MiB).
pub const MAX_PEM_BYTES: u64 = 1 << 20;

/// What went wrong setting up TLS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TlsErrorKind {
    /// A file could not be read, or is larger than [`MAX_PEM_BYTES`].
    Read,
    /// A file holds no certificate, or one that is not valid PEM/DER.
    Certificate,
    /// A key file holds no private key, or one rustls cannot use, or one that does not
    /// belong to the certificate.
    Key,
    /// No trusted roots: the system store is empty and no CA file was given.
    Roots,
    /// A host that is not a valid DNS name or IP address for TLS.
    Name,
}

/// A TLS set-up error: its kind and a message naming the file or host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsError(Box<(TlsErrorKind, String)>);

impl TlsError {
    fn new(kind: TlsErrorKind, message: impl Into<String>) -> TlsError {
        TlsError(Box::new((kind, message.into())))
    }
    /// The kind of failure.
    pub fn kind(&self) -> TlsErrorKind {
        self.0 .0
    }
    /// What failed, naming the file or host.
    pub fn message(&self) -> &str {
        &self.0 .1
    }
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0 .1)
    }
}

impl std::error::Error for TlsError {}

fn provider() -> Arc<CryptoProvider> {
    static P: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    Arc::clone(P.get_or_init(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider())))
}

fn read_pem(path: &Path, what: &str) -> Result<Vec<u8>, TlsError> {
    use std::io::Read;
    let read = |e: std::io::Error| {
        TlsError::new(
            TlsErrorKind::Read,
            format!("{what} '{}': {e}", path.display()),
        )
    };
    let f = std::fs::File::open(path).map_err(read)?;
    let mut bytes = Vec::new();
    f.take(MAX_PEM_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read)?;
    if bytes.len() as u64 > MAX_PEM_BYTES {
        return Err(TlsError::new(
            TlsErrorKind::Read,
            format!(
                "{what} '{}' is larger than {MAX_PEM_BYTES} bytes",
                path.display()
            ),
        ));
    }
    Ok(bytes)
}

fn certificates(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bytes = read_pem(path, what)?;
    let bad = || {
        TlsError::new(
            TlsErrorKind::Certificate,
            format!("{what} '{}' holds no PEM certificate", path.display()),
        )
    };
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| bad())?;
    if certs.is_empty() {
        return Err(bad());
    }
    Ok(certs)
}

fn private_key(path: &Path, what: &str) -> Result<PrivateKeyDer<'static>, TlsError> {
    let bytes = read_pem(path, what)?;
    PrivateKeyDer::from_pem_slice(&bytes).map_err(|_| {
        TlsError::new(
            TlsErrorKind::Key,
            format!(
                "{what} '{}' holds no PEM private key (PKCS#8, PKCS#1 or SEC1)",
                path.display()
            ),
        )
    })
}

/// The system's trust store, read once per process (empty when none is found).
fn system_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| rustls_native_certs::load_native_certs().certs)
}

/// How a client verifies and identifies itself to TLS servers: consuming setters, then
/// [`ClientTlsOptions::build`].
///
/// # Example
/// ```
/// use jsongate::tls::{ClientTlsOptions, TlsErrorKind};
/// // Only the system's roots (the default) — may be empty on a minimal container.
/// let _ = ClientTlsOptions::new().build();
/// // No roots at all is refused.
/// let err = ClientTlsOptions::new().system_roots(false).build().unwrap_err();
/// assert_eq!(err.kind(), TlsErrorKind::Roots);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientTlsOptions {
    ca_file: Option<PathBuf>,
    no_system_roots: bool,
    client_cert: Option<(PathBuf, PathBuf)>,
}

impl ClientTlsOptions {
    /// The system's roots, no extra CA, no client certificate.
    pub fn new() -> ClientTlsOptions {
        ClientTlsOptions::default()
    }
    /// Also trusts the CA certificates in this PEM file.
    #[must_use]
    pub fn ca_file(mut self, path: impl Into<PathBuf>) -> ClientTlsOptions {
        self.ca_file = Some(path.into());
        self
    }
    /// Whether the system's trust store is used (default `true`); with `false`, only the CA
    /// file is trusted.
    #[must_use]
    pub fn system_roots(mut self, on: bool) -> ClientTlsOptions {
        self.no_system_roots = !on;
        self
    }
    /// Presents this certificate chain and key (PEM files) when the server asks (mTLS).
    #[must_use]
    pub fn client_cert(
        mut self,
        cert: impl Into<PathBuf>,
        key: impl Into<PathBuf>,
    ) -> ClientTlsOptions {
        self.client_cert = Some((cert.into(), key.into()));
        self
    }
    /// The CA file, when one is set.
    pub fn get_ca_file(&self) -> Option<&Path> {
        self.ca_file.as_deref()
    }

    /// Reads the files and builds the client configuration.
    ///
    /// # Errors
    /// A file cannot be read or holds no certificate or key ([`TlsErrorKind::Read`],
    /// [`TlsErrorKind::Certificate`], [`TlsErrorKind::Key`]); no root is trusted
    /// ([`TlsErrorKind::Roots`]).
    pub fn build(&self) -> Result<ClientTls, TlsError> {
        let mut roots = RootCertStore::empty();
        if !self.no_system_roots {
            roots.add_parsable_certificates(system_roots().iter().cloned());
        }
        if let Some(ca) = &self.ca_file {
            for c in certificates(ca, "CA file")? {
                roots.add(c).map_err(|e| {
                    TlsError::new(
                        TlsErrorKind::Certificate,
                        format!("CA file '{}': {e}", ca.display()),
                    )
                })?;
            }
        }
        if roots.is_empty() {
            return Err(TlsError::new(
                TlsErrorKind::Roots,
                "no trusted roots: the system trust store is empty or turned off and no CA file was given",
            ));
        }
        let builder = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::new(TlsErrorKind::Roots, e.to_string()))?
            .with_root_certificates(roots);
        let config = match &self.client_cert {
            None => builder.with_no_client_auth(),
            Some((cert, key)) => {
                let certs = certificates(cert, "client certificate")?;
                let der = private_key(key, "client key")?;
                builder.with_client_auth_cert(certs, der).map_err(|e| {
                    TlsError::new(
                        TlsErrorKind::Key,
                        format!("client key '{}': {e}", key.display()),
                    )
                })?
            }
        };
        // No ALPN: HTTP/1.1 is what a server assumes without it, and Redis knows none.
        Ok(ClientTls {
            config: Arc::new(config),
        })
    }
}

/// A built client configuration, cheap to clone and shared by every connection.
#[derive(Clone)]
pub struct ClientTls {
    config: Arc<ClientConfig>,
}

impl fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientTls").finish_non_exhaustive()
    }
}

impl ClientTls {
    /// The rustls configuration (for `tokio-rustls` or `rustls::StreamOwned`).
    pub fn config(&self) -> Arc<ClientConfig> {
        Arc::clone(&self.config)
    }

    /// Connects over TLS on a blocking stream, completing the handshake within the stream's
    /// own read and write timeouts.
    ///
    /// # Errors
    /// `host` is not a name for TLS, or the handshake fails (the certificate does not verify,
    /// the server speaks no TLS, a timeout): an `io::Error` naming why.
    pub fn connect_blocking<S: std::io::Read + std::io::Write>(
        &self,
        host: &str,
        mut stream: S,
    ) -> std::io::Result<rustls::StreamOwned<rustls::ClientConnection, S>> {
        let name = server_name(host).map_err(|e| std::io::Error::other(e.to_string()))?;
        let mut conn =
            rustls::ClientConnection::new(self.config(), name).map_err(std::io::Error::other)?;
        while conn.is_handshaking() {
            conn.complete_io(&mut stream)?;
        }
        Ok(rustls::StreamOwned::new(conn, stream))
    }
}

/// The name verified against an upstream's certificate: a DNS name, or an IP address
/// (brackets of an IPv6 literal removed).
///
/// # Errors
/// [`TlsErrorKind::Name`] when `host` is neither.
///
/// # Example
/// ```
/// use jsongate::tls::server_name;
/// assert!(server_name("api.example.com").is_ok());
/// assert!(server_name("[::1]").is_ok());
/// assert!(server_name("bad host").is_err());
/// ```
pub fn server_name(host: &str) -> Result<ServerName<'static>, TlsError> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    ServerName::try_from(bare.to_owned()).map_err(|_| {
        TlsError::new(
            TlsErrorKind::Name,
            format!("'{host}' is not a host name or IP address TLS can verify"),
        )
    })
}

/// The certificate and key files of a TLS listener, as last read.
struct Loaded {
    key: Arc<CertifiedKey>,
    stamp: Option<(SystemTime, SystemTime)>,
}

/// The resolver behind [`ServerTls`]: every handshake takes the pair current at its start.
struct Resolver {
    cert: PathBuf,
    key: PathBuf,
    current: RwLock<Loaded>,
}

impl fmt::Debug for Resolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resolver")
            .field("cert", &self.cert)
            .finish_non_exhaustive()
    }
}

impl ResolvesServerCert for Resolver {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let cur = self.current.read().unwrap_or_else(PoisonError::into_inner);
        Some(Arc::clone(&cur.key))
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

impl Resolver {
    fn stamp(&self) -> Option<(SystemTime, SystemTime)> {
        Some((modified(&self.cert)?, modified(&self.key)?))
    }

    fn load(cert: &Path, key: &Path) -> Result<Arc<CertifiedKey>, TlsError> {
        let certs = certificates(cert, "certificate file")?;
        let der = private_key(key, "key file")?;
        let signing = provider().key_provider.load_private_key(der).map_err(|e| {
            TlsError::new(
                TlsErrorKind::Key,
                format!("key file '{}': {e}", key.display()),
            )
        })?;
        let ck = CertifiedKey::new(certs, signing);
        ck.keys_match().map_err(|_| {
            TlsError::new(
                TlsErrorKind::Key,
                format!(
                    "key file '{}' does not belong to the certificate in '{}'",
                    key.display(),
                    cert.display()
                ),
            )
        })?;
        Ok(Arc::new(ck))
    }
}

/// A TLS listener's configuration: a certificate chain and its key, read from PEM files and
/// reloadable while serving.
///
/// # Example
/// ```
/// use jsongate::tls::{ServerTls, TlsErrorKind};
/// let dir = tempfile::tempdir().unwrap();
/// let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
/// std::fs::write(dir.path().join("cert.pem"), cert.cert.pem()).unwrap();
/// std::fs::write(dir.path().join("key.pem"), cert.key_pair.serialize_pem()).unwrap();
/// let tls = ServerTls::load(dir.path().join("cert.pem"), dir.path().join("key.pem"))?;
/// assert_eq!(tls.reload_if_changed()?, false); // nothing changed
/// std::fs::write(dir.path().join("key.pem"), "not a key").unwrap();
/// assert_eq!(tls.reload().unwrap_err().kind(), TlsErrorKind::Key); // the old pair stays
/// # Ok::<(), jsongate::tls::TlsError>(())
/// ```
#[derive(Clone, Debug)]
pub struct ServerTls {
    resolver: Arc<Resolver>,
    config: Arc<ServerConfig>,
}

impl ServerTls {
    /// Reads the certificate chain and key (PEM; the key PKCS#8, PKCS#1 or SEC1).
    ///
    /// # Errors
    /// A file cannot be read, holds no certificate or key, or the key does not belong to the
    /// certificate.
    pub fn load(cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Result<ServerTls, TlsError> {
        let (cert, key) = (cert.into(), key.into());
        let loaded = Resolver::load(&cert, &key)?;
        let resolver = Arc::new(Resolver {
            current: RwLock::new(Loaded {
                key: loaded,
                stamp: None,
            }),
            cert,
            key,
        });
        let stamp = resolver.stamp();
        resolver
            .current
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .stamp = stamp;
        let mut config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::new(TlsErrorKind::Key, e.to_string()))?
            .with_no_client_auth()
            .with_cert_resolver(Arc::clone(&resolver) as Arc<dyn ResolvesServerCert>);
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(ServerTls {
            resolver,
            config: Arc::new(config),
        })
    }

    /// The rustls configuration (for `tokio-rustls`).
    pub fn config(&self) -> Arc<ServerConfig> {
        Arc::clone(&self.config)
    }

    /// Reads both files again and, when they hold a matching pair, serves it to new
    /// handshakes.
    ///
    /// # Errors
    /// As [`load`](Self::load); the pair served before stays.
    pub fn reload(&self) -> Result<(), TlsError> {
        let stamp = self.resolver.stamp();
        let key = Resolver::load(&self.resolver.cert, &self.resolver.key)?;
        let mut cur = self
            .resolver
            .current
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        cur.key = key;
        cur.stamp = stamp;
        Ok(())
    }

    /// Reloads when either file's modification time changed since it was last read;
    /// `Ok(true)` when a new pair is served.
    ///
    /// # Errors
    /// As [`reload`](Self::reload).
    pub fn reload_if_changed(&self) -> Result<bool, TlsError> {
        let now = self.resolver.stamp();
        let seen = self
            .resolver
            .current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .stamp;
        if now.is_none() || now == seen {
            return Ok(false);
        }
        self.reload().map(|()| true)
    }

    /// The certificate file.
    pub fn cert_file(&self) -> &Path {
        &self.resolver.cert
    }
}

/// How often a TLS listener looks at its certificate files for changes.
#[cfg(feature = "serve")]
pub const RELOAD_CHECK_INTERVAL: std::time::Duration = std::time::Duration::from_secs(5);

/// Keeps a listener's certificate current until the process ends: reloads on `SIGHUP`
/// (Unix) and when either file changes (checked every [`RELOAD_CHECK_INTERVAL`]), telling
/// stderr what happened. A reload that fails keeps the pair served before.
#[cfg(feature = "serve")]
pub(crate) fn watch(tls: ServerTls) {
    tokio::spawn(async move {
        #[cfg(unix)]
        let mut hup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
        let mut tick = tokio::time::interval(RELOAD_CHECK_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            #[cfg(unix)]
            let forced = tokio::select! {
                _ = tick.tick() => false,
                Some(()) = async { match hup.as_mut() { Some(h) => h.recv().await, None => std::future::pending().await } } => true,
            };
            #[cfg(not(unix))]
            let forced = {
                tick.tick().await;
                false
            };
            let res = if forced {
                tls.reload().map(|()| true)
            } else {
                tls.reload_if_changed()
            };
            match res {
                Ok(true) => eprintln!(
                    "jsongate: TLS certificate '{}' reloaded",
                    tls.cert_file().display()
                ),
                Ok(false) => {}
                Err(e) => eprintln!(
                    "jsongate: TLS certificate not reloaded, the previous one is still served: {e}"
                ),
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
        let c = rcgen::generate_simple_self_signed(vec![name.to_owned()]).unwrap();
        let (cp, kp) = (
            dir.join(format!("{name}.crt")),
            dir.join(format!("{name}.key")),
        );
        std::fs::write(&cp, c.cert.pem()).unwrap();
        std::fs::write(&kp, c.key_pair.serialize_pem()).unwrap();
        (cp, kp)
    }

    #[test]
    fn files_that_are_not_what_they_claim_are_refused_by_kind() {
        let d = tempfile::tempdir().unwrap();
        let (c, k) = pair(d.path(), "a.test");
        let (c2, k2) = pair(d.path(), "b.test");
        assert!(ServerTls::load(&c, &k).is_ok());
        let kind = |r: Result<ServerTls, TlsError>| r.unwrap_err().kind();
        assert_eq!(kind(ServerTls::load(&c, &k2)), TlsErrorKind::Key); // not its key
        assert_eq!(kind(ServerTls::load(&k, &k)), TlsErrorKind::Certificate);
        assert_eq!(kind(ServerTls::load(&c, &c2)), TlsErrorKind::Key);
        assert_eq!(
            kind(ServerTls::load(d.path().join("none"), &k)),
            TlsErrorKind::Read
        );
        let big = d.path().join("big.pem");
        std::fs::write(&big, vec![b'a'; MAX_PEM_BYTES as usize + 1]).unwrap();
        let e = ServerTls::load(&big, &k).unwrap_err();
        assert_eq!(e.kind(), TlsErrorKind::Read);
        assert!(e.message().contains("larger than"), "{e}");
    }

    #[test]
    fn a_reload_swaps_the_pair_and_a_failed_one_keeps_it() {
        let d = tempfile::tempdir().unwrap();
        let (c, k) = pair(d.path(), "a.test");
        let tls = ServerTls::load(&c, &k).unwrap();
        let first = tls.resolver.current.read().unwrap().key.cert[0].clone();
        let fresh = rcgen::generate_simple_self_signed(vec!["a.test".to_owned()]).unwrap();
        std::fs::write(&c, fresh.cert.pem()).unwrap();
        // Certificate changed, key not yet: refused, the old pair stays.
        assert_eq!(tls.reload().unwrap_err().kind(), TlsErrorKind::Key);
        assert_eq!(tls.resolver.current.read().unwrap().key.cert[0], first);
        std::fs::write(&k, fresh.key_pair.serialize_pem()).unwrap();
        tls.reload().unwrap();
        let now = tls.resolver.current.read().unwrap().key.cert[0].clone();
        assert_ne!(now, first);
        assert_eq!(now.as_ref(), fresh.cert.der().as_ref());
    }

    #[test]
    fn client_options_read_their_files() {
        let d = tempfile::tempdir().unwrap();
        let (c, k) = pair(d.path(), "ca.test");
        let only_ca = ClientTlsOptions::new().system_roots(false).ca_file(&c);
        assert!(only_ca.build().is_ok());
        assert!(only_ca.clone().client_cert(&c, &k).build().is_ok());
        let e = only_ca.clone().client_cert(&c, &c).build().unwrap_err();
        assert_eq!(e.kind(), TlsErrorKind::Key);
        let e = ClientTlsOptions::new()
            .system_roots(false)
            .ca_file(&k)
            .build()
            .unwrap_err();
        assert_eq!(e.kind(), TlsErrorKind::Certificate);
    }

    #[test]
    fn server_names() {
        assert!(matches!(
            server_name("127.0.0.1").unwrap(),
            ServerName::IpAddress(_)
        ));
        assert!(matches!(
            server_name("[::1]").unwrap(),
            ServerName::IpAddress(_)
        ));
        assert!(matches!(
            server_name("example.com").unwrap(),
            ServerName::DnsName(_)
        ));
        assert_eq!(server_name("a b").unwrap_err().kind(), TlsErrorKind::Name);
    }

    #[test]
    fn a_blocking_client_verifies_the_server() {
        use std::io::{Read, Write};
        let d = tempfile::tempdir().unwrap();
        let (c, k) = pair(d.path(), "localhost");
        let server = ServerTls::load(&c, &k).unwrap();
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let srv = std::thread::spawn(move || {
            for _ in 0..2 {
                let (s, _) = l.accept().unwrap();
                let conn = rustls::ServerConnection::new(server.config()).unwrap();
                let mut tls = rustls::StreamOwned::new(conn, s);
                let mut b = [0u8; 4];
                if tls.read_exact(&mut b).is_ok() {
                    let _ = tls.write_all(b"pong");
                    let _ = tls.flush();
                }
            }
        });
        let trusting = ClientTlsOptions::new()
            .system_roots(false)
            .ca_file(&c)
            .build()
            .unwrap();
        let tcp = std::net::TcpStream::connect(addr).unwrap();
        let mut s = trusting.connect_blocking("localhost", tcp).unwrap();
        s.write_all(b"ping").unwrap();
        let mut b = [0u8; 4];
        s.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"pong");
        // A client that trusts another CA refuses the server.
        let (other, _) = pair(d.path(), "other");
        let wary = ClientTlsOptions::new()
            .system_roots(false)
            .ca_file(&other)
            .build()
            .unwrap();
        let tcp = std::net::TcpStream::connect(addr).unwrap();
        let e = wary.connect_blocking("localhost", tcp).unwrap_err();
        assert!(e.to_string().contains("certificate"), "{e}");
        srv.join().unwrap();
    }
}
