//! MCP's Streamable HTTP transport through the same relay as stdio: each client session gets
//! one [`Proxy`] (its state machine, tool schemas, pins, policy) and one upstream
//! conversation of its own, fed with the JSON-RPC messages of the client's POSTs and with
//! every message the upstream answers, as one JSON body or as the `data` of each SSE event.
//! Nothing here judges a message; this module only moves messages between HTTP and the
//! relay's line streams and routes the relay's output back to the HTTP exchange it answers.
//!
//! Sessions are jsongate's own, never shared between clients:
//! - `initialize` (without `Mcp-Session-Id`) starts a relay and an upstream conversation;
//!   when the upstream answers with a result, the client gets a session id issued here (128
//!   random bits), whatever the upstream did (an upstream that issues its own id keeps it:
//!   the relay sends it upstream, the client never sees it). A failed `initialize` (an error
//!   answer, an HTTP error, a timeout) ends the relay at once and issues nothing.
//! - A session is bound to the credentials that opened it (a digest of its `Authorization`
//!   header, or of its absence): a request naming the session with other credentials, or
//!   none, is refused with `403` and never reaches the relay. A session id is not a
//!   credential. The upstream receives only the credentials of the session's own client.
//! - A request without a session that is not `initialize` (a stateless client, `server/discover`)
//!   gets a relay of its own that ends with its answer; a notification or response without a
//!   session is refused with `400`.
//! - Server messages (notifications, server requests) of a session go only to that session's
//!   open streams; JSON-RPC ids are the session's own (two clients may both use id 5), and a
//!   second request reusing an id still in flight in the same session is refused (`409`).
//!
//! Every resource is bounded and released: relays (at most [`MAX_SESSIONS`] at once by
//! default, pending `initialize` and one-request relays included; `503` past it), requests in
//! flight per session ([`MAX_IN_FLIGHT`], `429` past it), `GET` streams per session
//! ([`MAX_GET_STREAMS`]), messages waiting on a client stream ([`STREAM_BUFFER`]; a client
//! that does not read loses server messages past it, never its answer), messages on their
//! way upstream ([`MAX_BACKLOG`], `429` past it), upstream messages waiting for the relay (a
//! fixed queue: a faster upstream is read no further), the upstream event ids kept (only for
//! answers someone waits for),
//! and the upstream exchanges (each ends with its answer, or at the answer timeout). A session
//! ends on `DELETE`, after [`SESSION_IDLE_TIMEOUT`] unused, or when its `initialize` fails;
//! its relay's threads and tasks then end.
//!
//! - A posted request is answered on its own exchange: `application/json`, or
//!   `text/event-stream` when the client accepts it and the upstream streamed (server
//!   notifications and requests that the relay lets through while it waits travel on it
//!   too, then the response, with the upstream's event id when it had one). An answer that
//!   comes first and came as one JSON body goes back as one JSON body. Notifications and
//!   responses are answered `202`; `initialize` is answered with one JSON body.
//! - An upstream answer whose content type is neither `application/json` nor
//!   `text/event-stream` is refused (a JSON-RPC error answers the request).
//! - `MCP-Protocol-Version` and `Authorization` are forwarded. A GET opens the session's
//!   server stream; DELETE ends the session upstream and here.
//! - The server side (connection cap, head limits and timeouts, `Host` and `Origin` checks
//!   against DNS rebinding) is the one `jsongate serve` uses (`crate::http::front`); a body
//!   must arrive within the request timeout (`408`).
//! - Message bodies are bounded by the relay's `max_bytes`; an SSE event over it is cut there
//!   and refused by the relay like an oversized stdio line; an upstream that fails (HTTP
//!   error, reset, a stream that ends before the answer, a timeout) makes the request's
//!   answer a JSON-RPC error, and writes one line to standard error per kind of failure at
//!   most every ten seconds.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::{self, Read, Write};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use http::{Method, Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

use super::sse::SseParser;
use super::{Config, Proxy};
use crate::auth::{Authenticator, Identity};
use crate::gate::{FailureCode, StopReason};
use crate::http::caller::{Checked, Guard};
use crate::http::connect::{self, Target};
use crate::http::front::{serve_connections, FailureLog, HostPolicy};
use crate::http::oauth::TokenCache;
use crate::http::serve::ServerLimits;
use crate::http::ClientCredentials;
use crate::http::UpstreamHeaders;
use crate::json::{ObjectWriter, Value};
use crate::tls::{ClientTls, ServerTls};
use crate::Limits;

/// The session header of the Streamable HTTP transport.
///
/// # Example
/// ```
/// use jsongate::mcp::http::SESSION_HEADER;
/// // The client echoes the id the front end issued at `initialize` on every later request.
/// let name = http::HeaderName::from_static(SESSION_HEADER);
/// assert_eq!(name, "mcp-session-id"); // what clients send as `Mcp-Session-Id`
/// assert_eq!(http::HeaderName::try_from("Mcp-Session-Id").unwrap(), name);
/// ```
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The protocol version header.
///
/// # Example
/// ```
/// use jsongate::mcp::http::VERSION_HEADER;
/// let mut req = http::Request::new(());
/// req.headers_mut().insert(VERSION_HEADER, http::HeaderValue::from_static("2025-06-18"));
/// assert_eq!(req.headers()["MCP-Protocol-Version"], "2025-06-18"); // header names are case-insensitive
/// ```
pub const VERSION_HEADER: &str = "mcp-protocol-version";
/// Default time a request waits for its answer.
///
/// # Example
/// ```
/// use std::time::Duration;
/// use jsongate::mcp::{http::{HttpOptions, DEFAULT_ANSWER_TIMEOUT}, Config};
/// assert_eq!(DEFAULT_ANSWER_TIMEOUT, Duration::from_secs(5 * 60));
/// let opts = HttpOptions::new("127.0.0.1:8931", "/mcp", Config::default);
/// assert_eq!(opts.get_answer_timeout(), DEFAULT_ANSWER_TIMEOUT);
/// assert_eq!(opts.answer_timeout(Duration::from_secs(30)).get_answer_timeout(), Duration::from_secs(30));
/// ```
pub const DEFAULT_ANSWER_TIMEOUT: Duration = Duration::from_secs(300);
/// Default bound on relays at once (sessions, `initialize` exchanges still waiting and
/// one-request relays; each relay runs on a few threads); past it a request that needs a new
/// relay is refused with `503`. [`HttpOptions::max_sessions`] sets another bound.
///
/// # Example
/// ```
/// use jsongate::mcp::http::{HttpOptions, MAX_SESSIONS};
/// use jsongate::mcp::Config;
/// // With 256 relays running, the next `initialize` is answered `503 Service Unavailable`
/// // until one ends (or is ended after SESSION_IDLE_TIMEOUT unused).
/// assert_eq!(MAX_SESSIONS, 256);
/// assert_eq!(HttpOptions::new("h:1", "/", Config::default).get_max_sessions(), MAX_SESSIONS);
/// ```
pub const MAX_SESSIONS: usize = 256;
/// Most requests of one session waiting for their answers at once; past it a request is
/// refused with `429`.
///
/// # Example
/// ```
/// use jsongate::mcp::http::MAX_IN_FLIGHT;
/// assert_eq!(MAX_IN_FLIGHT, 64);
/// ```
pub const MAX_IN_FLIGHT: usize = 64;
/// Most `GET` streams of one session open at once; past it a `GET` is refused with `429`.
///
/// # Example
/// ```
/// use jsongate::mcp::http::MAX_GET_STREAMS;
/// assert_eq!(MAX_GET_STREAMS, 2);
/// ```
pub const MAX_GET_STREAMS: usize = 2;
/// Most messages waiting on one client stream (a `GET` stream or a `POST`'s event stream)
/// for the client to read them. Past it the server's notifications and requests for that
/// stream are dropped; the answer a `POST` stream waits for is always delivered (it waits for
/// room until the client reads or goes away).
///
/// # Example
/// ```
/// use jsongate::mcp::http::STREAM_BUFFER;
/// assert_eq!(STREAM_BUFFER, 256);
/// ```
pub const STREAM_BUFFER: usize = 256;
/// Most messages of one session on their way upstream: client messages the relay has not
/// read yet plus upstream exchanges running. Past it a client message is refused with `429`
/// (requests are also bounded by [`MAX_IN_FLIGHT`]; this bounds notifications and
/// responses, which wait for nothing). A message the relay is judging at that moment is in
/// neither count, so a few more than this may be on their way.
///
/// # Example
/// ```
/// use jsongate::mcp::http::MAX_BACKLOG;
/// assert_eq!(MAX_BACKLOG, 128);
/// ```
pub const MAX_BACKLOG: usize = 128;
/// Upstream messages waiting for the relay to judge them; an upstream that sends faster than
/// that waits (its stream is read no further).
const SERVER_QUEUE: usize = 64;
/// A session unused for this long is ended (its relay stops; the client gets `404` and
/// starts a new one, as the transport specifies).
///
/// # Example
/// ```
/// use std::time::Duration;
/// use jsongate::mcp::http::{DEFAULT_ANSWER_TIMEOUT, SESSION_IDLE_TIMEOUT};
/// assert_eq!(SESSION_IDLE_TIMEOUT, Duration::from_secs(10 * 60));
/// // A session waiting the longest default time for an answer is still well inside it.
/// assert!(DEFAULT_ANSWER_TIMEOUT < SESSION_IDLE_TIMEOUT);
/// ```
pub const SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// How the HTTP front end runs: [`HttpOptions::new`] with what it cannot do without (the
/// upstream's URL and the relay configuration of each session), then a consuming setter for
/// each choice that differs, in the style of [`Limits`].
///
/// # Example
/// ```
/// use std::time::Duration;
/// use jsongate::http::parse_upstream;
/// use jsongate::mcp::http::HttpOptions;
/// use jsongate::mcp::{Config, Screen};
/// use jsongate::Limits;
/// let up = parse_upstream("http://127.0.0.1:8931/mcp")?;
/// let opts = HttpOptions::new(up.authority, up.path, || Config::default().screen(Screen::Reject))
///     .limits(Limits::new().max_bytes(1 << 20))
///     .allowed_origins(vec!["https://app.example.com".to_owned()])
///     .answer_timeout(Duration::from_secs(60));
/// assert_eq!(opts.get_path(), "/mcp");
/// assert_eq!(opts.get_upstream_authority(), "127.0.0.1:8931");
/// assert_eq!(opts.get_answer_timeout(), Duration::from_secs(60));
/// assert_eq!(opts.get_limits().get_max_bytes(), 1 << 20);
/// # Ok::<(), String>(())
/// ```
pub struct HttpOptions {
    limits: Limits,
    upstream_authority: String,
    path: String,
    allowed_origins: Vec<String>,
    allowed_hosts: Vec<String>,
    config: Box<dyn Fn() -> Config + Send + Sync>,
    answer_timeout: Duration,
    max_sessions: usize,
    server: ServerLimits,
    upstream_tls: Option<ClientTls>,
    upstream_headers: UpstreamHeaders,
    tls: Option<ServerTls>,
    auth: Option<Authenticator>,
    audit: Option<Mutex<Box<dyn Write + Send>>>,
    upstream_oauth: Option<ClientCredentials>,
}

impl HttpOptions {
    /// A front end for the upstream at `upstream_authority` (`host:port`) whose MCP
    /// endpoint is `path` (also the path served here), making each new session's relay
    /// configuration with `config`. Defaults: the limits of [`Config::default`], no allowed
    /// origins (requests without `Origin` are allowed: non-browser clients), answers awaited
    /// for [`DEFAULT_ANSWER_TIMEOUT`].
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::http::{HttpOptions, DEFAULT_ANSWER_TIMEOUT};
    /// use jsongate::mcp::{Config, DEFAULT_MAX_MESSAGE_BYTES};
    /// let opts = HttpOptions::new("127.0.0.1:9000", "/", Config::default);
    /// assert_eq!(opts.get_answer_timeout(), DEFAULT_ANSWER_TIMEOUT);
    /// assert_eq!(opts.get_limits().get_max_bytes(), DEFAULT_MAX_MESSAGE_BYTES);
    /// assert!(opts.get_allowed_origins().is_empty());
    /// ```
    pub fn new(
        upstream_authority: impl Into<String>,
        path: impl Into<String>,
        config: impl Fn() -> Config + Send + Sync + 'static,
    ) -> HttpOptions {
        HttpOptions {
            limits: Config::default().get_limits(),
            upstream_authority: upstream_authority.into(),
            path: path.into(),
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            config: Box::new(config),
            answer_timeout: DEFAULT_ANSWER_TIMEOUT,
            max_sessions: MAX_SESSIONS,
            server: ServerLimits::default(),
            upstream_tls: None,
            upstream_headers: UpstreamHeaders::new(),
            tls: None,
            auth: None,
            audit: None,
            upstream_oauth: None,
        }
    }

    /// Authenticates to the upstream with an OAuth client credentials grant: the token is
    /// fetched at start, kept fresh, and sent as `Authorization` on every upstream request
    /// (replacing an `Authorization` of [`upstream_headers`](Self::upstream_headers)).
    /// Default: none.
    #[must_use]
    pub fn upstream_oauth(mut self, grant: ClientCredentials) -> Self {
        self.upstream_oauth = Some(grant);
        self
    }

    /// Authenticates every request with these checks (an OAuth 2.1 protected resource,
    /// RFC 9728): a request without valid credentials gets `401` (`403` for a missing
    /// scope) with a `WWW-Authenticate` challenge naming the metadata document, which is
    /// served at its well-known path. A session is bound to the caller's subject, and its
    /// relay serves that caller ([`Config::caller`]). Default: none (a session is bound to
    /// a digest of its `Authorization` header).
    #[must_use]
    pub fn auth(mut self, auth: Authenticator) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Where the front writes a line for each request it refuses before a relay sees it
    /// (failed authentication); each line is written whole. Default: none.
    #[must_use]
    pub fn audit(mut self, audit: Box<dyn Write + Send>) -> Self {
        self.audit = Some(Mutex::new(audit));
        self
    }

    /// Connects to the upstream over TLS with this configuration, verifying its
    /// certificate against the upstream's host (`https://` upstreams). Default: plain HTTP.
    #[must_use]
    pub fn upstream_tls(mut self, tls: ClientTls) -> Self {
        self.upstream_tls = Some(tls);
        self
    }

    /// Headers sent upstream in jsongate's name on every request (the upstream's
    /// credentials). A client's own `Authorization` is never forwarded. Default: none.
    #[must_use]
    pub fn upstream_headers(mut self, headers: UpstreamHeaders) -> Self {
        self.upstream_headers = headers;
        self
    }

    /// Serves TLS with this certificate (reloaded on `SIGHUP` and when its files change).
    /// Default: plain HTTP.
    #[must_use]
    pub fn tls(mut self, tls: ServerTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// The front end's limits: bodies and SSE events are bounded by its `max_bytes`.
    /// Default: the limits of [`Config::default`].
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::{http::HttpOptions, Config};
    /// use jsongate::Limits;
    /// let opts = HttpOptions::new("h:1", "/", Config::default).limits(Limits::new().max_bytes(4096));
    /// assert_eq!(opts.get_limits().get_max_bytes(), 4096);
    /// ```
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Origins allowed to call (exact `scheme://host[:port]`); requests without `Origin`
    /// are allowed (non-browser clients), others not listed are answered `403`. Default: none.
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::{http::HttpOptions, Config};
    /// let opts = HttpOptions::new("h:1", "/", Config::default)
    ///     .allowed_origins(vec!["http://localhost:3000".to_owned()]);
    /// assert_eq!(opts.get_allowed_origins(), ["http://localhost:3000"]);
    /// ```
    #[must_use]
    pub fn allowed_origins(mut self, origins: Vec<String>) -> Self {
        self.allowed_origins = origins;
        self
    }

    /// Hosts the front answers (`Host` header: a name, or `name:port`), against DNS
    /// rebinding. Default: none listed, which on a loopback listener accepts only loopback
    /// names (`localhost`, `127.0.0.0/8`, `::1`) and elsewhere any host. A request for
    /// another host is answered `421`.
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::{http::HttpOptions, Config};
    /// let opts = HttpOptions::new("h:1", "/", Config::default)
    ///     .allowed_hosts(vec!["gateway.internal.example".to_owned()]);
    /// assert_eq!(opts.get_allowed_hosts(), ["gateway.internal.example"]);
    /// ```
    #[must_use]
    pub fn allowed_hosts(mut self, hosts: Vec<String>) -> Self {
        self.allowed_hosts = hosts;
        self
    }

    /// Most relays at once (see [`MAX_SESSIONS`], the default); at least 1.
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::{http::HttpOptions, Config};
    /// assert_eq!(HttpOptions::new("h:1", "/", Config::default).max_sessions(16).get_max_sessions(), 16);
    /// assert_eq!(HttpOptions::new("h:1", "/", Config::default).max_sessions(0).get_max_sessions(), 1);
    /// ```
    #[must_use]
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n.max(1);
        self
    }

    /// The server side's limits, the ones `jsongate serve` has: connections at once, request
    /// head size, count and time, the time to send a body (`408` past it) and the shutdown
    /// grace. (Its `max_request_bytes`, upstream and connect timeouts are `serve`'s alone:
    /// here a body is bounded by [`limits`](Self::limits)' `max_bytes`.) Default:
    /// [`ServerLimits::default`].
    ///
    /// # Example
    /// ```
    /// use std::time::Duration;
    /// use jsongate::http::serve::ServerLimits;
    /// use jsongate::mcp::{http::HttpOptions, Config};
    /// let opts = HttpOptions::new("h:1", "/", Config::default)
    ///     .server_limits(ServerLimits::default().max_connections(64).request_timeout(Duration::from_secs(5)));
    /// assert_eq!(opts.get_server_limits().get_max_connections(), 64);
    /// ```
    #[must_use]
    pub fn server_limits(mut self, limits: ServerLimits) -> Self {
        self.server = limits;
        self
    }

    /// How long a request waits for its answer. Default: [`DEFAULT_ANSWER_TIMEOUT`].
    ///
    /// # Example
    /// ```
    /// use std::time::Duration;
    /// use jsongate::mcp::{http::HttpOptions, Config};
    /// let opts = HttpOptions::new("h:1", "/", Config::default).answer_timeout(Duration::from_secs(5));
    /// assert_eq!(opts.get_answer_timeout(), Duration::from_secs(5));
    /// ```
    #[must_use]
    pub fn answer_timeout(mut self, timeout: Duration) -> Self {
        self.answer_timeout = timeout;
        self
    }

    /// The value set by [`limits`](Self::limits).
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::{http::HttpOptions, Config};
    /// let opts = HttpOptions::new("h:1", "/", Config::default);
    /// assert_eq!(opts.get_limits(), Config::default().get_limits());
    /// ```
    pub fn get_limits(&self) -> Limits {
        self.limits
    }

    /// The upstream's `host:port`, as given to [`new`](Self::new).
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::{http::HttpOptions, Config};
    /// assert_eq!(HttpOptions::new("h:1", "/", Config::default).get_upstream_authority(), "h:1");
    /// ```
    pub fn get_upstream_authority(&self) -> &str {
        &self.upstream_authority
    }

    /// The MCP endpoint path, as given to [`new`](Self::new).
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::{http::HttpOptions, Config};
    /// assert_eq!(HttpOptions::new("h:1", "/mcp", Config::default).get_path(), "/mcp");
    /// ```
    pub fn get_path(&self) -> &str {
        &self.path
    }

    /// The value set by [`allowed_origins`](Self::allowed_origins).
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::{http::HttpOptions, Config};
    /// assert!(HttpOptions::new("h:1", "/", Config::default).get_allowed_origins().is_empty());
    /// ```
    pub fn get_allowed_origins(&self) -> &[String] {
        &self.allowed_origins
    }

    /// The value set by [`allowed_hosts`](Self::allowed_hosts).
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::{http::HttpOptions, Config};
    /// assert!(HttpOptions::new("h:1", "/", Config::default).get_allowed_hosts().is_empty());
    /// ```
    pub fn get_allowed_hosts(&self) -> &[String] {
        &self.allowed_hosts
    }

    /// The value set by [`max_sessions`](Self::max_sessions).
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::http::{HttpOptions, MAX_SESSIONS};
    /// use jsongate::mcp::Config;
    /// assert_eq!(HttpOptions::new("h:1", "/", Config::default).get_max_sessions(), MAX_SESSIONS);
    /// ```
    pub fn get_max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// The value set by [`server_limits`](Self::server_limits).
    ///
    /// # Example
    /// ```
    /// use jsongate::http::serve::ServerLimits;
    /// use jsongate::mcp::{http::HttpOptions, Config};
    /// assert_eq!(HttpOptions::new("h:1", "/", Config::default).get_server_limits(), ServerLimits::default());
    /// ```
    pub fn get_server_limits(&self) -> ServerLimits {
        self.server
    }

    /// The value set by [`answer_timeout`](Self::answer_timeout).
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::{http::{HttpOptions, DEFAULT_ANSWER_TIMEOUT}, Config};
    /// let opts = HttpOptions::new("h:1", "/", Config::default);
    /// assert_eq!(opts.get_answer_timeout(), DEFAULT_ANSWER_TIMEOUT);
    /// ```
    pub fn get_answer_timeout(&self) -> Duration {
        self.answer_timeout
    }
}

/// A message for the client: its bytes and the upstream's SSE event id, if any.
type Delivery = (Vec<u8>, Option<String>);

/// One client's session: its relay, its upstream conversation and its waiters. Nothing in
/// it is ever reached from another session.
struct Session {
    /// The id issued to the client (empty for a one-request relay).
    id: String,
    /// Digest of the credentials that opened it.
    creds: [u8; 32],
    /// The authenticated caller's subject, for the front's own audit lines.
    subject: Option<String>,
    /// Lines to the relay's client side.
    to_relay: Mutex<Option<std_mpsc::Sender<Vec<u8>>>>,
    /// Requests waiting for their answer, by the id's JSON text (at most [`MAX_IN_FLIGHT`]).
    waiters: Mutex<HashMap<String, Waiter>>,
    /// Open SSE streams of this session (POSTs waiting, then the GET streams), newest last.
    streams: Mutex<Vec<mpsc::Sender<Delivery>>>,
    /// GET streams open.
    get_streams: AtomicUsize,
    /// The upstream's session id (kept here, never shown to the client).
    upstream_id: Mutex<Option<HeaderValue>>,
    /// Headers forwarded on the relay's own requests: the client's credentials (fixed when
    /// the session opened) and its protocol version.
    forward: Mutex<HeaderMap>,
    /// SSE event ids of upstream answers that someone waits for, by the answer's id.
    event_ids: Mutex<HashMap<String, String>>,
    /// When the client last used the session.
    used: Mutex<Instant>,
    /// The relay's server output (upstream messages go in); dropped when the session ends.
    to_server_out: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    /// Upstream exchanges and timers of this session, aborted when it ends.
    tasks: Mutex<JoinSet<()>>,
    ended: AtomicBool,
    /// Client messages given to the relay and not read by it yet, plus upstream exchanges
    /// running: at most [`MAX_BACKLOG`] when a client message is accepted.
    backlog: Arc<AtomicUsize>,
}

/// Who waits for an answer: a JSON exchange, or an SSE stream that ends with it.
enum Waiter {
    Once(oneshot::Sender<Delivery>),
    Stream(mpsc::Sender<Delivery>),
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Front {
    opts: HttpOptions,
    target: Target,
    guard: Option<Guard>,
    /// The front's own token for the upstream (client credentials).
    token: Option<Arc<TokenCache>>,
    limits: Limits,
    /// Sessions by the id issued to their client.
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// Relays running (sessions, pending `initialize`, one-request relays), counted until
    /// their last thread ended.
    live: Arc<AtomicUsize>,
    rt: tokio::runtime::Handle,
    log: FailureLog,
}

/// A `Write` that sends each write to a task (the relay writes whole lines).
struct TaskWriter(mpsc::UnboundedSender<Vec<u8>>);

impl Write for TaskWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .send(buf.to_vec())
            .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A `Read` over a channel of byte pieces (`recv` blocks for the next one); ends when every
/// sender is gone.
struct ChanReader {
    recv: Box<dyn FnMut() -> Option<Vec<u8>> + Send>,
    buf: Vec<u8>,
    at: usize,
}

impl Read for ChanReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.at == self.buf.len() {
            match (self.recv)() {
                Some(b) => {
                    self.buf = b;
                    self.at = 0;
                }
                None => return Ok(0),
            }
        }
        let n = out.len().min(self.buf.len() - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn chan_reader(recv: impl FnMut() -> Option<Vec<u8>> + Send + 'static) -> ChanReader {
    ChanReader {
        recv: Box::new(recv),
        buf: Vec::new(),
        at: 0,
    }
}

/// Splits the pieces a task receives into lines, calling `each` with every whole line.
async fn lines_of(rx: &mut mpsc::UnboundedReceiver<Vec<u8>>, mut each: impl FnMut(Vec<u8>)) {
    let mut line = Vec::new();
    while let Some(piece) = rx.recv().await {
        let mut piece = &piece[..];
        while let Some(i) = memchr::memchr(b'\n', piece) {
            line.extend_from_slice(&piece[..i]);
            piece = &piece[i + 1..];
            each(std::mem::take(&mut line));
        }
        line.extend_from_slice(piece);
    }
}

/// A message as one line: JSON never needs a raw line end outside strings, so CR and LF
/// become spaces (a line end inside a string is invalid JSON either way).
fn one_line(bytes: &[u8]) -> Vec<u8> {
    bytes
        .iter()
        .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
        .collect()
}

/// The facts routing needs about one message.
struct Facts {
    /// The id's JSON text.
    id: Option<String>,
    /// The method, for a request or notification.
    method: Option<String>,
    /// Whether it has `result` or `error` (a response).
    answer: bool,
    /// Whether it has `result` (a successful response).
    result: bool,
}

impl Facts {
    fn is_request(&self) -> bool {
        self.id.is_some() && self.method.is_some()
    }

    fn answers(&self) -> Option<&str> {
        self.id
            .as_deref()
            .filter(|_| self.method.is_none() && self.answer)
    }
}

fn facts(bytes: &[u8], limits: Limits) -> Option<Facts> {
    let v = Value::parse(bytes, limits).ok()?;
    v.as_object()?;
    Some(Facts {
        id: v.get("id").map(Value::to_json),
        method: v.get("method").and_then(Value::as_str).map(str::to_owned),
        answer: v.get("result").is_some() || v.get("error").is_some(),
        result: v.get("result").is_some(),
    })
}

/// The digest a session is bound to: every `Authorization` value the request carries, in
/// order, or the mark of none.
fn credentials(headers: &HeaderMap, ext: &http::Extensions) -> [u8; 32] {
    if let Some(c) = ext.get::<Caller>() {
        return c.creds;
    }
    let mut h = Sha256::new();
    let mut any = false;
    for v in headers.get_all(http::header::AUTHORIZATION) {
        h.update(b"A");
        h.update((v.len() as u64).to_be_bytes());
        h.update(v.as_bytes());
        any = true;
    }
    if !any {
        h.update(b"-");
    }
    h.finalize().into()
}

/// What an authenticated caller's session is bound to: its subject and client (a token
/// refreshed for the same caller keeps the session; another caller's does not).
fn identity_digest(who: &Identity) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"I");
    h.update((who.subject.len() as u64).to_be_bytes());
    h.update(who.subject.as_bytes());
    if let Some(c) = &who.client_id {
        h.update(b"C");
        h.update((c.len() as u64).to_be_bytes());
        h.update(c.as_bytes());
    }
    h.finalize().into()
}

/// A session id for a client: 128 random bits in hex (visible ASCII, as the transport asks).
fn new_session_id() -> io::Result<String> {
    let mut b = [0u8; 16];
    getrandom::getrandom(&mut b).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(super::reply::hex(&b))
}

/// One unit of a count, given back when dropped: a relay running (dropped on the relay's own
/// thread, when it ends), an upstream exchange in its session's backlog.
struct Counted(Arc<AtomicUsize>);

impl Counted {
    fn add(count: &Arc<AtomicUsize>) -> Counted {
        count.fetch_add(1, Ordering::AcqRel);
        Counted(Arc::clone(count))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Front {
    /// Starts a relay for a new session bound to `creds`, forwarding `forward` upstream;
    /// `None` when [`HttpOptions::max_sessions`] relays already run or no thread could start.
    fn new_session(
        self: &Arc<Self>,
        id: String,
        creds: [u8; 32],
        forward: HeaderMap,
        caller: Option<&Identity>,
    ) -> Option<Arc<Session>> {
        if self.live.fetch_add(1, Ordering::AcqRel) >= self.opts.max_sessions {
            self.live.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        let live = Counted(Arc::clone(&self.live));
        let (to_relay, client_in) = std_mpsc::channel::<Vec<u8>>();
        let (client_out_tx, mut client_out) = mpsc::unbounded_channel::<Vec<u8>>();
        let (server_in_tx, mut server_in) = mpsc::unbounded_channel::<Vec<u8>>();
        // Bounded: an upstream that sends faster than the relay judges waits (its stream is
        // read no further) instead of queueing without end.
        let (server_out_tx, mut server_out) = mpsc::channel::<Vec<u8>>(SERVER_QUEUE);
        let session = Arc::new(Session {
            id,
            creds,
            subject: caller.map(|who| who.subject.clone()),
            to_relay: Mutex::new(Some(to_relay)),
            waiters: Mutex::new(HashMap::new()),
            streams: Mutex::new(Vec::new()),
            get_streams: AtomicUsize::new(0),
            upstream_id: Mutex::new(None),
            forward: Mutex::new(forward),
            event_ids: Mutex::new(HashMap::new()),
            to_server_out: Mutex::new(Some(server_out_tx)),
            used: Mutex::new(Instant::now()),
            tasks: Mutex::new(JoinSet::new()),
            ended: AtomicBool::new(false),
            backlog: Arc::new(AtomicUsize::new(0)),
        });
        let backlog = Arc::clone(&session.backlog);
        let mut config = (self.opts.config)();
        if session.id.is_empty() {
            // A relay for one request: nothing is known of what its client saw before.
            config = config.unknown_history();
        }
        if let Some(who) = caller {
            config = config.caller(&who.subject, who.client_id.as_deref(), &who.scopes);
        }
        let proxy = Proxy::new(config);
        let started = std::thread::Builder::new()
            .name("mcp-http-relay".into())
            .spawn(move || {
                let _live = live;
                let _ = proxy.run(
                    chan_reader(move || {
                        let piece = client_in.recv().ok();
                        backlog.fetch_sub(usize::from(piece.is_some()), Ordering::AcqRel);
                        piece
                    }),
                    TaskWriter(client_out_tx),
                    TaskWriter(server_in_tx),
                    // The relay's own thread, outside the runtime: it may block.
                    chan_reader(move || server_out.blocking_recv()),
                    Box::new(|| {}),
                );
            });
        if started.is_err() {
            // The closure (and with it the count) was dropped.
            return None;
        }
        // The relay's output to the client: answers to their waiters, the rest to the
        // session's newest stream. Ends when the relay does.
        let s = Arc::clone(&session);
        let limits = self.limits;
        self.rt.spawn(async move {
            lines_of(&mut client_out, |msg| deliver(&s, msg, limits)).await;
        });
        // The relay's output to the server: each message POSTed upstream, side by side (a
        // long call never holds a ping). Ends when the relay closes the server's side.
        let front = Arc::clone(self);
        let s = Arc::clone(&session);
        self.rt.spawn(async move {
            lines_of(&mut server_in, |msg| {
                let Some(out) = lock(&s.to_server_out).clone() else {
                    return;
                };
                let (f, s2) = (Arc::clone(&front), Arc::clone(&s));
                // Counted from now, not from when the task first runs.
                let counted = Counted::add(&s.backlog);
                spawn_in(&s, async move {
                    let _counted = counted;
                    post_upstream(&f, &s2, msg, out).await;
                });
            })
            .await;
        });
        Some(session)
    }
}

/// Runs `task` as one of the session's own (aborted when it ends); finished ones are
/// collected first, so the set holds only what runs.
fn spawn_in(s: &Session, task: impl std::future::Future<Output = ()> + Send + 'static) {
    let mut tasks = lock(&s.tasks);
    while tasks.try_join_next().is_some() {}
    if s.ended.load(Ordering::Acquire) {
        return;
    }
    tasks.spawn(task);
}

/// Routes one line of the relay's output for the client: an answer to its waiter, anything
/// else (a server notification or request) to the newest open stream of the session.
fn deliver(s: &Session, msg: Vec<u8>, limits: Limits) {
    let f = facts(&msg, limits);
    if let Some(id) = f.as_ref().and_then(Facts::answers) {
        let eid = lock(&s.event_ids).remove(id);
        match lock(&s.waiters).remove(id) {
            Some(Waiter::Once(w)) => {
                let _ = w.send((msg, eid));
            }
            Some(Waiter::Stream(w)) => {
                // The answer always reaches its stream: when the client is behind, it waits
                // for room (until the client reads or goes away).
                if let Err(mpsc::error::TrySendError::Full(d)) = w.try_send((msg, eid)) {
                    spawn_in(s, async move {
                        let _ = w.send(d).await;
                    });
                }
            }
            // Nobody waits (the exchange timed out or went away): dropped.
            None => {}
        }
        return;
    }
    let mut streams = lock(&s.streams);
    streams.retain(|t| !t.is_closed());
    // A client that lets STREAM_BUFFER messages pile up on its stream loses the server's
    // messages past them: what a client does not read is not held for it without bound.
    if let Some(t) = streams.last() {
        let _ = t.try_send((msg, None));
    }
}

/// Writes one message into the relay's server side.
async fn to_relay_server(out: &mpsc::Sender<Vec<u8>>, msg: &[u8]) {
    let mut line = one_line(msg);
    line.push(b'\n');
    let _ = out.send(line).await;
}

/// Why an upstream exchange gave no answer, as the client's JSON-RPC error says it: the
/// message, and for a failure that needs more than a retry, `data` with the gate's failure
/// code and retry decision (`{"code":"UNAUTHORIZED","retry":"reauthorize"}`).
#[derive(Clone, Copy, Debug)]
struct Refusal {
    message: &'static str,
    code: Option<(FailureCode, StopReason)>,
}

impl Refusal {
    /// The upstream refused the relay's credentials (HTTP 401 or 403): a new authorisation
    /// decision is needed; the same request again would be refused again.
    const UNAUTHORIZED: Refusal = Refusal {
        message: "jsongate: the upstream refused the proxy's credentials (HTTP 401/403); \
                  a new authorisation is needed, not a retry",
        code: Some((FailureCode::Unauthorized, StopReason::Reauthorize)),
    };

    const fn plain(message: &'static str) -> Refusal {
        Refusal {
            message,
            code: None,
        }
    }

    /// The JSON-RPC error response to the request with id `id` (its JSON text).
    fn line(self, id: &str) -> Vec<u8> {
        let mut s = String::new();
        let mut o = ObjectWriter::new(&mut s);
        o.str("jsonrpc", "2.0").raw("id", id);
        let mut e = o.object("error");
        e.i64("code", -32603).str("message", self.message);
        if let Some((code, retry)) = self.code {
            e.object("data")
                .str("code", code.as_str())
                .str("retry", retry.as_str());
        }
        e.finish();
        o.finish();
        s.into_bytes()
    }
}

/// POSTs one relay message upstream and feeds every message of the answer back; bounded by
/// the answer timeout.
async fn post_upstream(front: &Front, s: &Session, msg: Vec<u8>, out: mpsc::Sender<Vec<u8>>) {
    let limits = front.limits;
    let id = facts(&msg, limits)
        .filter(Facts::is_request)
        .and_then(|f| f.id);
    let exchange = async {
        let req = upstream_request(front, s, &Method::POST, Full::new(Bytes::from(msg))).ok_or(
            Refusal::plain("jsongate: the message could not be sent upstream"),
        )?;
        let res = match send(&front.target, req).await {
            Ok(res) => res,
            Err(kind) => {
                front.log.note(&front.opts.upstream_authority, kind);
                return Err(Refusal::plain("jsongate: the upstream is unavailable"));
            }
        };
        if let Some(sid) = res.headers().get(SESSION_HEADER) {
            lock(&s.upstream_id).get_or_insert_with(|| sid.clone());
        }
        let status = res.status();
        if status == StatusCode::ACCEPTED {
            return Ok(());
        }
        if !status.is_success() {
            if status == StatusCode::UNAUTHORIZED {
                if let Some(t) = &front.token {
                    t.refused();
                }
            }
            front
                .log
                .note(&front.opts.upstream_authority, status_kind(status));
            if matches!(status.as_u16(), 401 | 403) {
                front.audit_unauthorized(s, id.as_deref(), status);
                return Err(Refusal::UNAUTHORIZED);
            }
            return Err(Refusal::plain(
                "jsongate: the upstream answered with an HTTP error",
            ));
        }
        let content_type = res.headers().get(CONTENT_TYPE);
        let sse = content_type
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
        if !sse && !content_type.is_some_and(crate::http::is_json_content_type) {
            // The transport allows only these two; anything else (an HTML error page, a
            // proxy's banner) is not an answer, whatever its bytes look like.
            front.log.note(
                &front.opts.upstream_authority,
                "answer of another content type",
            );
            return Err(Refusal::plain(
                "jsongate: the upstream answered with a content type that is neither \
                     application/json nor text/event-stream",
            ));
        }
        let answered = if sse {
            read_events(s, res.into_body(), &out, limits, id.as_deref()).await
        } else {
            read_json(res.into_body(), &out, limits).await
        };
        match answered {
            Ok(true) => Ok(()),
            Ok(false) => Err(Refusal::plain(
                "jsongate: the upstream ended its answer before answering",
            )),
            Err(()) => {
                front
                    .log
                    .note(&front.opts.upstream_authority, "answer broken off");
                Err(Refusal::plain(
                    "jsongate: the upstream broke off its answer",
                ))
            }
        }
    };
    let why = match tokio::time::timeout(front.opts.answer_timeout, exchange).await {
        Ok(Ok(())) => return,
        Ok(Err(why)) => why,
        Err(_) => {
            front
                .log
                .note(&front.opts.upstream_authority, "no answer in time");
            Refusal::plain("jsongate: no answer in time")
        }
    };
    if let Some(id) = &id {
        to_relay_server(&out, &why.line(id)).await;
    }
}

/// The kind of an upstream's HTTP error, for the operators' line.
fn status_kind(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 | 403 => "refused the credentials (HTTP 401/403)",
        404 => "no such endpoint or session (HTTP 404)",
        400..=499 => "refused the request (HTTP 4xx)",
        _ => "failed (HTTP 5xx)",
    }
}

/// One JSON body as one message (at most `max_bytes + 1` bytes are kept: the relay refuses
/// a longer one at its limit).
async fn read_json(
    body: Incoming,
    out: &mpsc::Sender<Vec<u8>>,
    limits: Limits,
) -> Result<bool, ()> {
    let cap = usize::try_from(limits.get_max_bytes())
        .unwrap_or(usize::MAX)
        .saturating_add(1);
    let mut body = std::pin::pin!(body);
    let mut buf = Vec::new();
    while let Some(f) = body.frame().await {
        let f = f.map_err(|_| ())?;
        if let Ok(d) = f.into_data() {
            let room = cap.saturating_sub(buf.len());
            buf.extend_from_slice(&d[..room.min(d.len())]);
            if buf.len() >= cap {
                break;
            }
        }
    }
    if buf.iter().all(u8::is_ascii_whitespace) {
        return Ok(false);
    }
    to_relay_server(out, &buf).await;
    Ok(true)
}

/// Every SSE event's data as one message; true once the answer to `id` passed. An event id
/// is kept only for an answer someone in this session waits for.
async fn read_events<B: Body<Data = Bytes>>(
    s: &Session,
    body: B,
    out: &mpsc::Sender<Vec<u8>>,
    limits: Limits,
    id: Option<&str>,
) -> Result<bool, ()> {
    let max = usize::try_from(limits.get_max_bytes()).unwrap_or(usize::MAX);
    let mut parser = SseParser::new(max);
    let mut body = std::pin::pin!(body);
    let mut answered = id.is_none();
    while let Some(f) = body.frame().await {
        let Ok(f) = f else {
            return if answered { Ok(true) } else { Err(()) };
        };
        let Ok(d) = f.into_data() else { continue };
        let mut ready = Vec::new();
        parser.feed(&d, &mut |e| {
            if e.data.is_empty() {
                return;
            }
            if let Some(aid) = facts(&e.data, limits).and_then(|f| f.answers().map(str::to_owned)) {
                if let Some(ev) = &e.id {
                    if lock(&s.waiters).contains_key(&aid) {
                        lock(&s.event_ids).insert(aid.clone(), ev.clone());
                    }
                }
                if Some(aid.as_str()) == id {
                    answered = true;
                }
            } else if e.over_limit && !answered {
                // Cut at the limit: the relay refuses it and answers the request it names.
                answered = id.is_some();
            }
            ready.push(e.data);
        });
        for msg in ready {
            to_relay_server(out, &msg).await;
        }
    }
    parser.finish();
    Ok(answered)
}

/// One request on a fresh connection to the upstream (the failure's kind for the
/// operators' line).
async fn send<B>(target: &Target, req: Request<B>) -> Result<Response<Incoming>, &'static str>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut sender = connect::open(target, CONNECT_TIMEOUT)
        .await
        .map_err(|kind| match kind {
            "connect_refused" => "connection refused",
            "connect_timeout" => "connect timed out",
            "tls" => "TLS handshake failed",
            "handshake" => "handshake failed",
            _ => "cannot connect",
        })?;
    sender
        .send_request(req)
        .await
        .map_err(|_| "connection reset before the answer")
}

/// How long connecting to the upstream may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Ends the session when dropped: a one-request relay ends with its exchange, whatever way
/// the exchange ends (answered, timed out, or the client went away).
struct EndOnDrop(Option<Arc<Session>>);

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            s.end();
        }
    }
}

/// Gives back a `GET` stream's place, and stops reading the upstream's stream, when the
/// client's stream is dropped.
struct GetStream {
    session: Arc<Session>,
    reader: tokio::task::AbortHandle,
}

impl Drop for GetStream {
    fn drop(&mut self) {
        self.reader.abort();
        self.session.get_streams.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body fed from a channel (an SSE stream to the client).
struct Events {
    /// A message received before the stream's head was sent, sent first.
    first: Option<Delivery>,
    rx: mpsc::Receiver<Delivery>,
    /// The id whose answer ends the stream (POST streams), none for the GET stream.
    until: Option<String>,
    done: bool,
    limits: Limits,
    /// Ends a one-request relay with the stream.
    _end: EndOnDrop,
    /// A GET stream's place.
    _get: Option<GetStream>,
}

fn sse_frame(msg: &[u8], id: Option<&str>) -> Bytes {
    let mut b = Vec::with_capacity(msg.len() + 32);
    if let Some(id) = id {
        b.extend_from_slice(b"id: ");
        b.extend_from_slice(id.as_bytes());
        b.push(b'\n');
    }
    b.extend_from_slice(b"event: message\ndata: ");
    b.extend_from_slice(msg);
    b.extend_from_slice(b"\n\n");
    Bytes::from(b)
}

impl Body for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.done {
            return Poll::Ready(None);
        }
        let next = match self.first.take() {
            Some(first) => Poll::Ready(Some(first)),
            None => self.rx.poll_recv(cx),
        };
        match next {
            Poll::Pending => Poll::Pending,
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Ready(Some((msg, eid))) => {
                if let Some(until) = &self.until {
                    if facts(&msg, self.limits).is_some_and(|f| f.answers() == Some(until)) {
                        self.done = true;
                    }
                }
                Poll::Ready(Some(Ok(Frame::data(sse_frame(&msg, eid.as_deref())))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

fn sse_response(events: Events) -> Response<Out> {
    let mut r = Response::new(Out::from(events));
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    r
}

/// The client-facing body: one message, or a stream of events.
enum Out {
    Full(Full<Bytes>),
    Events(Box<Events>),
}

impl From<Events> for Out {
    fn from(e: Events) -> Out {
        Out::Events(Box::new(e))
    }
}

impl Body for Out {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Out::Full(f) => Pin::new(f).poll_frame(cx),
            Out::Events(e) => Pin::new(e.as_mut()).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Out::Full(f) => f.is_end_stream(),
            Out::Events(e) => e.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Out::Full(f) => f.size_hint(),
            Out::Events(e) => e.size_hint(),
        }
    }
}

fn reply(status: StatusCode, body: &'static str) -> Response<Out> {
    let mut r = Response::new(Out::Full(Full::new(Bytes::from_static(body.as_bytes()))));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

fn json_body(status: StatusCode, body: Vec<u8>) -> Response<Out> {
    let mut r = Response::new(Out::Full(Full::new(Bytes::from(body))));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn json_error(status: StatusCode, code: i32, message: &str) -> Response<Out> {
    let mut body = String::new();
    let mut o = ObjectWriter::new(&mut body);
    o.str("jsonrpc", "2.0").null("id");
    o.object("error")
        .i64("code", code.into())
        .str("message", message);
    o.finish();
    json_body(status, body.into_bytes())
}

fn header_str<'h>(h: &'h HeaderMap, name: &str) -> Option<&'h str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

impl Front {
    /// One audit line for a request refused before any relay saw it (authentication).
    fn audit_refusal<B>(&self, req: &Request<B>, status: u16, kind: &str) {
        let Some(audit) = &self.opts.audit else {
            return;
        };
        let verdict = if status == 403 {
            "forbidden"
        } else {
            "unauthenticated"
        };
        let mut line = String::new();
        let mut o = ObjectWriter::new(&mut line);
        o.str("time", &crate::gate::Timestamp::now().to_rfc3339())
            .null("tool")
            .null("id")
            .str("direction", "request")
            .str("verdict", verdict)
            .str("reason", kind);
        o.object("http")
            .str("method", req.method().as_str())
            .str("path", req.uri().path())
            .u64("status", status.into());
        o.str("upstream", &self.target.authority);
        o.finish();
        line.push('\n');
        let mut w = lock(audit);
        let _ = w.write_all(line.as_bytes());
        let _ = w.flush();
    }
}

impl Front {
    /// One audit line for an exchange the upstream refused with HTTP 401/403: the request's
    /// id, the caller's subject, `UNAUTHORIZED` and the retry decision `reauthorize` (the
    /// same fields the gate's audit record gives them).
    fn audit_unauthorized(&self, s: &Session, id: Option<&str>, status: StatusCode) {
        let Some(audit) = &self.opts.audit else {
            return;
        };
        let mut line = String::new();
        let mut o = ObjectWriter::new(&mut line);
        o.str("time", &crate::gate::Timestamp::now().to_rfc3339())
            .null("tool");
        match id {
            Some(id) => o.raw("id", id),
            None => o.null("id"),
        };
        o.str("direction", "server")
            .str("verdict", "upstream_unauthorized")
            .str("code", FailureCode::Unauthorized.as_str());
        o.object("retry")
            .str("decision", "stop")
            .str("reason", StopReason::Reauthorize.as_str());
        o.object("http")
            .u64("upstream_status", status.as_u16().into());
        o.str("upstream", &self.target.authority)
            .opt_str("subject", s.subject.as_deref());
        o.finish();
        line.push('\n');
        let mut w = lock(audit);
        let _ = w.write_all(line.as_bytes());
        let _ = w.flush();
    }
}

impl Front {
    /// The session a request names, checked against the request's credentials: `Ok(None)`
    /// when it names none, `Err` with the answer when it names one that does not exist
    /// (`404`) or that other credentials opened (`403`).
    fn session_of(
        &self,
        headers: &HeaderMap,
        ext: &http::Extensions,
    ) -> Result<Option<Arc<Session>>, Box<Response<Out>>> {
        let Some(id) = header_str(headers, SESSION_HEADER) else {
            return if headers.contains_key(SESSION_HEADER) {
                Err(Box::new(json_error(
                    StatusCode::BAD_REQUEST,
                    -32600,
                    "jsongate: the session id is not visible ASCII",
                )))
            } else {
                Ok(None)
            };
        };
        let Some(s) = lock(&self.sessions).get(id).cloned() else {
            return Err(Box::new(json_error(
                StatusCode::NOT_FOUND,
                -32001,
                "session not found",
            )));
        };
        if s.creds != credentials(headers, ext) {
            return Err(Box::new(json_error(
                StatusCode::FORBIDDEN,
                -32600,
                "jsongate: this session was opened with other credentials",
            )));
        }
        *lock(&s.used) = Instant::now();
        Ok(Some(s))
    }
}

/// Reads a request body within the size limit and the request timeout.
async fn read_body(body: Incoming, max: u64, timeout: Duration) -> Result<Vec<u8>, StatusCode> {
    let cap = usize::try_from(max).unwrap_or(usize::MAX);
    let read = async {
        let mut body = std::pin::pin!(body);
        let mut buf = Vec::new();
        while let Some(f) = body.frame().await {
            let f = f.map_err(|_| StatusCode::BAD_REQUEST)?;
            if let Ok(d) = f.into_data() {
                if buf.len() + d.len() > cap {
                    return Err(StatusCode::PAYLOAD_TOO_LARGE);
                }
                buf.extend_from_slice(&d);
            }
        }
        Ok(buf)
    };
    tokio::time::timeout(timeout, read)
        .await
        .unwrap_or(Err(StatusCode::REQUEST_TIMEOUT))
}

/// The authenticated caller of a request, put in its extensions by [`handle`].
#[derive(Clone)]
struct Caller {
    /// What a session is bound to: a digest of the subject and client.
    creds: [u8; 32],
    identity: Identity,
}

async fn handle(front: Arc<Front>, mut req: Request<Incoming>) -> Response<Out> {
    if let Some(guard) = &front.guard {
        let checked = guard.check(
            req.method(),
            req.uri().path(),
            req.uri().query(),
            req.headers(),
        );
        match checked {
            Checked::Metadata(doc) => {
                let mut r = json_body(StatusCode::OK, doc.into_bytes());
                r.headers_mut().insert(
                    http::header::CACHE_CONTROL,
                    HeaderValue::from_static("max-age=3600"),
                );
                return r;
            }
            Checked::Refused {
                status,
                challenge,
                kind,
            } => {
                front.audit_refusal(&req, status, kind);
                let status = StatusCode::from_u16(status).unwrap_or(StatusCode::UNAUTHORIZED);
                let mut r = reply(status, "jsongate: authentication required\n");
                if status == StatusCode::FORBIDDEN {
                    r = reply(status, "jsongate: insufficient scope\n");
                }
                if let Ok(v) = HeaderValue::from_str(&challenge) {
                    r.headers_mut().insert(http::header::WWW_AUTHENTICATE, v);
                }
                return r;
            }
            Checked::Caller(identity) => {
                let creds = identity_digest(&identity);
                req.extensions_mut().insert(Caller { creds, identity });
            }
        }
    }
    if req.uri().path() != front.opts.path {
        return reply(StatusCode::NOT_FOUND, "jsongate: not the MCP endpoint\n");
    }
    match *req.method() {
        Method::POST => post(&front, req).await,
        Method::GET => get_stream(&front, req).await,
        Method::DELETE => delete(&front, req).await,
        _ => reply(
            StatusCode::METHOD_NOT_ALLOWED,
            "jsongate: method not allowed\n",
        ),
    }
}

/// The headers a session's relay sends upstream on its client's behalf: its protocol
/// version only. The client's `Authorization` is never forwarded (token passthrough is
/// forbidden by the MCP authorization specification); the upstream's own credentials are
/// added to every request from [`HttpOptions::upstream_headers`].
fn forwarded(headers: &HeaderMap) -> HeaderMap {
    let mut fwd = HeaderMap::new();
    if let Some(v) = headers.get(VERSION_HEADER) {
        fwd.insert(HeaderName::from_static(VERSION_HEADER), v.clone());
    }
    fwd
}

async fn post(front: &Arc<Front>, req: Request<Incoming>) -> Response<Out> {
    let (parts, body) = req.into_parts();
    let json = parts
        .headers
        .get(CONTENT_TYPE)
        .is_some_and(crate::http::is_json_content_type);
    if !json {
        return reply(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "jsongate: the body must be JSON\n",
        );
    }
    let named = match front.session_of(&parts.headers, &parts.extensions) {
        Err(r) => return *r,
        Ok(s) => s,
    };
    let msg = match read_body(
        body,
        front.limits.get_max_bytes(),
        front.opts.server.get_request_timeout(),
    )
    .await
    {
        Ok(b) => b,
        Err(s) => return json_error(s, -32600, "jsongate: the message was refused"),
    };
    let Some(f) = facts(&msg, front.limits) else {
        return json_error(
            StatusCode::BAD_REQUEST,
            -32700,
            "jsongate: not one JSON-RPC message",
        );
    };
    let initialize = f.method.as_deref() == Some("initialize");
    let mut line = one_line(&msg);
    line.push(b'\n');
    if let Some(s) = &named {
        if s.backlog.load(Ordering::Acquire) >= MAX_BACKLOG {
            return json_error(
                StatusCode::TOO_MANY_REQUESTS,
                -32600,
                "jsongate: too many messages of this session wait for the upstream",
            );
        }
        if let Some(v) = parts.headers.get(VERSION_HEADER) {
            lock(&s.forward).insert(HeaderName::from_static(VERSION_HEADER), v.clone());
        }
    }
    let Some(id) = f.id.clone().filter(|_| f.is_request()) else {
        // A notification or a response to the server: accepted within a session.
        let Some(session) = named else {
            return json_error(
                StatusCode::BAD_REQUEST,
                -32600,
                "jsongate: a notification or response needs a session",
            );
        };
        send_line(&session, line);
        return reply(StatusCode::ACCEPTED, "");
    };
    // The session: the one named, a new one for `initialize`, or a relay for this request
    // alone.
    let (session, one_shot) = match named {
        Some(s) => (s, false),
        None => {
            let sid = if initialize {
                match new_session_id() {
                    Ok(sid) => sid,
                    Err(_) => {
                        return reply(StatusCode::SERVICE_UNAVAILABLE, "jsongate: no relay\n")
                    }
                }
            } else {
                String::new()
            };
            let creds = credentials(&parts.headers, &parts.extensions);
            let who = parts.extensions.get::<Caller>().map(|c| &c.identity);
            match front.new_session(sid, creds, forwarded(&parts.headers), who) {
                Some(s) => (s, !initialize),
                None => {
                    return reply(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "jsongate: too many sessions\n",
                    )
                }
            }
        }
    };
    // A session that is not kept ends with this exchange, however it ends.
    let end = EndOnDrop((one_shot || initialize).then(|| Arc::clone(&session)));
    let streaming = !initialize
        && header_str(&parts.headers, "accept").is_some_and(|a| a.contains("text/event-stream"));
    let (tx, rx) = mpsc::channel(STREAM_BUFFER);
    let (once_tx, once_rx) = oneshot::channel();
    {
        let mut waiters = lock(&session.waiters);
        if waiters.contains_key(&id) {
            return json_error(
                StatusCode::CONFLICT,
                -32600,
                "jsongate: a request with this id is already waiting for its answer in this session",
            );
        }
        if waiters.len() >= MAX_IN_FLIGHT {
            return json_error(
                StatusCode::TOO_MANY_REQUESTS,
                -32600,
                "jsongate: too many requests waiting in this session",
            );
        }
        let w = if streaming {
            Waiter::Stream(tx.clone())
        } else {
            Waiter::Once(once_tx)
        };
        waiters.insert(id.clone(), w);
    }
    if !streaming {
        send_line(&session, line);
        let answer = tokio::time::timeout(front.opts.answer_timeout, once_rx).await;
        let Ok(Ok((answer, _))) = answer else {
            forget(&session, &id);
            return json_error(
                StatusCode::GATEWAY_TIMEOUT,
                -32603,
                "jsongate: no answer in time",
            );
        };
        let ok = facts(&answer, front.limits).is_some_and(|f| f.result);
        let mut r = json_body(StatusCode::OK, answer);
        if initialize && ok {
            if let Ok(v) = HeaderValue::from_str(&session.id) {
                // Kept: the client names it from now on.
                let mut end = end;
                end.0 = None;
                lock(&front.sessions).insert(session.id.clone(), Arc::clone(&session));
                r.headers_mut().insert(SESSION_HEADER, v);
            }
        }
        return r;
    }
    lock(&session.streams).push(tx.clone());
    send_line(&session, line);
    // An upstream that never answers (or a stream that never ends an event) still answers
    // the request, with an error, at the timeout.
    let (s, wait, id2) = (Arc::clone(&session), front.opts.answer_timeout, id.clone());
    spawn_in(&session, async move {
        tokio::time::sleep(wait).await;
        if forget(&s, &id2) {
            let e = Refusal::plain("jsongate: no answer in time").line(&id2);
            let _ = tx.send((e, None)).await;
        }
    });
    // The head waits for the first message: when that is the answer itself, without an
    // upstream event id (the upstream answered with one JSON body), the client gets one
    // JSON body too, as it would directly (clients bound SSE events more tightly than
    // bodies); otherwise the exchange becomes an event stream that starts with it.
    let mut rx = rx;
    let first = rx.recv().await;
    if let Some((msg, None)) = &first {
        if facts(msg, front.limits).is_some_and(|f| f.answers() == Some(id.as_str())) {
            let (msg, _) = first.unwrap_or_default();
            return json_body(StatusCode::OK, msg);
        }
    }
    sse_response(Events {
        first,
        rx,
        until: Some(id),
        done: false,
        limits: front.limits,
        _end: end,
        _get: None,
    })
}

/// Drops the waiter of `id` and its event id; whether it was still waiting.
fn forget(s: &Session, id: &str) -> bool {
    lock(&s.event_ids).remove(id);
    lock(&s.waiters).remove(id).is_some()
}

impl Session {
    /// Ends the relay: both of its sides close, its tasks are aborted, its threads end.
    fn end(&self) {
        self.ended.store(true, Ordering::Release);
        lock(&self.to_relay).take();
        lock(&self.to_server_out).take();
        lock(&self.streams).clear();
        lock(&self.waiters).clear();
        lock(&self.event_ids).clear();
        lock(&self.tasks).abort_all();
    }
}

/// Ends the sessions unused for [`SESSION_IDLE_TIMEOUT`] (a session with an open stream is
/// in use), every minute.
async fn reap(front: Arc<Front>) {
    loop {
        tokio::time::sleep(Duration::from_secs(60)).await;
        let now = Instant::now();
        lock(&front.sessions).retain(|_, s| {
            let keep = now.duration_since(*lock(&s.used)) < SESSION_IDLE_TIMEOUT
                || s.get_streams.load(Ordering::Acquire) > 0;
            if !keep {
                s.end();
            }
            keep
        });
    }
}

fn send_line(s: &Session, line: Vec<u8>) {
    if let Some(t) = lock(&s.to_relay).as_ref() {
        s.backlog.fetch_add(1, Ordering::AcqRel);
        if t.send(line).is_err() {
            s.backlog.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

fn upstream_request<B>(front: &Front, s: &Session, method: &Method, body: B) -> Option<Request<B>> {
    let accept = if method == Method::POST {
        "application/json, text/event-stream"
    } else {
        "text/event-stream"
    };
    let mut req = Request::builder()
        .method(method)
        .uri(front.opts.path.as_str())
        .header(http::header::HOST, front.opts.upstream_authority.as_str())
        .header(ACCEPT, accept);
    if method == Method::POST {
        req = req.header(CONTENT_TYPE, "application/json");
    }
    for (k, v) in lock(&s.forward).iter() {
        req = req.header(k, v);
    }
    if let Some(h) = req.headers_mut() {
        front.opts.upstream_headers.apply(h);
        if let Some(t) = &front.token {
            t.apply(h);
        }
    }
    if let Some(sid) = lock(&s.upstream_id).clone() {
        req = req.header(SESSION_HEADER, sid);
    }
    req.body(body).ok()
}

async fn get_stream(front: &Arc<Front>, req: Request<Incoming>) -> Response<Out> {
    let session = match front.session_of(req.headers(), req.extensions()) {
        Err(r) => return *r,
        Ok(Some(s)) => s,
        Ok(None) => return json_error(StatusCode::BAD_REQUEST, -32600, "jsongate: no session"),
    };
    if session.get_streams.fetch_add(1, Ordering::AcqRel) >= MAX_GET_STREAMS {
        session.get_streams.fetch_sub(1, Ordering::AcqRel);
        return json_error(
            StatusCode::TOO_MANY_REQUESTS,
            -32600,
            "jsongate: too many streams open in this session",
        );
    }
    let release = |s: &Session| {
        s.get_streams.fetch_sub(1, Ordering::AcqRel);
    };
    let Some(up) = upstream_request(front, &session, &Method::GET, Full::new(Bytes::new())) else {
        release(&session);
        return reply(StatusCode::BAD_GATEWAY, "jsongate: upstream unavailable\n");
    };
    let res = match send(&front.target, up).await {
        Ok(res) => res,
        Err(kind) => {
            release(&session);
            front.log.note(&front.opts.upstream_authority, kind);
            return reply(StatusCode::BAD_GATEWAY, "jsongate: upstream unavailable\n");
        }
    };
    if !res.status().is_success() {
        release(&session);
        // The upstream's 401/403 is about the relay's credentials, not the client's: passed
        // on, it would send the client to authorise itself again at the relay.
        if matches!(res.status().as_u16(), 401 | 403) {
            front
                .log
                .note(&front.opts.upstream_authority, status_kind(res.status()));
            front.audit_unauthorized(&session, None, res.status());
            return reply(
                StatusCode::BAD_GATEWAY,
                "jsongate: the upstream refused the proxy's credentials; a new authorisation \
                 is needed\n",
            );
        }
        let mut r = reply(StatusCode::METHOD_NOT_ALLOWED, "");
        *r.status_mut() = res.status();
        return r;
    }
    let Some(out) = lock(&session.to_server_out).clone() else {
        release(&session);
        return reply(StatusCode::NOT_FOUND, "jsongate: session ended\n");
    };
    let (tx, rx) = mpsc::channel(STREAM_BUFFER);
    lock(&session.streams).insert(0, tx);
    let limits = front.limits;
    let s = Arc::clone(&session);
    let reader = {
        let mut tasks = lock(&session.tasks);
        while tasks.try_join_next().is_some() {}
        tasks.spawn(async move {
            let _ = read_events(&s, res.into_body(), &out, limits, None).await;
        })
    };
    sse_response(Events {
        first: None,
        rx,
        until: None,
        done: false,
        limits,
        _end: EndOnDrop(None),
        _get: Some(GetStream { session, reader }),
    })
}

async fn delete(front: &Arc<Front>, req: Request<Incoming>) -> Response<Out> {
    let session = match front.session_of(req.headers(), req.extensions()) {
        Err(r) => return *r,
        Ok(Some(s)) => s,
        Ok(None) => return json_error(StatusCode::BAD_REQUEST, -32600, "jsongate: no session"),
    };
    // The upstream's own session (when it issued one) ends too; this one ends whatever the
    // upstream says (a server may not allow clients to end sessions).
    if lock(&session.upstream_id).is_some() {
        if let Some(up) =
            upstream_request(front, &session, &Method::DELETE, Full::new(Bytes::new()))
        {
            let _ = tokio::time::timeout(front.opts.answer_timeout, send(&front.target, up)).await;
        }
    }
    lock(&front.sessions).remove(&session.id);
    session.end();
    reply(StatusCode::OK, "")
}

/// Serves the MCP endpoint on `listener` until `shutdown` resolves; then stops accepting,
/// lets in-flight requests finish for at most the grace period, ends every session and
/// returns.
///
/// # Errors
/// The listener's address cannot be read.
///
/// # Example
/// ```
/// use jsongate::mcp::{http::{run, HttpOptions}, Config};
/// let up = jsongate::http::parse_upstream("http://127.0.0.1:8931/mcp")?;
/// let opts = HttpOptions::new(up.authority, up.path, Config::default);
/// let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
/// rt.block_on(async {
///     let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
///     // A real front end runs until a signal (e.g. `tokio::signal::ctrl_c()`); this one stops at once.
///     run(opts, listener, async {}).await
/// }).unwrap();
/// # Ok::<(), String>(())
/// ```
pub async fn run(
    opts: HttpOptions,
    listener: TcpListener,
    shutdown: impl std::future::Future<Output = ()>,
) -> io::Result<()> {
    let policy = HostPolicy::new(
        listener.local_addr()?,
        &opts.allowed_hosts,
        &opts.allowed_origins,
    );
    let server = opts.server;
    let target = Target::from_authority(&opts.upstream_authority, opts.upstream_tls.as_ref())
        .map_err(io::Error::other)?;
    let tls = opts.tls.clone();
    let mut opts = opts;
    let guard = match opts.auth.take() {
        Some(a) => Some(Guard::start(a).await.map_err(io::Error::other)?),
        None => None,
    };
    let token = match opts.upstream_oauth.take() {
        Some(g) => {
            Some(TokenCache::start(g, format!("upstream {}", opts.upstream_authority)).await)
        }
        None => None,
    };
    let front = Arc::new(Front {
        limits: opts.limits,
        target,
        guard,
        token,
        opts,
        sessions: Mutex::new(HashMap::new()),
        live: Arc::new(AtomicUsize::new(0)),
        rt: tokio::runtime::Handle::current(),
        log: FailureLog::default(),
    });
    let reaper = tokio::spawn(reap(Arc::clone(&front)));
    let f = Arc::clone(&front);
    serve_connections(listener, tls, server, policy, shutdown, reply, move |req| {
        handle(Arc::clone(&f), req)
    })
    .await;
    reaper.abort();
    for (_, s) in lock(&front.sessions).drain() {
        s.end();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Session {
        /// A session with no relay behind it.
        fn detached() -> Session {
            Session {
                id: String::new(),
                creds: [0; 32],
                subject: None,
                to_relay: Mutex::new(None),
                waiters: Mutex::new(HashMap::new()),
                streams: Mutex::new(Vec::new()),
                get_streams: AtomicUsize::new(0),
                upstream_id: Mutex::new(None),
                forward: Mutex::new(HeaderMap::new()),
                event_ids: Mutex::new(HashMap::new()),
                used: Mutex::new(Instant::now()),
                to_server_out: Mutex::new(None),
                tasks: Mutex::new(JoinSet::new()),
                ended: AtomicBool::new(false),
                backlog: Arc::new(AtomicUsize::new(0)),
            }
        }
    }

    #[test]
    fn unsolicited_event_ids_are_not_remembered() {
        // Before: every answer with an SSE id was remembered by the answer's id and never
        // removed (300k of them grew the proxy by ~63 MiB).
        let s = Session::detached();
        let (w, _rx) = oneshot::channel();
        lock(&s.waiters).insert("7".to_owned(), Waiter::Once(w));
        let mut stream = Vec::new();
        for i in 0..1000 {
            let _ = write!(
                stream,
                "id: ev-{i}
data: {{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{}}}}

"
            );
        }
        let (out, mut lines) = mpsc::channel(SERVER_QUEUE);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (read, n) = rt.block_on(async {
            // The relay's side, reading as the events come (the queue holds SERVER_QUEUE).
            let count = tokio::spawn(async move {
                let mut n = 0;
                while lines.recv().await.is_some() {
                    n += 1;
                }
                n
            });
            let read = read_events(
                &s,
                Full::new(Bytes::from(stream)),
                &out,
                Limits::new(),
                None,
            )
            .await;
            drop(out);
            (read, count.await.unwrap())
        });
        assert_eq!(read, Ok(true));
        assert_eq!(n, 1000);
        // Only the answer someone waits for keeps its event id.
        let kept = lock(&s.event_ids).clone();
        assert_eq!(kept, HashMap::from([("7".to_owned(), "ev-7".to_owned())]));
    }

    #[test]
    fn sessions_bind_every_authorization_value() {
        let h = |vals: &[&str]| {
            let mut m = HeaderMap::new();
            for v in vals {
                m.append(
                    http::header::AUTHORIZATION,
                    HeaderValue::from_str(v).unwrap(),
                );
            }
            credentials(&m, &http::Extensions::new())
        };
        assert_eq!(h(&["Bearer a"]), h(&["Bearer a"]));
        assert_ne!(h(&["Bearer a"]), h(&["Bearer b"]));
        assert_ne!(h(&["Bearer a"]), h(&[]));
        assert_ne!(h(&[""]), h(&[]));
        assert_ne!(h(&["Bearer a", "Bearer b"]), h(&["Bearer a"]));
        assert_ne!(h(&["ab", "c"]), h(&["a", "bc"]));
        let a = new_session_id().unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, new_session_id().unwrap());
    }

    #[test]
    fn messages_become_one_line() {
        assert_eq!(one_line(b"{\n \"a\":\r\n1}"), b"{  \"a\":  1}");
    }

    #[test]
    fn routing_facts() {
        let l = Limits::new();
        let f = facts(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#, l).unwrap();
        assert!(f.is_request());
        let f = facts(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#, l).unwrap();
        assert_eq!(f.answers(), Some(r#""a""#));
        assert!(facts(b"[1]", l).is_none());
        assert!(facts(br#"{"id":1,"id":2}"#, l).is_none());
    }
}
