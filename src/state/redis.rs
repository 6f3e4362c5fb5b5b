//! The Redis backend: several hosts share one state.
//!
//! Every [`Store`] operation is one command or one Lua script (`EVAL`), so it is atomic on
//! the server; scripts that need the time read it with `TIME`, so every replica uses the
//! server's clock, and every key carries a TTL (a window's log expires with its window, a
//! deadline at itself, a record after its own TTL). Keys are `PREFIX` + the caller's key.
//!
//! The client is a small RESP2 client over `std::net::TcpStream`, or over TLS (`rediss://`)
//! through [`crate::tls`] (rustls; the client configuration is built once per store).
//! Connections are bounded ([`RedisConfig::max_connections`]); the connect timeout covers the
//! TCP connect and the TLS handshake, and every operation runs under read and write timeouts;
//! a new connection authenticates (`AUTH [user] password`) and selects its database before
//! its first operation. A connection that fails, times out or gets an error reply is dropped,
//! never reused, and the operation fails with [`StateErrorKind::Unavailable`]; so does an
//! `AUTH` the server refuses ("authentication failed", with the server's error code only).
//! Replies are bounded (a bulk string of at most 1 MiB, an array of at most 8 items), so a
//! server that answers wrongly cannot make the client allocate without bound.
//!
//! A password is a [`Secret`]: read from an environment variable or a file (or, tolerated,
//! the address), never printed (`Debug` names where it came from), never in an error
//! message. This module must not log, print or echo a password or an address that holds one.
//!
//! **Why not the `redis` crate**, now that TLS is needed too. Counted with
//! `cargo tree -e normal --prefix none | sort -u | wc -l` in a scratch project: this crate
//! with only its `redis` feature (which brings rustls through `tls`) lists 41 lines; adding
//! `redis` 1.8.2 with `tls-rustls` lists 99 (+58). The default CLI build goes from 89 to 138
//! (+49; 139 with `tls-rustls-webpki-roots`): `url` with the `idna` and ICU stacks (`icu_*`,
//! `zerovec`, `yoke`, `tinystr`, ...), `combine`, `arcstr`, `sha1_smol`, `xxhash-rust`. And
//! `redis` 1.8 needs Rust 1.88, where this crate supports 1.85. The hand-written client adds
//! no crate: TLS is [`crate::tls`], which the HTTP fronts need anyway, and the client needs
//! eight operations, `AUTH` and `SELECT`. It stays.

mod config;

pub use config::{RedisConfig, Secret, MAX_PASSWORD_BYTES};

use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Instant;

use super::{StateError, StateErrorKind, Store, Take};
use crate::tls::{ClientTls, ClientTlsOptions};

/// One reply.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Reply {
    Nil,
    Int(i64),
    Text(Vec<u8>),
    Array(Vec<Reply>),
    /// An error reply (`-CODE message`).
    Error(Vec<u8>),
}

/// Largest bulk string and array the client reads.
const MAX_BULK: usize = 1 << 20;
const MAX_ARRAY: usize = 8;

/// The socket under a TLS session. While `handshake_until` is set, every read and write is
/// bounded by what is left of the connect timeout, so the handshake as a whole is.
struct Sock {
    tcp: TcpStream,
    handshake_until: Option<Instant>,
}

impl Sock {
    fn bound(&self) -> io::Result<()> {
        if let Some(until) = self.handshake_until {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the TLS handshake timed out",
                ));
            }
            self.tcp.set_read_timeout(Some(left))?;
            self.tcp.set_write_timeout(Some(left))?;
        }
        Ok(())
    }
}

impl Read for Sock {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.bound()?;
        self.tcp.read(buf)
    }
}

impl Write for Sock {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bound()?;
        self.tcp.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.tcp.flush()
    }
}

/// A connection's byte stream: plain TCP or TLS over it.
enum Stream {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, Sock>>),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// The code of an error reply (`WRONGPASS`, `NOAUTH`, `ERR`): its first word when that is
/// made of capital letters, the only part of an answer to `AUTH` ever shown.
fn error_code(e: &[u8]) -> &str {
    let word = e.split(|&b| b == b' ').next().unwrap_or_default();
    match std::str::from_utf8(word) {
        Ok(w) if !w.is_empty() && w.len() <= 32 && w.bytes().all(|b| b.is_ascii_uppercase()) => w,
        _ => "unknown error",
    }
}

struct Conn {
    reader: BufReader<Stream>,
}

impl Conn {
    /// Connects (TCP, then TLS when `tls` is given, both within the connect timeout), then
    /// authenticates and selects the database.
    fn open(c: &RedisConfig, tls: Option<&ClientTls>) -> Result<Conn, String> {
        let until = Instant::now() + c.connect_timeout;
        let tcp = Conn::connect(c, until)?;
        let timeouts = |s: &TcpStream| {
            s.set_read_timeout(Some(c.timeout))
                .and_then(|()| s.set_write_timeout(Some(c.timeout)))
                .map_err(|e| e.to_string())
        };
        let stream = match tls {
            None => {
                timeouts(&tcp)?;
                Stream::Plain(tcp)
            }
            Some(tls) => {
                let sock = Sock {
                    tcp,
                    handshake_until: Some(until),
                };
                let mut s = tls
                    .connect_blocking(c.host(), sock)
                    .map_err(|e| format!("TLS handshake: {e}"))?;
                s.sock.handshake_until = None;
                timeouts(&s.sock.tcp)?;
                Stream::Tls(Box::new(s))
            }
        };
        let mut conn = Conn {
            reader: BufReader::new(stream),
        };
        conn.hello(c)?;
        Ok(conn)
    }

    fn connect(c: &RedisConfig, until: Instant) -> Result<TcpStream, String> {
        let addrs: Vec<SocketAddr> = c
            .address
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve: {e}"))?
            .collect();
        let mut last = String::from("no address");
        for a in addrs {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!("cannot connect: timed out ({last})"));
            }
            match TcpStream::connect_timeout(&a, left) {
                Ok(s) => {
                    s.set_nodelay(true).map_err(|e| e.to_string())?;
                    return Ok(s);
                }
                Err(e) => last = format!("cannot connect: {e}"),
            }
        }
        Err(last)
    }

    /// `AUTH` and `SELECT`, as configured. The password is sent, never shown: a refusal is
    /// reported by the server's error code alone.
    fn hello(&mut self, c: &RedisConfig) -> Result<(), String> {
        if let Some(password) = &c.password {
            let mut args: Vec<&[u8]> = vec![b"AUTH"];
            if let Some(user) = &c.user {
                args.push(user.as_bytes());
            }
            args.push(password.value.as_bytes());
            match self.call(&args) {
                Ok(Reply::Text(t)) if t == b"OK" => {}
                Ok(Reply::Error(e)) => {
                    return Err(format!(
                        "authentication failed (the server answered {})",
                        error_code(&e)
                    ))
                }
                Ok(_) => return Err("authentication failed (unexpected reply to AUTH)".into()),
                Err(e) => return Err(format!("authentication failed: {e}")),
            }
        }
        if c.db != 0 {
            let db = c.db.to_string();
            match self.call(&[b"SELECT", db.as_bytes()])? {
                Reply::Text(t) if t == b"OK" => {}
                Reply::Error(e) => {
                    return Err(format!("SELECT {db}: {}", String::from_utf8_lossy(&e)))
                }
                _ => return Err(format!("SELECT {db}: unexpected reply")),
            }
        }
        Ok(())
    }

    fn call(&mut self, args: &[&[u8]]) -> Result<Reply, String> {
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        let s = self.reader.get_mut();
        s.write_all(&out)
            .and_then(|()| s.flush())
            .map_err(|e| format!("write: {e}"))?;
        self.read_reply(0)
    }

    fn line(&mut self) -> Result<Vec<u8>, String> {
        let mut line = Vec::new();
        let n = (&mut self.reader)
            .take(MAX_BULK as u64)
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            return Err("the server closed the connection".into());
        }
        if !line.ends_with(b"\r\n") {
            return Err("malformed reply line".into());
        }
        line.truncate(line.len() - 2);
        Ok(line)
    }

    fn read_reply(&mut self, depth: usize) -> Result<Reply, String> {
        let line = self.line()?;
        let (&kind, rest) = line.split_first().ok_or("empty reply")?;
        let int = |b: &[u8]| -> Result<i64, String> {
            std::str::from_utf8(b)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| "malformed number in reply".to_owned())
        };
        match kind {
            b'+' => Ok(Reply::Text(rest.to_vec())),
            b'-' => Ok(Reply::Error(rest.to_vec())),
            b':' => Ok(Reply::Int(int(rest)?)),
            b'$' => {
                let n = int(rest)?;
                if n < 0 {
                    return Ok(Reply::Nil);
                }
                let n = usize::try_from(n).map_err(|e| e.to_string())?;
                if n > MAX_BULK {
                    return Err(format!("reply of {n} bytes is too large"));
                }
                let mut buf = vec![0; n + 2];
                self.reader
                    .read_exact(&mut buf)
                    .map_err(|e| format!("read: {e}"))?;
                if !buf.ends_with(b"\r\n") {
                    return Err("malformed bulk reply".into());
                }
                buf.truncate(n);
                Ok(Reply::Text(buf))
            }
            b'*' => {
                let n = int(rest)?;
                if n < 0 {
                    return Ok(Reply::Nil);
                }
                let n = usize::try_from(n).map_err(|e| e.to_string())?;
                if n > MAX_ARRAY || depth > 2 {
                    return Err("reply array too large or too deep".into());
                }
                (0..n)
                    .map(|_| self.read_reply(depth + 1))
                    .collect::<Result<_, _>>()
                    .map(Reply::Array)
            }
            _ => Err("not a RESP reply".into()),
        }
    }
}

struct Pool {
    idle: Vec<Conn>,
    open: usize,
}

/// State in a Redis server, shared by every replica that names it.
///
/// # Example
/// ```
/// use jsongate::state::{RedisConfig, RedisStore, StateErrorKind, Store};
/// let store = RedisStore::new(RedisConfig::new("127.0.0.1:1").prefix("gw1:")); // nothing listens there
/// assert_eq!(store.describe(), "redis:127.0.0.1:1");
/// // An unreachable server is an error of the operation, never a silent empty answer.
/// assert_eq!(store.get("k", 0).unwrap_err().kind(), StateErrorKind::Unavailable);
/// ```
pub struct RedisStore {
    config: RedisConfig,
    /// The TLS client configuration, built once (or why it could not be).
    tls: Result<Option<ClientTls>, String>,
    pool: Mutex<Pool>,
    freed: Condvar,
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStore")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The server's clock in milliseconds, as the first statement of a script.
const NOW: &str = "local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
";

/// Drops the events of list `k` older than `win` (the memory backend's `drop_old`).
const DROP_OLD: &str = "while true do
  local f = redis.call('LINDEX', k, 0)
  if f and now - tonumber(f) >= win then redis.call('LPOP', k) else break end
end
";

const WINDOW_TAKE: &str = "local k, limit, win = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
#DROP_OLD#
if redis.call('LLEN', k) < limit then
  redis.call('RPUSH', k, now)
  redis.call('PEXPIRE', k, math.max(win, 1))
  return {1, now, now}
end
local f = redis.call('LINDEX', k, 0)
if f then return {0, now, tonumber(f) + win} end
return {0, now, now}";

const TRIP: &str = "local k, o = KEYS[1], KEYS[2]
local th, win, cd = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
#DROP_OLD#
redis.call('RPUSH', k, now)
while redis.call('LLEN', k) > math.max(th, 1) do redis.call('LPOP', k) end
redis.call('PEXPIRE', k, math.max(win, 1))
local open = tonumber(redis.call('GET', o) or '0')
if redis.call('LLEN', k) >= th and now >= open then
  redis.call('DEL', k)
  local u = now + cd
  if u > now then redis.call('SET', o, u, 'PXAT', u) end
  return u
end
return -1";

const EXTEND: &str = "local k, u = KEYS[1], tonumber(ARGV[1])
local cur = tonumber(redis.call('GET', k) or '0')
if u > cur and u > now then
  redis.call('SET', k, ARGV[1], 'PXAT', ARGV[1])
  return u
end
return cur";

const DEADLINE: &str = "local d = tonumber(redis.call('GET', KEYS[1]) or '0')
if d > now then return d end
return -1";

const ADVANCE: &str = "local cur = redis.call('GET', KEYS[1])
if cur and tonumber(cur) > tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1";

fn script(body: &str, clock: bool) -> String {
    let body = body.replace("#DROP_OLD#", DROP_OLD);
    if clock {
        format!("{NOW}{body}")
    } else {
        body
    }
}

fn as_u64(r: &Reply) -> Option<u64> {
    match r {
        Reply::Int(n) => u64::try_from(*n).ok(),
        _ => None,
    }
}

impl RedisStore {
    /// A store on the server `config` names; nothing is connected until the first
    /// operation. The TLS configuration, if any, is built now, once: when that fails (a CA
    /// or key file that cannot be read), every operation fails with the reason
    /// ([`try_new`](Self::try_new) fails at once instead).
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{RedisConfig, RedisStore, StateErrorKind, Store};
    /// // Nothing is connected yet: building a store never fails.
    /// let s = RedisStore::new(RedisConfig::parse("redis://127.0.0.1:1")?);
    /// assert_eq!(s.describe(), "redis:127.0.0.1:1");
    /// let s = RedisStore::new(RedisConfig::parse("rediss://127.0.0.1:1?ca_file=/no/such/ca.pem")?);
    /// assert_eq!(s.describe(), "rediss:127.0.0.1:1");
    /// let e = s.get("k", 0).unwrap_err();
    /// assert_eq!(e.kind(), StateErrorKind::Unavailable);
    /// assert!(e.message().contains("/no/such/ca.pem"), "{e}");
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    pub fn new(config: RedisConfig) -> RedisStore {
        let tls = config
            .tls
            .as_ref()
            .map(ClientTlsOptions::build)
            .transpose()
            .map_err(|e| format!("TLS: {e}"));
        RedisStore {
            config,
            tls,
            pool: Mutex::new(Pool {
                idle: Vec::new(),
                open: 0,
            }),
            freed: Condvar::new(),
        }
    }

    /// As [`new`](Self::new), but a TLS configuration that cannot be built is an error now.
    ///
    /// # Errors
    /// [`StateErrorKind::Unavailable`]: a CA, certificate or key file cannot be read or holds
    /// nothing usable, or no root is trusted.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{RedisConfig, RedisStore, StateErrorKind};
    /// let c = RedisConfig::parse("rediss://127.0.0.1:1?ca_file=/no/such/ca.pem")?;
    /// assert_eq!(RedisStore::try_new(c).unwrap_err().kind(), StateErrorKind::Unavailable);
    /// assert!(RedisStore::try_new(RedisConfig::parse("redis://127.0.0.1:1")?).is_ok());
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    pub fn try_new(config: RedisConfig) -> Result<RedisStore, StateError> {
        let s = RedisStore::new(config);
        if let Err(e) = &s.tls {
            return Err(s.unavailable(e));
        }
        Ok(s)
    }

    fn unavailable(&self, why: &str) -> StateError {
        StateError::new(
            StateErrorKind::Unavailable,
            format!("redis {}: {why}", self.config.address),
        )
    }

    fn acquire(&self) -> Result<Conn, StateError> {
        let tls = self.tls.as_ref().map_err(|e| self.unavailable(e))?;
        let deadline = Instant::now() + self.config.timeout;
        let mut p = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(c) = p.idle.pop() {
                return Ok(c);
            }
            if p.open < self.config.max_connections {
                p.open += 1;
                drop(p);
                // A connection that fails to open (or to authenticate) is dropped here.
                return Conn::open(&self.config, tls.as_ref()).map_err(|e| {
                    self.release(None);
                    self.unavailable(&e)
                });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(self.unavailable("every connection is busy"));
            }
            p = self
                .freed
                .wait_timeout(p, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    fn release(&self, conn: Option<Conn>) {
        let mut p = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
        match conn {
            Some(c) => p.idle.push(c),
            None => p.open -= 1,
        }
        drop(p);
        self.freed.notify_one();
    }

    fn call(&self, args: &[&[u8]]) -> Result<Reply, StateError> {
        let mut conn = self.acquire()?;
        match conn.call(args) {
            Ok(Reply::Error(e)) => {
                self.release(None);
                Err(self.unavailable(&self.server_error(&e)))
            }
            Ok(r) => {
                self.release(Some(conn));
                Ok(r)
            }
            Err(e) => {
                // A failed or timed-out connection may hold half a reply: never reused.
                self.release(None);
                Err(self.unavailable(&e))
            }
        }
    }

    /// What an error reply to an operation means for the operator.
    fn server_error(&self, e: &[u8]) -> String {
        match error_code(e) {
            "NOAUTH" if self.config.password.is_none() => "the server requires authentication \
                (NOAUTH) and no password is configured (password_env=VAR or password_file=PATH)"
                .into(),
            "NOAUTH" => "the server requires authentication (NOAUTH)".into(),
            _ => format!("server error: {}", String::from_utf8_lossy(e)),
        }
    }

    fn eval(
        &self,
        body: &str,
        clock: bool,
        keys: &[&str],
        values: &[String],
    ) -> Result<Reply, StateError> {
        let body = script(body, clock);
        let n = keys.len().to_string();
        let keys: Vec<String> = keys
            .iter()
            .map(|k| format!("{}{k}", self.config.prefix))
            .collect();
        let mut args: Vec<&[u8]> = vec![b"EVAL", body.as_bytes(), n.as_bytes()];
        args.extend(keys.iter().map(String::as_bytes));
        args.extend(values.iter().map(String::as_bytes));
        self.call(&args)
    }

    fn key(&self, key: &str) -> String {
        format!("{}{key}", self.config.prefix)
    }

    fn int(&self, r: &Reply) -> Result<i64, StateError> {
        match r {
            Reply::Int(n) => Ok(*n),
            _ => Err(self.unavailable("unexpected reply")),
        }
    }

    fn text(&self, r: Reply) -> Result<Option<String>, StateError> {
        match r {
            Reply::Nil => Ok(None),
            Reply::Text(t) => String::from_utf8(t)
                .map(Some)
                .map_err(|_| self.unavailable("a record is not UTF-8")),
            _ => Err(self.unavailable("unexpected reply")),
        }
    }

    /// The server's clock (`TIME`), in milliseconds.
    ///
    /// # Errors
    /// The server cannot be reached or answers wrongly.
    ///
    /// # Example
    /// ```
    /// use std::io::{Read, Write};
    /// use jsongate::state::{RedisConfig, RedisStore};
    /// // A stand-in server that answers one `TIME` (seconds, microseconds).
    /// let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    /// let addr = listener.local_addr().unwrap();
    /// let server = std::thread::spawn(move || {
    ///     let (mut c, _) = listener.accept().unwrap();
    ///     let mut buf = [0; 64];
    ///     let n = c.read(&mut buf).unwrap();
    ///     assert!(buf[..n].ends_with(b"TIME\r\n"));
    ///     c.write_all(b"*2\r\n$10\r\n1714564800\r\n$6\r\n250000\r\n").unwrap();
    /// });
    /// let store = RedisStore::new(RedisConfig::new(addr.to_string()));
    /// assert_eq!(store.server_time_ms()?, 1_714_564_800_250);
    /// server.join().unwrap();
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    pub fn server_time_ms(&self) -> Result<u64, StateError> {
        match self.call(&[b"TIME"])? {
            Reply::Array(a) if a.len() == 2 => {
                let n = |r: &Reply| match r {
                    Reply::Text(t) => std::str::from_utf8(t).ok()?.parse::<u64>().ok(),
                    _ => None,
                };
                match (n(&a[0]), n(&a[1])) {
                    (Some(s), Some(us)) => Ok(s * 1000 + us / 1000),
                    _ => Err(self.unavailable("unexpected TIME reply")),
                }
            }
            _ => Err(self.unavailable("unexpected TIME reply")),
        }
    }
}

impl Store for RedisStore {
    fn window_take(&self, key: &str, limit: u64, window: u64, _: u64) -> Result<Take, StateError> {
        let r = self.eval(
            WINDOW_TAKE,
            true,
            &[key],
            &[limit.to_string(), window.to_string()],
        )?;
        match &r {
            Reply::Array(a) if a.len() == 3 => {
                match (as_u64(&a[0]), as_u64(&a[1]), as_u64(&a[2])) {
                    (Some(ok), Some(now), Some(frees)) => Ok(Take {
                        admitted: ok == 1,
                        now_ms: now,
                        frees_at_ms: frees,
                    }),
                    _ => Err(self.unavailable("unexpected reply")),
                }
            }
            _ => Err(self.unavailable("unexpected reply")),
        }
    }

    fn trip(
        &self,
        key: &str,
        threshold: u64,
        window: u64,
        cooldown: u64,
        _: u64,
    ) -> Result<Option<u64>, StateError> {
        let open = format!("{key}:open");
        let argv = [
            threshold.to_string(),
            window.to_string(),
            cooldown.to_string(),
        ];
        let n = self.int(&self.eval(TRIP, true, &[key, &open], &argv)?)?;
        Ok(u64::try_from(n).ok())
    }

    fn extend_deadline(&self, key: &str, until: u64, _: u64) -> Result<u64, StateError> {
        let n = self.int(&self.eval(EXTEND, true, &[key], &[until.to_string()])?)?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    fn deadline(&self, key: &str, _: u64) -> Result<Option<u64>, StateError> {
        let n = self.int(&self.eval(DEADLINE, true, &[key], &[])?)?;
        Ok(u64::try_from(n).ok())
    }

    fn advance(&self, key: &str, to: u64, ttl: u64, _: u64) -> Result<bool, StateError> {
        let argv = [to.to_string(), ttl.max(1).to_string()];
        Ok(self.int(&self.eval(ADVANCE, false, &[key], &argv)?)? == 1)
    }

    fn put_new(&self, key: &str, value: &str, ttl: u64, _: u64) -> Result<bool, StateError> {
        let k = self.key(key);
        let ttl = ttl.max(1).to_string();
        let r = self.call(&[
            b"SET",
            k.as_bytes(),
            value.as_bytes(),
            b"PX",
            ttl.as_bytes(),
            b"NX",
        ])?;
        Ok(matches!(r, Reply::Text(_)))
    }

    fn get(&self, key: &str, _: u64) -> Result<Option<String>, StateError> {
        let k = self.key(key);
        let r = self.call(&[b"GET", k.as_bytes()])?;
        self.text(r)
    }

    fn take(&self, key: &str, _: u64) -> Result<Option<String>, StateError> {
        let k = self.key(key);
        let r = self.call(&[b"GETDEL", k.as_bytes()])?;
        self.text(r)
    }

    fn describe(&self) -> String {
        let scheme = if self.config.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        format!("{scheme}:{}", self.config.address)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::time::Duration;

    #[test]
    fn a_tls_configuration_that_cannot_be_built_fails_every_operation() {
        // A CA file that cannot be read: try_new fails now, new at every operation.
        let c = RedisConfig::parse("rediss://127.0.0.1:1?ca_file=/no/such/ca.pem").unwrap();
        let e = RedisStore::try_new(c.clone()).unwrap_err();
        assert!(
            e.message().contains("TLS: CA file '/no/such/ca.pem'"),
            "{e}"
        );
        let e = RedisStore::new(c).window_take("k", 1, 1, 0).unwrap_err();
        assert!(e.message().contains("/no/such/ca.pem"), "{e}");
    }

    #[test]
    fn a_store_never_shows_its_password() {
        let c = RedisConfig::parse("rediss://gate:hunter2@h:1").unwrap();
        let store = RedisStore::new(c);
        for text in [
            format!("{store:?}"),
            format!("{store:#?}"),
            store.describe(),
        ] {
            assert!(!text.contains("hunter2"), "{text}");
        }
        assert_eq!(store.describe(), "rediss:h:1");
    }

    /// Reads exactly `want` from `s` and checks it.
    fn expect(s: &mut TcpStream, want: &[u8]) {
        let mut got = vec![0; want.len()];
        s.read_exact(&mut got).unwrap();
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(want));
    }

    #[test]
    fn every_new_connection_authenticates_first_and_a_refusal_is_unavailable() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let auth = b"*3\r\n$4\r\nAUTH\r\n$4\r\ngate\r\n$7\r\nhunter2\r\n";
        let server = std::thread::spawn(move || {
            // First connection: the password is refused.
            let (mut s, _) = l.accept().unwrap();
            expect(&mut s, auth);
            s.write_all(b"-WRONGPASS invalid username-password pair hunter2\r\n")
                .unwrap();
            // Second: accepted, then SELECT, then the operation.
            let (mut s, _) = l.accept().unwrap();
            expect(&mut s, auth);
            s.write_all(b"+OK\r\n").unwrap();
            expect(&mut s, b"*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n");
            s.write_all(b"+OK\r\n").unwrap();
            expect(&mut s, b"*2\r\n$3\r\nGET\r\n$10\r\njsongate:k\r\n");
            s.write_all(b"$-1\r\n").unwrap();
            // Third: a server that wants a password nobody configured.
            let (mut s, _) = l.accept().unwrap();
            expect(&mut s, b"*2\r\n$3\r\nGET\r\n$10\r\njsongate:k\r\n");
            s.write_all(b"-NOAUTH Authentication required.\r\n")
                .unwrap();
        });
        let c = RedisConfig::parse(&format!("redis://gate:hunter2@{addr}?db=2")).unwrap();
        let store = RedisStore::new(c);
        let e = store.get("k", 0).unwrap_err();
        assert_eq!(e.kind(), StateErrorKind::Unavailable);
        assert!(
            e.message()
                .ends_with("authentication failed (the server answered WRONGPASS)"),
            "{e}"
        );
        assert!(!e.message().contains("hunter2"), "{e}");
        // The refused connection was dropped, not pooled: the next operation opens another.
        assert_eq!(store.get("k", 0).unwrap(), None);
        let e = RedisStore::new(RedisConfig::new(addr.to_string()))
            .get("k", 0)
            .unwrap_err();
        assert!(
            e.message()
                .contains("requires authentication (NOAUTH) and no password is configured"),
            "{e}"
        );
        server.join().unwrap();
    }

    #[test]
    fn the_connect_timeout_covers_the_tls_handshake() {
        let d = tempfile::tempdir().unwrap();
        let ca = d.path().join("ca.pem");
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        std::fs::write(&ca, cert.cert.pem()).unwrap();
        // Accepts the connection, never answers the ClientHello.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let s = RedisStore::try_new(
            RedisConfig::parse(&format!(
                "rediss://localhost:{port}?ca_file={}&system_roots=false&connect_timeout_ms=150&timeout_ms=5000",
                ca.display()
            ))
            .unwrap(),
        )
        .unwrap();
        let start = Instant::now();
        let e = s.get("k", 0).unwrap_err();
        assert_eq!(e.kind(), StateErrorKind::Unavailable);
        assert!(e.message().contains("TLS handshake"), "{e}");
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{:?}",
            start.elapsed()
        );
        drop(l);
    }

    #[test]
    fn an_unreachable_server_is_unavailable_within_the_timeout() {
        // A port nothing listens on: connect is refused at once.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        drop(l);
        let s = RedisStore::new(RedisConfig::parse(&format!("redis://{addr}")).unwrap());
        let e = s.window_take("k", 1, 1000, 0).unwrap_err();
        assert_eq!(e.kind(), StateErrorKind::Unavailable);
    }

    #[test]
    fn a_server_that_never_answers_times_out() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let s =
            RedisStore::new(RedisConfig::parse(&format!("redis://{addr}?timeout_ms=100")).unwrap());
        let start = Instant::now();
        let e = s.get("k", 0).unwrap_err();
        assert_eq!(e.kind(), StateErrorKind::Unavailable);
        assert!(start.elapsed() < Duration::from_secs(2));
        drop(l);
    }
}
