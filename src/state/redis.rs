//! The Redis backend: several hosts share one state.
//!
//! Every [`Store`] operation is one command or one Lua script (`EVAL`), so it is atomic on
//! the server; scripts that need the time read it with `TIME`, so every replica uses the
//! server's clock, and every key carries a TTL (a window's log expires with its window, a
//! deadline at itself, a record after its own TTL). Keys are `PREFIX` + the caller's key.
//!
//! The client is a small RESP2 client over `std::net::TcpStream` (this crate's only use of
//! Redis is eight operations; the `redis` crate would add 48 crates, among them the `url`
//! and ICU stacks). Connections are bounded ([`RedisConfig::max_connections`]), opened with
//! a connect timeout and used with read and write timeouts; a connection that fails or
//! times out is dropped, never reused, and the operation fails with
//! [`StateErrorKind::Unavailable`]. Replies are bounded (a bulk string of at most 1 MiB, an
//! array of at most 8 items), so a server that answers wrongly cannot make the client
//! allocate without bound.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{StateError, StateErrorKind, Store, Take};

/// Where the Redis server is and how the client may use it: [`RedisConfig::new`] with the
/// address, then one consuming setter per choice, or [`RedisConfig::parse`] of a
/// `redis://` address.
///
/// # Example
/// ```
/// use std::time::Duration;
/// use jsongate::state::RedisConfig;
/// let c = RedisConfig::parse("redis://10.0.0.5:6379?prefix=gw1:&timeout_ms=200")?;
/// assert_eq!((c.get_address(), c.get_prefix()), ("10.0.0.5:6379", "gw1:"));
/// assert_eq!(c.get_timeout(), Duration::from_millis(200));
/// assert_eq!(c.get_max_connections(), 8);
/// assert_eq!(c, RedisConfig::new("10.0.0.5:6379").prefix("gw1:").timeout(Duration::from_millis(200)));
/// # Ok::<(), jsongate::state::StateError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisConfig {
    address: String,
    prefix: String,
    connect_timeout: Duration,
    timeout: Duration,
    max_connections: usize,
}

impl RedisConfig {
    /// The server at `address` (`HOST:PORT`). Defaults: keys prefixed with `jsongate:`,
    /// connect, read and write timeouts of 500 ms, at most 8 connections open at once.
    ///
    /// # Example
    /// ```
    /// use std::time::Duration;
    /// use jsongate::state::RedisConfig;
    /// let c = RedisConfig::new("127.0.0.1:6379");
    /// assert_eq!((c.get_address(), c.get_prefix()), ("127.0.0.1:6379", "jsongate:"));
    /// assert_eq!((c.get_connect_timeout(), c.get_timeout()), (Duration::from_millis(500), Duration::from_millis(500)));
    /// assert_eq!(c.get_max_connections(), 8);
    /// ```
    pub fn new(address: impl Into<String>) -> RedisConfig {
        RedisConfig {
            address: address.into(),
            prefix: "jsongate:".into(),
            connect_timeout: Duration::from_millis(500),
            timeout: Duration::from_millis(500),
            max_connections: 8,
        }
    }
    /// Prepended to every key, so that several gateways can share one server. Default:
    /// `jsongate:`.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::RedisConfig;
    /// assert_eq!(RedisConfig::new("h:6379").prefix("gw1:").get_prefix(), "gw1:");
    /// ```
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }
    config_setters! {
        /// How long opening a connection may take. Default: 500 ms.
        ///
        /// # Example
        /// ```
        /// use std::time::Duration;
        /// use jsongate::state::RedisConfig;
        /// let c = RedisConfig::new("h:6379").connect_timeout(Duration::from_secs(1));
        /// assert_eq!(c.get_connect_timeout(), Duration::from_secs(1));
        /// ```
        connect_timeout: Duration;

        /// The read and write timeout of every operation. Default: 500 ms.
        ///
        /// # Example
        /// ```
        /// use std::time::Duration;
        /// use jsongate::state::RedisConfig;
        /// let c = RedisConfig::new("h:6379").timeout(Duration::from_millis(100));
        /// assert_eq!(c.get_timeout(), Duration::from_millis(100));
        /// ```
        timeout: Duration;
    }

    /// The most connections open at once (at least 1). Default: 8.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::RedisConfig;
    /// assert_eq!(RedisConfig::new("h:6379").max_connections(2).get_max_connections(), 2);
    /// assert_eq!(RedisConfig::new("h:6379").max_connections(0).get_max_connections(), 1);
    /// ```
    #[must_use]
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }
    /// The server's `HOST:PORT`, as given to [`new`](Self::new).
    ///
    /// # Example
    /// ```
    /// use jsongate::state::RedisConfig;
    /// assert_eq!(RedisConfig::new("10.0.0.5:6379").get_address(), "10.0.0.5:6379");
    /// ```
    pub fn get_address(&self) -> &str {
        &self.address
    }
    /// The value set by [`prefix`](Self::prefix).
    ///
    /// # Example
    /// ```
    /// use jsongate::state::RedisConfig;
    /// assert_eq!(RedisConfig::new("h:6379").get_prefix(), "jsongate:");
    /// ```
    pub fn get_prefix(&self) -> &str {
        &self.prefix
    }
    config_readers! {
        /// The value set by [`connect_timeout`](Self::connect_timeout).
        ///
        /// # Example
        /// ```
        /// use std::time::Duration;
        /// use jsongate::state::RedisConfig;
        /// assert_eq!(RedisConfig::new("h:6379").get_connect_timeout(), Duration::from_millis(500));
        /// ```
        connect_timeout, get_connect_timeout: Duration;

        /// The value set by [`timeout`](Self::timeout).
        ///
        /// # Example
        /// ```
        /// use std::time::Duration;
        /// use jsongate::state::RedisConfig;
        /// assert_eq!(RedisConfig::new("h:6379").get_timeout(), Duration::from_millis(500));
        /// ```
        timeout, get_timeout: Duration;

        /// The value set by [`max_connections`](Self::max_connections).
        ///
        /// # Example
        /// ```
        /// use jsongate::state::RedisConfig;
        /// assert_eq!(RedisConfig::new("h:6379").get_max_connections(), 8);
        /// ```
        max_connections, get_max_connections: usize;
    }

    /// `redis://HOST:PORT` with optional query parameters `prefix`, `connect_timeout_ms`,
    /// `timeout_ms`, `max_connections`: `redis://127.0.0.1:6379?prefix=gw1:&timeout_ms=200`.
    ///
    /// # Errors
    /// Not of that form.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::RedisConfig;
    /// assert_eq!(RedisConfig::parse("redis://127.0.0.1:6379")?.get_prefix(), "jsongate:");
    /// assert!(RedisConfig::parse("http://127.0.0.1:6379").is_err());
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    pub fn parse(spec: &str) -> Result<RedisConfig, StateError> {
        let bad = |why: &str| {
            StateError::new(
                StateErrorKind::Unavailable,
                format!("redis address '{spec}': {why}"),
            )
        };
        let rest = spec
            .strip_prefix("redis://")
            .ok_or_else(|| bad("must start with redis://"))?;
        let (address, query) = rest.split_once('?').unwrap_or((rest, ""));
        let address = address.trim_end_matches('/');
        if address.is_empty() || !address.contains(':') || address.contains(['/', '@']) {
            return Err(bad("needs HOST:PORT (no path, no credentials)"));
        }
        let mut c = RedisConfig::new(address);
        for kv in query.split('&').filter(|s| !s.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| bad("query needs KEY=VALUE"))?;
            let ms = || {
                v.parse::<u64>()
                    .ok()
                    .filter(|&n| n > 0)
                    .map(Duration::from_millis)
                    .ok_or_else(|| bad(&format!("{k} must be a positive integer")))
            };
            match k {
                "prefix" => v.clone_into(&mut c.prefix),
                "connect_timeout_ms" => c.connect_timeout = ms()?,
                "timeout_ms" => c.timeout = ms()?,
                "max_connections" => {
                    c.max_connections = v
                        .parse::<usize>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| bad("max_connections must be a positive integer"))?;
                }
                _ => return Err(bad(&format!("unknown parameter '{k}'"))),
            }
        }
        Ok(c)
    }
}

/// One reply.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Reply {
    Nil,
    Int(i64),
    Text(Vec<u8>),
    Array(Vec<Reply>),
}

/// Largest bulk string and array the client reads.
const MAX_BULK: usize = 1 << 20;
const MAX_ARRAY: usize = 8;

struct Conn {
    reader: BufReader<TcpStream>,
}

impl Conn {
    fn open(c: &RedisConfig) -> Result<Conn, String> {
        let addrs: Vec<SocketAddr> = c
            .address
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve: {e}"))?
            .collect();
        let mut last = String::from("no address");
        for a in addrs {
            match TcpStream::connect_timeout(&a, c.connect_timeout) {
                Ok(s) => {
                    s.set_read_timeout(Some(c.timeout))
                        .and_then(|()| s.set_write_timeout(Some(c.timeout)))
                        .and_then(|()| s.set_nodelay(true))
                        .map_err(|e| e.to_string())?;
                    return Ok(Conn {
                        reader: BufReader::new(s),
                    });
                }
                Err(e) => last = format!("cannot connect: {e}"),
            }
        }
        Err(last)
    }

    fn call(&mut self, args: &[&[u8]]) -> Result<Reply, String> {
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.reader
            .get_mut()
            .write_all(&out)
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
            b'-' => Err(format!("server error: {}", String::from_utf8_lossy(rest))),
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
    pool: Mutex<Pool>,
    freed: Condvar,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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
    /// operation.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{RedisConfig, RedisStore, Store};
    /// // Nothing is connected yet: building a store never fails.
    /// let s = RedisStore::new(RedisConfig::parse("redis://127.0.0.1:1")?);
    /// assert_eq!(s.describe(), "redis:127.0.0.1:1");
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    pub fn new(config: RedisConfig) -> RedisStore {
        RedisStore {
            config,
            pool: Mutex::new(Pool {
                idle: Vec::new(),
                open: 0,
            }),
            freed: Condvar::new(),
        }
    }

    fn unavailable(&self, why: &str) -> StateError {
        StateError::new(
            StateErrorKind::Unavailable,
            format!("redis {}: {why}", self.config.address),
        )
    }

    fn acquire(&self) -> Result<Conn, StateError> {
        let deadline = Instant::now() + self.config.timeout;
        let mut p = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(c) = p.idle.pop() {
                return Ok(c);
            }
            if p.open < self.config.max_connections {
                p.open += 1;
                drop(p);
                return Conn::open(&self.config).map_err(|e| {
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
        format!("redis:{}", self.config.address)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_with_their_bounds() {
        let c = RedisConfig::parse("redis://127.0.0.1:6390?prefix=gw:&timeout_ms=200").unwrap();
        assert_eq!(
            (c.address.as_str(), c.prefix.as_str(), c.timeout),
            ("127.0.0.1:6390", "gw:", Duration::from_millis(200))
        );
        for bad in [
            "http://x:1",
            "redis://",
            "redis://host",
            "redis://u:p@h:1",
            "redis://h:1?timeout_ms=0",
            "redis://h:1?x=1",
        ] {
            assert!(RedisConfig::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_unreachable_server_is_unavailable_within_the_timeout() {
        // A port nothing listens on: connect is refused at once.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        drop(l);
        let s = RedisStore::new(RedisConfig::parse(&format!("redis://{addr}")).unwrap());
        let e = s.window_take("k", 1, 1000, 0).unwrap_err();
        assert_eq!(e.kind(), StateErrorKind::Unavailable);
    }

    #[test]
    fn a_server_that_never_answers_times_out() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
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
