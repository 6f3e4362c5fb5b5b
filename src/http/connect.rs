//! Opening a connection to an upstream, for both fronts (`serve` routes and the MCP HTTP
//! front): TCP within a connect timeout, then TLS when the upstream is `https://` (verified
//! by [`crate::tls::ClientTls`] against the upstream's host, which is also the SNI), then
//! the HTTP/1.1 handshake. The timeout covers TCP and TLS together.
//!
//! Also the credentials a front sends upstream in its own name ([`UpstreamHeaders`]): a
//! client's own `Authorization` is never forwarded (the MCP authorization specification
//! forbids token passthrough), so an upstream that needs credentials gets the operator's,
//! read from an environment variable or a file when the front starts.

use std::fmt;
use std::path::Path;
use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::Upstream;
use crate::tls::ClientTls;

/// Where an upstream is and how to reach it.
#[derive(Clone)]
pub(crate) struct Target {
    /// `host:port` to connect to.
    pub(crate) authority: String,
    /// TLS, verified against `host`, for an `https://` upstream.
    tls: Option<(ClientTls, rustls::pki_types::ServerName<'static>)>,
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Target")
            .field("authority", &self.authority)
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

impl Target {
    /// The target of `up`; an `https://` upstream needs `tls`.
    pub(crate) fn new(up: &Upstream, tls: Option<&ClientTls>) -> Result<Target, String> {
        let tls = if up.tls {
            let Some(t) = tls else {
                return Err(format!(
                    "upstream 'https://{}': no TLS configuration",
                    up.host_header
                ));
            };
            let name = crate::tls::server_name(&up.host).map_err(|e| e.to_string())?;
            Some((t.clone(), name))
        } else {
            None
        };
        Ok(Target {
            authority: up.authority.clone(),
            tls,
        })
    }

    /// The target at `authority` (`host:port`), over TLS verified against its host when
    /// `tls` is given (the MCP front's options name the upstream this way).
    #[cfg(feature = "mcp")]
    pub(crate) fn from_authority(
        authority: &str,
        tls: Option<&ClientTls>,
    ) -> Result<Target, String> {
        let tls = match tls {
            None => None,
            Some(t) => {
                let host = authority.rsplit_once(':').map_or(authority, |(h, _)| h);
                let name = crate::tls::server_name(host).map_err(|e| e.to_string())?;
                Some((t.clone(), name))
            }
        };
        Ok(Target {
            authority: authority.to_owned(),
            tls,
        })
    }
}

/// Opens a connection to `target` (the failure's kind, for audit records and the operators'
/// lines: `connect`, `connect_refused`, `connect_timeout`, `tls`, `handshake`).
pub(crate) async fn open<B>(
    target: &Target,
    timeout: Duration,
) -> Result<SendRequest<B>, &'static str>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let connect = async {
        let tcp = TcpStream::connect(&target.authority)
            .await
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::ConnectionRefused => "connect_refused",
                _ => "connect",
            })?;
        let _ = tcp.set_nodelay(true);
        match &target.tls {
            None => handshake(TokioIo::new(tcp)).await,
            Some((tls, name)) => {
                let conn = tokio_rustls::TlsConnector::from(tls.config())
                    .connect(name.clone(), tcp)
                    .await
                    .map_err(|_| "tls")?;
                handshake(TokioIo::new(conn)).await
            }
        }
    };
    match tokio::time::timeout(timeout, connect).await {
        Ok(r) => r,
        Err(_) => Err("connect_timeout"),
    }
}

async fn handshake<B, I>(io: I) -> Result<SendRequest<B>, &'static str>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|_| "handshake")?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// A secret from `env:VARIABLE` or `file:PATH` (relative to `dir`; one trailing newline
/// removed, at most 64 KiB): never from a command line or a configuration itself. Errors
/// name `what` and the variable or file, never the value.
pub(crate) fn secret_value(what: &str, spec: &str, dir: &Path) -> Result<String, String> {
    if let Some(var) = spec.strip_prefix("env:") {
        std::env::var(var)
            .map_err(|_| format!("{what}: environment variable '{var}' is not set (or not UTF-8)"))
    } else if let Some(path) = spec.strip_prefix("file:") {
        use std::io::Read;
        let path = dir.join(path);
        let fail = |e: std::io::Error| format!("{what}: '{}': {e}", path.display());
        let mut s = String::new();
        std::fs::File::open(&path)
            .map_err(fail)?
            .take(MAX_SECRET_BYTES + 1)
            .read_to_string(&mut s)
            .map_err(fail)?;
        if s.len() as u64 > MAX_SECRET_BYTES {
            return Err(format!(
                "{what}: '{}' is larger than {MAX_SECRET_BYTES} bytes",
                path.display()
            ));
        }
        let t = s.strip_suffix('\n').unwrap_or(&s);
        Ok(t.strip_suffix('\r').unwrap_or(t).to_owned())
    } else {
        Err(format!(
            "{what}: the value comes from 'env:VARIABLE' or 'file:PATH', never from the command line or configuration itself"
        ))
    }
}

/// Headers a front sends upstream in its own name (credentials for the upstream), read once
/// when the front starts. Their values are never printed: `Debug` shows the names only.
#[derive(Clone, Default)]
pub struct UpstreamHeaders(Vec<(HeaderName, HeaderValue)>);

impl fmt::Debug for UpstreamHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(k, _)| k.as_str()))
            .finish()
    }
}

/// Largest credential file read (64 KiB).
const MAX_SECRET_BYTES: u64 = 64 * 1024;

impl UpstreamHeaders {
    /// No headers.
    pub fn new() -> UpstreamHeaders {
        UpstreamHeaders::default()
    }

    /// Adds `name` with the value of a source spec: `env:VAR` (an environment variable) or
    /// `file:PATH` (a file's content, one trailing newline removed; relative to `dir`).
    /// The value is marked sensitive (HTTP/2 and logs never index or print it).
    ///
    /// # Errors
    /// The name is not a header name; the spec is neither form; the variable is unset; the
    /// file cannot be read or is larger than 64 KiB; the value is not a valid header value.
    /// Messages name the variable or file, never the value.
    ///
    /// # Example
    /// ```
    /// use jsongate::http::UpstreamHeaders;
    /// std::env::set_var("DOC_UPSTREAM_TOKEN", "Bearer s3cr3t");
    /// let h = UpstreamHeaders::new().add("Authorization", "env:DOC_UPSTREAM_TOKEN", std::path::Path::new("."))?;
    /// assert_eq!(format!("{h:?}"), r#"["authorization"]"#); // never the value
    /// let e = UpstreamHeaders::new().add("Authorization", "env:DOC_UNSET_VARIABLE", std::path::Path::new(".")).unwrap_err();
    /// assert!(e.contains("DOC_UNSET_VARIABLE"));
    /// assert!(UpstreamHeaders::new().add("Authorization", "Bearer inline", std::path::Path::new(".")).is_err());
    /// # Ok::<(), String>(())
    /// ```
    #[must_use = "the headers are returned, not changed in place"]
    pub fn add(mut self, name: &str, spec: &str, dir: &Path) -> Result<UpstreamHeaders, String> {
        let name = HeaderName::try_from(name.to_ascii_lowercase())
            .map_err(|_| format!("'{name}' is not a header name"))?;
        let value = secret_value(&format!("header {name}"), spec, dir)?;
        let mut value = HeaderValue::try_from(value).map_err(|_| {
            format!("header {name}: the value from '{spec}' is not a valid header value")
        })?;
        value.set_sensitive(true);
        self.0.push((name, value));
        Ok(self)
    }

    /// Sets every header on `headers` (replacing what is there under the same name).
    pub(crate) fn apply(&self, headers: &mut HeaderMap) {
        for (k, v) in &self.0 {
            headers.insert(k.clone(), v.clone());
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
