//! Shared state: rate-limit windows, breaker counts, deadlines, plan cursors and small
//! records (approvals), behind one interface with three backends.
//!
//! - [`MemoryStore`]: one process (the default).
//! - [`FileStore`] (unix): one host; every operation takes an exclusive lock on a lock file
//!   beside the state file, reads it, and rewrites it crash-safely (temporary file, `fsync`,
//!   rename, `fsync` of the directory), so concurrent processes see one sequence of
//!   operations and an interrupted write leaves the previous state whole.
//! - [`RedisStore`] (feature `redis`): several hosts; every operation is one Lua script, so
//!   it is atomic on the server, and its clock is the server's (`TIME`).
//!
//! Every operation is atomic in every backend: a window admits at most its limit, whoever
//! asks, and a single-use record is taken once. Times are milliseconds. The memory and file
//! backends use the `now_ms` the caller passes (the injectable clock); the Redis backend
//! ignores it and uses the server's clock, and every time it returns (window ends, breaker
//! deadlines) is on that clock, so callers compare times only through the store.
//!
//! What a caller does when the store fails is its own choice, made explicit by
//! [`OnStateError`] (deny by default): this module never turns an error into a pass.
//!
//! This module depends on the base and select layers only.

mod map;
mod memory;

#[cfg(unix)]
mod file;
#[cfg(feature = "redis")]
mod redis;

use std::fmt;

pub use memory::MemoryStore;

#[cfg(unix)]
pub use file::{FileStore, FILE_FORMAT};
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub use redis::{RedisConfig, RedisStore, Secret, MAX_PASSWORD_BYTES};

/// What a window said about one event.
///
/// # Example
/// ```
/// use jsongate::state::{MemoryStore, Store};
/// let s = MemoryStore::new();
/// let first = s.window_take("calls:search", 1, 60_000, 1_000)?;
/// let second = s.window_take("calls:search", 1, 60_000, 2_000)?;
/// assert!(first.admitted && !second.admitted);
/// assert_eq!(second.frees_at_ms, 61_000); // when the first call leaves the window
/// # Ok::<(), jsongate::state::StateError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Take {
    /// The event was admitted (and recorded).
    pub admitted: bool,
    /// The store's clock when it decided.
    pub now_ms: u64,
    /// When refused: when the oldest event leaves the window (the store's clock); otherwise
    /// equal to `now_ms`.
    pub frees_at_ms: u64,
}

/// Why the store could not answer.
///
/// # Example
/// ```
/// use jsongate::state::{open, StateErrorKind};
/// let err = open("redis://host:port").err().unwrap();
/// assert_eq!(err.kind(), StateErrorKind::Unavailable);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StateErrorKind {
    /// The backend could not be reached, timed out or answered with an error.
    Unavailable,
    /// The stored state is not one this build reads (another format, truncated, foreign).
    Corrupt,
    /// The state could not be read or written locally (file system).
    Io,
}

/// A store operation that failed; never a pass.
///
/// # Example
/// ```
/// use jsongate::state::{StateError, StateErrorKind};
/// let e = StateError::new(StateErrorKind::Io, "state file 'x': permission denied");
/// assert_eq!((e.kind(), e.message()), (StateErrorKind::Io, "state file 'x': permission denied"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateError(Box<(StateErrorKind, String)>);

impl StateError {
    /// An error of `kind` with `message`.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{StateError, StateErrorKind};
    /// assert_eq!(StateError::new(StateErrorKind::Corrupt, "bad slot").kind(), StateErrorKind::Corrupt);
    /// ```
    pub fn new(kind: StateErrorKind, message: impl Into<String>) -> StateError {
        StateError(Box::new((kind, message.into())))
    }

    /// What went wrong.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{StateError, StateErrorKind};
    /// assert_eq!(StateError::new(StateErrorKind::Unavailable, "timeout").kind(), StateErrorKind::Unavailable);
    /// ```
    pub fn kind(&self) -> StateErrorKind {
        self.0 .0
    }

    /// The message for the operator.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{StateError, StateErrorKind};
    /// assert_eq!(StateError::new(StateErrorKind::Unavailable, "timeout").message(), "timeout");
    /// ```
    pub fn message(&self) -> &str {
        &self.0 .1
    }
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0 .1)
    }
}

impl std::error::Error for StateError {}

/// What a decision does when the store fails: `deny` (the default) or `allow`. Either way
/// the failure is recorded in the decision and audited.
///
/// # Example
/// ```
/// use jsongate::action::RateState;
/// use jsongate::state::OnStateError;
/// // A deployment that prefers availability: a failed store skips the rate check.
/// let rate = RateState::new().on_state_error(OnStateError::Allow);
/// assert_eq!(rate.get_on_state_error(), OnStateError::Allow);
/// assert_eq!(OnStateError::default(), OnStateError::Deny);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnStateError {
    /// The call is denied (`state_unavailable`).
    #[default]
    Deny,
    /// The check that needed the store is skipped (recorded as a state error).
    Allow,
}

impl OnStateError {
    /// `deny` or `allow`.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::OnStateError;
    /// assert_eq!(OnStateError::parse("allow"), Some(OnStateError::Allow));
    /// assert_eq!(OnStateError::parse("maybe"), None);
    /// ```
    pub fn parse(s: &str) -> Option<OnStateError> {
        match s {
            "deny" => Some(OnStateError::Deny),
            "allow" => Some(OnStateError::Allow),
            _ => None,
        }
    }

    /// `"deny"` or `"allow"`.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::OnStateError;
    /// assert_eq!(OnStateError::Deny.as_str(), "deny");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            OnStateError::Deny => "deny",
            OnStateError::Allow => "allow",
        }
    }
}

/// The shared-state interface. Every method is one atomic operation on the backend; keys
/// are the caller's (a backend may add a prefix). Implementations are shared between
/// threads.
///
/// # Example
/// ```
/// use std::sync::Arc;
/// use jsongate::state::{open, Store};
/// let store: Arc<dyn Store> = open("memory")?;
/// assert!(store.put_new("approval:1", "pending", 60_000, 0)?);
/// assert!(!store.put_new("approval:1", "other", 60_000, 0)?); // one writer wins
/// assert_eq!(store.take("approval:1", 1)?.as_deref(), Some("pending"));
/// assert_eq!(store.get("approval:1", 2)?, None); // single use
/// # Ok::<(), jsongate::state::StateError>(())
/// ```
pub trait Store: Send + Sync {
    /// A sliding-window log: admits and records one event for `key` when fewer than
    /// `limit` events lie within the last `window_ms`; otherwise refuses it and records
    /// nothing. The log keeps at most `limit` events and expires with its window.
    ///
    /// # Errors
    /// The backend failed; nothing may be assumed about the event.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{MemoryStore, Store};
    /// let s = MemoryStore::new();
    /// assert!(s.window_take("rate:search", 2, 1_000, 0)?.admitted);
    /// assert!(s.window_take("rate:search", 2, 1_000, 100)?.admitted);
    /// let t = s.window_take("rate:search", 2, 1_000, 200)?;
    /// assert!(!t.admitted);
    /// assert_eq!(t.frees_at_ms, 1_000); // when the first event leaves the window
    /// assert!(s.window_take("rate:search", 2, 1_000, 1_000)?.admitted);
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    fn window_take(
        &self,
        key: &str,
        limit: u64,
        window_ms: u64,
        now_ms: u64,
    ) -> Result<Take, StateError>;

    /// A breaker count: records one event for `key`; when `threshold` events lie within
    /// `window_ms` and the breaker is not open, opens it for `cooldown_ms` (the deadline of
    /// `key` is raised) and clears the count. Returns the deadline when this event opened
    /// it.
    ///
    /// # Errors
    /// The backend failed.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{MemoryStore, Store};
    /// let s = MemoryStore::new();
    /// assert_eq!(s.trip("breaker:t", 2, 10_000, 5_000, 0)?, None);
    /// assert_eq!(s.trip("breaker:t", 2, 10_000, 5_000, 100)?, Some(5_100)); // opened until 5 100
    /// assert_eq!(s.deadline("breaker:t:open", 200)?, Some(5_100));
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    fn trip(
        &self,
        key: &str,
        threshold: u64,
        window_ms: u64,
        cooldown_ms: u64,
        now_ms: u64,
    ) -> Result<Option<u64>, StateError>;

    /// Raises `key`'s deadline to `until_ms` (never lowers it); the deadline expires at
    /// itself. Returns the deadline in force.
    ///
    /// # Errors
    /// The backend failed.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{MemoryStore, Store};
    /// let s = MemoryStore::new();
    /// assert_eq!(s.extend_deadline("read_only", 5_000, 0)?, 5_000);
    /// assert_eq!(s.extend_deadline("read_only", 3_000, 1)?, 5_000); // never lowered
    /// assert_eq!(s.extend_deadline("read_only", 9_000, 2)?, 9_000);
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    fn extend_deadline(&self, key: &str, until_ms: u64, now_ms: u64) -> Result<u64, StateError>;

    /// `key`'s deadline when it is still ahead (the store's clock).
    ///
    /// # Errors
    /// The backend failed.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{MemoryStore, Store};
    /// let s = MemoryStore::new();
    /// assert_eq!(s.deadline("read_only", 0)?, None);
    /// s.extend_deadline("read_only", 5_000, 0)?;
    /// assert_eq!(s.deadline("read_only", 4_999)?, Some(5_000));
    /// assert_eq!(s.deadline("read_only", 5_000)?, None); // it expires at itself
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    fn deadline(&self, key: &str, now_ms: u64) -> Result<Option<u64>, StateError>;

    /// A cursor that only moves forward: sets `key` to `to` unless it is already past it,
    /// and says whether it was not (a cursor at `to` stays and is `true`). The cursor
    /// expires `ttl_ms` after its last move.
    ///
    /// # Errors
    /// The backend failed.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{MemoryStore, Store};
    /// let s = MemoryStore::new();
    /// assert!(s.advance("plan:t:cursor", 1, 60_000, 0)?);
    /// assert!(s.advance("plan:t:cursor", 1, 60_000, 1)?); // staying put is fine
    /// assert!(!s.advance("plan:t:cursor", 0, 60_000, 2)?); // going back is not
    /// assert!(s.advance("plan:t:cursor", 0, 60_000, 60_002)?); // expired: a fresh cursor
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    fn advance(&self, key: &str, to: u64, ttl_ms: u64, now_ms: u64) -> Result<bool, StateError>;

    /// Stores a small record unless `key` holds one; returns whether it was stored. It
    /// expires after `ttl_ms`.
    ///
    /// # Errors
    /// The backend failed.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{MemoryStore, Store};
    /// let s = MemoryStore::new();
    /// assert!(s.put_new("pin", "a", 1_000, 0)?);
    /// assert!(!s.put_new("pin", "b", 1_000, 500)?); // the first writer wins
    /// assert!(s.put_new("pin", "b", 1_000, 1_000)?); // after it expired
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    fn put_new(&self, key: &str, value: &str, ttl_ms: u64, now_ms: u64)
        -> Result<bool, StateError>;

    /// The record at `key`, if any (it stays).
    ///
    /// # Errors
    /// The backend failed.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{MemoryStore, Store};
    /// let s = MemoryStore::new();
    /// s.put_new("pin", "sha256:ab", 1_000, 0)?;
    /// assert_eq!(s.get("pin", 1)?.as_deref(), Some("sha256:ab"));
    /// assert_eq!(s.get("pin", 2)?.as_deref(), Some("sha256:ab")); // it stays
    /// assert_eq!(s.get("pin", 1_000)?, None);
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    fn get(&self, key: &str, now_ms: u64) -> Result<Option<String>, StateError>;

    /// Takes the record at `key` (single use: one caller gets it, it is gone for the
    /// others).
    ///
    /// # Errors
    /// The backend failed.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{MemoryStore, Store};
    /// let s = MemoryStore::new();
    /// s.put_new("answer:1", "granted", 1_000, 0)?;
    /// assert_eq!(s.take("answer:1", 1)?.as_deref(), Some("granted"));
    /// assert_eq!(s.take("answer:1", 2)?, None); // one caller gets it
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    fn take(&self, key: &str, now_ms: u64) -> Result<Option<String>, StateError>;

    /// A short description for audit lines (`memory`, `file:PATH`, `redis:HOST:PORT`).
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{open, FileStore, MemoryStore, Store};
    /// assert_eq!(MemoryStore::new().describe(), "memory");
    /// assert_eq!(FileStore::new(std::path::Path::new("/var/lib/jsongate/state")).describe(), "file:/var/lib/jsongate/state");
    /// assert_eq!(open("memory")?.describe(), "memory");
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    fn describe(&self) -> String;
}

/// The store named by `spec`: `memory`, a file path (`file:PATH` or a plain path) or, with
/// feature `redis`, a `redis://` or `rediss://` (TLS) address ([`RedisConfig::parse`]).
///
/// # Errors
/// A Redis address that does not parse, a password variable or file that cannot be read, a
/// TLS configuration that cannot be built (a CA or key file), or a backend this build lacks.
///
/// # Example
/// ```
/// use jsongate::state::open;
/// let dir = tempfile::tempdir().unwrap();
/// let file = open(&format!("file:{}", dir.path().join("state").display()))?;
/// assert!(file.describe().starts_with("file:"));
/// assert_eq!(open("memory")?.describe(), "memory");
/// # Ok::<(), jsongate::state::StateError>(())
/// ```
pub fn open(spec: &str) -> Result<std::sync::Arc<dyn Store>, StateError> {
    if spec == "memory" {
        return Ok(std::sync::Arc::new(MemoryStore::new()));
    }
    if spec.starts_with("redis://") || spec.starts_with("rediss://") {
        #[cfg(feature = "redis")]
        return Ok(std::sync::Arc::new(RedisStore::try_new(
            RedisConfig::parse(spec)?,
        )?));
        #[cfg(not(feature = "redis"))]
        return Err(StateError::new(
            StateErrorKind::Unavailable,
            "this build has no Redis backend (cargo feature 'redis')",
        ));
    }
    let path = spec.strip_prefix("file:").unwrap_or(spec);
    #[cfg(unix)]
    return Ok(std::sync::Arc::new(FileStore::new(std::path::Path::new(
        path,
    ))));
    #[cfg(not(unix))]
    Err(StateError::new(
        StateErrorKind::Io,
        format!("state file '{path}': file locking needs a unix system"),
    ))
}

// Stores are shared across threads.
const _: () = {
    const fn assert_send_sync<T: Send + Sync + ?Sized>() {}
    assert_send_sync::<dyn Store>();
};
