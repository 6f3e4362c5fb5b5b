//! A validating relay for the Model Context Protocol's stdio transport
//! (newline-delimited JSON-RPC), between any client and any server.
//!
//! Every line from the server is scanned with the strict profile and the limits before
//! anything else; a line that fails never reaches the client as it is. The relay learns each
//! tool's `inputSchema` and `outputSchema` from `tools/list` replies (listing the tools
//! itself when a call names a tool it does not know yet; the schemas compile on a worker
//! thread, never under the relay's state lock, and calls to a tool wait until its schemas
//! are ready), validates the `structuredContent` of every `tools/call` result (and
//! `tasks/result`) against the tool's `outputSchema` in the same pass, and answers calls
//! whose `arguments` fail the `inputSchema` (or the optional policy) itself, without
//! forwarding them. A response must have exactly one of `result` and `error`. Everything
//! else — the handshake or `server/discover`, notifications, server-to-client requests,
//! unknown methods, `_meta` — and every valid result pass byte for byte (with
//! [`Config::screen`], server requests and notifications are screened too).
//!
//! Every listed tool is also held to its pin ([`pin`]): a lockfile ([`Config::pin`]) or the
//! first complete listing of the session; a tool not pinned, changed, poisoned (screening of
//! its definition), listed twice or too large to hash is removed from the listing the client
//! sees (the page is re-serialised without it) and its calls are refused.
//!
//! A result that is rejected is replaced by a result with the same id:
//! `{"content":[{"type":"text","text":REASON}],"isError":true,"resultType":"complete"}`,
//! where REASON names the failure class, the keyword location in the tool's declared schema
//! (by structure: names the server chose are digests) and the byte offset, and never
//! carries upstream text. Operators get the details (keyword location and instance pointer
//! in full, SHA-256 and size of the line) in the audit log.
//!
//! A call the policy answers `ask` waits for a person: an
//! `elicitation/create` request to a client that declared the capability, or a pending
//! approval in [`Config::approval_store`]; it is forwarded only when approved for its exact
//! tool and arguments, and the relay goes on meanwhile.
//!
//! [`Proxy::run`] relays over any pair of byte streams; [`child::run_command`] spawns the
//! server and forwards signals (the `jsongate mcp-proxy` command).

mod approve;
mod budget;
pub mod child;
mod clean;
mod expect;
mod frame;
#[cfg(feature = "serve")]
#[cfg_attr(docsrs, doc(cfg(feature = "serve")))]
pub mod http;
mod message;
pub mod pin;
mod reply;
mod session;
pub mod sse;
mod tools;

use std::collections::HashMap;
use std::io::{self, BufWriter, Read, Write};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::action::{Grants, Intent, Policy, RateState};
use crate::{Limits, Rejection, Validator};
pub use approve::{DEFAULT_APPROVAL_WAIT, MAX_AWAITING};
pub use budget::TEXT_TRUNCATION_MARKER;
use frame::{LineIn, Recovered};
pub use message::Id;
use message::{Finding, MessageSink, NoRoute, Route};
use reply::{error_response, hex};
pub use session::MAX_LIST_PAGES;
use session::{
    fail_batch, fail_server_line, installed, on_client, on_server, precheck_call, prejudge,
    refuse_line, Pending, State,
};
use tools::{CompileOptions, Compiler, Work};
pub use tools::{DEFAULT_COMPILE_DEADLINE, MAX_COMPILE_BACKLOG, MAX_TOOLS};

/// Default limit on one message (line) in either direction: 4 MiB.
///
/// # Example
/// ```
/// use jsongate::mcp::{Config, DEFAULT_MAX_MESSAGE_BYTES};
/// assert_eq!(Config::default().get_limits().get_max_bytes(), DEFAULT_MAX_MESSAGE_BYTES);
/// ```
pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 4 * 1024 * 1024;

/// Write buffer per direction: lines up to this size leave in one write with their newline.
const WRITE_BUFFER: usize = 64 * 1024;

/// Most requests in flight (client requests awaiting an answer plus calls held while the
/// proxy lists tools); past it new requests are answered with an error.
///
/// # Example
/// ```
/// assert!(jsongate::mcp::MAX_PENDING >= 1024);
/// ```
pub const MAX_PENDING: usize = 4096;

/// Told of each approval recorded in the store ([`Config::on_approval`]).
///
/// # Example
/// ```
/// use jsongate::mcp::OnApproval;
/// let tell: OnApproval = Box::new(|a| eprintln!("approve with: jsongate approve {}", a.id));
/// let _ = jsongate::mcp::Config::default().on_approval(tell);
/// ```
pub type OnApproval = Box<dyn Fn(&crate::action::Approval) + Send + Sync>;

/// How the relay judges messages: `Config::default()`, then a consuming setter for each
/// choice that differs, in the style of [`Limits`]. Each setter says its default; a setter
/// of an optional choice takes the value itself. The `get_` methods read a choice back.
///
/// # Example
/// ```
/// use jsongate::mcp::{Config, Proxy, Screen, DEFAULT_MAX_MESSAGE_BYTES};
/// use jsongate::Limits;
///
/// let config = Config::default()
///     .limits(Limits::new().max_bytes(1 << 20))
///     .format_assertion(true)
///     .screen(Screen::Reject)
///     .max_result_bytes(64 << 10)
///     .upstream("search-server");
/// assert_eq!(config.get_limits().get_max_bytes(), 1 << 20);
/// assert_eq!(config.get_screen(), Some(Screen::Reject));
/// assert_eq!(config.get_max_result_bytes(), Some(65_536));
/// assert_eq!(config.get_upstream(), Some("search-server"));
///
/// let defaults = Config::default();
/// assert_eq!(defaults.get_limits().get_max_bytes(), DEFAULT_MAX_MESSAGE_BYTES);
/// assert_eq!(defaults.get_screen(), None);
/// let _relay = Proxy::new(config);
/// ```
pub struct Config {
    limits: Limits,
    format_assertion: bool,
    draft: Option<crate::Draft>,
    eval_budget: Option<u64>,
    policy: Option<Policy>,
    session: Grants,
    rate: RateState,
    audit: Option<Box<dyn Write + Send>>,
    screen: Option<Screen>,
    compile_deadline: Duration,
    pin: Option<pin::Lock>,
    on_tool_change: pin::OnChange,
    screen_tools: Option<Screen>,
    max_result_bytes: Option<u64>,
    tool_result_bytes: HashMap<String, u64>,
    truncate_text: bool,
    alerts: Option<Arc<crate::gate::Alerts>>,
    upstream: Option<String>,
    approval_wait: Duration,
    approval_store: Option<Arc<dyn crate::state::Store>>,
    on_approval: Option<OnApproval>,
    pin_store: Option<Arc<dyn crate::state::Store>>,
    subject: Option<String>,
    /// The relay serves one request with no session before it: what its client saw is not
    /// known, so provenance starts saturated.
    unknown_history: bool,
}

/// What screening does with a message in which it finds instruction-like text.
///
/// # Example
/// ```
/// use jsongate::mcp::{Config, Screen};
/// // Flag results that read like instructions, but refuse such tools outright.
/// let c = Config::default().screen(Screen::Flag).screen_tools(Screen::Reject);
/// assert_eq!((c.get_screen(), c.get_screen_tools()), (Some(Screen::Flag), Some(Screen::Reject)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Screen {
    /// Forward it unchanged; the audit line says `flagged`, with the pattern and pointer.
    Flag,
    /// A tool result is replaced like any rejected result (class `screen`, the pattern's
    /// id); a server request is not relayed but answered to the server with a JSON-RPC
    /// error (audit verdict `refused`); a server notification is dropped (`dropped`).
    Reject,
    /// A tool result's instruction-like spans are replaced by `[redacted]` (the screening
    /// `redact` action) and the cleaned result forwarded (audit verdict `cleaned`, with the
    /// cleaned pointers); a result that cannot be admitted cleaned (a finding in a member
    /// name, a string that stays high-risk, cleaned `structuredContent` that no longer
    /// satisfies the `outputSchema`, or over the result budget) is replaced as under
    /// [`Screen::Reject`]. Server requests and notifications are treated as under
    /// [`Screen::Reject`], and so are tool definitions (`screen_tools`).
    Redact,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            limits: Limits::new().max_bytes(DEFAULT_MAX_MESSAGE_BYTES),
            format_assertion: false,
            draft: None,
            eval_budget: None,
            policy: None,
            session: Grants::new(Vec::<String>::new()),
            rate: RateState::new(),
            audit: None,
            screen: None,
            compile_deadline: DEFAULT_COMPILE_DEADLINE,
            pin: None,
            on_tool_change: pin::OnChange::Refuse,
            screen_tools: None,
            max_result_bytes: None,
            tool_result_bytes: HashMap::new(),
            truncate_text: false,
            alerts: None,
            upstream: None,
            subject: None,
            approval_wait: DEFAULT_APPROVAL_WAIT,
            approval_store: None,
            on_approval: None,
            pin_store: None,
            unknown_history: false,
        }
    }
}

/// Readers of fields whose value is `Copy`: `$get()` returns the field; the example checks
/// the documented default.
macro_rules! config_getters {
    ($($field:ident, $get:ident: $ty:ty = $default:expr;)*) => {$(
        #[doc = concat!("The value set by [`", stringify!($field), "`](Self::", stringify!($field), ").")]
        ///
        /// # Example
        /// ```
        #[doc = concat!("use jsongate::mcp::Config;")]
        #[doc = concat!("assert_eq!(Config::default().", stringify!($get), "(), ", stringify!($default), ");")]
        /// ```
        pub fn $get(&self) -> $ty {
            self.$field
        }
    )*};
}

impl Config {
    config_setters! {
        /// Limits applied to every line, in both directions. Default: the crate's limits
        /// with `max_bytes` = [`DEFAULT_MAX_MESSAGE_BYTES`].
        ///
        /// # Example
        /// ```
        /// use jsongate::mcp::Config;
        /// use jsongate::Limits;
        /// let c = Config::default().limits(Limits::new().max_bytes(1 << 20).max_depth(32));
        /// assert_eq!(c.get_limits().get_max_depth(), 32);
        /// ```
        limits: Limits;
        /// Whether `format` asserts in tool schemas. Default: `false` (annotation only).
        ///
        /// # Example
        /// ```
        /// use jsongate::mcp::Config;
        /// assert!(Config::default().format_assertion(true).get_format_assertion());
        /// ```
        format_assertion: bool;
        /// The session's grants and workspace, for the [`policy`](Self::policy). Default:
        /// no grants, no workspace.
        ///
        /// # Example
        /// ```
        /// use jsongate::action::Grants;
        /// use jsongate::mcp::Config;
        /// let c = Config::default().session(Grants::new(["fs_read"]));
        /// assert_eq!(c.get_session().grants(), ["fs_read"]);
        /// ```
        session: Grants;
        /// Where the policy's rate limits are counted; a file or Redis store shares them
        /// with other replicas. Default: this process's memory ([`RateState::new`]).
        ///
        /// # Example
        /// ```
        /// use std::sync::Arc;
        /// use jsongate::action::RateState;
        /// use jsongate::mcp::Config;
        /// use jsongate::state::MemoryStore;
        /// let c = Config::default().rate(RateState::new().store(Arc::new(MemoryStore::new())).scope("tenant-a"));
        /// assert_eq!(c.get_rate().get_store().describe(), "memory");
        /// ```
        rate: RateState;
        /// How long the schemas of one `tools/list` page may take to compile, from the
        /// page's arrival (waiting behind earlier pages included); past it the page's tools
        /// are unusable (`schema_compile_timeout`) and calls to them are refused. Default:
        /// [`DEFAULT_COMPILE_DEADLINE`].
        ///
        /// # Example
        /// ```
        /// use std::time::Duration;
        /// use jsongate::mcp::Config;
        /// let c = Config::default().compile_deadline(Duration::from_secs(2));
        /// assert_eq!(c.get_compile_deadline(), Duration::from_secs(2));
        /// ```
        compile_deadline: Duration;
        /// What a tool that differs from its pin does. Default: [`pin::OnChange::Refuse`].
        ///
        /// # Example
        /// ```
        /// use jsongate::mcp::{pin::OnChange, Config};
        /// let c = Config::default().on_tool_change(OnChange::Warn);
        /// assert_eq!(c.get_on_tool_change(), OnChange::Warn);
        /// ```
        on_tool_change: pin::OnChange;
        /// Budgets for named tools, in place of
        /// [`max_result_bytes`](Self::max_result_bytes) for their results
        /// (`--max-result-bytes TOOL=N`). Default: none.
        ///
        /// # Example
        /// ```
        /// use jsongate::mcp::Config;
        /// let c = Config::default()
        ///     .max_result_bytes(64 << 10)
        ///     .tool_result_bytes([("read_logs".to_owned(), 1 << 20)].into_iter().collect());
        /// assert_eq!(c.get_tool_result_bytes().get("read_logs"), Some(&(1 << 20)));
        /// ```
        tool_result_bytes: HashMap<String, u64>;
        /// Whether text-only results over [`max_result_bytes`](Self::max_result_bytes) may
        /// be cut (with [`TEXT_TRUNCATION_MARKER`]) rather than replaced. Default: `false`.
        ///
        /// # Example
        /// ```
        /// use jsongate::mcp::Config;
        /// let c = Config::default().max_result_bytes(4096).truncate_text(true);
        /// assert!(c.get_truncate_text());
        /// ```
        truncate_text: bool;
        /// How long a call the policy answers `ask` waits for a person (the client's
        /// elicitation, or an answer to its record in the
        /// [`approval_store`](Self::approval_store)) before it is refused
        /// (`not_approved`). Default: [`DEFAULT_APPROVAL_WAIT`].
        ///
        /// # Example
        /// ```
        /// use std::time::Duration;
        /// use jsongate::mcp::Config;
        /// let c = Config::default().approval_wait(Duration::from_secs(30));
        /// assert_eq!(c.get_approval_wait(), Duration::from_secs(30));
        /// ```
        approval_wait: Duration;
    }
    config_options! {
        /// The dialect of tool schemas without `$schema`. Default: 2020-12.
        ///
        /// # Example
        /// ```
        /// use jsongate::mcp::Config;
        /// use jsongate::Draft;
        /// assert_eq!(Config::default().draft(Draft::Draft7).get_draft(), Some(Draft::Draft7));
        /// ```
        draft: crate::Draft;
        /// Evaluation budget per validated document. Default: the schema's default
        /// ([`DEFAULT_EVAL_BUDGET`](crate::DEFAULT_EVAL_BUDGET) plus a per-byte allowance).
        ///
        /// # Example
        /// ```
        /// use jsongate::mcp::Config;
        /// assert_eq!(Config::default().eval_budget(100_000).get_eval_budget(), Some(100_000));
        /// ```
        eval_budget: u64;
        /// A tool-call policy: `deny` decisions are answered by the proxy, `ask` decisions
        /// wait for a person when one can be asked (elicitation, the
        /// [`approval_store`](Self::approval_store)) and are answered by the proxy
        /// otherwise. Default: none (every call whose arguments pass is forwarded).
        ///
        /// # Example
        /// ```
        /// use jsongate::action::{Grants, Policy};
        /// use jsongate::mcp::Config;
        /// let policy = Policy::from_slice(br#"{"policy":1,"tools":{"search":{"arguments":true,"requires":[]}}}"#)?;
        /// let c = Config::default().policy(policy).session(Grants::new(Vec::<String>::new()));
        /// assert!(c.get_policy().is_some());
        /// # Ok::<(), jsongate::json::ConfigError>(())
        /// ```
        policy: Policy;
        /// Where to append one audit line per tool call (and per dropped line). Default:
        /// none.
        ///
        /// # Example
        /// ```
        /// use std::io::Write;
        /// use std::sync::{Arc, Mutex};
        /// use jsongate::mcp::{Config, Proxy};
        ///
        /// /// Audit lines collected in memory (a file or a pipe in practice).
        /// #[derive(Clone, Default)]
        /// struct Lines(Arc<Mutex<Vec<u8>>>);
        /// impl Write for Lines {
        ///     fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        ///         self.0.lock().unwrap().write(b)
        ///     }
        ///     fn flush(&mut self) -> std::io::Result<()> {
        ///         Ok(())
        ///     }
        /// }
        /// let audit = Lines::default();
        /// let relay = Proxy::new(Config::default().audit(Box::new(audit.clone())));
        /// // The server sends one line that is not JSON: it is dropped, and audited.
        /// let server_out = &b"not json\n"[..];
        /// relay.run(&b""[..], std::io::sink(), std::io::sink(), server_out, Box::new(|| {}))?;
        /// let text = String::from_utf8(audit.0.lock().unwrap().clone()).unwrap();
        /// assert!(text.contains(r#""verdict":"dropped""#), "{text}");
        /// # Ok::<(), std::io::Error>(())
        /// ```
        audit: Box<dyn Write + Send>;
        /// Whether tool results that pass, and every request and notification from the
        /// server (`sampling/createMessage`, `elicitation/create`, `notifications/message`,
        /// …), are also screened for instruction-like text
        /// ([`screen::screen`](crate::screen::screen)). Default: not screened.
        ///
        /// # Example
        /// ```
        /// use jsongate::mcp::{Config, Screen};
        /// assert_eq!(Config::default().screen(Screen::Flag).get_screen(), Some(Screen::Flag));
        /// ```
        screen: Screen;
        /// A lockfile to enforce: a listed tool absent from it, or whose definition's hash
        /// differs, is removed from the listing the client sees and its calls are refused
        /// (`tool_not_pinned`, `tool_changed`). Default: none; the tools of the first
        /// complete listing are pinned (trust on first use) and the same rule applies to
        /// every later listing.
        ///
        /// # Example
        /// ```
        /// use jsongate::mcp::{pin::Lock, Config};
        /// let c = Config::default().pin(Lock::new(None));
        /// assert_eq!(c.get_pin().map(Lock::len), Some(0)); // an empty lockfile admits no tool
        /// ```
        pin: pin::Lock;
        /// What screening of tool definitions does with a tool in which it finds
        /// instruction-like or hidden text: [`Screen::Reject`] removes it from the listing
        /// and refuses its calls (`tool_poisoned`), [`Screen::Flag`] audits it. Definitions
        /// are always screened. Default: reject when [`screen`](Self::screen) is set,
        /// otherwise flag.
        ///
        /// # Example
        /// ```
        /// use jsongate::mcp::{Config, Screen};
        /// let c = Config::default().screen(Screen::Flag).screen_tools(Screen::Reject);
        /// assert_eq!(c.get_screen_tools(), Some(Screen::Reject));
        /// ```
        screen_tools: Screen;
        /// Largest `tools/call` (and `tasks/result`) result line passed to the client.
        /// Over it, a result with structured content is replaced (class `over_budget`);
        /// plain text content is cut with [`TEXT_TRUNCATION_MARKER`] when
        /// [`truncate_text`](Self::truncate_text) allows, else replaced too. Default: no
        /// budget beyond the line limit.
        ///
        /// # Example
        /// ```
        /// use jsongate::mcp::Config;
        /// assert_eq!(Config::default().max_result_bytes(65_536).get_max_result_bytes(), Some(65_536));
        /// ```
        max_result_bytes: u64;
        /// Alerts and the circuit breaker ([`gate::Alerts`](crate::gate::Alerts)): a block
        /// of a listed class raises an alert (delivered off the relay's path), results and
        /// tools refused for a tool count toward its breaker, and while it is open calls to
        /// the tool are answered by the proxy (`breaker_open`) and never forwarded.
        /// Default: none.
        ///
        /// # Example
        /// ```
        /// use std::sync::Arc;
        /// use jsongate::gate::Alerts;
        /// use jsongate::mcp::Config;
        /// let alerts = Alerts::from_slice(br#"{"alerts":1,"on":["schema"],
        ///     "breaker":{"max_blocks":5,"window_seconds":60,"cooldown_seconds":300}}"#,
        ///     std::path::Path::new("."))?;
        /// let _config = Config::default().alerts(Arc::new(alerts));
        /// # Ok::<(), jsongate::json::ConfigError>(())
        /// ```
        alerts: Arc<crate::gate::Alerts>;
        /// Where a pending approval is recorded when the client did not declare
        /// elicitation (answered by `jsongate approve ID`, or
        /// [`Approval::answer`](crate::action::Approval::answer)). Default: none; such an
        /// `ask` is refused (`policy_ask`).
        ///
        /// # Example
        /// ```
        /// use std::sync::Arc;
        /// use jsongate::mcp::Config;
        /// use jsongate::state::MemoryStore;
        /// let _config = Config::default().approval_store(Arc::new(MemoryStore::new()));
        /// ```
        approval_store: Arc<dyn crate::state::Store>;
        /// Told of every approval recorded in the [`approval_store`](Self::approval_store),
        /// so an operator learns its id (the command writes it to standard error).
        /// Default: none.
        ///
        /// # Example
        /// ```
        /// use std::sync::Arc;
        /// use jsongate::action::Approval;
        /// use jsongate::mcp::Config;
        /// use jsongate::state::MemoryStore;
        /// let _config = Config::default()
        ///     .approval_store(Arc::new(MemoryStore::new()))
        ///     .on_approval(Box::new(|a: &Approval| eprintln!("approval requested: {}", a.id)));
        /// ```
        on_approval: OnApproval;
        /// Where pins taken on first use (no [`pin`](Self::pin)) are shared with the other
        /// replicas in front of the same server: the first replica's first complete listing
        /// is recorded under a key named after [`upstream`](Self::upstream), and every
        /// replica holds it like a lockfile. A store that fails refuses the tools
        /// (`pin_state_unavailable`) when the [`rate`](Self::rate) state's failure choice
        /// denies. Default: none; each session pins on its own.
        ///
        /// # Example
        /// ```
        /// use std::sync::Arc;
        /// use jsongate::mcp::Config;
        /// use jsongate::state::MemoryStore;
        /// let shared = Arc::new(MemoryStore::new()); // a file or Redis store across hosts
        /// let _config = Config::default().upstream("search-server").pin_store(shared);
        /// ```
        pin_store: Arc<dyn crate::state::Store>;
    }

    /// The authenticated caller this relay serves (the HTTP front sets it from the verified
    /// token or API key): its `subject` is written into every audit line, its scopes are held
    /// as grants besides the configured ones, `subject` and `client_id` become the policy's
    /// context values of those names, and rate limits count per subject. Default: none.
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::Config;
    /// let c = Config::default().caller("alice", None, &["tickets:read".to_owned()]);
    /// assert_eq!(c.get_subject(), Some("alice"));
    /// assert_eq!(c.get_session().grants(), ["tickets:read"]);
    /// ```
    #[must_use]
    pub fn caller(mut self, subject: &str, client_id: Option<&str>, scopes: &[String]) -> Self {
        self.session = self.session.caller(subject, client_id, scopes);
        self.rate = self.rate.subscope(subject);
        self.subject = Some(subject.to_owned());
        self
    }

    /// A relay for one request with no session before it (the HTTP front's sessionless
    /// requests): what the client saw before is not known, so every identifier-like value at
    /// a policy's sink asks ([`Provenance::unknown_history`](crate::action::Provenance::unknown_history)).
    #[must_use]
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn unknown_history(mut self) -> Self {
        self.unknown_history = true;
        self
    }

    /// The value set by [`caller`](Self::caller).
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::Config;
    /// assert_eq!(Config::default().get_subject(), None);
    /// ```
    pub fn get_subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The server command (or endpoint) as audit lines name it (`"upstream"`). Default:
    /// none.
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::Config;
    /// let c = Config::default().upstream("npx @modelcontextprotocol/server-filesystem");
    /// assert_eq!(c.get_upstream(), Some("npx @modelcontextprotocol/server-filesystem"));
    /// ```
    #[must_use]
    pub fn upstream(mut self, upstream: impl Into<String>) -> Self {
        self.upstream = Some(upstream.into());
        self
    }

    config_getters! {
        limits, get_limits: Limits = jsongate::Limits::new().max_bytes(jsongate::mcp::DEFAULT_MAX_MESSAGE_BYTES);
        format_assertion, get_format_assertion: bool = false;
        draft, get_draft: Option<crate::Draft> = None;
        eval_budget, get_eval_budget: Option<u64> = None;
        screen, get_screen: Option<Screen> = None;
        compile_deadline, get_compile_deadline: Duration = jsongate::mcp::DEFAULT_COMPILE_DEADLINE;
        on_tool_change, get_on_tool_change: pin::OnChange = jsongate::mcp::pin::OnChange::Refuse;
        screen_tools, get_screen_tools: Option<Screen> = None;
        max_result_bytes, get_max_result_bytes: Option<u64> = None;
        truncate_text, get_truncate_text: bool = false;
        approval_wait, get_approval_wait: Duration = jsongate::mcp::DEFAULT_APPROVAL_WAIT;
    }

    /// The value set by [`session`](Self::session).
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::Config;
    /// assert!(Config::default().get_session().grants().is_empty());
    /// ```
    pub fn get_session(&self) -> &Grants {
        &self.session
    }

    /// The value set by [`rate`](Self::rate).
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::Config;
    /// use jsongate::state::OnStateError;
    /// assert_eq!(Config::default().get_rate().get_on_state_error(), OnStateError::Deny);
    /// ```
    pub fn get_rate(&self) -> &RateState {
        &self.rate
    }

    /// The value set by [`policy`](Self::policy).
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::Config;
    /// assert!(Config::default().get_policy().is_none());
    /// ```
    pub fn get_policy(&self) -> Option<&Policy> {
        self.policy.as_ref()
    }

    /// The value set by [`pin`](Self::pin).
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::Config;
    /// assert!(Config::default().get_pin().is_none()); // trust on first use
    /// ```
    pub fn get_pin(&self) -> Option<&pin::Lock> {
        self.pin.as_ref()
    }

    /// The value set by [`tool_result_bytes`](Self::tool_result_bytes).
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::Config;
    /// assert!(Config::default().get_tool_result_bytes().is_empty());
    /// ```
    pub fn get_tool_result_bytes(&self) -> &HashMap<String, u64> {
        &self.tool_result_bytes
    }

    /// The value set by [`upstream`](Self::upstream).
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::Config;
    /// assert_eq!(Config::default().get_upstream(), None);
    /// assert_eq!(Config::default().upstream("srv").get_upstream(), Some("srv"));
    /// ```
    pub fn get_upstream(&self) -> Option<&str> {
        self.upstream.as_deref()
    }
}

/// Work for the server writer thread.
enum ToServer {
    /// A line (newline added).
    Line(Vec<u8>),
    /// Close the server's input (and end the writer thread).
    Close,
}

/// What to write once the state lock is released.
enum Out {
    /// Bytes for the client (a full line, newline included).
    Client(Vec<u8>),
    /// The line being handled, to the client as it is.
    ClientLine,
    /// Bytes for the server (a full line).
    Server(Vec<u8>),
    /// The line being handled, to the server as it is.
    ServerLine,
    /// One audit line.
    Audit(String),
}

/// Facts about the line being handled, for audit records.
struct LineFacts<'a> {
    bytes: &'a [u8],
    size: u64,
    sha256: Option<String>,
    /// The intent stated by the `tools/call` this line is, or answers (audit only).
    intent: Option<Intent>,
}

impl LineFacts<'_> {
    fn sha(&self) -> String {
        self.sha256
            .clone()
            .unwrap_or_else(|| hex(&Sha256::digest(self.bytes)))
    }
}

struct Shared {
    limits: Limits,
    compiler: Compiler,
    compile_deadline: Duration,
    policy: Option<Policy>,
    session: Grants,
    rate: RateState,
    screen: Option<Screen>,
    /// Screening of tool definitions (resolved from [`Config::screen_tools`]).
    screen_tools: Screen,
    max_result_bytes: Option<u64>,
    tool_result_bytes: HashMap<String, u64>,
    truncate_text: bool,
    alerts: Option<Arc<crate::gate::Alerts>>,
    upstream: Option<String>,
    /// The authenticated caller, written into every audit line.
    subject: Option<String>,
    approval_wait: Duration,
    approval_store: Option<Arc<dyn crate::state::Store>>,
    on_approval: Option<OnApproval>,
    /// Wakes the approvals thread when a call starts waiting.
    approvals_wake: Mutex<Sender<()>>,
    state: Mutex<State>,
    /// Buffered so that a line and its newline leave in one write.
    to_client: Mutex<BufWriter<Box<dyn Write + Send>>>,
    to_server: Mutex<Option<BufWriter<Box<dyn Write + Send>>>>,
    /// What the server loop sends to the server goes through a writer thread, so that the
    /// server loop never blocks on the server's input while the server waits for its
    /// output to be read.
    server_queue: Sender<ToServer>,
    audit: Option<Mutex<Box<dyn Write + Send>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A validating MCP relay. See the [module documentation](self).
///
/// # Example
/// ```
/// # use std::io::Write;
/// # use std::sync::{Arc, Mutex};
/// # /// What the client receives, collected in memory.
/// # #[derive(Clone, Default)]
/// # struct Collect(Arc<Mutex<Vec<u8>>>);
/// # impl Write for Collect {
/// #     fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
/// #         self.0.lock().unwrap().write(b)
/// #     }
/// #     fn flush(&mut self) -> std::io::Result<()> {
/// #         Ok(())
/// #     }
/// # }
/// use jsongate::mcp::{Config, End, Proxy};
/// let client = Collect::default();
/// // The server's output: a line with a duplicate name, then a valid notification.
/// let server_out = &b"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"method\":\"b\"}\n\
/// {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n"[..];
/// let end = Proxy::new(Config::default())
///     .run(&b""[..], client.clone(), std::io::sink(), server_out, Box::new(|| {}))?;
/// assert_eq!(end, End::ServerClosed);
/// let got = String::from_utf8(client.0.lock().unwrap().clone()).unwrap();
/// // Only the valid line reached the client, byte for byte.
/// assert_eq!(got, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n");
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Proxy {
    config: Config,
}

/// How a relay ended.
///
/// # Example
/// ```
/// use jsongate::mcp::{Config, End, Proxy};
/// let end = Proxy::new(Config::default())
///     .run(&b""[..], std::io::sink(), std::io::sink(), &b""[..], Box::new(|| {}))?;
/// assert_eq!(end, End::ServerClosed);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The server closed its output (pending requests were answered with errors).
    ServerClosed,
    /// Writing to the client failed (it went away).
    ClientGone,
}

impl Proxy {
    /// A relay with `config`.
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::{Config, Proxy, Screen};
    /// let _relay = Proxy::new(Config::default().screen(Screen::Reject));
    /// ```
    pub fn new(config: Config) -> Proxy {
        Proxy { config }
    }

    /// Relays between a client (`client_in` → `server_in`) and a server (`server_out` →
    /// `client_out`) until the server closes its output. Client lines are read on a thread
    /// of their own; when the client closes, `server_in` is closed and `on_client_closed`
    /// runs (the command uses it to end the server after a grace period). When this returns,
    /// the proxy's threads have ended, except the client thread if the client has not closed
    /// its side (it ends when `client_in` does).
    ///
    /// # Errors
    /// Reading from the server failed.
    ///
    /// # Example
    /// ```
    /// # use std::io::Write;
    /// # use std::sync::{Arc, Mutex};
    /// # /// What the client receives, collected in memory.
    /// # #[derive(Clone, Default)]
    /// # struct Collect(Arc<Mutex<Vec<u8>>>);
    /// # impl Write for Collect {
    /// #     fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
    /// #         self.0.lock().unwrap().write(b)
    /// #     }
    /// #     fn flush(&mut self) -> std::io::Result<()> {
    /// #         Ok(())
    /// #     }
    /// # }
    /// use jsongate::mcp::{Config, Proxy};
    /// let server_in = Collect::default();
    /// // A client request is forwarded to the server as it is.
    /// let client_in = &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"[..];
    /// let closed = Arc::new(Mutex::new(false));
    /// let on_closed = Arc::clone(&closed);
    /// // The server's side stays open until the client has closed its side.
    /// let (tx, rx) = std::sync::mpsc::channel::<()>();
    /// struct Wait(std::sync::mpsc::Receiver<()>);
    /// impl std::io::Read for Wait {
    ///     fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
    ///         let _ = self.0.recv();
    ///         Ok(0)
    ///     }
    /// }
    /// Proxy::new(Config::default()).run(
    ///     client_in,
    ///     std::io::sink(),
    ///     server_in.clone(),
    ///     Wait(rx),
    ///     Box::new(move || {
    ///         *on_closed.lock().unwrap() = true;
    ///         let _ = tx.send(());
    ///     }),
    /// )?;
    /// assert!(*closed.lock().unwrap());
    /// let got = String::from_utf8(server_in.0.lock().unwrap().clone()).unwrap();
    /// assert_eq!(got, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn run<CI, CO, SI, SO>(
        self,
        client_in: CI,
        client_out: CO,
        server_in: SI,
        server_out: SO,
        on_client_closed: Box<dyn FnOnce() + Send>,
    ) -> io::Result<End>
    where
        CI: Read + Send + 'static,
        CO: Write + Send + 'static,
        SI: Write + Send + 'static,
        SO: Read,
    {
        let mut c = self.config;
        let pins = pin::Pins::new(c.pin.take(), c.on_tool_change);
        let pins = match c.pin_store.take() {
            Some(store) => pins.shared(
                store,
                format!("pins:{}", c.upstream.as_deref().unwrap_or("")),
                c.rate.get_on_state_error() == crate::state::OnStateError::Deny,
            ),
            None => pins,
        };
        let (server_queue, queue) = channel();
        let (approvals_wake, wake) = channel();
        let (compiler, compile_work) = tools::compiler();
        let shared = Arc::new(Shared {
            server_queue,
            limits: c.limits,
            compiler,
            compile_deadline: c.compile_deadline,
            policy: c.policy,
            session: c.session,
            rate: c.rate,
            screen: c.screen,
            screen_tools: c.screen_tools.unwrap_or(if c.screen.is_some() {
                Screen::Reject
            } else {
                Screen::Flag
            }),
            max_result_bytes: c.max_result_bytes,
            tool_result_bytes: c.tool_result_bytes,
            truncate_text: c.truncate_text,
            alerts: c.alerts,
            upstream: c.upstream,
            subject: c.subject,
            approval_wait: c.approval_wait,
            approval_store: c.approval_store,
            on_approval: c.on_approval,
            approvals_wake: Mutex::new(approvals_wake),
            state: Mutex::new(State {
                pins,
                provenance: if c.unknown_history {
                    crate::action::Provenance::unknown_history()
                } else {
                    crate::action::Provenance::new()
                },
                ..State::default()
            }),
            to_client: Mutex::new(BufWriter::with_capacity(WRITE_BUFFER, Box::new(client_out))),
            to_server: Mutex::new(Some(BufWriter::with_capacity(
                WRITE_BUFFER,
                Box::new(server_in),
            ))),
            audit: c.audit.map(Mutex::new),
        });
        let opts = CompileOptions {
            format_assertion: c.format_assertion,
            draft: c.draft,
            eval_budget: c.eval_budget,
            limits: c.limits,
        };
        let s = Arc::clone(&shared);
        let client = std::thread::Builder::new()
            .name("mcp-client".into())
            .spawn(move || {
                client_loop(&s, client_in);
                let mut refused = Vec::new();
                let close = {
                    let mut st = lock(&s.state);
                    st.client_closed = true;
                    approve::abandon(&s, &mut st, &mut refused);
                    st.may_close_server()
                };
                flush(&s, refused, &[], true);
                // Closing the server's input tells it to exit; calls held for the proxy's
                // own listing or for their tool's schemas are sent first (the server loop
                // or the compile coordinator closes it then).
                if close {
                    let _ = s.server_queue.send(ToServer::Close);
                }
                on_client_closed();
            })?;
        let s = Arc::clone(&shared);
        let writer = std::thread::Builder::new()
            .name("mcp-server-writer".into())
            .spawn(move || {
                for cmd in queue {
                    match cmd {
                        ToServer::Line(b) => {
                            if let Some(w) = lock(&s.to_server).as_mut() {
                                write_line(w, &b);
                            }
                        }
                        ToServer::Close => {
                            lock(&s.to_server).take();
                            return;
                        }
                    }
                }
            })?;
        let s = Arc::clone(&shared);
        let approvals = std::thread::Builder::new()
            .name("mcp-approvals".into())
            .spawn(move || approve::run(&s, &wake))?;
        // (Jobs submitted before it starts wait in its queue.)
        let s = Arc::clone(&shared);
        let compile = tools::spawn(&shared.compiler, compile_work, opts, move |o| {
            installed(&s, o);
        })?;
        let end = server_loop(&shared, server_out);
        // No compile outcome releases a call any more. Joining the coordinator waits for the
        // worker too, which starts nothing new and finishes the schema it may be compiling
        // (bounded by the compile budgets).
        let _ = shared.compiler.queue.send(Work::Close);
        let _ = compile.join();
        if end.as_ref().is_ok_and(|e| *e == End::ServerClosed) {
            answer_all_pending(&shared);
        }
        // The approvals thread ends once its wake channel closes.
        {
            let (closed, _) = channel();
            *lock(&shared.approvals_wake) = closed;
        }
        let _ = approvals.join();
        // The server is gone (or the client): nothing more goes to it.
        let _ = shared.server_queue.send(ToServer::Close);
        let _ = writer.join();
        // The client thread is joined when the client already closed its side (it has only
        // its last steps left); otherwise it is left blocked on its read.
        if lock(&shared.state).client_closed {
            let _ = client.join();
        }
        end
    }
}

fn client_loop<R: Read>(shared: &Shared, input: R) {
    let mut lines = LineIn::new(input, shared.limits);
    let mut no_route = NoRoute;
    loop {
        let mut sink = MessageSink::new(&mut no_route);
        let Ok(Some(line)) = lines.next(&mut sink) else {
            return;
        };
        if line.blank {
            continue;
        }
        let msg = sink.msg;
        let facts = LineFacts {
            bytes: &lines.buf,
            size: line.size,
            sha256: line.sha256.clone(),
            intent: line
                .error
                .is_none()
                .then(|| session::call_intent(&msg, &lines.buf, shared.limits))
                .flatten(),
        };
        // Arguments are validated before the state lock is taken.
        let pre = match &line.error {
            None => precheck_call(shared, &msg, &lines.buf),
            Some(_) => None,
        };
        let mut outs = Vec::new();
        {
            let mut st = lock(&shared.state);
            if let Some(e) = &line.error {
                let id = failed_line_id(msg.id.as_ref(), &line.recovered);
                let f = Finding::rejection(&Rejection::Error(e.clone()), 0, "");
                refuse_line(shared, &mut outs, id.as_ref(), &f, &facts);
            } else {
                on_client(
                    shared,
                    &mut st,
                    msg,
                    &lines.buf,
                    &facts,
                    &mut outs,
                    pre.as_ref(),
                );
            }
        }
        if !flush(shared, outs, &lines.buf, false) {
            return;
        }
        if line.eof {
            return;
        }
    }
}

/// The id a failed line answers: the one recovered from the whole line, else the one the
/// scan read before failing; none when the line names two different ids (or is a batch).
fn failed_line_id(scanned: Option<&Id>, recovered: &Recovered) -> Option<Id> {
    match recovered {
        Recovered::One(id) => Some(id.clone()),
        Recovered::None => scanned.cloned(),
        Recovered::Ambiguous | Recovered::Batch(_) => None,
    }
}

/// The server loop's route: looks up the output validator of a pending call by id.
struct PendingRoute<'a> {
    shared: &'a Shared,
}

impl Route for PendingRoute<'_> {
    fn output_validator(&mut self, id: &Id) -> Option<Validator> {
        let st = lock(&self.shared.state);
        let tool = match st.pending.get(id)? {
            Pending::Call { tool, .. } => tool,
            Pending::TaskResult { tool: Some(tool) } => tool,
            _ => return None,
        };
        tool.output.as_ref().map(Validator::new)
    }
}

fn server_loop<R: Read>(shared: &Shared, output: R) -> io::Result<End> {
    let mut lines = LineIn::new(output, shared.limits);
    let mut route = PendingRoute { shared };
    loop {
        let mut sink = MessageSink::new(&mut route);
        let Some(line) = lines.next(&mut sink)? else {
            break;
        };
        if line.blank {
            continue;
        }
        let inline = sink.inline;
        let msg = sink.msg;
        let facts = LineFacts {
            bytes: &lines.buf,
            size: line.size,
            sha256: line.sha256.clone(),
            intent: None,
        };
        // A stopped line was not kept: only the proxy's own answer can stand for it.
        let whole = (line.error.is_none() && !line.stopped).then_some(&lines.buf[..]);
        // What can be validated and screened is, before the state lock is taken.
        let pre = match whole {
            Some(l) if !msg.not_object => prejudge(shared, &msg, &inline, l),
            _ => session::Prejudged::default(),
        };
        let mut outs = Vec::new();
        let close_server_input;
        {
            let mut st = lock(&shared.state);
            if let Some(e) = &line.error {
                // A broken line that starts like a JSON-RPC object may be the answer to the
                // only pending request; a stray log or banner line answers nothing.
                let id = failed_line_id(msg.id.as_ref(), &line.recovered);
                let guess = line.first == Some(b'{');
                let f = Finding::rejection(&Rejection::Error(e.clone()), 0, "");
                fail_server_line(shared, &mut st, id.as_ref(), guess, &f, &facts, &mut outs);
            } else if line.stopped && msg.not_object {
                if let Recovered::Batch(ids) = &line.recovered {
                    // JSON-RPC batches left MCP in 2025-06-18: never relayed, but the
                    // pending requests the batch answers are answered by the proxy.
                    let f = Finding::of("batch");
                    fail_batch(shared, &mut st, ids, &f, &facts, &mut outs);
                } else {
                    // Not an object: no id was read, none is recovered.
                    let f = Finding::of("not_an_object");
                    fail_server_line(shared, &mut st, None, false, &f, &facts, &mut outs);
                }
            } else {
                // A stop from an inline violation, or a complete line.
                on_server(
                    shared, &mut st, &msg, &inline, whole, &facts, &mut outs, &pre,
                );
            }
            close_server_input = st.may_close_server();
        }
        if !flush(shared, outs, &lines.buf, true) {
            return Ok(End::ClientGone);
        }
        if close_server_input {
            let _ = shared.server_queue.send(ToServer::Close);
        }
        if line.eof {
            break;
        }
    }
    Ok(End::ServerClosed)
}

/// The server is gone: answers everything still waiting.
fn answer_all_pending(shared: &Shared) {
    let mut outs = Vec::new();
    {
        let mut st = lock(&shared.state);
        let pending: Vec<(Id, Pending)> = st.pending.drain().collect();
        for (id, p) in pending {
            if !matches!(p, Pending::OwnList { .. }) {
                outs.push(Out::Client(error_response(
                    &id,
                    -32603,
                    "jsongate: the server closed its output before answering",
                )));
            }
        }
        for h in std::mem::take(&mut st.held) {
            outs.push(Out::Client(error_response(
                &h.id,
                -32603,
                "jsongate: the server closed its output before answering",
            )));
        }
        approve::server_gone(shared, &mut st, &mut outs);
    }
    flush(shared, outs, &[], true);
}

/// Writes the outputs. `line` is the line being handled; `from_client` says which way it
/// was going. Returns false once the client is gone.
fn flush(shared: &Shared, mut outs: Vec<Out>, line: &[u8], queued: bool) -> bool {
    let mut client_ok = true;
    // The audit record is written before either side sees the outcome.
    outs.sort_by_key(|o| !matches!(o, Out::Audit(_)));
    for o in outs {
        match o {
            Out::Client(b) => client_ok &= write_line(&mut *lock(&shared.to_client), &b),
            Out::ClientLine => {
                // Only a whole line is ever relayed (a stopped one is empty here).
                debug_assert!(!line.is_empty(), "relaying a line that was not kept");
                if !line.is_empty() {
                    client_ok &= write_line(&mut *lock(&shared.to_client), line);
                }
            }
            Out::Server(b) if queued => {
                let _ = shared.server_queue.send(ToServer::Line(b));
            }
            Out::Server(b) => {
                if let Some(w) = lock(&shared.to_server).as_mut() {
                    write_line(w, &b);
                }
            }
            Out::ServerLine => {
                if let Some(w) = lock(&shared.to_server).as_mut() {
                    write_line(w, line);
                }
            }
            Out::Audit(a) => {
                if let Some(w) = &shared.audit {
                    write_line(&mut **lock(w), a.as_bytes());
                }
            }
        }
    }
    client_ok
}

fn write_line(w: &mut dyn Write, bytes: &[u8]) -> bool {
    w.write_all(bytes)
        .and_then(|()| w.write_all(b"\n"))
        .and_then(|()| w.flush())
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::{
        pin::OnChange, Config, Grants, Policy, Screen, DEFAULT_APPROVAL_WAIT,
        DEFAULT_COMPILE_DEADLINE, DEFAULT_MAX_MESSAGE_BYTES,
    };
    use crate::Limits;
    use std::time::Duration;

    /// Every setter sets its own field and nothing else, and every reader reads it back.
    #[test]
    fn setters_set_their_fields() {
        let c = Config::default()
            .limits(Limits::new().max_depth(7))
            .format_assertion(true)
            .session(Grants::new(["read"]))
            .compile_deadline(Duration::from_millis(5))
            .on_tool_change(OnChange::Warn)
            .tool_result_bytes([("t".to_owned(), 9)].into_iter().collect())
            .truncate_text(true)
            .approval_wait(Duration::from_secs(9))
            .draft(crate::Draft::Draft7)
            .eval_budget(42)
            .screen(Screen::Flag)
            .screen_tools(Screen::Reject)
            .max_result_bytes(100)
            .upstream("u");
        assert_eq!(c.get_limits().get_max_depth(), 7);
        assert!(c.get_format_assertion() && c.get_truncate_text());
        assert_eq!(c.get_session().grants(), ["read"]);
        assert_eq!(c.get_compile_deadline(), Duration::from_millis(5));
        assert_eq!(c.get_on_tool_change(), OnChange::Warn);
        assert_eq!(c.get_tool_result_bytes().get("t"), Some(&9));
        assert_eq!(c.get_approval_wait(), Duration::from_secs(9));
        assert_eq!(c.get_draft(), Some(crate::Draft::Draft7));
        assert_eq!(c.get_eval_budget(), Some(42));
        assert_eq!(c.get_screen(), Some(Screen::Flag));
        assert_eq!(c.get_screen_tools(), Some(Screen::Reject));
        assert_eq!(c.get_max_result_bytes(), Some(100));
        assert_eq!(c.get_upstream(), Some("u"));
        assert!(c.get_policy().is_none() && c.get_pin().is_none());
        let d = Config::default();
        assert_eq!(
            d.get_limits(),
            Limits::new().max_bytes(DEFAULT_MAX_MESSAGE_BYTES)
        );
        assert!(!d.get_format_assertion() && !d.get_truncate_text());
        assert_eq!(d.get_on_tool_change(), OnChange::Refuse);
        assert_eq!(d.get_compile_deadline(), DEFAULT_COMPILE_DEADLINE);
        assert_eq!(d.get_approval_wait(), DEFAULT_APPROVAL_WAIT);
        assert!(d.get_session().grants().is_empty() && d.get_tool_result_bytes().is_empty());
        assert!(d.get_draft().is_none() && d.get_eval_budget().is_none());
        assert!(d.get_screen().is_none() && d.get_screen_tools().is_none());
        assert!(d.get_max_result_bytes().is_none() && d.get_upstream().is_none());
        assert!(d.policy.is_none() && d.audit.is_none() && d.pin.is_none());
        assert!(d.alerts.is_none() && d.approval_store.is_none() && d.pin_store.is_none());
        assert!(d.on_approval.is_none());
        let p =
            Policy::from_slice(br#"{"policy":1,"tools":{"a":{"arguments":true,"requires":[]}}}"#);
        assert!(Config::default().policy(p.unwrap()).get_policy().is_some());
    }
}
