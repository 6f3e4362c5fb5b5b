//! Where a Redis server is and how to use it: [`RedisConfig`], its `redis://` and `rediss://`
//! addresses, and the password as a [`Secret`].
//!
//! This module reads a password variable or file when an address names one; it never
//! connects, and never prints, logs or puts into an error message a password or the part of
//! an address that may hold one.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::state::{StateError, StateErrorKind};
use crate::tls::ClientTlsOptions;

/// Largest password file read (4 KiB).
pub const MAX_PASSWORD_BYTES: u64 = 4096;

/// The port of `redis://HOST` and `rediss://HOST` without one.
const DEFAULT_PORT: u16 = 6379;

/// A password: never printed. Its `Debug` says where it came from, never what it is; two
/// secrets are equal when their values are.
///
/// # Example
/// ```
/// use jsongate::state::Secret;
/// let s = Secret::new("hunter2");
/// assert_eq!(format!("{s:?}"), "Secret(given, redacted)");
/// assert_eq!(s, Secret::new("hunter2"));
/// ```
#[derive(Clone)]
pub struct Secret {
    pub(super) value: String,
    from: String,
}

impl Secret {
    /// A password given by the program.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{RedisConfig, Secret};
    /// let c = RedisConfig::new("127.0.0.1:6379").password(Secret::new("hunter2"));
    /// assert!(c.has_password() && !format!("{c:?}").contains("hunter2"));
    /// ```
    pub fn new(value: impl Into<String>) -> Secret {
        Secret {
            value: value.into(),
            from: "given".into(),
        }
    }

    /// The value of the environment variable `var`, read now.
    ///
    /// # Errors
    /// [`StateErrorKind::Unavailable`], naming the variable (never its value): `var` is not a
    /// variable name, or the variable is not set, empty or not UTF-8.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::Secret;
    /// let e = Secret::from_env("JSONGATE_DOC_UNSET_VARIABLE").unwrap_err();
    /// assert!(e.message().contains("'JSONGATE_DOC_UNSET_VARIABLE' is not set"), "{e}");
    /// ```
    pub fn from_env(var: &str) -> Result<Secret, StateError> {
        let err = |why: &str| {
            StateError::new(
                StateErrorKind::Unavailable,
                format!("password_env: environment variable '{var}' {why}"),
            )
        };
        if var.is_empty() || !var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(err("is not a variable name (letters, digits, _)"));
        }
        match std::env::var(var) {
            Ok(v) if v.is_empty() => Err(err("is empty")),
            Ok(value) => Ok(Secret {
                value,
                from: format!("environment variable {var}"),
            }),
            Err(std::env::VarError::NotPresent) => Err(err("is not set")),
            Err(std::env::VarError::NotUnicode(_)) => Err(err("is not UTF-8")),
        }
    }

    /// The contents of the file at `path`, read now, without its trailing line break (at most
    /// [`MAX_PASSWORD_BYTES`]).
    ///
    /// # Errors
    /// [`StateErrorKind::Unavailable`], naming the file (never its contents): it cannot be
    /// read, is larger than [`MAX_PASSWORD_BYTES`], not UTF-8, or empty.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::Secret;
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("redis-password");
    /// std::fs::write(&path, "hunter2\n").unwrap();
    /// assert_eq!(Secret::from_file(&path)?, Secret::new("hunter2"));
    /// assert!(Secret::from_file(dir.path().join("none")).is_err());
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    pub fn from_file(path: impl AsRef<Path>) -> Result<Secret, StateError> {
        let path = path.as_ref();
        let err = |why: &str| {
            StateError::new(
                StateErrorKind::Unavailable,
                format!("password_file '{}': {why}", path.display()),
            )
        };
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_PASSWORD_BYTES + 1).read_to_end(&mut bytes))
            .map_err(|e| err(&e.to_string()))?;
        if bytes.len() as u64 > MAX_PASSWORD_BYTES {
            return Err(err(&format!("is larger than {MAX_PASSWORD_BYTES} bytes")));
        }
        let mut value = String::from_utf8(bytes).map_err(|_| err("is not UTF-8"))?;
        value.truncate(value.trim_end_matches(['\r', '\n']).len());
        if value.is_empty() {
            return Err(err("is empty"));
        }
        Ok(Secret {
            value,
            from: format!("file {}", path.display()),
        })
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({}, redacted)", self.from)
    }
}

impl PartialEq for Secret {
    fn eq(&self, other: &Secret) -> bool {
        self.value == other.value
    }
}

impl Eq for Secret {}

/// Where the Redis server is and how the client may use it: [`RedisConfig::new`] with the
/// address, then one consuming setter per choice, or [`RedisConfig::parse`] of a
/// `redis://` or `rediss://` address.
///
/// Its `Debug` never shows the password (see [`Secret`]).
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
    pub(super) address: String,
    pub(super) prefix: String,
    pub(super) connect_timeout: Duration,
    pub(super) timeout: Duration,
    pub(super) max_connections: usize,
    pub(super) user: Option<String>,
    pub(super) password: Option<Secret>,
    pub(super) db: u32,
    pub(super) tls: Option<ClientTlsOptions>,
}

impl RedisConfig {
    /// The server at `address` (`HOST:PORT`). Defaults: keys prefixed with `jsongate:`,
    /// connect, read and write timeouts of 500 ms, at most 8 connections open at once, no
    /// authentication, database 0, no TLS.
    ///
    /// # Example
    /// ```
    /// use std::time::Duration;
    /// use jsongate::state::RedisConfig;
    /// let c = RedisConfig::new("127.0.0.1:6379");
    /// assert_eq!((c.get_address(), c.get_prefix()), ("127.0.0.1:6379", "jsongate:"));
    /// assert_eq!((c.get_connect_timeout(), c.get_timeout()), (Duration::from_millis(500), Duration::from_millis(500)));
    /// assert_eq!(c.get_max_connections(), 8);
    /// assert_eq!((c.get_user(), c.has_password(), c.get_db(), c.get_tls()), (None, false, 0, None));
    /// ```
    pub fn new(address: impl Into<String>) -> RedisConfig {
        RedisConfig {
            address: address.into(),
            prefix: "jsongate:".into(),
            connect_timeout: Duration::from_millis(500),
            timeout: Duration::from_millis(500),
            max_connections: 8,
            user: None,
            password: None,
            db: 0,
            tls: None,
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
        /// How long opening a connection may take: the TCP connect and, with TLS, the
        /// handshake. Default: 500 ms.
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

        /// The database every connection selects (`SELECT`) after authenticating. Default: 0
        /// (nothing sent).
        ///
        /// # Example
        /// ```
        /// use jsongate::state::RedisConfig;
        /// assert_eq!(RedisConfig::new("h:6379").db(2).get_db(), 2);
        /// ```
        db: u32;
    }
    config_options! {
        /// The password every new connection sends (`AUTH`) before anything else. Default:
        /// none.
        ///
        /// # Example
        /// ```
        /// use jsongate::state::{RedisConfig, Secret};
        /// let c = RedisConfig::new("h:6379").password(Secret::new("hunter2"));
        /// assert!(c.has_password());
        /// assert!(!format!("{c:?}").contains("hunter2"));
        /// ```
        password: Secret;

        /// Connects over TLS, verifying the server as these options say, with the host of the
        /// address as the name verified (and sent as SNI). Default: plain TCP.
        ///
        /// # Example
        /// ```
        /// use jsongate::state::RedisConfig;
        /// use jsongate::tls::ClientTlsOptions;
        /// let c = RedisConfig::new("redis.internal:6380").tls(ClientTlsOptions::new().ca_file("/etc/redis/ca.pem"));
        /// assert!(c.get_tls().is_some());
        /// ```
        tls: ClientTlsOptions;
    }

    /// The ACL user every connection authenticates as (`AUTH user password`); needs a
    /// [`password`](Self::password). Default: none (`AUTH password`: Redis's `default` user).
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{RedisConfig, Secret};
    /// let c = RedisConfig::new("h:6379").user("gate").password(Secret::new("pw"));
    /// assert_eq!(c.get_user(), Some("gate"));
    /// ```
    #[must_use]
    pub fn user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
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
    /// The value set by [`user`](Self::user).
    ///
    /// # Example
    /// ```
    /// use jsongate::state::RedisConfig;
    /// assert_eq!(RedisConfig::parse("redis://gate:pw@h:6379")?.get_user(), Some("gate"));
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    pub fn get_user(&self) -> Option<&str> {
        self.user.as_deref()
    }
    /// Whether a [`password`](Self::password) is set (there is no reader of the password).
    ///
    /// # Example
    /// ```
    /// use jsongate::state::RedisConfig;
    /// assert!(RedisConfig::parse("redis://:pw@h")?.has_password());
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    pub fn has_password(&self) -> bool {
        self.password.is_some()
    }
    /// The value set by [`tls`](Self::tls).
    ///
    /// # Example
    /// ```
    /// use jsongate::state::RedisConfig;
    /// let c = RedisConfig::parse("rediss://h?ca_file=/etc/redis/ca.pem")?;
    /// assert_eq!(c.get_tls().and_then(|t| t.get_ca_file()), Some(std::path::Path::new("/etc/redis/ca.pem")));
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    pub fn get_tls(&self) -> Option<&ClientTlsOptions> {
        self.tls.as_ref()
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

        /// The value set by [`db`](Self::db).
        ///
        /// # Example
        /// ```
        /// use jsongate::state::RedisConfig;
        /// assert_eq!(RedisConfig::parse("redis://h?db=3")?.get_db(), 3);
        /// # Ok::<(), jsongate::state::StateError>(())
        /// ```
        db, get_db: u32;
    }

    /// The host of the address: the name TLS verifies.
    pub(super) fn host(&self) -> &str {
        self.address
            .rsplit_once(':')
            .filter(|(h, _)| !h.is_empty())
            .map_or(&*self.address, |(h, _)| h)
    }

    /// `redis://[USER[:PASSWORD]@]HOST[:PORT][?KEY=VALUE&...]`, or `rediss://` for TLS; the
    /// port defaults to 6379, and the user, the password and every value are
    /// percent-decoded. Query parameters:
    ///
    /// | parameter | meaning |
    /// |---|---|
    /// | `prefix`, `connect_timeout_ms`, `timeout_ms`, `max_connections`, `db` | as the setters of the same names |
    /// | `user=NAME` | the ACL user (or `USER@` in the address) |
    /// | `password_env=VAR` | the password is the value of the environment variable `VAR`, read now |
    /// | `password_file=PATH` | the password is the file's contents (trailing line break removed, at most [`MAX_PASSWORD_BYTES`]), read now |
    /// | `ca_file=PATH` | `rediss://` only: also trust the CA certificates in this PEM file |
    /// | `system_roots=false` | `rediss://` only: trust only `ca_file`, not the system's trust store |
    /// | `client_cert=PATH`, `client_key=PATH` | `rediss://` only, together: present this certificate (mTLS) |
    ///
    /// A password in the address (`redis://:PASSWORD@HOST`) is accepted, but it is then in
    /// the command line of every process given it: prefer `password_env` or `password_file`.
    /// Error messages show the address with everything before its `@` hidden.
    ///
    /// # Errors
    /// [`StateErrorKind::Unavailable`]: not of that form, an unknown or repeated parameter,
    /// a TLS parameter on `redis://`, a password given twice, a user without a password, or a
    /// password variable or file that cannot be read (named, its value never shown).
    ///
    /// # Example
    /// ```
    /// use jsongate::state::RedisConfig;
    /// assert_eq!(RedisConfig::parse("redis://127.0.0.1:6379")?.get_prefix(), "jsongate:");
    /// let c = RedisConfig::parse("rediss://redis.internal?ca_file=/etc/redis/ca.pem&system_roots=false&db=1")?;
    /// assert_eq!((c.get_address(), c.get_db()), ("redis.internal:6379", 1));
    /// let e = RedisConfig::parse("redis://gate:hunter2@h:6379?colour=blue").unwrap_err();
    /// assert!(e.message().contains("unknown parameter 'colour'") && !e.message().contains("hunter2"));
    /// assert!(RedisConfig::parse("http://127.0.0.1:6379").is_err());
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    pub fn parse(spec: &str) -> Result<RedisConfig, StateError> {
        let bad = |why: &str| {
            StateError::new(
                StateErrorKind::Unavailable,
                format!("redis address '{}': {why}", redact(spec)),
            )
        };
        let (tls, rest) = if let Some(rest) = spec.strip_prefix("rediss://") {
            (true, rest)
        } else if let Some(rest) = spec.strip_prefix("redis://") {
            (false, rest)
        } else {
            return Err(bad("must start with redis:// or rediss://"));
        };
        let (authority, query) = rest.split_once('?').unwrap_or((rest, ""));
        let authority = authority.strip_suffix('/').unwrap_or(authority);
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        if hostport.contains('/') {
            return Err(bad("has a path (the database is the db parameter)"));
        }
        let address =
            host_port(hostport).ok_or_else(|| bad("needs HOST or HOST:PORT (a port 1-65535)"))?;
        let mut c = RedisConfig::new(address);
        if let Some(u) = userinfo {
            let (user, password) = u.split_once(':').map_or((u, ""), |(a, b)| (a, b));
            if !user.is_empty() {
                c.user =
                    Some(decode(user).ok_or_else(|| bad("the user is not percent-encoded UTF-8"))?);
            }
            if !password.is_empty() {
                let value = decode(password)
                    .ok_or_else(|| bad("the password is not percent-encoded UTF-8"))?;
                c.password = Some(Secret {
                    value,
                    from: "the address".into(),
                });
            }
        }
        let mut seen: Vec<&str> = Vec::new();
        let (mut ca, mut cert, mut key, mut roots) = (None, None, None, true);
        for kv in query.split('&').filter(|s| !s.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| bad("query needs KEY=VALUE"))?;
            if seen.contains(&k) {
                return Err(bad(&format!("parameter '{k}' is given twice")));
            }
            seen.push(k);
            let v = decode(v).ok_or_else(|| bad(&format!("{k} is not percent-encoded UTF-8")))?;
            let ms = || {
                v.parse::<u64>()
                    .ok()
                    .filter(|&n| n > 0)
                    .map(Duration::from_millis)
                    .ok_or_else(|| bad(&format!("{k} must be a positive integer")))
            };
            if !tls && matches!(k, "ca_file" | "client_cert" | "client_key" | "system_roots") {
                return Err(bad(&format!("{k} needs TLS (rediss://)")));
            }
            match k {
                "prefix" => c.prefix = v,
                "connect_timeout_ms" => c.connect_timeout = ms()?,
                "timeout_ms" => c.timeout = ms()?,
                "max_connections" => {
                    c.max_connections = v
                        .parse::<usize>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| bad("max_connections must be a positive integer"))?;
                }
                "db" => {
                    c.db = v.parse().map_err(|_| bad("db must be a database number"))?;
                }
                "user" if c.user.is_some() => return Err(bad("the user is given twice")),
                "user" if v.is_empty() => return Err(bad("user is empty")),
                "user" => c.user = Some(v),
                "password_env" | "password_file" if c.password.is_some() => {
                    return Err(bad("the password is given twice"));
                }
                "password_env" => {
                    c.password = Some(Secret::from_env(&v).map_err(|e| bad(e.message()))?);
                }
                "password_file" => {
                    c.password = Some(Secret::from_file(&v).map_err(|e| bad(e.message()))?);
                }
                "ca_file" => ca = Some(PathBuf::from(v)),
                "client_cert" => cert = Some(PathBuf::from(v)),
                "client_key" => key = Some(PathBuf::from(v)),
                "system_roots" => {
                    roots = match v.as_str() {
                        "true" => true,
                        "false" => false,
                        _ => return Err(bad("system_roots must be true or false")),
                    };
                }
                _ => return Err(bad(&format!("unknown parameter '{k}'"))),
            }
        }
        if tls {
            let mut o = ClientTlsOptions::new().system_roots(roots);
            if let Some(ca) = ca {
                o = o.ca_file(ca);
            }
            match (cert, key) {
                (Some(cert), Some(key)) => o = o.client_cert(cert, key),
                (None, None) => {}
                _ => return Err(bad("client_cert and client_key go together")),
            }
            c.tls = Some(o);
        }
        if let (Some(user), None) = (&c.user, &c.password) {
            return Err(bad(&format!(
                "user '{user}' needs a password (password_env=VAR, password_file=PATH or USER:PASSWORD@)"
            )));
        }
        Ok(c)
    }
}

/// `spec` with everything between `://` and the last `@` hidden (a password may hold any
/// character, so the last `@` anywhere is taken).
fn redact(spec: &str) -> String {
    let start = spec.find("://").map_or(0, |i| i + 3);
    match spec[start..].rfind('@') {
        Some(at) => format!("{}***{}", &spec[..start], &spec[start + at..]),
        None => spec.to_owned(),
    }
}

/// `HOST[:PORT]` as `HOST:PORT` (an IPv6 literal in brackets), the port 6379 by default.
fn host_port(s: &str) -> Option<String> {
    let (host, port) = if let Some(v6) = s.strip_prefix('[') {
        let (inner, after) = v6.split_once(']')?;
        if inner.is_empty() {
            return None;
        }
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        (&s[..inner.len() + 2], port)
    } else {
        match s.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    if host.is_empty() || (host.contains([':', ' ', '@', '?', '#']) && !host.starts_with('[')) {
        return None;
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) => p.parse::<u16>().ok().filter(|&p| p > 0)?,
    };
    Some(format!("{host}:{port}"))
}

/// Percent-decoding (`%XX`; `+` stays `+`), to UTF-8.
fn decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let hex = |b: u8| char::from(b).to_digit(16);
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hi = hex(*b.get(i + 1)?)?;
            let lo = hex(*b.get(i + 2)?)?;
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
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
        for (spec, address) in [
            ("redis://host", "host:6379"),
            ("redis://host/", "host:6379"),
            ("rediss://host", "host:6379"),
            ("rediss://host:6380", "host:6380"),
            ("redis://[::1]", "[::1]:6379"),
            ("rediss://[::1]:7000?system_roots=true", "[::1]:7000"),
        ] {
            let c = RedisConfig::parse(spec).unwrap();
            assert_eq!(c.get_address(), address, "{spec}");
            assert_eq!(c.tls.is_some(), spec.starts_with("rediss"), "{spec}");
        }
        for bad in [
            "http://x:1",
            "redis://",
            "redis://h:0",
            "redis://h:65536",
            "redis://h:port",
            "redis://::1",
            "redis://h:1/0",
            "redis://h:1?timeout_ms=0",
            "redis://h:1?x=1",
            "redis://h:1?prefix=a&prefix=b",
            "redis://h:1?db=one",
            "redis://h:1?ca_file=ca.pem",
            "redis://h:1?system_roots=false",
            "rediss://h:1?system_roots=no",
            "rediss://h:1?client_cert=c.pem",
            "rediss://h:1?client_key=k.pem",
            "redis://gate@h:1",
            "redis://h:1?user=gate",
            "redis://gate:pw@h:1?user=other",
            "redis://:pw@h:1?password_env=PATH",
            "redis://:%zz@h:1",
            "redis://:%C3@h:1",
            "redis://h:1?prefix=%2",
        ] {
            let e = RedisConfig::parse(bad).unwrap_err();
            assert_eq!(e.kind(), StateErrorKind::Unavailable, "{bad}");
        }
        assert!(RedisConfig::parse("redis://h:1?x=1")
            .unwrap_err()
            .message()
            .contains("unknown parameter 'x'"));
    }

    #[test]
    fn credentials_in_the_address_are_percent_decoded() {
        let c = RedisConfig::parse("redis://gate:p%40ss%3Aw%2Frd%25+@h:1").unwrap();
        assert_eq!(c.get_user(), Some("gate"));
        assert_eq!(c.password, Some(Secret::new("p@ss:w/rd%+")));
        let c = RedisConfig::parse("redis://:hunter2@h").unwrap();
        assert_eq!((c.get_user(), c.get_address()), (None, "h:6379"));
        assert_eq!(c.password, Some(Secret::new("hunter2")));
        // An unencoded `@` in the password: the host is after the last one.
        let c = RedisConfig::parse("redis://g%C3%A9:a@b@h:2").unwrap();
        assert_eq!((c.get_user(), c.get_address()), (Some("gé"), "h:2"));
        assert_eq!(c.password, Some(Secret::new("a@b")));
        // The user as a parameter, the password from a file.
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("pw");
        std::fs::write(&f, "from-file\r\n").unwrap();
        let c = RedisConfig::parse(&format!(
            "redis://h:1?user=gate&password_file={}&db=2&prefix=a%26b",
            f.display()
        ))
        .unwrap();
        assert_eq!(
            c,
            RedisConfig::new("h:1")
                .user("gate")
                .password(Secret::new("from-file"))
                .db(2)
                .prefix("a&b")
        );
    }

    #[test]
    fn password_variables_and_files_are_named_never_shown() {
        let e = RedisConfig::parse("redis://h:1?password_env=JSONGATE_TEST_SURELY_UNSET_VAR")
            .unwrap_err();
        assert_eq!(e.kind(), StateErrorKind::Unavailable);
        assert!(
            e.message()
                .contains("environment variable 'JSONGATE_TEST_SURELY_UNSET_VAR' is not set"),
            "{e}"
        );
        assert!(Secret::from_env("A=B")
            .unwrap_err()
            .message()
            .contains("is not a variable name"));
        // A variable every test environment has: its value is the password.
        let path = std::env::var("PATH").unwrap();
        let c = RedisConfig::parse("redis://h:1?password_env=PATH").unwrap();
        assert_eq!(c.password, Some(Secret::new(path.clone())));
        assert!(!format!("{c:?}").contains(&path));

        let d = tempfile::tempdir().unwrap();
        let missing = d.path().join("missing");
        let e = Secret::from_file(&missing).unwrap_err();
        assert!(e.message().contains(&missing.display().to_string()), "{e}");
        let big = d.path().join("big");
        std::fs::write(&big, "x".repeat(MAX_PASSWORD_BYTES as usize + 1)).unwrap();
        let e = RedisConfig::parse(&format!("redis://h:1?password_file={}", big.display()))
            .unwrap_err();
        assert!(e.message().contains("is larger than 4096 bytes"), "{e}");
        assert!(!e.message().contains("xxxx"), "{e}");
        let exact = d.path().join("exact");
        std::fs::write(&exact, "y".repeat(MAX_PASSWORD_BYTES as usize)).unwrap();
        assert!(Secret::from_file(&exact).is_ok());
        let empty = d.path().join("empty");
        std::fs::write(&empty, "\n").unwrap();
        assert!(Secret::from_file(&empty)
            .unwrap_err()
            .message()
            .contains("is empty"));
        let latin1 = d.path().join("latin1");
        std::fs::write(&latin1, b"caf\xe9").unwrap();
        assert!(Secret::from_file(&latin1)
            .unwrap_err()
            .message()
            .contains("not UTF-8"));
    }

    #[test]
    fn the_password_is_never_in_debug_output_or_error_messages() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("pw");
        std::fs::write(&f, "hunter2-in-a-file\n").unwrap();
        let configs = [
            RedisConfig::parse("redis://gate:hunter2-inline@h:1").unwrap(),
            RedisConfig::parse(&format!("rediss://h:1?password_file={}", f.display())).unwrap(),
            RedisConfig::new("h:1").password(Secret::new("hunter2-given")),
        ];
        for c in configs {
            for text in [format!("{c:?}"), format!("{c:#?}")] {
                assert!(!text.contains("hunter2"), "{text}");
            }
            assert!(format!("{c:?}").contains("redacted"));
        }
        assert!(format!("{:?}", RedisConfig::parse("redis://:x@h").unwrap())
            .contains("Secret(the address, redacted)"));
        // Parse errors show the address with its credentials hidden, whatever they hold.
        for spec in [
            "redis://gate:hunter2@h:1?x=1",
            "redis://:hunter2@h:0",
            "redis://:hun?ter2@h:1",
            "redis://:hun#ter2@h:1?x=1",
            "redis://:hunter2@@h:1?timeout_ms=x",
            "redis://:hunter2%zz@h:1",
        ] {
            let e = RedisConfig::parse(spec).unwrap_err();
            assert!(!e.message().contains("hunter2"), "{e}");
            assert!(!e.message().contains("ter2"), "{e}");
            assert!(e.message().contains("redis://***@"), "{e}");
        }
    }

    #[test]
    fn rediss_reads_its_tls_parameters() {
        let c = RedisConfig::parse("rediss://cache.internal").unwrap();
        assert_eq!(c.get_address(), "cache.internal:6379");
        assert_eq!(c.host(), "cache.internal");
        assert_eq!(c.get_tls(), Some(&ClientTlsOptions::new()));
        let c = RedisConfig::parse(
            "rediss://[::1]:7000?ca_file=ca.pem&system_roots=false&client_cert=c.pem&client_key=k%20.pem",
        )
        .unwrap();
        assert_eq!(c.host(), "[::1]");
        assert_eq!(
            c.get_tls(),
            Some(
                &ClientTlsOptions::new()
                    .ca_file("ca.pem")
                    .system_roots(false)
                    .client_cert("c.pem", "k .pem")
            )
        );
    }
}
