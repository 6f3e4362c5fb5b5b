//! MCP's Streamable HTTP transport through the same relay as stdio: each client session gets
//! one [`Proxy`] (its state machine, tool schemas, pins, policy), fed with the
//! JSON-RPC messages of the client's POSTs and with every message the upstream answers, as one
//! JSON body or as the `data` of each SSE event. Nothing here judges a message; this module
//! only moves messages between HTTP and the relay's line streams and routes the relay's
//! output back to the HTTP exchange it answers.
//!
//! - A posted request is answered on its own exchange: `application/json`, or
//!   `text/event-stream` when the client accepts it and the upstream streamed (server
//!   notifications and requests that the relay lets through while it waits travel on it
//!   too, then the response, with the upstream's event id when it had one). An answer that
//!   comes first and came as one JSON body goes back as one JSON body. Notifications and
//!   responses are answered `202`.
//! - An upstream answer whose content type is neither `application/json` nor
//!   `text/event-stream` is refused (a JSON-RPC error answers the request).
//! - `Mcp-Session-Id` is the upstream's, relayed both ways; `MCP-Protocol-Version` and
//!   `Authorization` are forwarded. A GET opens the session's server stream; DELETE ends the
//!   session upstream and here.
//! - `Origin`, when sent, must be in the allowlist (the spec's DNS-rebinding rule), else
//!   `403`; the default listen address is 127.0.0.1.
//! - Message bodies are bounded by the relay's `max_bytes`; an SSE event over it is cut there
//!   and refused by the relay like an oversized stdio line; an upstream that fails (HTTP
//!   error, reset, a stream that ends before the answer, a timeout) makes the request's
//!   answer a JSON-RPC error.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::{self, Read, Write};
use std::pin::Pin;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE, ORIGIN};
use http::{Method, Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

use super::sse::SseParser;
use super::{Config, Proxy};
use crate::json::Value;
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
/// Most sessions at once (each runs a relay on a few threads); past it `initialize` is
/// refused with `503`.
///
/// # Example
/// ```
/// use jsongate::mcp::http::MAX_SESSIONS;
/// // Fixed: with 256 sessions open, the next `initialize` is answered `503 Service Unavailable`
/// // until one ends (or is ended after SESSION_IDLE_TIMEOUT unused).
/// assert_eq!(MAX_SESSIONS, 256);
/// ```
pub const MAX_SESSIONS: usize = 256;
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
/// use jsongate::mcp::http::{split_url, HttpOptions};
/// use jsongate::mcp::{Config, Screen};
/// use jsongate::Limits;
/// let (authority, path) = split_url("http://127.0.0.1:8931/mcp")?;
/// let opts = HttpOptions::new(authority, path, || Config::default().screen(Screen::Reject))
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
    config: Box<dyn Fn() -> Config + Send + Sync>,
    answer_timeout: Duration,
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
            config: Box::new(config),
            answer_timeout: DEFAULT_ANSWER_TIMEOUT,
        }
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
    /// are allowed (non-browser clients). Default: none.
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

struct Session {
    /// Lines to the relay's client side.
    to_relay: Mutex<Option<std_mpsc::Sender<Vec<u8>>>>,
    /// Requests waiting for their answer, by the id's JSON text.
    waiters: Mutex<HashMap<String, Waiter>>,
    /// Open SSE streams of this session (POSTs waiting, then the GET stream), newest last.
    streams: Mutex<Vec<mpsc::UnboundedSender<Delivery>>>,
    /// The upstream's session id.
    upstream_id: Mutex<Option<HeaderValue>>,
    /// Headers forwarded on the relay's own POSTs (the client's latest).
    forward: Mutex<HeaderMap>,
    /// SSE event ids of the upstream's answers, by the answer's id.
    event_ids: Mutex<HashMap<String, String>>,
    /// When the client last used the session.
    used: Mutex<std::time::Instant>,
    /// The relay's server output (upstream messages go in); dropped when the session ends.
    to_server_out: Mutex<Option<std_mpsc::Sender<Vec<u8>>>>,
}

/// Who waits for an answer: a JSON exchange, or an SSE stream that ends with it.
enum Waiter {
    Once(oneshot::Sender<Delivery>),
    Stream(mpsc::UnboundedSender<Delivery>),
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Front {
    opts: HttpOptions,
    limits: Limits,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// The session of a server that issues no session ids.
    sessionless: Mutex<Option<Arc<Session>>>,
    rt: tokio::runtime::Handle,
}

/// A `Write` that sends each write to a channel (the relay writes whole lines).
struct ChanWriter(std_mpsc::Sender<Vec<u8>>);

impl Write for ChanWriter {
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

/// A `Read` over a channel of byte pieces; ends when every sender is gone.
struct ChanReader {
    rx: std_mpsc::Receiver<Vec<u8>>,
    buf: Vec<u8>,
    at: usize,
}

impl Read for ChanReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.at == self.buf.len() {
            match self.rx.recv() {
                Ok(b) => {
                    self.buf = b;
                    self.at = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.buf.len() - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn chan_reader(rx: std_mpsc::Receiver<Vec<u8>>) -> ChanReader {
    ChanReader {
        rx,
        buf: Vec::new(),
        at: 0,
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
    })
}

impl Front {
    /// Starts a relay for a new session.
    fn new_session(self: &Arc<Self>) -> io::Result<Arc<Session>> {
        let (to_relay, client_in) = std_mpsc::channel::<Vec<u8>>();
        let (client_out_tx, client_out) = std_mpsc::channel::<Vec<u8>>();
        let (server_in_tx, server_in) = std_mpsc::channel::<Vec<u8>>();
        let (server_out_tx, server_out) = std_mpsc::channel::<Vec<u8>>();
        let session = Arc::new(Session {
            to_relay: Mutex::new(Some(to_relay)),
            waiters: Mutex::new(HashMap::new()),
            streams: Mutex::new(Vec::new()),
            upstream_id: Mutex::new(None),
            forward: Mutex::new(HeaderMap::new()),
            event_ids: Mutex::new(HashMap::new()),
            to_server_out: Mutex::new(Some(server_out_tx.clone())),
            used: Mutex::new(std::time::Instant::now()),
        });
        let proxy = Proxy::new((self.opts.config)());
        std::thread::Builder::new()
            .name("mcp-http-relay".into())
            .spawn(move || {
                let _ = proxy.run(
                    chan_reader(client_in),
                    ChanWriter(client_out_tx),
                    ChanWriter(server_in_tx),
                    chan_reader(server_out),
                    Box::new(|| {}),
                );
            })?;
        // The relay's output to the client: answers to their waiters, the rest to a stream.
        let s = Arc::clone(&session);
        let limits = self.limits;
        std::thread::Builder::new()
            .name("mcp-http-demux".into())
            .spawn(move || demux(&s, &mut chan_reader(client_out), limits))?;
        // The relay's output to the server: each message POSTed upstream.
        let front = Arc::clone(self);
        let s = Arc::clone(&session);
        std::thread::Builder::new()
            .name("mcp-http-upstream".into())
            .spawn(move || {
                let mut lines = chan_reader(server_in);
                let mut line = Vec::new();
                let mut byte = vec![0u8; 64 * 1024];
                loop {
                    let n = match lines.read(&mut byte) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    let mut piece = &byte[..n];
                    while let Some(i) = memchr::memchr(b'\n', piece) {
                        line.extend_from_slice(&piece[..i]);
                        piece = &piece[i + 1..];
                        let msg = std::mem::take(&mut line);
                        let (f, s, out) =
                            (Arc::clone(&front), Arc::clone(&s), server_out_tx.clone());
                        // Messages go upstream side by side: a long call never holds a ping.
                        front
                            .rt
                            .spawn(async move { post_upstream(&f, &s, msg, out).await });
                    }
                    line.extend_from_slice(piece);
                }
                // The relay closed the server's side: its output ends once every POST did.
            })?;
        Ok(session)
    }
}

/// Routes the relay's lines for the client: an answer to its waiter, anything else (a
/// server notification or request) to the newest open stream of the session.
fn demux(s: &Session, lines: &mut ChanReader, limits: Limits) {
    let mut line = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match lines.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let mut piece = &buf[..n];
        while let Some(i) = memchr::memchr(b'\n', piece) {
            line.extend_from_slice(&piece[..i]);
            piece = &piece[i + 1..];
            deliver(s, std::mem::take(&mut line), limits);
        }
        line.extend_from_slice(piece);
    }
}

fn deliver(s: &Session, msg: Vec<u8>, limits: Limits) {
    let f = facts(&msg, limits);
    if let Some(id) = f.as_ref().and_then(Facts::answers) {
        let eid = lock(&s.event_ids).remove(id);
        match lock(&s.waiters).remove(id) {
            Some(Waiter::Once(w)) => {
                let _ = w.send((msg, eid));
            }
            Some(Waiter::Stream(w)) => {
                let _ = w.send((msg, eid));
            }
            // Nobody waits (the exchange timed out or went away): dropped.
            None => {}
        }
        return;
    }
    let mut streams = lock(&s.streams);
    streams.retain(|t| !t.is_closed());
    if let Some(t) = streams.last() {
        let _ = t.send((msg, None));
    }
}

/// Writes one message into the relay's server side.
fn to_relay_server(out: &std_mpsc::Sender<Vec<u8>>, msg: &[u8]) {
    let mut line = one_line(msg);
    line.push(b'\n');
    let _ = out.send(line);
}

fn error_line(id: &str, message: &str) -> Vec<u8> {
    let mut m = String::new();
    crate::json::write_string(&mut m, message);
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":{m}}}}}"#).into_bytes()
}

/// POSTs one relay message upstream and feeds every message of the answer back.
async fn post_upstream(front: &Front, s: &Session, msg: Vec<u8>, out: std_mpsc::Sender<Vec<u8>>) {
    let limits = front.limits;
    let id = facts(&msg, limits)
        .filter(Facts::is_request)
        .and_then(|f| f.id);
    let fail = |why: &str| {
        if let Some(id) = &id {
            to_relay_server(&out, &error_line(id, why));
        }
    };
    let mut req = Request::post(front.opts.path.as_str())
        .header(http::header::HOST, front.opts.upstream_authority.as_str())
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream");
    for (k, v) in lock(&s.forward).iter() {
        req = req.header(k, v);
    }
    if let Some(sid) = lock(&s.upstream_id).clone() {
        req = req.header(SESSION_HEADER, sid);
    }
    let Ok(req) = req.body(Full::new(Bytes::from(msg))) else {
        return fail("jsongate: the message could not be sent upstream");
    };
    let Some(res) = send(&front.opts.upstream_authority, req).await else {
        return fail("jsongate: the upstream is unavailable");
    };
    if let Some(sid) = res.headers().get(SESSION_HEADER) {
        lock(&s.upstream_id).get_or_insert_with(|| sid.clone());
    }
    let status = res.status();
    if status == StatusCode::ACCEPTED {
        return;
    }
    if !status.is_success() {
        return fail(&format!(
            "jsongate: the upstream answered HTTP {}",
            status.as_u16()
        ));
    }
    let content_type = res.headers().get(CONTENT_TYPE);
    let sse = content_type
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    if !sse && !content_type.is_some_and(crate::http::is_json_content_type) {
        // The transport allows only these two; anything else (an HTML error page, a proxy's
        // banner) is not an answer, whatever its bytes look like.
        return fail(
            "jsongate: the upstream answered with a content type that is neither \
                     application/json nor text/event-stream",
        );
    }
    let answered = if sse {
        read_events(s, res.into_body(), &out, limits, id.as_deref()).await
    } else {
        read_json(res.into_body(), &out, limits).await
    };
    match answered {
        Ok(true) => {}
        Ok(false) => fail("jsongate: the upstream ended its answer before answering"),
        Err(()) => fail("jsongate: the upstream broke off its answer"),
    }
}

/// One JSON body as one message (at most `max_bytes + 1` bytes are kept: the relay refuses
/// a longer one at its limit).
async fn read_json(
    body: Incoming,
    out: &std_mpsc::Sender<Vec<u8>>,
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
    to_relay_server(out, &buf);
    Ok(true)
}

/// Every SSE event's data as one message; true once the answer to `id` passed.
async fn read_events(
    s: &Session,
    body: Incoming,
    out: &std_mpsc::Sender<Vec<u8>>,
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
        parser.feed(&d, &mut |e| {
            if e.data.is_empty() {
                return;
            }
            if let Some(eid) = facts(&e.data, limits).and_then(|f| f.answers().map(str::to_owned)) {
                if let Some(ev) = &e.id {
                    lock(&s.event_ids).insert(eid.clone(), ev.clone());
                }
                if Some(eid.as_str()) == id {
                    answered = true;
                }
            } else if e.over_limit && !answered {
                // Cut at the limit: the relay refuses it and answers the request it names.
                answered = id.is_some();
            }
            to_relay_server(out, &e.data);
        });
    }
    parser.finish();
    Ok(answered)
}

/// One request on a fresh connection to the upstream.
async fn send(authority: &str, req: Request<Full<Bytes>>) -> Option<Response<Incoming>> {
    let stream = tokio::time::timeout(Duration::from_secs(5), TcpStream::connect(authority))
        .await
        .ok()?
        .ok()?;
    let _ = stream.set_nodelay(true);
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .ok()?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    sender.send_request(req).await.ok()
}

/// A response body fed from a channel (an SSE stream to the client).
struct Events {
    /// A message received before the stream's head was sent, sent first.
    first: Option<Delivery>,
    rx: mpsc::UnboundedReceiver<Delivery>,
    /// The id whose answer ends the stream (POST streams), none for the GET stream.
    until: Option<String>,
    done: bool,
    limits: Limits,
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

/// A POST's answer as an event stream of `first`, then what `rx` delivers until the answer
/// to `id`.
fn event_stream(
    rx: mpsc::UnboundedReceiver<Delivery>,
    first: Option<Delivery>,
    id: String,
    limits: Limits,
) -> Response<Out> {
    let mut r = Response::new(Out::Events(Events {
        first,
        rx,
        until: Some(id),
        done: false,
        limits,
    }));
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    r
}

/// The client-facing body: one message, or a stream of events.
enum Out {
    Full(Full<Bytes>),
    Events(Events),
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
            Out::Events(e) => Pin::new(e).poll_frame(cx),
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

fn json_error(status: StatusCode, code: i32, message: &str) -> Response<Out> {
    let mut m = String::new();
    crate::json::write_string(&mut m, message);
    let body = format!(r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":{code},"message":{m}}}}}"#);
    let mut r = Response::new(Out::Full(Full::new(Bytes::from(body))));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn header_str<'h>(h: &'h HeaderMap, name: &str) -> Option<&'h str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

impl Front {
    fn origin_allowed(&self, headers: &HeaderMap) -> bool {
        match headers.get(ORIGIN) {
            None => true,
            Some(o) => o
                .to_str()
                .is_ok_and(|o| self.opts.allowed_origins.iter().any(|a| a == o)),
        }
    }

    /// The session a request names (`Err`: it names one that does not exist, `404`).
    fn session_of(&self, headers: &HeaderMap) -> Result<Option<Arc<Session>>, Box<Response<Out>>> {
        match header_str(headers, SESSION_HEADER) {
            Some(id) => match lock(&self.sessions).get(id) {
                Some(s) => {
                    *lock(&s.used) = std::time::Instant::now();
                    Ok(Some(Arc::clone(s)))
                }
                None => Err(Box::new(json_error(
                    StatusCode::NOT_FOUND,
                    -32001,
                    "session not found",
                ))),
            },
            None => Ok(lock(&self.sessionless).clone()),
        }
    }
}

async fn read_body(body: Incoming, max: u64) -> Result<Vec<u8>, StatusCode> {
    let cap = usize::try_from(max).unwrap_or(usize::MAX);
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
}

async fn handle(front: Arc<Front>, req: Request<Incoming>) -> Result<Response<Out>, Infallible> {
    if req.uri().path() != front.opts.path {
        return Ok(reply(
            StatusCode::NOT_FOUND,
            "jsongate: not the MCP endpoint\n",
        ));
    }
    if !front.origin_allowed(req.headers()) {
        return Ok(reply(
            StatusCode::FORBIDDEN,
            "jsongate: origin not allowed\n",
        ));
    }
    Ok(match *req.method() {
        Method::POST => post(&front, req).await,
        Method::GET => get_stream(&front, req).await,
        Method::DELETE => delete(&front, req).await,
        _ => reply(
            StatusCode::METHOD_NOT_ALLOWED,
            "jsongate: method not allowed\n",
        ),
    })
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
    let msg = match read_body(body, front.limits.get_max_bytes()).await {
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
    let session = match front.session_of(&parts.headers) {
        Err(r) => return *r,
        Ok(Some(s)) if !initialize || header_str(&parts.headers, SESSION_HEADER).is_some() => s,
        Ok(_) if initialize => {
            if lock(&front.sessions).len() >= MAX_SESSIONS {
                return reply(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "jsongate: too many sessions\n",
                );
            }
            match front.new_session() {
                Ok(s) => s,
                Err(_) => return reply(StatusCode::SERVICE_UNAVAILABLE, "jsongate: no relay\n"),
            }
        }
        // A first message other than `initialize` without a session (a stateless protocol
        // revision, `server/discover`): one relay serves every such request.
        Ok(_) => match front.new_session() {
            Ok(s) => {
                *lock(&front.sessionless) = Some(Arc::clone(&s));
                s
            }
            Err(_) => return reply(StatusCode::SERVICE_UNAVAILABLE, "jsongate: no relay\n"),
        },
    };
    {
        let mut fwd = lock(&session.forward);
        for name in [
            http::header::AUTHORIZATION,
            HeaderName::from_static(VERSION_HEADER),
        ] {
            if let Some(v) = parts.headers.get(&name) {
                fwd.insert(name, v.clone());
            }
        }
    }
    let mut line = one_line(&msg);
    line.push(b'\n');
    let Some(id) = f.id.clone().filter(|_| f.is_request()) else {
        // A notification or a response to the server: accepted.
        if let Some(t) = lock(&session.to_relay).as_ref() {
            let _ = t.send(line);
        }
        return reply(StatusCode::ACCEPTED, "");
    };
    let streaming =
        header_str(&parts.headers, "accept").is_some_and(|a| a.contains("text/event-stream"));
    let mut res = if streaming {
        let (tx, rx) = mpsc::unbounded_channel();
        lock(&session.waiters).insert(id.clone(), Waiter::Stream(tx.clone()));
        lock(&session.streams).push(tx.clone());
        send_line(&session, line);
        // An upstream that never answers (or a stream that never ends an event) still
        // answers the request, with an error, at the timeout.
        let (s, wait, id2) = (Arc::clone(&session), front.opts.answer_timeout, id.clone());
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            if lock(&s.waiters).remove(&id2).is_some() {
                let e = error_line(&id2, "jsongate: no answer in time");
                let _ = tx.send((e, None));
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
                let mut r = Response::new(Out::Full(Full::new(Bytes::from(msg))));
                r.headers_mut()
                    .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                r
            } else {
                event_stream(rx, first, id, front.limits)
            }
        } else {
            event_stream(rx, first, id, front.limits)
        }
    } else {
        let (tx, rx) = oneshot::channel();
        lock(&session.waiters).insert(id.clone(), Waiter::Once(tx));
        send_line(&session, line);
        match tokio::time::timeout(front.opts.answer_timeout, rx).await {
            Ok(Ok((answer, _))) => {
                let mut r = Response::new(Out::Full(Full::new(Bytes::from(answer))));
                r.headers_mut()
                    .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                r
            }
            _ => {
                lock(&session.waiters).remove(&id);
                json_error(
                    StatusCode::GATEWAY_TIMEOUT,
                    -32603,
                    "jsongate: no answer in time",
                )
            }
        }
    };
    if initialize {
        // The upstream's session id is known once it answered (JSON) or soon after the
        // head of its stream; wait briefly for it.
        for _ in 0..100 {
            if lock(&session.upstream_id).is_some() || !streaming {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        match lock(&session.upstream_id).clone() {
            Some(sid) => {
                if let Ok(k) = sid.to_str() {
                    lock(&front.sessions).insert(k.to_owned(), Arc::clone(&session));
                }
                res.headers_mut().insert(SESSION_HEADER, sid);
            }
            None => *lock(&front.sessionless) = Some(Arc::clone(&session)),
        }
    }
    res
}

impl Session {
    /// Ends the relay: both of its sides close, its threads end.
    fn end(&self) {
        lock(&self.to_relay).take();
        lock(&self.to_server_out).take();
        lock(&self.streams).clear();
    }
}

/// Ends the sessions unused for [`SESSION_IDLE_TIMEOUT`], every minute.
async fn reap(front: Arc<Front>) {
    loop {
        tokio::time::sleep(Duration::from_secs(60)).await;
        let now = std::time::Instant::now();
        lock(&front.sessions).retain(|_, s| {
            let keep = now.duration_since(*lock(&s.used)) < SESSION_IDLE_TIMEOUT;
            if !keep {
                s.end();
            }
            keep
        });
    }
}

fn send_line(s: &Session, line: Vec<u8>) {
    if let Some(t) = lock(&s.to_relay).as_ref() {
        let _ = t.send(line);
    }
}

fn upstream_request(front: &Front, s: &Session, method: Method) -> Option<Request<Full<Bytes>>> {
    let mut req = Request::builder()
        .method(method)
        .uri(front.opts.path.as_str())
        .header(http::header::HOST, front.opts.upstream_authority.as_str())
        .header(ACCEPT, "text/event-stream");
    for (k, v) in lock(&s.forward).iter() {
        req = req.header(k, v);
    }
    if let Some(sid) = lock(&s.upstream_id).clone() {
        req = req.header(SESSION_HEADER, sid);
    }
    req.body(Full::new(Bytes::new())).ok()
}

async fn get_stream(front: &Arc<Front>, req: Request<Incoming>) -> Response<Out> {
    let session = match front.session_of(req.headers()) {
        Err(r) => return *r,
        Ok(Some(s)) => s,
        Ok(None) => return json_error(StatusCode::BAD_REQUEST, -32600, "jsongate: no session"),
    };
    let Some(up) = upstream_request(front, &session, Method::GET) else {
        return reply(StatusCode::BAD_GATEWAY, "jsongate: upstream unavailable\n");
    };
    let Some(res) = send(&front.opts.upstream_authority, up).await else {
        return reply(StatusCode::BAD_GATEWAY, "jsongate: upstream unavailable\n");
    };
    if !res.status().is_success() {
        let mut r = reply(StatusCode::METHOD_NOT_ALLOWED, "");
        *r.status_mut() = res.status();
        return r;
    }
    let (tx, rx) = mpsc::unbounded_channel();
    lock(&session.streams).insert(0, tx);
    let Some(out) = lock(&session.to_server_out).clone() else {
        return reply(StatusCode::NOT_FOUND, "jsongate: session ended\n");
    };
    let limits = front.limits;
    let s = Arc::clone(&session);
    tokio::spawn(async move {
        let _ = read_events(&s, res.into_body(), &out, limits, None).await;
    });
    let mut r = Response::new(Out::Events(Events {
        first: None,
        rx,
        until: None,
        done: false,
        limits,
    }));
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    r
}

async fn delete(front: &Arc<Front>, req: Request<Incoming>) -> Response<Out> {
    let session = match front.session_of(req.headers()) {
        Err(r) => return *r,
        Ok(Some(s)) => s,
        Ok(None) => return json_error(StatusCode::BAD_REQUEST, -32600, "jsongate: no session"),
    };
    let status = match upstream_request(front, &session, Method::DELETE) {
        Some(up) => send(&front.opts.upstream_authority, up)
            .await
            .map_or(StatusCode::BAD_GATEWAY, |r| r.status()),
        None => StatusCode::BAD_GATEWAY,
    };
    if status.is_success() {
        if let Some(id) = header_str(req.headers(), SESSION_HEADER) {
            lock(&front.sessions).remove(id);
        }
        session.end();
    }
    let mut r = reply(StatusCode::OK, "");
    *r.status_mut() = status;
    r
}

/// Serves the MCP endpoint on `listener` until `shutdown` resolves.
///
/// # Errors
/// None yet; the signature leaves room for listener failures.
///
/// # Example
/// ```
/// use jsongate::mcp::{http::{run, split_url, HttpOptions}, Config};
/// let (authority, path) = split_url("http://127.0.0.1:8931/mcp")?;
/// let opts = HttpOptions::new(authority, path, Config::default);
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
    let front = Arc::new(Front {
        limits: opts.limits,
        opts,
        sessions: Mutex::new(HashMap::new()),
        sessionless: Mutex::new(None),
        rt: tokio::runtime::Handle::current(),
    });
    tokio::spawn(reap(Arc::clone(&front)));
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(10))
        .max_headers(64)
        .max_header_size(16 * 1024);
    let builder = Arc::new(builder);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            () = &mut shutdown => return Ok(()),
            a = listener.accept() => match a {
                Ok(a) => a,
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let front = Arc::clone(&front);
        let builder = Arc::clone(&builder);
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| handle(Arc::clone(&front), req));
            let _ = builder.serve_connection(TokioIo::new(stream), svc).await;
        });
    }
}

/// Splits `http://host:port/path` into the authority and the path (default `/`).
///
/// # Errors
/// Not an `http://` URL with a host.
///
/// # Example
/// ```
/// use jsongate::mcp::http::split_url;
/// assert_eq!(split_url("http://127.0.0.1:8931/mcp")?, ("127.0.0.1:8931".to_owned(), "/mcp".to_owned()));
/// assert_eq!(split_url("http://localhost:3000")?.1, "/"); // the default path
/// assert!(split_url("https://example.com/mcp").is_err()); // http:// only
/// assert!(split_url("http://user@example.com/").is_err()); // no credentials in the URL
/// # Ok::<(), String>(())
/// ```
pub fn split_url(url: &str) -> Result<(String, String), String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("'{url}' is not an http:// URL"))?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if authority.is_empty() || authority.contains('@') {
        return Err(format!("'{url}' has no host"));
    }
    let path = if path.is_empty() { "/" } else { path };
    Ok((authority.to_owned(), path.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn urls() {
        assert_eq!(
            split_url("http://127.0.0.1:9/mcp").unwrap(),
            ("127.0.0.1:9".to_owned(), "/mcp".to_owned())
        );
        assert!(split_url("https://x/mcp").is_err());
        assert!(split_url("http://u@x/").is_err());
    }
}
