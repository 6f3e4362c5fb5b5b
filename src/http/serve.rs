//! The reverse proxy behind `jsongate serve`: routes (method + path prefix → upstream base
//! URL + gate contract), the configuration file and its published schema, the HTTP/1.1
//! server with its limits and timeouts, the upstream client, graceful shutdown and the audit
//! lines.
//!
//! The agent-facing side only ever receives a gate envelope (or a fixed plain-text refusal for
//! a request that matches no route or is itself refused); the upstream's status, headers and
//! bytes never pass. Audit lines carry the gate's record plus the method, path (without the
//! query) and statuses, never a header value.
//!
//! Credentials: the caller's `Authorization` (and `Proxy-Authorization`) is never forwarded
//! — a token issued for jsongate is not the upstream's to see, and passing it through lets
//! one caller's credential act at the upstream for whoever holds it. A route that needs
//! credentials names them in `upstream_headers` (values from the environment or a file).
//! Cookies are forwarded (they belong to the upstream's own origin) and written nowhere.
//!
//! Upstreams: `https://` ones are verified against the system roots plus the configured CA
//! (`upstream_tls`), with an optional client certificate; plain `http://` to a host that is
//! not loopback is refused when the file is read unless the route sets `allow_plaintext`.
//! The listener speaks TLS when `tls` names a certificate and key.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::io::Write as IoWrite;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, ACCEPT_ENCODING, HOST};
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use tokio::net::TcpListener;

use super::body::GatedBody;
use super::caller::{Checked, Guard};
use super::connect::{self, Target, UpstreamHeaders};
use super::engine::{Check, Pool};
use super::front::{serve_connections, FailureLog, HostPolicy};
use super::layer::{early_refusal, envelope_response, gate_decision, hold, request_refusal};
use super::oauth::{ClientCredentials, TokenCache};
use crate::auth::{AuthConfig, Authenticator};
use crate::config::{self, Shipped};
use crate::gate::{self, Contract, FailureCode, Gate, Timestamp};
use crate::json::{ObjectWriter, Value};
use crate::tls::{ClientTls, ClientTlsOptions, ServerTls};
use crate::Limits;

/// The schema every `serve` configuration file must satisfy (`jsongate serve schema`).
///
/// # Example
/// ```
/// use jsongate::http::serve::{ServeConfig, SERVE_SCHEMA};
/// use jsongate::{Limits, Schema, Validator};
/// let schema = Schema::compile(SERVE_SCHEMA.as_bytes())?;
/// let config = br#"{"serve":1,"routes":[{"path_prefix":"/status","upstream":"http://127.0.0.1:9000","contract_file":"status.json"}]}"#;
/// assert!(Validator::new(&schema).validate_slice(config, Limits::new()).is_ok());
/// // Plain HTTP to another host is refused when the file is read, unless the route allows it.
/// let plain = br#"{"serve":1,"routes":[{"path_prefix":"/s","upstream":"http://api.example.com","contract_file":"c.json"}]}"#;
/// assert!(Validator::new(&schema).validate_slice(plain, Limits::new()).is_ok());
/// assert_eq!(ServeConfig::from_slice(plain, std::path::Path::new(".")).unwrap_err().pointer(), "/routes/0/upstream");
/// // Another scheme is refused by the schema itself.
/// let ftp = br#"{"serve":1,"routes":[{"path_prefix":"/s","upstream":"ftp://api.example.com","contract_file":"c.json"}]}"#;
/// assert!(Validator::new(&schema).validate_slice(ftp, Limits::new()).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const SERVE_SCHEMA: &str = include_str!("serve.schema.json");

/// Default address: loopback only.
///
/// # Example
/// ```
/// use jsongate::http::serve::{ServeConfig, DEFAULT_LISTEN};
/// # let dir = tempfile::tempdir().unwrap();
/// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
/// # let load = |extra: &str| ServeConfig::from_slice(format!(r#"{{"serve":1,{extra}"routes":[{{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}}]}}"#).as_bytes(), dir.path());
/// assert_eq!(DEFAULT_LISTEN, "127.0.0.1:8080"); // loopback only
/// assert_eq!(load("")?.get_listen().to_string(), DEFAULT_LISTEN);
/// assert_eq!(load(r#""listen":"0.0.0.0:9090","#)?.get_listen().port(), 9090);
/// assert!(load(r#""listen":"localhost:80","#).is_err()); // IP:PORT, not a host name
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// Default bound on connections served at once (more wait in the listen backlog).
///
/// # Example
/// ```
/// use jsongate::http::serve::{ServeConfig, ServerLimits, DEFAULT_MAX_CONNECTIONS};
/// # let dir = tempfile::tempdir().unwrap();
/// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
/// # let load = |extra: &str| ServeConfig::from_slice(format!(r#"{{"serve":1,{extra}"routes":[{{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}}]}}"#).as_bytes(), dir.path());
/// assert_eq!(DEFAULT_MAX_CONNECTIONS, 256);
/// assert_eq!(ServerLimits::default().get_max_connections(), DEFAULT_MAX_CONNECTIONS);
/// assert_eq!(load("")?.get_limits().get_max_connections(), DEFAULT_MAX_CONNECTIONS); // no `limits` member: the default
/// assert_eq!(load(r#""limits":{"max_connections":16},"#)?.get_limits().get_max_connections(), 16);
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// Default limit on the request head (start line and headers), bytes.
///
/// # Example
/// ```
/// use jsongate::http::serve::{ServeConfig, ServerLimits, DEFAULT_MAX_HEADER_BYTES};
/// # let dir = tempfile::tempdir().unwrap();
/// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
/// # let load = |extra: &str| ServeConfig::from_slice(format!(r#"{{"serve":1,{extra}"routes":[{{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}}]}}"#).as_bytes(), dir.path());
/// assert_eq!(DEFAULT_MAX_HEADER_BYTES, 16 * 1024);
/// assert_eq!(ServerLimits::default().get_max_header_bytes(), DEFAULT_MAX_HEADER_BYTES);
/// assert_eq!(load("")?.get_limits().get_max_header_bytes(), DEFAULT_MAX_HEADER_BYTES); // no `limits` member: the default
/// assert_eq!(load(r#""limits":{"max_header_bytes":4096},"#)?.get_limits().get_max_header_bytes(), 4096);
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
pub const DEFAULT_MAX_HEADER_BYTES: usize = 16 * 1024;
/// Default limit on the number of request headers.
///
/// # Example
/// ```
/// use jsongate::http::serve::{ServeConfig, ServerLimits, DEFAULT_MAX_HEADERS};
/// # let dir = tempfile::tempdir().unwrap();
/// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
/// # let load = |extra: &str| ServeConfig::from_slice(format!(r#"{{"serve":1,{extra}"routes":[{{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}}]}}"#).as_bytes(), dir.path());
/// assert_eq!(DEFAULT_MAX_HEADERS, 64);
/// assert_eq!(ServerLimits::default().get_max_headers(), DEFAULT_MAX_HEADERS);
/// assert_eq!(load("")?.get_limits().get_max_headers(), DEFAULT_MAX_HEADERS); // no `limits` member: the default
/// assert_eq!(load(r#""limits":{"max_headers":100},"#)?.get_limits().get_max_headers(), 100);
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
pub const DEFAULT_MAX_HEADERS: usize = 64;
/// Default limit on a request body forwarded to an upstream: 1 MiB.
///
/// # Example
/// ```
/// use jsongate::http::serve::{ServeConfig, ServerLimits, DEFAULT_MAX_REQUEST_BYTES};
/// # let dir = tempfile::tempdir().unwrap();
/// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
/// # let load = |extra: &str| ServeConfig::from_slice(format!(r#"{{"serve":1,{extra}"routes":[{{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}}]}}"#).as_bytes(), dir.path());
/// assert_eq!(DEFAULT_MAX_REQUEST_BYTES, 1 << 20);
/// assert_eq!(ServerLimits::default().get_max_request_bytes(), DEFAULT_MAX_REQUEST_BYTES);
/// assert_eq!(load("")?.get_limits().get_max_request_bytes(), DEFAULT_MAX_REQUEST_BYTES); // no `limits` member: the default
/// assert_eq!(load(r#""limits":{"max_request_bytes":0},"#)?.get_limits().get_max_request_bytes(), 0);
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
pub const DEFAULT_MAX_REQUEST_BYTES: u64 = 1024 * 1024;
/// Default time a client has to send a request head, also the idle time allowed between
/// requests on a kept-alive connection.
///
/// # Example
/// ```
/// use std::time::Duration;
/// use jsongate::http::serve::{ServeConfig, ServerLimits, DEFAULT_HEADER_TIMEOUT};
/// # let dir = tempfile::tempdir().unwrap();
/// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
/// # let load = |extra: &str| ServeConfig::from_slice(format!(r#"{{"serve":1,{extra}"routes":[{{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}}]}}"#).as_bytes(), dir.path());
/// assert_eq!(DEFAULT_HEADER_TIMEOUT, Duration::from_secs(10));
/// assert_eq!(ServerLimits::default().get_header_timeout(), DEFAULT_HEADER_TIMEOUT);
/// assert_eq!(load("")?.get_limits().get_header_timeout(), DEFAULT_HEADER_TIMEOUT); // no `limits` member: the default
/// assert_eq!(load(r#""limits":{"header_timeout_ms":2500},"#)?.get_limits().get_header_timeout(), Duration::from_millis(2500));
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time a client has to send its whole request body.
///
/// # Example
/// ```
/// use std::time::Duration;
/// use jsongate::http::serve::{ServeConfig, ServerLimits, DEFAULT_REQUEST_TIMEOUT};
/// # let dir = tempfile::tempdir().unwrap();
/// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
/// # let load = |extra: &str| ServeConfig::from_slice(format!(r#"{{"serve":1,{extra}"routes":[{{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}}]}}"#).as_bytes(), dir.path());
/// assert_eq!(DEFAULT_REQUEST_TIMEOUT, Duration::from_secs(30));
/// assert_eq!(ServerLimits::default().get_request_timeout(), DEFAULT_REQUEST_TIMEOUT);
/// assert_eq!(load("")?.get_limits().get_request_timeout(), DEFAULT_REQUEST_TIMEOUT); // no `limits` member: the default
/// assert_eq!(load(r#""limits":{"request_timeout_ms":5000},"#)?.get_limits().get_request_timeout(), Duration::from_secs(5));
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time to connect to an upstream.
///
/// # Example
/// ```
/// use std::time::Duration;
/// use jsongate::http::serve::{ServeConfig, ServerLimits, DEFAULT_CONNECT_TIMEOUT};
/// # let dir = tempfile::tempdir().unwrap();
/// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
/// # let load = |extra: &str| ServeConfig::from_slice(format!(r#"{{"serve":1,{extra}"routes":[{{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}}]}}"#).as_bytes(), dir.path());
/// assert_eq!(DEFAULT_CONNECT_TIMEOUT, Duration::from_secs(2));
/// assert_eq!(ServerLimits::default().get_connect_timeout(), DEFAULT_CONNECT_TIMEOUT);
/// assert_eq!(load("")?.get_limits().get_connect_timeout(), DEFAULT_CONNECT_TIMEOUT); // no `limits` member: the default
/// assert_eq!(load(r#""limits":{"connect_timeout_ms":300},"#)?.get_limits().get_connect_timeout(), Duration::from_millis(300));
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Default time for the whole upstream exchange (connect, request, response read).
///
/// # Example
/// ```
/// use std::time::Duration;
/// use jsongate::http::serve::{ServeConfig, ServerLimits, DEFAULT_UPSTREAM_TIMEOUT};
/// # let dir = tempfile::tempdir().unwrap();
/// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
/// # let load = |extra: &str| ServeConfig::from_slice(format!(r#"{{"serve":1,{extra}"routes":[{{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}}]}}"#).as_bytes(), dir.path());
/// assert_eq!(DEFAULT_UPSTREAM_TIMEOUT, Duration::from_secs(10));
/// assert_eq!(ServerLimits::default().get_upstream_timeout(), DEFAULT_UPSTREAM_TIMEOUT);
/// assert_eq!(load("")?.get_limits().get_upstream_timeout(), DEFAULT_UPSTREAM_TIMEOUT); // no `limits` member: the default
/// assert_eq!(load(r#""limits":{"upstream_timeout_ms":60000},"#)?.get_limits().get_upstream_timeout(), Duration::from_secs(60));
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
pub const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time in-flight requests get to finish after SIGTERM.
///
/// # Example
/// ```
/// use std::time::Duration;
/// use jsongate::http::serve::{ServeConfig, ServerLimits, DEFAULT_SHUTDOWN_GRACE};
/// # let dir = tempfile::tempdir().unwrap();
/// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
/// # let load = |extra: &str| ServeConfig::from_slice(format!(r#"{{"serve":1,{extra}"routes":[{{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}}]}}"#).as_bytes(), dir.path());
/// assert_eq!(DEFAULT_SHUTDOWN_GRACE, Duration::from_secs(10));
/// assert_eq!(ServerLimits::default().get_shutdown_grace(), DEFAULT_SHUTDOWN_GRACE);
/// assert_eq!(load("")?.get_limits().get_shutdown_grace(), DEFAULT_SHUTDOWN_GRACE); // no `limits` member: the default
/// assert_eq!(load(r#""limits":{"shutdown_grace_ms":0},"#)?.get_limits().get_shutdown_grace(), Duration::ZERO);
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// A configuration the proxy cannot use: the crate's one configuration error, re-exported
/// here where it has always been named.
use crate::json::ConfigError;

static SERVE: Shipped = Shipped::new("config", "the serve schema", SERVE_SCHEMA);

fn err(s: impl Into<String>) -> ConfigError {
    ConfigError::invalid(s)
}

/// The server's limits and timeouts: [`ServerLimits::default()`] (every `DEFAULT_*`
/// constant), then one consuming setter per limit; a configuration file's `limits` member
/// sets the same values.
///
/// # Example
/// ```
/// use std::time::Duration;
/// use jsongate::http::serve::{ServeConfig, ServerLimits};
/// # let dir = tempfile::tempdir().unwrap();
/// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
/// # let load = |extra: &str| ServeConfig::from_slice(format!(r#"{{"serve":1,{extra}"routes":[{{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}}]}}"#).as_bytes(), dir.path());
/// let limits = load(r#""limits":{"max_connections":32,"upstream_timeout_ms":1500},"#)?.get_limits();
/// assert_eq!(limits, ServerLimits::default().max_connections(32).upstream_timeout(Duration::from_millis(1500)));
/// assert_eq!(limits.get_max_connections(), 32);
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerLimits {
    max_connections: usize,
    max_header_bytes: usize,
    max_headers: usize,
    max_request_bytes: u64,
    header_timeout: Duration,
    request_timeout: Duration,
    connect_timeout: Duration,
    upstream_timeout: Duration,
    shutdown_grace: Duration,
}

impl Default for ServerLimits {
    /// Every limit at its `DEFAULT_*` constant.
    ///
    /// # Example
    /// ```
    /// use jsongate::http::serve::{ServerLimits, DEFAULT_MAX_CONNECTIONS, DEFAULT_SHUTDOWN_GRACE};
    /// let l = ServerLimits::default();
    /// assert_eq!((l.get_max_connections(), l.get_shutdown_grace()), (DEFAULT_MAX_CONNECTIONS, DEFAULT_SHUTDOWN_GRACE));
    /// ```
    fn default() -> Self {
        ServerLimits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            max_headers: DEFAULT_MAX_HEADERS,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            upstream_timeout: DEFAULT_UPSTREAM_TIMEOUT,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
        }
    }
}

impl ServerLimits {
    config_setters! {
        /// Connections served at once. Default: [`DEFAULT_MAX_CONNECTIONS`].
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::ServerLimits;
        /// assert_eq!(ServerLimits::default().max_connections(32).get_max_connections(), 32);
        /// ```
        max_connections: usize;

        /// Bytes of one request head (start line and headers). Default: [`DEFAULT_MAX_HEADER_BYTES`].
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::ServerLimits;
        /// assert_eq!(ServerLimits::default().max_header_bytes(4096).get_max_header_bytes(), 4096);
        /// ```
        max_header_bytes: usize;

        /// Headers of one request. Default: [`DEFAULT_MAX_HEADERS`].
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::ServerLimits;
        /// assert_eq!(ServerLimits::default().max_headers(100).get_max_headers(), 100);
        /// ```
        max_headers: usize;

        /// Bytes of one request body forwarded to an upstream. Default: [`DEFAULT_MAX_REQUEST_BYTES`].
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::ServerLimits;
        /// assert_eq!(ServerLimits::default().max_request_bytes(0).get_max_request_bytes(), 0);
        /// ```
        max_request_bytes: u64;

        /// Time to send a request head (and idle time between requests on a kept-alive
        /// connection). Default: [`DEFAULT_HEADER_TIMEOUT`].
        ///
        /// # Example
        /// ```
        /// use std::time::Duration;
        /// use jsongate::http::serve::ServerLimits;
        /// assert_eq!(ServerLimits::default().header_timeout(Duration::from_millis(2500)).get_header_timeout(), Duration::from_millis(2500));
        /// ```
        header_timeout: Duration;

        /// Time to send a request body. Default: [`DEFAULT_REQUEST_TIMEOUT`].
        ///
        /// # Example
        /// ```
        /// use std::time::Duration;
        /// use jsongate::http::serve::ServerLimits;
        /// assert_eq!(ServerLimits::default().request_timeout(Duration::from_secs(5)).get_request_timeout(), Duration::from_secs(5));
        /// ```
        request_timeout: Duration;

        /// Time to connect to an upstream. Default: [`DEFAULT_CONNECT_TIMEOUT`].
        ///
        /// # Example
        /// ```
        /// use std::time::Duration;
        /// use jsongate::http::serve::ServerLimits;
        /// assert_eq!(ServerLimits::default().connect_timeout(Duration::from_millis(300)).get_connect_timeout(), Duration::from_millis(300));
        /// ```
        connect_timeout: Duration;

        /// Time for the whole upstream exchange (connect, request, response read). Default:
        /// [`DEFAULT_UPSTREAM_TIMEOUT`].
        ///
        /// # Example
        /// ```
        /// use std::time::Duration;
        /// use jsongate::http::serve::ServerLimits;
        /// assert_eq!(ServerLimits::default().upstream_timeout(Duration::from_secs(60)).get_upstream_timeout(), Duration::from_secs(60));
        /// ```
        upstream_timeout: Duration;

        /// Time in-flight requests get to finish after a shutdown signal. Default:
        /// [`DEFAULT_SHUTDOWN_GRACE`].
        ///
        /// # Example
        /// ```
        /// use std::time::Duration;
        /// use jsongate::http::serve::ServerLimits;
        /// assert_eq!(ServerLimits::default().shutdown_grace(Duration::ZERO).get_shutdown_grace(), Duration::ZERO);
        /// ```
        shutdown_grace: Duration;
    }

    config_readers! {
        /// The value set by [`max_connections`](Self::max_connections).
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::{ServerLimits, DEFAULT_MAX_CONNECTIONS};
        /// assert_eq!(ServerLimits::default().get_max_connections(), DEFAULT_MAX_CONNECTIONS);
        /// ```
        max_connections, get_max_connections: usize;

        /// The value set by [`max_header_bytes`](Self::max_header_bytes).
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::{ServerLimits, DEFAULT_MAX_HEADER_BYTES};
        /// assert_eq!(ServerLimits::default().get_max_header_bytes(), DEFAULT_MAX_HEADER_BYTES);
        /// ```
        max_header_bytes, get_max_header_bytes: usize;

        /// The value set by [`max_headers`](Self::max_headers).
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::{ServerLimits, DEFAULT_MAX_HEADERS};
        /// assert_eq!(ServerLimits::default().get_max_headers(), DEFAULT_MAX_HEADERS);
        /// ```
        max_headers, get_max_headers: usize;

        /// The value set by [`max_request_bytes`](Self::max_request_bytes).
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::{ServerLimits, DEFAULT_MAX_REQUEST_BYTES};
        /// assert_eq!(ServerLimits::default().get_max_request_bytes(), DEFAULT_MAX_REQUEST_BYTES);
        /// ```
        max_request_bytes, get_max_request_bytes: u64;

        /// The value set by [`header_timeout`](Self::header_timeout).
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::{ServerLimits, DEFAULT_HEADER_TIMEOUT};
        /// assert_eq!(ServerLimits::default().get_header_timeout(), DEFAULT_HEADER_TIMEOUT);
        /// ```
        header_timeout, get_header_timeout: Duration;

        /// The value set by [`request_timeout`](Self::request_timeout).
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::{ServerLimits, DEFAULT_REQUEST_TIMEOUT};
        /// assert_eq!(ServerLimits::default().get_request_timeout(), DEFAULT_REQUEST_TIMEOUT);
        /// ```
        request_timeout, get_request_timeout: Duration;

        /// The value set by [`connect_timeout`](Self::connect_timeout).
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::{ServerLimits, DEFAULT_CONNECT_TIMEOUT};
        /// assert_eq!(ServerLimits::default().get_connect_timeout(), DEFAULT_CONNECT_TIMEOUT);
        /// ```
        connect_timeout, get_connect_timeout: Duration;

        /// The value set by [`upstream_timeout`](Self::upstream_timeout).
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::{ServerLimits, DEFAULT_UPSTREAM_TIMEOUT};
        /// assert_eq!(ServerLimits::default().get_upstream_timeout(), DEFAULT_UPSTREAM_TIMEOUT);
        /// ```
        upstream_timeout, get_upstream_timeout: Duration;

        /// The value set by [`shutdown_grace`](Self::shutdown_grace).
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::{ServerLimits, DEFAULT_SHUTDOWN_GRACE};
        /// assert_eq!(ServerLimits::default().get_shutdown_grace(), DEFAULT_SHUTDOWN_GRACE);
        /// ```
        shutdown_grace, get_shutdown_grace: Duration;
    }
}

/// Where a context value of the gate's request comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Source {
    Query(String),
    Header(HeaderName),
    /// The authenticated caller's subject (`true`) or client id (`false`).
    Caller(bool),
}

/// One route.
struct Route {
    method: Option<Method>,
    prefix: String,
    /// Where the upstream is and how to connect to it.
    target: Target,
    /// The `Host` sent upstream.
    host_header: String,
    /// Credentials sent upstream in jsongate's name.
    headers: UpstreamHeaders,
    /// An OAuth client credentials grant for the upstream, and its token once serving.
    oauth: Option<ClientCredentials>,
    token: std::sync::OnceLock<Arc<TokenCache>>,
    /// The upstream base path (no trailing `/`).
    base_path: String,
    gate: Arc<Gate>,
    context: Vec<(String, Source)>,
}

/// A checked `serve` configuration: read with [`ServeConfig::from_file`] or
/// [`ServeConfig::from_slice`] (the routes and their contracts come only from a file), then
/// one consuming setter per choice a command line may override ([`listen`](Self::listen),
/// [`limits`](Self::limits), [`audit`](Self::audit)), each read back with its `get_` reader.
///
/// # Example
/// ```
/// use jsongate::http::serve::ServeConfig;
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("status.json"), br#"{"contract":1,"tool":"status","version":"1",
///   "upstream":[{"version":"v1","schema":{"type":"object"}}],"fields":{"state":{"pointer":"/state"}}}"#).unwrap();
/// let config = ServeConfig::from_slice(br#"{"serve":1,"listen":"127.0.0.1:0","audit":"audit.jsonl",
///   "routes":[{"method":"GET","path_prefix":"/status","upstream":"http://127.0.0.1:9000/v1","contract_file":"status.json"}]}"#,
///   dir.path())?;
/// assert_eq!(config.get_audit(), Some(dir.path().join("audit.jsonl").as_path())); // relative to `dir`
/// assert_eq!(config.get_limits().get_max_connections(), jsongate::http::serve::DEFAULT_MAX_CONNECTIONS);
/// let config = config.listen("127.0.0.1:9090".parse()?); // as `jsongate serve --listen` does
/// assert_eq!(config.get_listen().port(), 9090);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ServeConfig {
    listen: SocketAddr,
    limits: ServerLimits,
    audit: Option<PathBuf>,
    request_id_header: Option<HeaderName>,
    allow_hosts: Vec<String>,
    allow_origins: Vec<String>,
    tls: Option<ServerTls>,
    auth: Option<AuthConfig>,
    routes: Vec<Route>,
}

impl fmt::Debug for ServeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServeConfig")
            .field("listen", &self.listen)
            .field("limits", &self.limits)
            .field("routes", &self.routes.len())
            .finish_non_exhaustive()
    }
}

impl ServeConfig {
    /// Reads a configuration file; `contract_file` and `audit` are relative to its directory.
    ///
    /// # Errors
    /// The file cannot be read, is not JSON, does not satisfy [`SERVE_SCHEMA`] (unknown
    /// members included), or names a contract that cannot be read or compiled.
    ///
    /// # Example
    /// ```
    /// use jsongate::http::serve::ServeConfig;
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
    /// std::fs::write(dir.path().join("serve.json"), br#"{"serve":1,"routes":[{"path_prefix":"/","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}]}"#).unwrap();
    /// assert!(ServeConfig::from_file(&dir.path().join("serve.json")).is_ok()); // c.json found beside it
    /// std::fs::remove_file(dir.path().join("c.json")).unwrap();
    /// let err = ServeConfig::from_file(&dir.path().join("serve.json")).unwrap_err();
    /// assert_eq!(err.pointer(), "/routes/0/contract_file");
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn from_file(path: &Path) -> Result<ServeConfig, ConfigError> {
        let bytes = SERVE
            .read(path)
            .map_err(|e| ConfigError::read(format_args!("'{}'", path.display()), &e))?;
        ServeConfig::from_slice(&bytes, path.parent().unwrap_or(Path::new(".")))
    }
    /// Reads a configuration from bytes; files it names are relative to `dir`.
    ///
    /// # Errors
    /// As [`from_file`](Self::from_file).
    ///
    /// # Example
    /// ```
    /// use jsongate::http::serve::ServeConfig;
    /// use jsongate::json::ConfigErrorKind;
    /// let err = ServeConfig::from_slice(br#"{"serve":1,"routes":[],"tls":true}"#, std::path::Path::new(".")).unwrap_err();
    /// assert_eq!(err.kind(), ConfigErrorKind::Schema); // unknown members and empty routes are refused
    /// assert!(ServeConfig::from_slice(b"{", std::path::Path::new(".")).is_err());
    /// ```
    pub fn from_slice(bytes: &[u8], dir: &Path) -> Result<ServeConfig, ConfigError> {
        let doc = config::load(bytes, &SERVE)?;
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        let listen = s(&doc, "listen").unwrap_or_else(|| DEFAULT_LISTEN.to_owned());
        let listen: SocketAddr = listen
            .parse()
            .map_err(|_| err(format!("listen: '{listen}' is not IP:PORT")).at("/listen"))?;
        let mut lim = ServerLimits::default();
        for (k, v) in doc.get("limits").and_then(Value::as_object).unwrap_or(&[]) {
            let n = v.as_u64().ok_or_else(|| {
                err(format!("limits.{k}: too large")).at(config::pointer(&["limits", k]))
            })?;
            let ms = Duration::from_millis(n);
            let size = usize::try_from(n).unwrap_or(usize::MAX);
            match k.as_str() {
                "max_connections" => lim = lim.max_connections(size),
                "max_header_bytes" => lim = lim.max_header_bytes(size),
                "max_headers" => lim = lim.max_headers(size),
                "max_request_bytes" => lim = lim.max_request_bytes(n),
                "header_timeout_ms" => lim = lim.header_timeout(ms),
                "request_timeout_ms" => lim = lim.request_timeout(ms),
                "connect_timeout_ms" => lim = lim.connect_timeout(ms),
                "upstream_timeout_ms" => lim = lim.upstream_timeout(ms),
                // The schema admits no other name.
                _ => lim = lim.shutdown_grace(ms),
            }
        }
        let request_id_header = match s(&doc, "request_id_header") {
            Some(h) => Some(HeaderName::try_from(h.to_ascii_lowercase()).map_err(|_| {
                err("request_id_header: not a header name").at("/request_id_header")
            })?),
            None => None,
        };
        let strings = |k: &str| -> Vec<String> {
            config::items(&doc, k)
                .filter_map(|(_, v)| v.as_str().map(str::to_owned))
                .collect()
        };
        let upstream_tls = match doc.get("upstream_tls") {
            Some(t) => client_tls(t, dir, "/upstream_tls")?,
            None => ClientTlsOptions::new(),
        };
        let tls = match doc.get("tls") {
            Some(t) => {
                let f = |k: &str| dir.join(t.get(k).and_then(Value::as_str).unwrap_or_default());
                Some(
                    ServerTls::load(f("cert_file"), f("key_file"))
                        .map_err(|e| err(format!("tls: {e}")).at("/tls"))?,
                )
            }
            None => None,
        };
        let mut routes = Vec::new();
        let mut built: Vec<(ClientTlsOptions, ClientTls)> = Vec::new();
        for (i, r) in config::items(&doc, "routes") {
            routes.push(route(&i, r, dir, &upstream_tls, &mut built)?);
        }
        Ok(ServeConfig {
            listen,
            limits: lim,
            audit: s(&doc, "audit").map(|a| dir.join(a)),
            request_id_header,
            allow_hosts: strings("allow_hosts"),
            allow_origins: strings("allow_origins"),
            tls,
            auth: match doc.get("auth") {
                Some(a) => Some(AuthConfig::from_value(a, dir)?),
                None => None,
            },
            routes,
        })
    }
    /// Serves TLS with this certificate, over the file's `tls` (as `jsongate serve
    /// --tls-cert --tls-key` does).
    #[must_use]
    pub fn tls(mut self, tls: ServerTls) -> Self {
        self.tls = Some(tls);
        self
    }
    config_setters! {
        /// The address to listen on. Default: the file's `listen`, else [`DEFAULT_LISTEN`].
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::ServeConfig;
        /// # let dir = tempfile::tempdir().unwrap();
        /// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
        /// # let config = ServeConfig::from_slice(br#"{"serve":1,"routes":[{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}]}"#, dir.path())?;
        /// let config = config.listen("0.0.0.0:9090".parse()?);
        /// assert_eq!(config.get_listen().to_string(), "0.0.0.0:9090");
        /// # Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        listen: SocketAddr;

        /// The server's limits and timeouts. Default: the file's `limits`, each limit it does not
        /// name at its `DEFAULT_*` value.
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::{ServeConfig, ServerLimits};
        /// # let dir = tempfile::tempdir().unwrap();
        /// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
        /// # let config = ServeConfig::from_slice(br#"{"serve":1,"routes":[{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}]}"#, dir.path())?;
        /// let config = config.limits(ServerLimits::default().max_connections(16));
        /// assert_eq!(config.get_limits().get_max_connections(), 16);
        /// # Ok::<(), jsongate::json::ConfigError>(())
        /// ```
        limits: ServerLimits;
    }

    /// The file audit lines are appended to, as given (not resolved against the
    /// configuration's directory). Default: the file's `audit`, else standard error.
    ///
    /// # Example
    /// ```
    /// use std::path::Path;
    /// use jsongate::http::serve::ServeConfig;
    /// # let dir = tempfile::tempdir().unwrap();
    /// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
    /// # let config = ServeConfig::from_slice(br#"{"serve":1,"routes":[{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}]}"#, dir.path())?;
    /// assert_eq!(config.get_audit(), None); // standard error
    /// let config = config.audit("/var/log/jsongate/serve.jsonl");
    /// assert_eq!(config.get_audit(), Some(Path::new("/var/log/jsongate/serve.jsonl")));
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    #[must_use]
    pub fn audit(mut self, path: impl Into<PathBuf>) -> Self {
        self.audit = Some(path.into());
        self
    }
    config_readers! {
        /// The value set by [`listen`](Self::listen).
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::{ServeConfig, DEFAULT_LISTEN};
        /// # let dir = tempfile::tempdir().unwrap();
        /// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
        /// # let config = ServeConfig::from_slice(br#"{"serve":1,"routes":[{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}]}"#, dir.path())?;
        /// assert_eq!(config.get_listen().to_string(), DEFAULT_LISTEN);
        /// # Ok::<(), jsongate::json::ConfigError>(())
        /// ```
        listen, get_listen: SocketAddr;

        /// The value set by [`limits`](Self::limits).
        ///
        /// # Example
        /// ```
        /// use jsongate::http::serve::{ServeConfig, ServerLimits};
        /// # let dir = tempfile::tempdir().unwrap();
        /// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
        /// # let config = ServeConfig::from_slice(br#"{"serve":1,"routes":[{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}]}"#, dir.path())?;
        /// assert_eq!(config.get_limits(), ServerLimits::default()); // no `limits` member
        /// # Ok::<(), jsongate::json::ConfigError>(())
        /// ```
        limits, get_limits: ServerLimits;
    }

    /// The value set by [`audit`](Self::audit) (`None`: standard error).
    ///
    /// # Example
    /// ```
    /// use jsongate::http::serve::ServeConfig;
    /// # let dir = tempfile::tempdir().unwrap();
    /// # std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
    /// # let config = ServeConfig::from_slice(br#"{"serve":1,"routes":[{"path_prefix":"/t","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}]}"#, dir.path())?;
    /// assert_eq!(config.get_audit(), None); // no `audit` member: standard error
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn get_audit(&self) -> Option<&Path> {
        self.audit.as_deref()
    }
}

/// Client TLS options from an `upstream_tls` object (files relative to `dir`).
fn client_tls(t: &Value, dir: &Path, at: &str) -> Result<ClientTlsOptions, ConfigError> {
    let f = |k: &str| t.get(k).and_then(Value::as_str).map(|p| dir.join(p));
    let mut o = ClientTlsOptions::new();
    if let Some(ca) = f("ca_file") {
        o = o.ca_file(ca);
    }
    if let Some(false) = t.get("system_roots").and_then(Value::as_bool) {
        o = o.system_roots(false);
    }
    match (f("client_cert_file"), f("client_key_file")) {
        (Some(c), Some(k)) => o = o.client_cert(c, k),
        (None, None) => {}
        _ => {
            return Err(
                err("upstream_tls: client_cert_file and client_key_file go together").at(at),
            )
        }
    }
    Ok(o)
}

fn route(
    i: &str,
    r: &Value,
    dir: &Path,
    default_tls: &ClientTlsOptions,
    built: &mut Vec<(ClientTlsOptions, ClientTls)>,
) -> Result<Route, ConfigError> {
    let s = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_owned);
    let at_up = format!("/routes/{i}/upstream");
    let upstream = super::parse_upstream(&s("upstream").unwrap_or_default())
        .and_then(|u| {
            let allowed = r.get("allow_plaintext").and_then(Value::as_bool) == Some(true);
            u.check_plaintext(allowed)
                .map_err(|e| format!("{e} (\"allow_plaintext\": true)"))?;
            Ok(u)
        })
        .map_err(|e| err(format!("routes/{i}/upstream: {e}")).at(&at_up))?;
    let tls = if upstream.tls {
        let at = format!("/routes/{i}/upstream_tls");
        let opts = match r.get("upstream_tls") {
            Some(t) => client_tls(t, dir, &at)?,
            None => default_tls.clone(),
        };
        // Routes with the same options share one configuration (and its roots).
        match built.iter().find(|(o, _)| *o == opts) {
            Some((_, t)) => Some(t.clone()),
            None => {
                let t = opts
                    .build()
                    .map_err(|e| err(format!("routes/{i}: upstream TLS: {e}")).at(&at))?;
                built.push((opts, t.clone()));
                Some(t)
            }
        }
    } else {
        None
    };
    let target = Target::new(&upstream, tls.as_ref())
        .map_err(|e| err(format!("routes/{i}/upstream: {e}")).at(&at_up))?;
    let oauth = match r.get("upstream_oauth") {
        Some(o) => Some(ClientCredentials::from_value(o, dir).map_err(|e| {
            err(format!("routes/{i}/upstream_oauth: {e}")).at(config::pointer(&[
                "routes",
                i,
                "upstream_oauth",
            ]))
        })?),
        None => None,
    };
    let mut headers = UpstreamHeaders::new();
    for (name, spec) in r
        .get("upstream_headers")
        .and_then(Value::as_object)
        .unwrap_or(&[])
    {
        headers = headers
            .add(name, spec.as_str().unwrap_or_default(), dir)
            .map_err(|e| {
                err(format!("routes/{i}/upstream_headers: {e}")).at(config::pointer(&[
                    "routes",
                    i,
                    "upstream_headers",
                    name,
                ]))
            })?;
    }
    let file = dir.join(s("contract_file").unwrap_or_default());
    let at = format!("/routes/{i}/contract_file");
    let within = |e: ConfigError| e.within(&format!("routes/{i}/contract_file: "), &at);
    let contract = Contract::from_file(&file).map_err(within)?;
    let gate = Gate::new(&contract).map_err(within)?;
    let mut context = Vec::new();
    for (k, src) in r.get("context").and_then(Value::as_object).unwrap_or(&[]) {
        let src = if let Some(q) = src.get("query").and_then(Value::as_str) {
            Source::Query(q.to_owned())
        } else if let Some(c) = src.get("caller").and_then(Value::as_str) {
            Source::Caller(c == "subject")
        } else {
            let h = src
                .get("header")
                .and_then(Value::as_str)
                .unwrap_or_default();
            Source::Header(HeaderName::try_from(h.to_ascii_lowercase()).map_err(|_| {
                err(format!("routes/{i}/context/{k}: not a header name"))
                    .at(config::pointer(&["routes", i, "context", k]))
            })?)
        };
        context.push((k.clone(), src));
    }
    Ok(Route {
        method: s("method").and_then(|m| Method::from_bytes(m.as_bytes()).ok()),
        prefix: s("path_prefix").unwrap_or_default(),
        target,
        host_header: upstream.host_header.clone(),
        headers,
        oauth,
        token: std::sync::OnceLock::new(),
        base_path: upstream.path.trim_end_matches('/').to_owned(),
        gate: Arc::new(gate),
        context,
    })
}

struct Shared {
    config: ServeConfig,
    /// The `auth` section's checks, when there is one.
    guard: Option<Guard>,
    /// Idle kept-alive upstream connections, by upstream.
    idle: Mutex<std::collections::HashMap<String, Vec<Sender>>>,
    audit: Mutex<Box<dyn IoWrite + Send>>,
    /// Lines for operators about failing upstreams.
    log: FailureLog,
}

type Reply = Response<GatedBody<Incoming>>;

impl Shared {
    fn audit(&self, line: &str) {
        let mut w = self.audit.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = w.write_all(line.as_bytes());
        let _ = w.write_all(b"\n");
        let _ = w.flush();
    }

    fn find<'a>(&'a self, method: &Method, path: &'a str) -> Option<&'a Route> {
        // The longest matching prefix wins.
        self.routes_at(path)
            .filter(|r| r.method.as_ref().is_none_or(|m| m == method))
            .max_by_key(|r| r.prefix.len())
    }

    /// The routes whose prefix covers `path`, whatever their method.
    fn routes_at<'a>(&'a self, path: &'a str) -> impl Iterator<Item = &'a Route> + 'a {
        self.config.routes.iter().filter(move |r| {
            path.strip_prefix(r.prefix.as_str()).is_some_and(|rest| {
                r.prefix.ends_with('/') || rest.is_empty() || rest.starts_with('/')
            })
        })
    }

    /// The methods routes allow at `path` (`GET, POST`), when a route covers it for other
    /// methods only: the `Allow` header of a `405` (RFC 9110 §15.5.6).
    fn allowed_methods(&self, path: &str) -> Option<String> {
        let mut methods: Vec<&str> = self
            .routes_at(path)
            .filter_map(|r| r.method.as_ref().map(Method::as_str))
            .collect();
        methods.sort_unstable();
        methods.dedup();
        (!methods.is_empty()).then(|| methods.join(", "))
    }
}

/// The audit line: the gate's record with the HTTP facts added.
fn audit_line(
    record: &str,
    method: &Method,
    path: &str,
    status: StatusCode,
    up: Option<u16>,
    subject: Option<&str>,
) -> String {
    let mut line = record.to_owned();
    let Some(mut o) = ObjectWriter::reopen(&mut line) else {
        return line;
    };
    let mut http = o.object("http");
    http.str("method", method.as_str())
        .str("path", path)
        .u64("status", status.as_u16().into());
    if let Some(u) = up {
        http.u64("upstream_status", u.into());
    }
    http.finish();
    if let Some(who) = subject {
        o.str("subject", who);
    }
    o.finish();
    line
}

fn plain(status: StatusCode, text: impl Into<Bytes>) -> Reply {
    let mut res = Response::new(GatedBody::full(text.into()));
    *res.status_mut() = status;
    res.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    res
}

fn query_value(query: Option<&str>, key: &str) -> Option<String> {
    query?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (k == key).then(|| v.to_owned())
    })
}

/// The headers a `Connection` header nominates as hop-by-hop (RFC 9110 §7.6.1): removed
/// before forwarding, whatever their name.
fn connection_options(headers: &http::HeaderMap) -> Vec<HeaderName> {
    headers
        .get_all(http::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|o| HeaderName::try_from(o.trim().to_ascii_lowercase()).ok())
        .collect()
}

/// Headers never forwarded: hop-by-hop ones (RFC 9110 §7.6.1), `Host`, set to the upstream,
/// `Accept-Encoding`, replaced by `identity`, and the caller's `Authorization` (never passed
/// through; see the [module docs](self)).
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "authorization"
            | "accept-encoding"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "host"
            | "content-length"
    )
}

async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Result<Reply, Infallible> {
    let method = req.method().clone();
    let mut caller = None;
    if let Some(guard) = &shared.guard {
        match guard.check(&method, req.uri().path(), req.uri().query(), req.headers()) {
            Checked::Metadata(doc) => {
                let mut r = Response::new(GatedBody::full(Bytes::from(doc)));
                r.headers_mut().insert(
                    http::header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                return Ok(r);
            }
            Checked::Refused {
                status,
                challenge,
                kind,
            } => {
                let verdict = if status == 403 {
                    "forbidden"
                } else {
                    "unauthenticated"
                };
                shared.audit(&unrouted(
                    verdict,
                    Some(kind),
                    &method,
                    req.uri().path(),
                    status,
                ));
                let status = StatusCode::from_u16(status).unwrap_or(StatusCode::UNAUTHORIZED);
                let mut r = plain(
                    status,
                    if status == StatusCode::FORBIDDEN {
                        "jsongate: insufficient scope\n"
                    } else {
                        "jsongate: authentication required\n"
                    },
                );
                if let Ok(v) = HeaderValue::from_str(&challenge) {
                    r.headers_mut().insert(http::header::WWW_AUTHENTICATE, v);
                }
                return Ok(r);
            }
            Checked::Caller(who) => caller = Some(who),
        }
    }
    // Routes match the normalised path, and only it is forwarded: nothing reaches the
    // upstream outside a route's base (RFC 3986 §6.2.2).
    let path = match super::normalize_path(req.uri().path()) {
        Ok(p) => p,
        Err(kind) => {
            shared.audit(&unrouted(
                "path_refused",
                Some(kind),
                &method,
                req.uri().path(),
                400,
            ));
            return Ok(plain(
                StatusCode::BAD_REQUEST,
                "jsongate: the request path was refused\n",
            ));
        }
    };
    let Some(route) = shared.find(&method, &path) else {
        if let Some(allow) = shared.allowed_methods(&path) {
            shared.audit(&unrouted("method_not_allowed", None, &method, &path, 405));
            let mut r = plain(
                StatusCode::METHOD_NOT_ALLOWED,
                format!("jsongate: {method} is not routed here; the routes allow {allow}\n"),
            );
            if let Ok(v) = HeaderValue::from_str(&allow) {
                r.headers_mut().insert(http::header::ALLOW, v);
            }
            return Ok(r);
        }
        shared.audit(&unrouted("no_route", None, &method, &path, 404));
        return Ok(plain(StatusCode::NOT_FOUND, "jsongate: no route\n"));
    };
    // The gate's request: the caller's id (or one issued here), the context from the request.
    let id = shared
        .config
        .request_id_header
        .as_ref()
        .and_then(|h| req.headers().get(h))
        .and_then(|v| v.to_str().ok())
        .filter(|v| route.gate.accepts_request_id(v))
        .map_or_else(gate::issue_request_id, str::to_owned);
    let mut ctx = gate::Context::new().now(Timestamp::now());
    // Where the context values that did not come from were to come from, for the caller.
    let mut absent = Vec::new();
    for (k, src) in &route.context {
        let v = match src {
            Source::Query(q) => query_value(req.uri().query(), q),
            Source::Header(h) => req
                .headers()
                .get(h)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            Source::Caller(subject) => caller.as_ref().and_then(|c| {
                if *subject {
                    Some(c.subject.clone())
                } else {
                    c.client_id.clone()
                }
            }),
        };
        match v {
            Some(v) => ctx = ctx.value(k, &v),
            None => absent.push(match src {
                Source::Query(q) => format!("query parameter '{q}'"),
                Source::Header(h) => format!("header '{h}'"),
                Source::Caller(true) => "the caller's subject".to_owned(),
                Source::Caller(false) => "the caller's client id".to_owned(),
            }),
        }
    }
    let greq = gate::Request::new(&id, ctx);
    // A request the route's checks cannot judge (a context value missing) is the caller's
    // to mend: the reply says what is missing, from the contract's own names.
    if let Err(e) = route.gate.check_request(&greq) {
        let record = refused_record(route, &id, Some(e.kind().as_str()));
        let subject = caller.as_ref().map(|c| c.subject.as_str());
        let reply = plain(
            StatusCode::BAD_REQUEST,
            if absent.is_empty() {
                format!("jsongate: {}\n", e.message())
            } else {
                format!(
                    "jsongate: {} (not in the request: {})\n",
                    e.message(),
                    absent.join(", ")
                )
            },
        );
        shared.audit(&audit_line(
            &record,
            &method,
            &path,
            reply.status(),
            None,
            subject,
        ));
        return Ok(reply);
    }
    let (status, decision, up) = exchange(&shared, route, &path, &greq, req).await;
    let reply = match (&decision, status) {
        (Some(d), _) => {
            let mut r = envelope_response(d);
            if d.audit.error.as_ref().is_some_and(|e| e.kind == "timeout") {
                *r.status_mut() = StatusCode::GATEWAY_TIMEOUT;
            }
            r
        }
        (None, s) => plain(s, refusal_text(s)),
    };
    let record = match &decision {
        Some(d) => d.audit.to_json(),
        None => refused_record(route, &id, None),
    };
    let subject = caller.as_ref().map(|c| c.subject.as_str());
    shared.audit(&audit_line(
        &record,
        &method,
        &path,
        reply.status(),
        up,
        subject,
    ));
    Ok(reply)
}

/// The audit record of a request a route refused before its gate judged a response: the
/// time and version, the route's tool, `request_id`, `verdict` and `reason` (if any).
fn refused_record(route: &Route, id: &str, reason: Option<&str>) -> String {
    let mut record = String::new();
    let mut w = ObjectWriter::new(&mut record);
    w.str("time", &Timestamp::now().to_string())
        .str("jsongate", env!("CARGO_PKG_VERSION"))
        .str("tool", route.gate.contract().tool())
        .str("request_id", id)
        .str("verdict", "request_refused");
    if let Some(r) = reason {
        w.str("reason", r);
    }
    w.finish();
    record
}

/// The audit line of a request refused before any route's gate took it: the time and
/// version, `verdict` and `reason` (if any), and the HTTP facts.
fn unrouted(
    verdict: &str,
    reason: Option<&str>,
    method: &Method,
    path: &str,
    status: u16,
) -> String {
    let mut line = String::new();
    let mut o = ObjectWriter::new(&mut line);
    o.str("time", &Timestamp::now().to_string())
        .str("jsongate", env!("CARGO_PKG_VERSION"))
        .str("verdict", verdict);
    if let Some(r) = reason {
        o.str("reason", r);
    }
    o.object("http")
        .str("method", method.as_str())
        .str("path", path)
        .u64("status", status.into());
    o.finish();
    line
}

fn refusal_text(s: StatusCode) -> &'static str {
    match s {
        StatusCode::PAYLOAD_TOO_LARGE => "jsongate: the request body is too large\n",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            "jsongate: the request body must be JSON, with no content coding\n"
        }
        StatusCode::REQUEST_TIMEOUT => "jsongate: the request body did not arrive in time\n",
        _ => "jsongate: the request was refused\n",
    }
}

/// Reads the client's body (bounded), calls the upstream and gates its answer. Returns the
/// status of a refusal of the request itself, or the gate's decision, and the upstream's
/// status when it answered.
async fn exchange(
    shared: &Arc<Shared>,
    route: &Route,
    path: &str,
    greq: &gate::Request,
    req: Request<Incoming>,
) -> (StatusCode, Option<gate::Delivery>, Option<u16>) {
    let lim = shared.config.limits;
    let (parts, body) = req.into_parts();
    // A request body, when there is one, is strict JSON within the limit, read before the
    // upstream is called (a slow client runs into the request timeout, not the upstream).
    let has_body = !http_body::Body::is_end_stream(&body)
        || parts
            .headers
            .get(http::header::CONTENT_LENGTH)
            .is_some_and(|v| v != "0");
    let forwarded: Bytes = if has_body {
        let check = Check::Limits(Limits::new().max_bytes(lim.max_request_bytes));
        let read = async {
            if let Some(r) = early_refusal(&parts.headers, lim.max_request_bytes) {
                return Err(r);
            }
            hold(body, &check, &Pool::default()).await
        };
        match tokio::time::timeout(lim.request_timeout, read).await {
            Err(_) => return (StatusCode::REQUEST_TIMEOUT, None, None),
            Ok(Err(r)) => return (request_refusal(&r.kind).0, None, None),
            Ok(Ok(b)) => b,
        }
    } else {
        Bytes::new()
    };
    let rest = &path[route.prefix.len()..];
    let sep = if rest.is_empty() || rest.starts_with('/') || route.base_path.ends_with('/') {
        ""
    } else {
        "/"
    };
    let mut target = format!("{}{sep}{rest}", route.base_path);
    if target.is_empty() {
        target.push('/');
    }
    if let Some(q) = parts.uri.query() {
        target.push('?');
        target.push_str(q);
    }
    let mut up = Request::builder().method(parts.method.clone()).uri(&target);
    let nominated = connection_options(&parts.headers);
    for (k, v) in &parts.headers {
        if !hop_by_hop(k) && !nominated.contains(k) {
            up = up.header(k, v);
        }
    }
    // The gate reads the upstream's bytes as JSON: a content-coded answer would be refused
    // whole, so the upstream is asked for none (RFC 9110 §12.5.3).
    up = up
        .header(HOST, &route.host_header)
        .header(ACCEPT_ENCODING, "identity");
    let Ok(mut up) = up.body(Full::new(forwarded)) else {
        return (StatusCode::BAD_REQUEST, None, None);
    };
    route.headers.apply(up.headers_mut());
    if let Some(t) = route.token.get() {
        t.apply(up.headers_mut());
    }
    let gate = &route.gate;
    let call = async {
        // A kept-alive connection when one is idle; a pooled one the upstream closed in the
        // meantime fails at once, and the request goes on a fresh connection.
        let authority = &route.target.authority;
        let mut reused = shared.take_idle(authority);
        loop {
            let fresh = reused.is_none();
            let mut sender = match reused.take() {
                Some(s) => s,
                None => match connect::open(&route.target, lim.connect_timeout).await {
                    Ok(s) => s,
                    Err(kind) => {
                        shared.log.note(authority, kind);
                        return (
                            gate.refused(FailureCode::UpstreamUnavailable, kind, greq),
                            None,
                        );
                    }
                },
            };
            let res = match sender.send_request(clone_request(&up)).await {
                Ok(r) => r,
                Err(_) if !fresh => continue,
                Err(_) => {
                    return (
                        gate.refused(FailureCode::UpstreamUnavailable, "upstream_reset", greq),
                        None,
                    )
                }
            };
            let status = res.status().as_u16();
            if status == 401 {
                if let Some(t) = route.token.get() {
                    t.refused();
                }
            }
            let d = gate_decision(gate, greq, res).await;
            shared.give_idle(authority, sender);
            return (d, Some(status));
        }
    };
    match tokio::time::timeout(lim.upstream_timeout, call).await {
        Ok((d, up)) => (StatusCode::OK, Some(d), up),
        Err(_) => (
            StatusCode::OK,
            Some(gate.refused(FailureCode::UpstreamUnavailable, "timeout", greq)),
            None,
        ),
    }
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// Most idle upstream connections kept per upstream.
const MAX_IDLE: usize = 64;

fn clone_request(r: &Request<Full<Bytes>>) -> Request<Full<Bytes>> {
    let mut b = Request::builder()
        .method(r.method().clone())
        .uri(r.uri().clone());
    if let Some(h) = b.headers_mut() {
        h.clone_from(r.headers());
    }
    // The body is a `Full` of shared bytes: cloning it copies nothing.
    b.body(r.body().clone())
        .unwrap_or_else(|_| Request::new(Full::new(Bytes::new())))
}

impl Shared {
    fn take_idle(&self, authority: &str) -> Option<Sender> {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        let list = idle.get_mut(authority)?;
        while let Some(s) = list.pop() {
            if s.is_ready() {
                return Some(s);
            }
        }
        None
    }

    /// Keeps `sender` for the next request once its connection is ready again (the answer
    /// was read to its end); a connection whose answer was left unread closes instead.
    fn give_idle(self: &Arc<Self>, authority: &str, mut sender: Sender) {
        let me = Arc::clone(self);
        let authority = authority.to_owned();
        tokio::spawn(async move {
            let ready = tokio::time::timeout(Duration::from_millis(100), sender.ready()).await;
            if matches!(ready, Ok(Ok(()))) {
                let mut idle = me.idle.lock().unwrap_or_else(PoisonError::into_inner);
                let list = idle.entry(authority).or_default();
                if list.len() < MAX_IDLE {
                    list.push(sender);
                }
            }
        });
    }
}

/// Serves `config` on `listener` until `shutdown` resolves; then stops accepting, lets
/// in-flight requests finish (closing idle kept-alive connections) for at most the grace
/// period, and returns. The audit file is appended to, created with mode 0600 (Unix) when
/// missing; a symbolic link at its path is refused.
///
/// # Errors
/// The audit file cannot be opened, or is a symbolic link.
///
/// # Example
/// ```
/// use jsongate::http::serve::{run, ServeConfig};
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("c.json"), br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#).unwrap();
/// let config = ServeConfig::from_slice(br#"{"serve":1,"audit":"audit.jsonl",
///   "routes":[{"path_prefix":"/","upstream":"http://127.0.0.1:9000","contract_file":"c.json"}]}"#, dir.path())?;
/// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
/// rt.block_on(async {
///     let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
///     // Shut down at once: nothing in flight, so `run` returns without waiting out the grace period.
///     run(config, listener, async {}).await
/// })?;
/// assert!(dir.path().join("audit.jsonl").exists()); // opened (created) when serving starts
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub async fn run(
    config: ServeConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let audit: Box<dyn IoWrite + Send> = match &config.audit {
        Some(p) => Box::new(crate::fsx::open_append_private(p).map_err(|e| {
            std::io::Error::new(e.kind(), format!("audit file '{}': {e}", p.display()))
        })?),
        None => Box::new(std::io::stderr()),
    };
    let lim = config.limits;
    let policy = HostPolicy::new(
        listener.local_addr()?,
        &config.allow_hosts,
        &config.allow_origins,
    );
    for r in &config.routes {
        if let Some(g) = &r.oauth {
            let what = format!("upstream {}", r.target.authority);
            let _ = r.token.set(TokenCache::start(g.clone(), what).await);
        }
    }
    let guard = match config.auth.clone() {
        Some(a) => Some(
            Guard::start(Authenticator::new(a))
                .await
                .map_err(std::io::Error::other)?,
        ),
        None => None,
    };
    let shared = Arc::new(Shared {
        guard,
        config,
        idle: Mutex::new(std::collections::HashMap::new()),
        audit: Mutex::new(audit),
        log: FailureLog::default(),
    });
    let refuse = |status, text| plain(status, text);
    let tls = shared.config.tls.clone();
    serve_connections(listener, tls, lim, policy, shutdown, refuse, move |req| {
        let shared = Arc::clone(&shared);
        async move {
            match handle(shared, req).await {
                Ok(r) => r,
                Err(never) => match never {},
            }
        }
    })
    .await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_schema_compiles() {
        let _ = SERVE.schema();
    }

    #[test]
    fn unknown_members_are_errors() {
        let load = |extra_route: &str, extra: &str| {
            let text = format!(
                r#"{{"serve":1,"routes":[{{"path_prefix":"/a","upstream":"http://127.0.0.1:1","contract_file":"no-such-contract.json"{extra_route}}}]{extra}}}"#
            );
            ServeConfig::from_slice(text.as_bytes(), Path::new(".")).unwrap_err()
        };
        for (e, pointer) in [
            (load(r#","retries":3"#, ""), "/routes/0/retries"),
            (load("", r#","lmits":{}"#), "/lmits"),
        ] {
            assert!(e.message().contains("serve schema"), "{e}");
            assert_eq!(e.kind(), crate::json::ConfigErrorKind::Schema);
            assert_eq!(e.pointer(), pointer);
        }
        // A valid file naming a contract that cannot be read: the error points at the member.
        let e = load("", "");
        assert_eq!(e.pointer(), "/routes/0/contract_file");
        assert_eq!(e.kind(), crate::json::ConfigErrorKind::Read);
        assert!(
            e.message()
                .starts_with("routes/0/contract_file: cannot read contract '"),
            "{e}"
        );
    }

    #[test]
    fn audit_line_adds_http_facts() {
        let l = audit_line(
            r#"{"a":1}"#,
            &Method::GET,
            "/x",
            StatusCode::OK,
            Some(500),
            None,
        );
        assert_eq!(
            l,
            r#"{"a":1,"http":{"method":"GET","path":"/x","status":200,"upstream_status":500}}"#
        );
    }

    #[test]
    fn query_values() {
        assert_eq!(query_value(Some("a=1&b=2"), "b").as_deref(), Some("2"));
        assert_eq!(query_value(Some("a=1"), "b"), None);
        assert_eq!(query_value(None, "b"), None);
    }
}
