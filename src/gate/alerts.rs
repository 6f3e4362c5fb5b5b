//! Alerts and the circuit breaker: what happens around a block besides the failure envelope.
//!
//! An alert is raised for every block whose audit kind is listed in `on`: one JSON line
//! appended to a file and/or a hook command run in argv form (no shell) with the alert line
//! on its standard input and a bounded time. The breaker counts blocks per key (the tool)
//! and opens after `max_blocks` within `window_seconds`; while it is open the gate fails fast
//! (`UPSTREAM_UNAVAILABLE`, not retryable, audit kind `breaker_open`) without reading the
//! upstream, until `cooldown_seconds` have passed. Breaker state sits behind
//! [`BreakerState`]; [`StoreBreaker`] keeps it in a shared-state [`Store`]: in memory, in a
//! state file (`state_file`, safe for concurrent processes) or in Redis, so replicas that
//! share a store share their breakers.
//!
//! While any breaker is open, a relay with a tool-call policy falls back to read-only: only
//! tools the policy marks `read_only` are forwarded.
//!
//! Delivery failures (a file that stops being writable, a hook that fails or hangs) are
//! reported to the caller and never change a decision: a block stays a block.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::audit::AuditRecord;
use super::contract::err;
use crate::config::{self, Shipped};
use crate::json::{ConfigError, ObjectWriter, Value};
use crate::state::{MemoryStore, Store};

/// The JSON Schema of alert files (`jsongate alerts schema`).
///
/// # Example
/// ```
/// use jsongate::gate::{Alerts, ALERTS_SCHEMA};
/// use jsongate::{Limits, Schema, Validator};
/// let schema = Schema::compile(ALERTS_SCHEMA.as_bytes())?;
/// let file = br#"{"alerts":1,"on":["duplicate_name"],"breaker":{"max_blocks":5,"window_seconds":60,"cooldown_seconds":300}}"#;
/// assert!(Validator::new(&schema).validate_slice(file, Limits::new()).is_ok());
/// assert!(Alerts::from_slice(file, std::path::Path::new(".")).is_ok());
/// // `on` lists audit kinds; an unknown one is refused by the schema and so by the loader.
/// let typo = br#"{"alerts":1,"on":["duplicate_names"]}"#;
/// assert!(Validator::new(&schema).validate_slice(typo, Limits::new()).is_err());
/// assert!(Alerts::from_slice(typo, std::path::Path::new(".")).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const ALERTS_SCHEMA: &str = include_str!("alerts.schema.json");

/// When the breaker opens and for how long.
///
/// # Example
/// ```
/// use jsongate::gate::{BreakerPolicy, BreakerState, StoreBreaker};
/// let policy = BreakerPolicy { max_blocks: 2, window_ms: 60_000, cooldown_ms: 30_000 };
/// let state = StoreBreaker::memory();
/// assert!(!state.record_block("search", 0, &policy)?);
/// assert!(state.record_block("search", 1_000, &policy)?); // the second block within the window opens it
/// assert!(state.is_open("search", 30_999)?);
/// assert!(!state.is_open("search", 31_000)?); // closed again after the cooldown
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BreakerPolicy {
    /// Blocks within the window that open the breaker.
    pub max_blocks: u32,
    /// The window, in milliseconds.
    pub window_ms: u64,
    /// How long the breaker stays open, in milliseconds.
    pub cooldown_ms: u64,
}

/// Where breaker state lives. Implementations must be safe to share between threads.
///
/// # Example
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use jsongate::gate::{BreakerPolicy, BreakerState};
/// /// One breaker for every key that never closes once open (a test double).
/// struct Latch(AtomicU32);
/// impl BreakerState for Latch {
///     fn record_block(&self, _key: &str, _now_ms: u64, p: &BreakerPolicy) -> Result<bool, String> {
///         Ok(self.0.fetch_add(1, Ordering::SeqCst) + 1 == p.max_blocks)
///     }
///     fn is_open(&self, _key: &str, now_ms: u64) -> Result<bool, String> {
///         self.any_open(now_ms)
///     }
///     fn any_open(&self, _now_ms: u64) -> Result<bool, String> {
///         Ok(self.0.load(Ordering::SeqCst) > 0)
///     }
/// }
/// let p = BreakerPolicy { max_blocks: 1, window_ms: 1, cooldown_ms: 1 };
/// let latch = Latch(AtomicU32::new(0));
/// assert!(!latch.is_open("t", 0)?);
/// assert!(latch.record_block("t", 0, &p)?);
/// assert!(latch.is_open("other", 1_000_000)?);
/// # Ok::<(), String>(())
/// ```
pub trait BreakerState: Send + Sync {
    /// Records one block for `key` at `now_ms`; returns whether this block opened the
    /// breaker.
    ///
    /// # Errors
    /// The state could not be read or written (the caller reports it; the block stands).
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{BreakerPolicy, BreakerState, StoreBreaker};
    /// let p = BreakerPolicy { max_blocks: 3, window_ms: 10_000, cooldown_ms: 5_000 };
    /// let b = StoreBreaker::memory();
    /// let opened: Vec<bool> = (0..3).map(|t| b.record_block("fetch", t, &p)).collect::<Result<_, _>>()?;
    /// assert_eq!(opened, [false, false, true]); // only the block that opens it says so
    /// # Ok::<(), String>(())
    /// ```
    fn record_block(&self, key: &str, now_ms: u64, policy: &BreakerPolicy) -> Result<bool, String>;
    /// Whether the breaker for `key` is open at `now_ms`.
    ///
    /// # Errors
    /// The state could not be read. Callers treat an unreadable state as open (fail
    /// closed).
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{BreakerPolicy, BreakerState, StoreBreaker};
    /// let p = BreakerPolicy { max_blocks: 1, window_ms: 10_000, cooldown_ms: 5_000 };
    /// let b = StoreBreaker::memory();
    /// b.record_block("fetch", 0, &p)?;
    /// assert!(b.is_open("fetch", 4_999)?);
    /// assert!(!b.is_open("search", 0)?); // each key has its own breaker
    /// # Ok::<(), String>(())
    /// ```
    fn is_open(&self, key: &str, now_ms: u64) -> Result<bool, String>;
    /// Whether any breaker is open at `now_ms` (the action boundary's read-only fallback).
    ///
    /// # Errors
    /// As [`is_open`](Self::is_open).
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{BreakerPolicy, BreakerState, StoreBreaker};
    /// let p = BreakerPolicy { max_blocks: 1, window_ms: 10_000, cooldown_ms: 5_000 };
    /// let b = StoreBreaker::memory();
    /// assert!(!b.any_open(0)?);
    /// b.record_block("fetch", 0, &p)?;
    /// assert!(b.any_open(1)? && !b.any_open(5_000)?);
    /// # Ok::<(), String>(())
    /// ```
    fn any_open(&self, now_ms: u64) -> Result<bool, String>;
}

/// Breaker state in a shared-state [`Store`]: in memory (one process), in a state file
/// (one host, any number of processes) or in Redis (several hosts). Each block is one
/// atomic [`Store::trip`] on `breaker:KEY`; a breaker that opens also raises the
/// `breaker_any` deadline, which [`BreakerState::any_open`] reads.
///
/// # Example
/// ```
/// use std::sync::Arc;
/// use jsongate::gate::{BreakerPolicy, BreakerState, StoreBreaker};
/// use jsongate::state::MemoryStore;
/// // Two gates sharing one store share their breakers (as replicas sharing Redis would).
/// let store = Arc::new(MemoryStore::new());
/// let (a, b) = (StoreBreaker::new(store.clone()), StoreBreaker::new(store));
/// let p = BreakerPolicy { max_blocks: 1, window_ms: 60_000, cooldown_ms: 60_000 };
/// assert!(a.record_block("search", 0, &p)?);
/// assert!(b.is_open("search", 1)?);
/// # Ok::<(), String>(())
/// ```
#[derive(Clone)]
pub struct StoreBreaker {
    store: Arc<dyn Store>,
}

impl std::fmt::Debug for StoreBreaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreBreaker")
            .field("store", &self.store.describe())
            .finish()
    }
}

impl StoreBreaker {
    /// Breakers kept in `store`.
    ///
    /// # Example
    /// ```
    /// use std::sync::Arc;
    /// use jsongate::gate::{BreakerState, StoreBreaker};
    /// use jsongate::state::MemoryStore;
    /// let b = StoreBreaker::new(Arc::new(MemoryStore::new()));
    /// assert!(!b.any_open(0)?);
    /// # Ok::<(), String>(())
    /// ```
    pub fn new(store: Arc<dyn Store>) -> StoreBreaker {
        StoreBreaker { store }
    }

    /// Breakers in this process's memory: every breaker closed.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{BreakerState, StoreBreaker};
    /// let b = StoreBreaker::memory();
    /// assert!(!b.is_open("anything", 0)? && !b.any_open(0)?);
    /// # Ok::<(), String>(())
    /// ```
    pub fn memory() -> StoreBreaker {
        StoreBreaker::new(Arc::new(MemoryStore::new()))
    }

    /// Breakers in a state file ([`crate::state::FileStore`]); a missing file is an empty
    /// state.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{BreakerPolicy, BreakerState, StoreBreaker};
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("breakers");
    /// let p = BreakerPolicy { max_blocks: 1, window_ms: 60_000, cooldown_ms: 60_000 };
    /// StoreBreaker::file(&path).record_block("search", 0, &p)?;
    /// // Another process (here: another handle) reading the same file sees the open breaker.
    /// assert!(StoreBreaker::file(&path).is_open("search", 1)?);
    /// # Ok::<(), String>(())
    /// ```
    #[cfg(unix)]
    pub fn file(path: &Path) -> StoreBreaker {
        StoreBreaker::new(Arc::new(crate::state::FileStore::new(path)))
    }
}

const ANY_OPEN: &str = "breaker_any";

impl BreakerState for StoreBreaker {
    fn record_block(&self, key: &str, now: u64, p: &BreakerPolicy) -> Result<bool, String> {
        let key = format!("breaker:{key}");
        let opened = self
            .store
            .trip(
                &key,
                u64::from(p.max_blocks),
                p.window_ms,
                p.cooldown_ms,
                now,
            )
            .map_err(|e| e.to_string())?;
        match opened {
            Some(until) => {
                self.store
                    .extend_deadline(ANY_OPEN, until, now)
                    .map_err(|e| e.to_string())?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn is_open(&self, key: &str, now: u64) -> Result<bool, String> {
        self.store
            .deadline(&format!("breaker:{key}:open"), now)
            .map(|d| d.is_some())
            .map_err(|e| e.to_string())
    }

    fn any_open(&self, now: u64) -> Result<bool, String> {
        self.store
            .deadline(ANY_OPEN, now)
            .map(|d| d.is_some())
            .map_err(|e| e.to_string())
    }
}

/// A hook command: argv (no shell), bounded time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Hook {
    /// The program and its arguments.
    argv: Vec<String>,
    /// How long it may run before it is killed.
    timeout: Duration,
}

/// Alerting and breaking for one gate (or proxy).
///
/// # Example
/// ```
/// use jsongate::gate::{Alerts, Block};
/// let dir = tempfile::tempdir().unwrap();
/// let alerts = Alerts::from_slice(br#"{"alerts":1,"on":["duplicate_name"],"file":"alerts.jsonl"}"#, dir.path())?;
/// let block = Block { key: "t", kind: "duplicate_name", tool: "t", request_id: "r-9",
///     code: Some("INVALID_RESPONSE"), sha256: "ab", time: "2026-01-01T00:00:00Z".into() };
/// let lines = alerts.on_block(&block, 0, true).alerts;
/// assert!(alerts.deliver_all(&lines).is_empty());
/// let written = std::fs::read_to_string(dir.path().join("alerts.jsonl")).unwrap();
/// assert!(written.starts_with(r#"{"time":"2026-01-01T00:00:00Z","alert":"block","key":"t""#), "{written}");
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
pub struct Alerts {
    on: Vec<String>,
    file: Option<Mutex<std::fs::File>>,
    file_path: Option<PathBuf>,
    hook: Option<Hook>,
    breaker: Option<(BreakerPolicy, Box<dyn BreakerState>)>,
}

impl std::fmt::Debug for Alerts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Alerts")
            .field("on", &self.on)
            .field("file", &self.file_path)
            .field("hook", &self.hook)
            .finish_non_exhaustive()
    }
}

static ALERTS: Shipped = Shipped::new("alert file", "the alerts schema", ALERTS_SCHEMA);

/// What a decision made the alerting do.
///
/// # Example
/// ```
/// use jsongate::gate::{Alerts, Block};
/// let alerts = Alerts::from_slice(br#"{"alerts":1,"on":["schema"],
///     "breaker":{"max_blocks":1,"window_seconds":60,"cooldown_seconds":60}}"#, std::path::Path::new("."))?;
/// let block = Block { key: "search", kind: "schema", tool: "search", request_id: "r-1",
///     code: Some("INVALID_RESPONSE"), sha256: "00", time: "2026-01-01T00:00:00Z".into() };
/// let r = alerts.on_block(&block, 0, true);
/// assert!(r.opened && r.failures.is_empty());
/// assert_eq!(r.alerts.len(), 2); // the block's alert, then `breaker_opened`
/// assert!(r.alerts[1].contains(r#""alert":"breaker_opened""#));
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Raised {
    /// Alert lines delivered (or attempted).
    pub alerts: Vec<String>,
    /// Whether this block opened the breaker.
    pub opened: bool,
    /// Delivery or state failures, for the operator's log; the decision stands.
    pub failures: Vec<String>,
}

impl Alerts {
    /// Reads an alert file (checked against [`ALERTS_SCHEMA`]); `file` and `state_file`
    /// paths are relative to `dir`. The alert file is opened now (appended to; created with
    /// mode 0600 on Unix) and the hook's program must exist, so that bad configuration fails
    /// at start.
    ///
    /// # Errors
    /// Invalid JSON, a schema violation (an unknown alert class), an alert file that cannot
    /// be opened or is a symbolic link, or a hook program that does not exist.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::Alerts;
    /// use std::path::Path;
    /// let a = Alerts::from_slice(br#"{"alerts":1,"breaker":{"max_blocks":3,"window_seconds":60,"cooldown_seconds":60}}"#, Path::new("."))?;
    /// assert_eq!(a.any_open(0), Ok(false));
    /// let err = Alerts::from_slice(br#"{"alerts":1,"hook":{"argv":["/no/such/notifier"]}}"#, Path::new(".")).unwrap_err();
    /// assert_eq!(err.pointer(), "/hook/argv/0"); // a hook that cannot run fails at start
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn from_slice(bytes: &[u8], dir: &Path) -> Result<Alerts, ConfigError> {
        let doc = config::load(bytes, &ALERTS)?;
        let strs = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .unwrap_or(&[])
                .iter()
                .filter_map(|x| Some(x.as_str()?.to_owned()))
                .collect()
        };
        let file_path = doc.get("file").and_then(Value::as_str).map(|f| dir.join(f));
        let file = match &file_path {
            None => None,
            Some(p) => Some(Mutex::new(crate::fsx::open_append_private(p).map_err(
                |e| err(format!("alerts: cannot open '{}': {e}", p.display())).at("/file"),
            )?)),
        };
        let hook = match doc.get("hook") {
            None => None,
            Some(h) => {
                let argv = strs(h.get("argv"));
                let program = Path::new(&argv[0]);
                if program.components().count() > 1 && !program.exists() {
                    return Err(err(format!("alerts: hook program '{}' not found", argv[0]))
                        .at("/hook/argv/0"));
                }
                if program.components().count() == 1 && find_in_path(&argv[0]).is_none() {
                    return Err(
                        err(format!("alerts: hook program '{}' not in PATH", argv[0]))
                            .at("/hook/argv/0"),
                    );
                }
                Some(Hook {
                    argv,
                    timeout: Duration::from_millis(
                        h.get("timeout_ms").and_then(Value::as_u64).unwrap_or(2000),
                    ),
                })
            }
        };
        let breaker = doc.get("breaker").map(|b| {
            let n = |k| b.get(k).and_then(Value::as_u64).unwrap_or(0);
            let policy = BreakerPolicy {
                max_blocks: u32::try_from(n("max_blocks")).unwrap_or(u32::MAX),
                window_ms: n("window_seconds").saturating_mul(1000),
                cooldown_ms: n("cooldown_seconds").saturating_mul(1000),
            };
            let state: Box<dyn BreakerState> = match b.get("state_file").and_then(Value::as_str) {
                #[cfg(unix)]
                Some(f) => Box::new(StoreBreaker::file(&dir.join(f))),
                _ => Box::new(StoreBreaker::memory()),
            };
            (policy, state)
        });
        Ok(Alerts {
            on: strs(doc.get("on")),
            file,
            file_path,
            hook,
            breaker,
        })
    }

    /// Reads an alert file from disk (paths in it relative to its directory).
    ///
    /// # Errors
    /// As [`from_slice`](Self::from_slice), or the file cannot be read.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::Alerts;
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(dir.path().join("alerts.json"), br#"{"alerts":1,"file":"out.jsonl"}"#).unwrap();
    /// Alerts::from_file(&dir.path().join("alerts.json"))?;
    /// assert!(dir.path().join("out.jsonl").exists()); // `file` is relative to the alert file's directory
    /// assert!(Alerts::from_file(&dir.path().join("missing.json")).is_err());
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn from_file(path: &Path) -> Result<Alerts, ConfigError> {
        let bytes = ALERTS
            .read(path)
            .map_err(|e| ConfigError::read(format_args!("alerts '{}'", path.display()), &e))?;
        Alerts::from_slice(&bytes, path.parent().unwrap_or(Path::new(".")))
    }

    /// Replaces the breaker's state backend (the policy stays).
    ///
    /// # Example
    /// ```
    /// use std::sync::Arc;
    /// use jsongate::gate::{Alerts, Block, StoreBreaker};
    /// use jsongate::state::MemoryStore;
    /// let shared = Arc::new(MemoryStore::new());
    /// let file = br#"{"alerts":1,"breaker":{"max_blocks":1,"window_seconds":60,"cooldown_seconds":60}}"#;
    /// let load = || Alerts::from_slice(file, std::path::Path::new("."));
    /// let a = load()?.breaker_state(Box::new(StoreBreaker::new(shared.clone())));
    /// let b = load()?.breaker_state(Box::new(StoreBreaker::new(shared)));
    /// let block = Block { key: "t", kind: "schema", tool: "t", request_id: "r", code: None, sha256: "", time: String::new() };
    /// assert!(a.on_block(&block, 0, true).opened);
    /// assert_eq!(b.is_open("t", 1), Ok(true)); // the breakers live in the shared store
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    #[must_use]
    pub fn breaker_state(mut self, state: Box<dyn BreakerState>) -> Alerts {
        if let Some((_, s)) = &mut self.breaker {
            *s = state;
        }
        self
    }

    /// Whether the breaker for `key` is open at `now_ms`. An unreadable state counts as
    /// open: a broken state never lets a response through a breaker that may be open.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{Alerts, Block};
    /// let a = Alerts::from_slice(br#"{"alerts":1,"breaker":{"max_blocks":1,"window_seconds":60,"cooldown_seconds":10}}"#, std::path::Path::new("."))?;
    /// let block = Block { key: "fetch", kind: "schema", tool: "fetch", request_id: "r", code: None, sha256: "", time: String::new() };
    /// a.on_block(&block, 0, true);
    /// assert_eq!((a.is_open("fetch", 9_999), a.is_open("fetch", 10_000)), (Ok(true), Ok(false)));
    /// assert_eq!(Alerts::from_slice(br#"{"alerts":1}"#, std::path::Path::new("."))?.is_open("fetch", 0), Ok(false)); // no breaker
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn is_open(&self, key: &str, now_ms: u64) -> Result<bool, String> {
        match &self.breaker {
            None => Ok(false),
            Some((_, s)) => s.is_open(key, now_ms),
        }
    }

    /// Whether any breaker is open at `now_ms`; an unreadable state counts as open.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{Alerts, Block};
    /// let a = Alerts::from_slice(br#"{"alerts":1,"breaker":{"max_blocks":1,"window_seconds":60,"cooldown_seconds":10}}"#, std::path::Path::new("."))?;
    /// assert_eq!(a.any_open(0), Ok(false));
    /// let block = Block { key: "fetch", kind: "schema", tool: "fetch", request_id: "r", code: None, sha256: "", time: String::new() };
    /// a.on_block(&block, 0, true);
    /// assert_eq!(a.any_open(5_000), Ok(true)); // a relay with a policy is read-only now
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn any_open(&self, now_ms: u64) -> Result<bool, String> {
        match &self.breaker {
            None => Ok(false),
            Some((_, s)) => s.any_open(now_ms),
        }
    }

    /// Reacts to one decision: a block counts toward `key`'s breaker, a block of a listed
    /// kind raises an alert, a breaker that opens raises one too (`breaker_opened`). Alerts
    /// are delivered before it returns.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{Alerts, Context, Contract, Gate, Request};
    /// let contract = Contract::from_slice(br#"{"contract":1,"tool":"status","version":"1",
    ///   "upstream":[{"version":"v1","schema":{"type":"object","required":["state"]}}],
    ///   "fields":{"state":{"pointer":"/state"}}}"#, std::path::Path::new("."))?;
    /// let d = Gate::new(&contract)?.run_slice(b"{}", &Request::new("r-1", Context::new())).unwrap();
    /// let alerts = Alerts::from_slice(br#"{"alerts":1,"on":["schema"]}"#, std::path::Path::new("."))?;
    /// let r = alerts.on_decision("status", &d.audit, 0);
    /// assert_eq!(r.alerts.len(), 1);
    /// assert!(r.alerts[0].contains(r#""kind":"schema","code":"INVALID_RESPONSE""#), "{}", r.alerts[0]);
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn on_decision(&self, key: &str, audit: &AuditRecord, now_ms: u64) -> Raised {
        let Some(e) = audit.error.as_ref().filter(|_| !audit.accepted) else {
            return Raised::default();
        };
        let block = Block {
            key,
            kind: &e.kind,
            tool: &audit.tool,
            request_id: &audit.request_id,
            code: audit.code.map(super::envelope::FailureCode::as_str),
            sha256: &audit.sha256,
            time: audit.time.to_rfc3339(),
        };
        let mut r = self.on_block(&block, now_ms, e.kind != "breaker_open");
        let lines = r.alerts.clone();
        r.failures.extend(self.deliver_all(&lines));
        r
    }

    /// The kind under which a tool-call decision that is not `allow` raises an alert: its
    /// reason (`rate_limited`, `forbidden_substring`, `outside_plan`, …) when `on` lists it,
    /// else its class (`policy_deny` for a denial, `policy_ask` for a call a person must
    /// decide) when `on` lists that; `None` when neither is listed.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::Alerts;
    /// let a = Alerts::from_slice(br#"{"alerts":1,"on":["policy_deny","outside_plan"]}"#, std::path::Path::new("."))?;
    /// assert_eq!(a.call_kind("policy_deny", "rate_limited"), Some("policy_deny"));
    /// assert_eq!(a.call_kind("policy_ask", "outside_plan"), Some("outside_plan"));
    /// assert_eq!(a.call_kind("policy_ask", "needs_approval"), None);
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    #[must_use]
    pub fn call_kind<'k>(&self, class: &'k str, reason: &'k str) -> Option<&'k str> {
        [reason, class]
            .into_iter()
            .find(|k| self.on.iter().any(|o| o == k))
    }

    /// Counts one block (when `counts`) and returns the alert lines it raises, without
    /// delivering them ([`deliver_all`](Self::deliver_all) does; a relay delivers off its
    /// hot path).
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{Alerts, Block};
    /// let a = Alerts::from_slice(br#"{"alerts":1,"on":["screen"],"breaker":{"max_blocks":1,"window_seconds":60,"cooldown_seconds":60}}"#, std::path::Path::new("."))?;
    /// let block = Block { key: "t", kind: "screen", tool: "t", request_id: "r", code: None, sha256: "", time: String::new() };
    /// let r = a.on_block(&block, 0, false); // not counted: alert only
    /// assert_eq!((r.alerts.len(), r.opened), (1, false));
    /// assert!(a.on_block(&block, 0, true).opened);
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn on_block(&self, b: &Block<'_>, now_ms: u64, counts: bool) -> Raised {
        let mut r = Raised::default();
        if self.on.iter().any(|k| k == b.kind) {
            r.alerts.push(alert_line("block", b));
        }
        if counts {
            if let Some((policy, state)) = &self.breaker {
                match state.record_block(b.key, now_ms, policy) {
                    Ok(true) => {
                        r.opened = true;
                        r.alerts.push(alert_line("breaker_opened", b));
                    }
                    Ok(false) => {}
                    Err(msg) => r.failures.push(msg),
                }
            }
        }
        r
    }

    /// Delivers alert lines to the file and the hook; returns what failed.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::Alerts;
    /// let dir = tempfile::tempdir().unwrap();
    /// let a = Alerts::from_slice(br#"{"alerts":1,"file":"a.jsonl"}"#, dir.path())?;
    /// assert!(a.deliver_all(&[r#"{"alert":"block"}"#.to_owned()]).is_empty()); // nothing failed
    /// assert_eq!(std::fs::read_to_string(dir.path().join("a.jsonl")).unwrap(), "{\"alert\":\"block\"}\n");
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn deliver_all(&self, lines: &[String]) -> Vec<String> {
        let mut failures = Vec::new();
        for line in lines {
            self.deliver(line, &mut failures);
        }
        failures
    }

    fn deliver(&self, line: &str, failures: &mut Vec<String>) {
        if let (Some(f), Some(p)) = (&self.file, &self.file_path) {
            let mut f = f.lock().unwrap_or_else(PoisonError::into_inner);
            if let Err(e) = writeln!(f, "{line}") {
                failures.push(format!("alert file '{}': {e}", p.display()));
            }
        }
        if let Some(h) = &self.hook {
            if let Err(e) = run_hook(h, line) {
                failures.push(format!("alert hook '{}': {e}", h.argv[0]));
            }
        }
    }
}

/// One block, as alerting sees it.
///
/// # Example
/// ```
/// use jsongate::gate::{Alerts, Block};
/// let a = Alerts::from_slice(br#"{"alerts":1,"on":["too_deep"]}"#, std::path::Path::new("."))?;
/// let block = Block { key: "search", kind: "too_deep", tool: "search", request_id: "r-7",
///     code: Some("INVALID_RESPONSE"), sha256: "e3b0", time: "2026-05-01T12:00:00Z".into() };
/// assert_eq!(a.on_block(&block, 0, true).alerts, [r#"{"time":"2026-05-01T12:00:00Z","alert":"block","key":"search","tool":"search","request_id":"r-7","kind":"too_deep","code":"INVALID_RESPONSE","sha256":"e3b0"}"#]);
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Block<'a> {
    /// The breaker key (the tool).
    pub key: &'a str,
    /// The audit kind or class (`duplicate_name`, `screen`, `tool_poisoned`, …), or for a
    /// tool-call decision its [`call_kind`](Alerts::call_kind).
    pub kind: &'a str,
    /// The tool name.
    pub tool: &'a str,
    /// The request id (JSON-RPC id for the relay).
    pub request_id: &'a str,
    /// The failure code, if there is one.
    pub code: Option<&'a str>,
    /// SHA-256 of the blocked bytes.
    pub sha256: &'a str,
    /// When (RFC 3339).
    pub time: String,
}

fn alert_line(alert: &str, b: &Block<'_>) -> String {
    let mut out = String::new();
    ObjectWriter::new(&mut out)
        .str("time", &b.time)
        .str("alert", alert)
        .str("key", b.key)
        .str("tool", b.tool)
        .str("request_id", b.request_id)
        .str("kind", b.kind)
        .opt_str("code", b.code)
        .str("sha256", b.sha256);
    out
}

fn find_in_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Runs the hook with `line` on its standard input; kills it past its timeout.
fn run_hook(h: &Hook, line: &str) -> Result<(), String> {
    let mut child = Command::new(&h.argv[0])
        .args(&h.argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that does not read its input is its own business; it still must exit.
        let _ = writeln!(stdin, "{line}");
    }
    let until = Instant::now() + h.timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("exited with {status}")),
            Ok(None) if Instant::now() >= until => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("killed after {} ms", h.timeout.as_millis()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alerts_schema_compiles() {
        let _ = ALERTS.schema();
    }

    #[test]
    fn breaker_opens_after_n_blocks_in_the_window_and_closes_after_the_cooldown() {
        let p = BreakerPolicy {
            max_blocks: 3,
            window_ms: 1000,
            cooldown_ms: 5000,
        };
        let b = StoreBreaker::memory();
        assert!(!b.record_block("t", 0, &p).unwrap());
        assert!(!b.record_block("t", 100, &p).unwrap());
        // The first block left the window: still two.
        assert!(!b.record_block("t", 1050, &p).unwrap());
        assert!(b.record_block("t", 1060, &p).unwrap());
        assert!(b.is_open("t", 1061).unwrap());
        assert!(!b.is_open("other", 1061).unwrap());
        assert!(b.is_open("t", 6059).unwrap());
        assert!(!b.is_open("t", 6060).unwrap());
    }

    #[test]
    fn file_state_persists_between_instances() {
        let dir = std::env::temp_dir().join(format!("jsongate-breaker-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("state.json");
        let _ = std::fs::remove_file(&path);
        let p = BreakerPolicy {
            max_blocks: 2,
            window_ms: 1000,
            cooldown_ms: 1000,
        };
        assert!(!StoreBreaker::file(&path).record_block("t", 0, &p).unwrap());
        assert!(StoreBreaker::file(&path).record_block("t", 10, &p).unwrap());
        assert!(StoreBreaker::file(&path).is_open("t", 20).unwrap());
        assert!(StoreBreaker::file(&path).any_open(20).unwrap());
        assert!(!StoreBreaker::file(&path).any_open(1010).unwrap());
        std::fs::write(&path, b"not json").unwrap();
        assert!(StoreBreaker::file(&path).is_open("t", 20).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn the_alert_file_is_created_private_and_a_link_there_is_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        Alerts::from_slice(br#"{"alerts":1,"file":"out.jsonl"}"#, dir.path()).unwrap();
        let meta = std::fs::metadata(dir.path().join("out.jsonl")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);

        let target = dir.path().join("precious");
        std::fs::write(&target, "precious").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("link.jsonl")).unwrap();
        let e = Alerts::from_slice(br#"{"alerts":1,"file":"link.jsonl"}"#, dir.path())
            .err()
            .unwrap();
        assert_eq!(e.pointer(), "/file");
        let link = dir.path().join("link.jsonl");
        let says = format!("'{}' is a symbolic link and was refused", link.display());
        assert!(e.to_string().contains(&says), "{e}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    }
}
