//! The relay's state machine: which requests are pending and what each was, the tools
//! learnt, calls held while the proxy lists tools itself (or while a tool's schemas
//! compile), task ids; and the decision for every message in either direction (forward as
//! it is, answer it, or replace it).
//!
//! A server line reaches the client as it is only through one path: a whole line (the scan
//! neither failed nor stopped) that is a well-formed JSON-RPC message and, when it answers
//! a judged request, passed every check of [`judge_result`]. Everything else is replaced by
//! the proxy's own answer for its id, or dropped and audited.
//!
//! A `tools/list` page is also where tool definitions are held to their pins and screened
//! ([`super::pin`]): each listed tool is canonicalised, hashed and screened before the lock is
//! taken; under it, the pin decision is made, refused tools are audited and known as unusable
//! with their class, and a page the client asked for reaches it without them.
//!
//! Work whose cost the server chooses runs outside the state lock: schema compilation on the
//! compile worker ([`super::tools`]), and validation, screening and the canonical hashing of
//! listed tools before the lock is taken ([`prejudge`], [`precheck_call`]; the decision
//! under the lock reuses them).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::approve::{self, Ask, Awaiting};
use super::expect::argument_reason;
use super::message::{Finding, Inline, Message};
use super::pin::{
    diff::{ChangeKind, ToolChange},
    Definition, DefinitionFinding, Judged, PinError, Pins,
};
use super::reply::{
    audit, call_reason, error_response, error_result, message_reason, result_reason,
};
use super::tools::{Admit, Known, Outcome, Tool, Tools, MAX_TOOLS};
use super::{flush, lock, Id, LineFacts, Out, Screen, Shared, ToServer, MAX_PENDING};

/// Most pages the proxy follows in its own listing; a server that keeps sending
/// `nextCursor` past it fails the listing (the held calls are refused).
///
/// # Example
/// ```
/// assert_eq!(jsongate::mcp::MAX_LIST_PAGES, 100);
/// ```
pub const MAX_LIST_PAGES: usize = 100;

/// Most calls held while the proxy lists tools (each keeps its line).
pub const MAX_HELD: usize = 64;
use crate::action::{Call, Intent, Provenance, Verdict};
use crate::json::{ObjectWriter, Value};
use crate::{Limits, Rejection, Validator};

/// Longest compile deadline honoured (an `Instant` can always be moved by a year).
const MAX_DEADLINE: Duration = Duration::from_secs(365 * 24 * 3600);

/// What a pending request was, so its response can be judged.
#[derive(Debug)]
pub(super) enum Pending {
    /// A forwarded `tools/call`, with the intent it stated.
    Call {
        tool: Arc<Tool>,
        wants_task: bool,
        intent: Option<Intent>,
    },
    /// A forwarded `tasks/result`; `None` when the task is not one the proxy saw created.
    TaskResult { tool: Option<Arc<Tool>> },
    /// The client's own `tools/list`.
    List,
    /// The proxy's own `tools/list` (its `_meta` is reused for the next page).
    OwnList { meta: String },
    /// The client's `initialize` (its answer names the server).
    Initialize,
    /// Any other request.
    Other,
}

/// A call waiting for the proxy's own listing, or for its tool's schemas to compile.
#[derive(Debug)]
pub(super) struct Held {
    pub(super) id: Id,
    pub(super) line: Vec<u8>,
    pub(super) msg: Message,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) pending: HashMap<Id, Pending>,
    pub(super) tools: Tools,
    /// The proxy's own listing is under way.
    pub(super) listing: bool,
    pub(super) held: Vec<Held>,
    /// Task id → the tool whose call created it.
    pub(super) tasks: HashMap<String, Arc<Tool>>,
    pub(super) next_id: u64,
    /// The client closed its side (the server's input is closed once nothing is held).
    pub(super) client_closed: bool,
    /// Pages read by the proxy's own listing so far.
    pub(super) list_pages: usize,
    /// The pins tools are held to.
    pub(super) pins: Pins,
    /// Why each refused tool was refused, in full, for the audit line of a refused call.
    pub(super) refused_tools: HashMap<String, Finding>,
    /// The client declared form elicitation in `initialize`.
    pub(super) client_elicits: bool,
    /// Calls waiting for a person's approval.
    pub(super) awaiting: Vec<Awaiting>,
    /// The identifier-like values that reached the client in this session's untrusted
    /// output (only when the policy names sinks).
    pub(super) provenance: Provenance,
}

impl State {
    /// The client closed its side and nothing is left for the server: its input may close.
    pub(super) fn may_close_server(&self) -> bool {
        self.client_closed && !self.listing && self.held.is_empty()
    }
}

/// A client line that is not a usable message: answered with a JSON-RPC error, not
/// forwarded.
pub(super) fn refuse_line(
    shared: &Shared,
    outs: &mut Vec<Out>,
    id: Option<&Id>,
    f: &Finding,
    facts: &LineFacts<'_>,
) {
    let code = if f.class == "syntax" { -32700 } else { -32600 };
    let msg = format!("jsongate: the message was not forwarded ({})", f.class);
    outs.push(Out::Client(error_response(
        id.unwrap_or(&Id::Null),
        code,
        &msg,
    )));
    audit(
        shared,
        outs,
        None,
        id,
        "to_server",
        "refused",
        Some(f),
        facts,
    );
}

pub(super) fn on_client(
    shared: &Shared,
    st: &mut State,
    msg: Message,
    line: &[u8],
    facts: &LineFacts<'_>,
    outs: &mut Vec<Out>,
    pre: Option<&ArgsCheck>,
) {
    if msg.not_object || msg.bad_id || msg.bad_method {
        let f = Finding::of("invalid_message");
        refuse_line(shared, outs, msg.id.as_ref(), &f, facts);
        return;
    }
    let (Some(method), Some(id)) = (msg.method.as_deref(), msg.id.clone()) else {
        // The answer to the proxy's own elicitation goes no further.
        if let Some(i) = msg
            .id
            .as_ref()
            .filter(|_| msg.method.is_none())
            .and_then(|id| approve::answers(st, id))
        {
            return approve::answered(shared, st, i, line, outs);
        }
        if msg.method.is_none() && msg.id.as_ref().is_some_and(approve::is_own_request) {
            // An answer to an elicitation that was settled already (it timed out): it
            // answers nothing the server sent.
            let f = Finding::of("late_approval_answer");
            audit(
                shared,
                outs,
                None,
                msg.id.as_ref(),
                "to_server",
                "dropped",
                Some(&f),
                facts,
            );
            return;
        }
        // Notifications and responses to the server's requests.
        outs.push(Out::ServerLine);
        return;
    };
    if st.pending.contains_key(&id)
        || st.held.iter().any(|h| h.id == id)
        || st.awaiting.iter().any(|a| a.call == id)
    {
        let f = Finding::of("id_in_use");
        refuse_line(shared, outs, Some(&id), &f, facts);
        return;
    }
    if st.pending.len() + st.held.len() + st.awaiting.len() >= MAX_PENDING {
        let f = Finding::of("too_many_pending");
        refuse_line(shared, outs, Some(&id), &f, facts);
        return;
    }
    match method {
        "tools/call" => on_call(shared, st, id, msg, line, facts, outs, false, pre),
        "tools/list" => {
            st.pending.insert(id, Pending::List);
            outs.push(Out::ServerLine);
        }
        "initialize" => {
            st.client_elicits = approve::declares_elicitation(line, shared);
            st.pending.insert(id, Pending::Initialize);
            outs.push(Out::ServerLine);
        }
        "tasks/result" => {
            let tool = msg
                .param_task_id
                .as_ref()
                .and_then(|t| st.tasks.get(t).cloned());
            st.pending.insert(id, Pending::TaskResult { tool });
            outs.push(Out::ServerLine);
        }
        _ => {
            st.pending.insert(id, Pending::Other);
            outs.push(Out::ServerLine);
        }
    }
}

/// A call's arguments judged against a tool's `inputSchema` before the state lock was taken.
pub(super) struct ArgsCheck {
    tool: Arc<Tool>,
    verdict: Result<(), Finding>,
}

/// For a `tools/call` of a tool whose schemas are compiled: its arguments judged now,
/// outside the state lock (the lock is taken only to look the tool up).
pub(super) fn precheck_call(shared: &Shared, msg: &Message, line: &[u8]) -> Option<ArgsCheck> {
    if msg.method.as_deref() != Some("tools/call") || msg.bad_arguments {
        return None;
    }
    let name = msg.tool.as_deref()?;
    let tool = match lock(&shared.state).tools.get(name)? {
        Known::Usable(t) => Arc::clone(t),
        _ => return None,
    };
    let verdict = check_arguments(&tool, msg, line, shared);
    Some(ArgsCheck { tool, verdict })
}

/// The arguments of a call (`{}` when absent) against the tool's `inputSchema`.
fn check_arguments(
    tool: &Tool,
    msg: &Message,
    line: &[u8],
    shared: &Shared,
) -> Result<(), Finding> {
    let (args, base): (&[u8], u64) = match msg.arguments {
        Some((a, b)) => (&line[a..b], a as u64),
        None => (b"{}", 0),
    };
    Validator::new(&tool.input)
        .validate_slice(args, shared.limits)
        .map_err(|r| Finding::rejection(&r, base, "/params/arguments"))
}

/// Whether a held call must go on waiting: the listing that may name its tool is under way,
/// or its tool's schemas are compiling.
fn must_wait(st: &State, msg: &Message) -> bool {
    match msg.tool.as_deref().map(|n| st.tools.get(n)) {
        Some(Some(Known::Compiling(_))) => true,
        Some(None) => st.listing,
        _ => false,
    }
}

/// A `tools/call` from the client (or a held one, `held` = true: its line is `line`).
#[allow(clippy::too_many_arguments)]
fn on_call(
    shared: &Shared,
    st: &mut State,
    id: Id,
    msg: Message,
    line: &[u8],
    facts: &LineFacts<'_>,
    outs: &mut Vec<Out>,
    held: bool,
    pre: Option<&ArgsCheck>,
) {
    let refuse = |outs: &mut Vec<Out>, f: Finding, what: &str| {
        outs.push(Out::Client(error_result(&id, &call_reason(&f, what))));
        audit(
            shared,
            outs,
            msg.tool.as_deref(),
            Some(&id),
            "to_server",
            "refused",
            Some(&f),
            facts,
        );
    };
    let Some(name) = msg.tool.clone() else {
        return refuse(outs, Finding::of("invalid_call"), "params.name is missing");
    };
    if msg.bad_arguments {
        let f = Finding::of("invalid_call");
        return refuse(outs, f, "params.arguments is not an object");
    }
    if let Some(alerts) = &shared.alerts {
        let now = crate::gate::Timestamp::now().unix_secs();
        let ms = u64::try_from(now).unwrap_or(0).saturating_mul(1000);
        // An unreadable breaker state counts as open.
        if alerts.is_open(&name, ms).unwrap_or(true) {
            let f = Finding::of("breaker_open");
            return refuse(
                outs,
                f,
                "too many of this tool's results were blocked recently; the circuit breaker is open",
            );
        }
        // Read-only fallback: while any breaker is open, only tools the policy marks
        // read_only are forwarded.
        if let Some(policy) = &shared.policy {
            let read_only = policy.tool(&name).is_some_and(|t| t.read_only);
            if !read_only && alerts.any_open(ms).unwrap_or(true) {
                let f = Finding::of("breaker_read_only");
                return refuse(
                    outs,
                    f,
                    "a circuit breaker is open: only read-only tools are allowed until it closes",
                );
            }
        }
    }
    let tool = match st.tools.get(&name) {
        Some(Known::Usable(t)) => Arc::clone(t),
        Some(Known::Unusable(class)) => {
            let class = *class;
            let found = st.refused_tools.get(&name);
            let mut what = match class {
                "schema_compile_timeout" | "schema_compile_busy" => {
                    "the tool's schemas were not compiled in time"
                }
                "tool_not_pinned" => "the tool is not pinned (it is not in the lockfile, or it was not in the first listing)",
                "tool_changed" => "the tool's definition changed since it was pinned",
                "tool_poisoned" => "the tool's definition carries instruction-like or hidden text",
                "tool_definition_too_large" | "tool_definition_unreadable" => {
                    "the tool's definition could not be verified"
                }
                "pin_wrong_server" => "the lockfile is for another server",
                "pin_state_unavailable" => {
                    "the shared pins could not be read or recorded in the state store"
                }
                "tool_listed_twice" => "the server lists two tools under this name",
                _ => "the tool's schemas are unusable",
            }
            .to_owned();
            if class == "tool_poisoned" {
                if let Some(k) = found.and_then(|f| f.keyword.as_deref()) {
                    what.push_str(", pattern ");
                    what.push_str(k);
                }
            }
            // The reason names the class (and pattern); the audit line has the detail.
            let f = Finding {
                class,
                keyword: found.and_then(|f| f.keyword.clone()),
                extra: found.and_then(|f| f.extra.clone()),
                ..Finding::default()
            };
            return refuse(outs, f, &what);
        }
        None if st.tools.complete => {
            return refuse(
                outs,
                Finding::of("unknown_tool"),
                "the server does not list this tool",
            );
        }
        known => {
            // Not ready: the tool's schemas are compiling, or the tools must be listed
            // first. The call waits (it is never forwarded unvalidated).
            if st.held.len() >= MAX_HELD {
                let f = Finding::of("too_many_pending");
                return refuse(outs, f, "too many calls are waiting for the tool list");
            }
            if known.is_none() && !st.listing {
                let meta = own_meta(&msg, line, shared.limits);
                st.list_pages = 0;
                start_listing(st, outs, None, meta);
            }
            st.held.push(Held {
                id,
                line: line.to_vec(),
                msg,
            });
            return;
        }
    };
    // Arguments against the inputSchema (judged before the lock when the tool was known).
    let verdict = match pre {
        Some(p) if Arc::ptr_eq(&p.tool, &tool) => p.verdict.clone(),
        _ => check_arguments(&tool, &msg, line, shared),
    };
    if let Err(f) = verdict {
        // The arguments are the model's own: the reason says what the schema expected
        // (quoting the schema only when its definition was screened clean).
        let args = tool
            .screened_input
            .as_ref()
            .and_then(|_| match msg.arguments {
                Some((a, b)) => Value::parse(&line[a..b], shared.limits).ok(),
                None => Some(Value::Object(Vec::new())),
            });
        let text = argument_reason(&f, tool.screened_input.as_ref(), args.as_ref());
        outs.push(Out::Client(error_result(&id, &text)));
        audit(
            shared,
            outs,
            Some(&name),
            Some(&id),
            "to_server",
            "refused",
            Some(&f),
            facts,
        );
        return;
    }
    if let Some(policy) = &shared.policy {
        let (args, base): (&[u8], u64) = match msg.arguments {
            Some((a, b)) => (&line[a..b], a as u64),
            None => (b"{}", 0),
        };
        let arguments = match Value::parse(args, shared.limits) {
            Ok(v) => v,
            Err(e) => {
                let f = Finding::rejection(&Rejection::Error(e), base, "/params/arguments");
                return refuse(outs, f, "the arguments are unreadable");
            }
        };
        let call = Call {
            tool: name.clone(),
            arguments,
        };
        // Wall-clock time: a shared store compares it with other processes' calls.
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let d = policy.decide_traced(&call, &shared.session, &shared.rate, now_ms, &st.provenance);
        if let Some(e) = &d.facts().state_error {
            // The store failed: audited whatever the deployment chose.
            let mut extra = String::new();
            ObjectWriter::members(&mut extra)
                .str("state_error", e)
                .str("on_state_error", shared.rate.get_on_state_error().as_str());
            let f = Finding {
                class: "state_error",
                extra: Some(extra.into()),
                ..Finding::default()
            };
            audit(
                shared,
                outs,
                Some(&name),
                Some(&id),
                "to_server",
                "flagged",
                Some(&f),
                facts,
            );
        }
        let (class, what) = match d.verdict() {
            Verdict::Allow => ("", ""),
            Verdict::Deny => ("policy_deny", "the policy denies it"),
            Verdict::Ask => ("policy_ask", "approval is required"),
        };
        if d.verdict() == Verdict::Ask {
            let asked = approve::ask(
                shared,
                st,
                &id,
                &tool,
                msg.wants_task,
                line,
                &call,
                &d,
                facts,
                outs,
            );
            match asked {
                Ask::Waiting | Ask::Refused => return,
                Ask::NoWay => {}
            }
        }
        if !class.is_empty() {
            let reason = d.reason().as_str();
            let f = Finding {
                class,
                keyword: Some(reason.to_owned()),
                extra: super::approve::origin_member(&d).map(Into::into),
                ..Finding::default()
            };
            let mut text = format!("{what}: {reason}");
            if let Some(u) = d
                .facts()
                .untrusted
                .as_ref()
                .filter(|_| d.reason() == crate::action::Reason::UntrustedOrigin)
            {
                // The sink is the operator's own pointer; nothing of the upstream's is quoted.
                let from = match &u.origin {
                    Some(_) => "first appeared in untrusted output",
                    None => "may have come from untrusted output",
                };
                text = format!("{text} (the value at {} {from})", u.sink);
            }
            return refuse(outs, f, &text);
        }
        if policy.tracks_provenance() {
            st.provenance.note_call(&call.arguments);
        }
    }
    st.pending.insert(
        id,
        Pending::Call {
            tool,
            wants_task: msg.wants_task,
            intent: facts.intent.clone(),
        },
    );
    if held {
        outs.push(Out::Server(line.to_vec()));
    } else {
        outs.push(Out::ServerLine);
    }
}

/// The intent a `tools/call` states in `params._meta.intent` (a string), bounded; recorded
/// in the call's audit lines and its result's, nothing else.
pub(super) fn call_intent(msg: &Message, line: &[u8], limits: Limits) -> Option<Intent> {
    if msg.method.as_deref() != Some("tools/call") {
        return None;
    }
    let (a, b) = msg.meta?;
    match Value::parse(line.get(a..b)?, limits).ok()?.get("intent")? {
        Value::String(s) => Some(Intent::new(s)),
        _ => None,
    }
}

/// The `_meta` members the proxy copies from a client request into its own `tools/list`:
/// those of the `io.modelcontextprotocol/` namespace (protocol version and client
/// capabilities, which the 2026-07-28 revision requires on every request), as JSON text.
fn own_meta(msg: &Message, line: &[u8], limits: Limits) -> String {
    let Some((a, b)) = msg.meta else {
        return String::new();
    };
    let Ok(Value::Object(members)) = Value::parse(&line[a..b], limits) else {
        return String::new();
    };
    let kept: Vec<(String, Value)> = members
        .into_iter()
        .filter(|(k, _)| k.starts_with("io.modelcontextprotocol/"))
        .collect();
    if kept.is_empty() {
        String::new()
    } else {
        Value::Object(kept).to_json()
    }
}

/// Sends the proxy's own `tools/list` (a first page when `cursor` is `None`).
fn start_listing(st: &mut State, outs: &mut Vec<Out>, cursor: Option<&str>, meta: String) {
    // An id no client request is using.
    let id = loop {
        st.next_id += 1;
        let id = Id::Str(format!("jsongate-tools-list-{}", st.next_id));
        if !st.pending.contains_key(&id) {
            break id;
        }
    };
    let mut line = String::new();
    let mut o = ObjectWriter::new(&mut line);
    o.str("jsonrpc", "2.0")
        .raw("id", &id.to_json())
        .str("method", "tools/list");
    let mut params = o.object("params");
    if let Some(c) = cursor {
        params.str("cursor", c);
    }
    if !meta.is_empty() {
        params.raw("_meta", &meta);
    }
    params.finish();
    o.finish();
    st.listing = true;
    st.pending.insert(id, Pending::OwnList { meta });
    outs.push(Out::Server(line.into_bytes()));
}

/// The first instruction-like phrase in the names and strings of a line, if any.
fn screen_line(line: &[u8], limits: Limits) -> Option<Finding> {
    let findings = crate::screen::screen(line, limits).ok()?;
    let x = findings.into_iter().next()?;
    Some(Finding {
        class: "screen",
        keyword: Some(x.pattern.to_owned()),
        keyword_location: None,
        pointer: Some(x.pointer),
        offset: Some(x.at),
        extra: None,
    })
}

/// The proxy's own listing failed (`class`): its answer is dropped, the held calls refused.
fn fail_listing(
    shared: &Shared,
    st: &mut State,
    id: &Id,
    class: &'static str,
    facts: &LineFacts<'_>,
    outs: &mut Vec<Out>,
) {
    let f = Finding::of(class);
    audit(
        shared,
        outs,
        None,
        Some(id),
        "to_client",
        "dropped",
        Some(&f),
        facts,
    );
    release_held(shared, st, outs, true);
}

/// The proxy's own listing ended (or failed: `failed` = true, every held call is refused);
/// the held calls are decided again.
pub(super) fn release_held(shared: &Shared, st: &mut State, outs: &mut Vec<Out>, failed: bool) {
    st.listing = false;
    if !failed {
        return retry_held(shared, st, outs);
    }
    for h in std::mem::take(&mut st.held) {
        let facts = LineFacts {
            bytes: &h.line,
            size: h.line.len() as u64,
            sha256: None,
            intent: call_intent(&h.msg, &h.line, shared.limits),
        };
        let f = Finding::of("tools_unknown");
        let text = call_reason(&f, "the proxy could not list the server's tools");
        outs.push(Out::Client(error_result(&h.id, &text)));
        audit(
            shared,
            outs,
            h.msg.tool.as_deref(),
            Some(&h.id),
            "to_server",
            "refused",
            Some(&f),
            &facts,
        );
    }
}

/// Decides every held call that no longer has to wait (its tool is known, usable or not, or
/// no listing can name it any more).
fn retry_held(shared: &Shared, st: &mut State, outs: &mut Vec<Out>) {
    for h in std::mem::take(&mut st.held) {
        if must_wait(st, &h.msg) {
            st.held.push(h);
            continue;
        }
        let facts = LineFacts {
            bytes: &h.line,
            size: h.line.len() as u64,
            sha256: None,
            intent: call_intent(&h.msg, &h.line, shared.limits),
        };
        on_call(shared, st, h.id, h.msg, &h.line, &facts, outs, true, None);
    }
}

/// The compile worker finished a job (or it missed its deadline): its tools are installed
/// and the calls waiting for them decided. Runs on the compile coordinator's thread.
pub(super) fn installed(shared: &Shared, outcome: Outcome) {
    let mut outs = Vec::new();
    let close = {
        let mut st = lock(&shared.state);
        st.tools.install(outcome);
        retry_held(shared, &mut st, &mut outs);
        st.may_close_server()
    };
    flush(shared, outs, &[], true);
    if close {
        let _ = shared.server_queue.send(ToServer::Close);
    }
}

/// Learns one `tools/list` page: each tool is held to its pin and screened, those refused
/// are audited (and known as unusable, with their class), and the schemas of the others go
/// to the compile worker (or, when it is busy, their tools are unusable at once). Returns
/// the indices (in `result.tools`) of the tools the client must not see.
/// Audits a listed item that the client will not see, with the finding `code`.
fn drop_listed(
    shared: &Shared,
    outs: &mut Vec<Out>,
    name: Option<&str>,
    id: &Id,
    code: &'static str,
    facts: &LineFacts<'_>,
) {
    let f = Finding::of(code);
    audit(
        shared,
        outs,
        name,
        Some(id),
        "to_client",
        "removed",
        Some(&f),
        facts,
    );
}

#[allow(clippy::too_many_arguments)]
fn learn_page(
    shared: &Shared,
    st: &mut State,
    msg: &Message,
    line: &[u8],
    id: &Id,
    pre: &Prejudged,
    facts: &LineFacts<'_>,
    outs: &mut Vec<Out>,
) -> Vec<usize> {
    let deadline = Instant::now() + shared.compile_deadline.min(MAX_DEADLINE);
    let computed;
    let listed = match &pre.listed {
        Some(l) => l,
        None => {
            computed = identify(msg, line, shared.limits);
            &computed
        }
    };
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for t in &msg.tools {
        if let Some(n) = &t.name {
            *seen.entry(n).or_default() += 1;
        }
    }
    let mut room = MAX_TOOLS.saturating_sub(st.tools.len());
    let mut admit = Vec::with_capacity(msg.tools.len());
    let mut removed = Vec::new();
    for (i, t) in msg.tools.iter().enumerate() {
        let Some(name) = t.name.as_deref() else {
            // Not an object with a string name: it cannot be pinned or called, and the
            // client does not see it.
            drop_listed(shared, outs, None, id, "tool_definition_unreadable", facts);
            admit.push(Admit::Skip);
            removed.push(i);
            continue;
        };
        let known = st.tools.get(name).is_some();
        if !known && room == 0 {
            // Past the remembered-tools bound: not remembered, not shown, audited.
            drop_listed(shared, outs, Some(name), id, "too_many_tools", facts);
            admit.push(Admit::Skip);
            removed.push(i);
            continue;
        }
        if !known {
            room -= 1;
        }
        let verdict = judge_tool(
            shared,
            st,
            name,
            seen[name] > 1,
            listed.get(i),
            id,
            facts,
            outs,
        );
        match verdict {
            Ok(screened_input) => {
                st.refused_tools.remove(name);
                admit.push(Admit::Use { screened_input });
            }
            Err(f) => {
                audit(
                    shared,
                    outs,
                    Some(name),
                    Some(id),
                    "to_client",
                    "removed",
                    Some(&f),
                    facts,
                );
                admit.push(Admit::Refuse(f.class));
                if st.refused_tools.len() < MAX_TOOLS || st.refused_tools.contains_key(name) {
                    st.refused_tools.insert(name.to_owned(), f);
                }
                removed.push(i);
            }
        }
    }
    if let Some(job) = st.tools.learn(msg, line, deadline, &admit) {
        if let Err(outcome) = shared.compiler.submit(job) {
            st.tools.install(outcome);
        }
    }
    removed
}

/// A listing ended (a page without `nextCursor`): tools are no longer pinned on first use,
/// and each pinned tool it left out is audited once (`flagged`, class `tool_removed`).
fn listing_complete(
    shared: &Shared,
    st: &mut State,
    id: &Id,
    facts: &LineFacts<'_>,
    outs: &mut Vec<Out>,
) {
    st.pins.listing_complete();
    let generation = st.tools.generation;
    let tools = &st.tools;
    for def in st.pins.removed(generation, |n| tools.get(n).is_some()) {
        let gone = ToolChange::new(ChangeKind::ToolRemoved, "", None, None, None);
        let f = Finding {
            class: "tool_removed",
            extra: Some(definition_detail_boxed(
                &def,
                Some(def.sha256()),
                &[gone],
                &[],
            )),
            ..Finding::default()
        };
        audit(
            shared,
            outs,
            Some(def.name()),
            Some(id),
            "to_client",
            "flagged",
            Some(&f),
            facts,
        );
    }
}

/// One listed tool held to its pin and screened: `Ok` with its `inputSchema` when the
/// definition was clean, or the finding it is refused for. Flagged findings (screening in
/// flag mode, a change adopted under `--on-tool-change warn`) are audited here.
#[allow(clippy::too_many_arguments)]
fn judge_tool(
    shared: &Shared,
    st: &mut State,
    name: &str,
    twice: bool,
    listed: Option<&Listed>,
    id: &Id,
    facts: &LineFacts<'_>,
    outs: &mut Vec<Out>,
) -> Result<Option<Value>, Finding> {
    if twice {
        return Err(Finding::of("tool_listed_twice"));
    }
    let (def, found) = match listed {
        Some(Some(Ok((d, f)))) => (d, f),
        Some(Some(Err(e))) => return Err(Finding::of(e.class())),
        _ => return Err(Finding::of("tool_definition_unreadable")),
    };
    let flag = |f: &Finding, outs: &mut Vec<Out>| {
        audit(
            shared,
            outs,
            Some(name),
            Some(id),
            "to_client",
            "flagged",
            Some(f),
            facts,
        );
    };
    if let Some(first) = found.first() {
        let f = Finding {
            class: "tool_poisoned",
            keyword: Some(first.pattern.to_owned()),
            pointer: Some(first.pointer.clone()),
            extra: Some(definition_detail_boxed(def, None, &[], found)),
            ..Finding::default()
        };
        if shared.screen_tools != Screen::Flag {
            return Err(f);
        }
        flag(&f, outs);
    }
    let pinned = st.pins.pinned_sha(name).map(str::to_owned);
    match st.pins.judge(def) {
        Judged::Pinned => {}
        Judged::Adopted(changes) => {
            let f = Finding {
                class: "tool_changed",
                extra: Some(definition_detail_boxed(
                    def,
                    pinned.as_deref(),
                    &changes,
                    &[],
                )),
                ..Finding::default()
            };
            flag(&f, outs);
        }
        Judged::Refused(class, changes) => {
            return Err(Finding {
                class,
                extra: Some(definition_detail_boxed(
                    def,
                    pinned.as_deref(),
                    &changes,
                    &[],
                )),
                ..Finding::default()
            });
        }
    }
    Ok(found
        .is_empty()
        .then(|| def.value().get("inputSchema").cloned())
        .flatten())
}

fn definition_detail_boxed(
    def: &Definition,
    pinned: Option<&str>,
    changes: &[ToolChange],
    found: &[DefinitionFinding],
) -> Box<str> {
    definition_detail(def, pinned, changes, found).into_boxed_str()
}

/// The audit line's `"definition"` member: the listed definition's hash, the pinned one,
/// the top-level members that changed, each change, and the screening findings (pattern
/// ids and pointers, never the text).
fn definition_detail(
    def: &Definition,
    pinned: Option<&str>,
    changes: &[ToolChange],
    found: &[DefinitionFinding],
) -> String {
    let mut s = String::new();
    let mut top = ObjectWriter::members(&mut s);
    let mut d = top.object("definition");
    d.str("sha256", def.sha256())
        .opt_str("pinned_sha256", pinned);
    let mut members: Vec<&str> = changes
        .iter()
        .filter_map(|c| c.pointer.split('/').nth(1))
        .collect();
    members.dedup();
    let mut a = d.array("members");
    for m in members {
        a.str(m);
    }
    a.finish();
    let mut a = d.array("changes");
    for c in changes {
        c.write_json(a.item(), false);
    }
    a.finish();
    let mut a = d.array("findings");
    for f in found {
        a.object()
            .str("pattern", f.pattern)
            .str("pointer", &f.pointer);
    }
    a.finish();
    d.finish();
    top.finish();
    s
}

/// The listing the client sees when tools were removed from it: the page without the items
/// at `removed` (re-serialised; everything else kept). A page that cannot be read again
/// (it was read once with the same limits) is answered with an error instead.
fn filtered_listing(id: &Id, line: &[u8], removed: &[usize], limits: Limits) -> Vec<u8> {
    let Ok(Value::Object(mut top)) = Value::parse(line, limits) else {
        return error_response(
            id,
            -32603,
            "jsongate: the tool listing could not be filtered",
        );
    };
    for (k, v) in &mut top {
        if k != "result" {
            continue;
        }
        if let Value::Object(result) = v {
            for (rk, rv) in result.iter_mut() {
                if let (true, Value::Array(items)) = (rk == "tools", rv) {
                    let mut i = 0;
                    items.retain(|_| {
                        i += 1;
                        removed.binary_search(&(i - 1)).is_err()
                    });
                }
            }
        }
    }
    Value::Object(top).to_json().into_bytes()
}

/// A server line that failed the scan (or was not an object): never forwarded. The request
/// it answers — its recovered id, or the only one pending — gets the proxy's answer.
pub(super) fn fail_server_line(
    shared: &Shared,
    st: &mut State,
    id: Option<&Id>,
    guess: bool,
    f: &Finding,
    facts: &LineFacts<'_>,
    outs: &mut Vec<Out>,
) {
    let target = match id {
        Some(id) if st.pending.contains_key(id) => Some(id.clone()),
        Some(id) => alias_of_pending(st, id),
        None if guess && st.pending.len() == 1 => st.pending.keys().next().cloned(),
        None => None,
    };
    let Some(target) = target else {
        audit(
            shared,
            outs,
            None,
            id,
            "to_client",
            "dropped",
            Some(f),
            facts,
        );
        return;
    };
    let p = st.pending.remove(&target).expect("pending");
    answer_failed(shared, st, &target, &p, f, facts, outs);
}

/// A batch line (an array): never forwarded; each pending request it names is answered.
pub(super) fn fail_batch(
    shared: &Shared,
    st: &mut State,
    ids: &[Id],
    f: &Finding,
    facts: &LineFacts<'_>,
    outs: &mut Vec<Out>,
) {
    let mut answered = false;
    for id in ids {
        if st.pending.contains_key(id) || alias_of_pending(st, id).is_some() {
            fail_server_line(shared, st, Some(id), false, f, facts, outs);
            answered = true;
        }
    }
    if !answered {
        fail_server_line(shared, st, None, false, f, facts, outs);
    }
}

/// The pending request whose id `id` imitates: the same number written another way (`2.0`,
/// `2e0`) or as a string (`"2"`). Such a response is never forwarded (clients differ on
/// whether it answers their request), but the request it meant is answered by the proxy so
/// that the client does not wait for its timeout.
fn alias_of_pending(st: &State, id: &Id) -> Option<Id> {
    let key = numeric_value(id)?;
    st.pending
        .keys()
        .find(|k| *k != id && numeric_value(k) == Some(key))
        .cloned()
}

/// The integer an id denotes, if it is a number (or a string holding one) with an integral
/// value below 2^53.
fn numeric_value(id: &Id) -> Option<i64> {
    let text = match id {
        Id::Num(t) | Id::Str(t) => t.trim(),
        Id::Null => return None,
    };
    if text.is_empty()
        || !text
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
    {
        return None;
    }
    let x: f64 = text.parse().ok()?;
    #[allow(clippy::cast_possible_truncation)]
    (x.is_finite() && x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0).then_some(x as i64)
}

/// Answers a request whose response was rejected.
fn answer_failed(
    shared: &Shared,
    st: &mut State,
    id: &Id,
    p: &Pending,
    f: &Finding,
    facts: &LineFacts<'_>,
    outs: &mut Vec<Out>,
) {
    let (tool, verdict) = match p {
        Pending::Call { tool, .. } | Pending::TaskResult { tool: Some(tool) } => {
            outs.push(Out::Client(error_result(id, &result_reason(f))));
            (Some(tool.name.as_str()), "replaced")
        }
        Pending::TaskResult { tool: None } => {
            outs.push(Out::Client(error_result(id, &result_reason(f))));
            (None, "replaced")
        }
        // The proxy's own listing: nobody to answer but the held calls.
        Pending::OwnList { .. } => (None, "dropped"),
        Pending::List | Pending::Other | Pending::Initialize => {
            let text = format!("jsongate: the server's response was rejected ({})", f.class);
            outs.push(Out::Client(error_response(id, -32603, &text)));
            (None, "replaced")
        }
    };
    audit(
        shared,
        outs,
        tool,
        Some(id),
        "to_client",
        verdict,
        Some(f),
        facts,
    );
    if matches!(p, Pending::OwnList { .. }) {
        release_held(shared, st, outs, true);
    }
}

/// What was judged of a server line before the state lock was taken: the tool that would
/// judge it, the verdict of its `structuredContent` against that tool's `outputSchema` (when
/// it was not validated while scanning), and screening. Each is recomputed under the lock
/// if the line turns out to be judged by another tool.
#[derive(Default)]
pub(super) struct Prejudged {
    tool: Option<Arc<Tool>>,
    output: Option<Result<(), Finding>>,
    screen: Screened,
    /// The definitions of a listing page, canonicalised, hashed and screened.
    listed: Option<Vec<Listed>>,
}

/// One item of a listing page: its definition and what screening found in it, or why it
/// could not be read (`None`: not an object).
pub(super) type Listed = Option<Result<(Definition, Vec<DefinitionFinding>), PinError>>;

/// Canonicalises, hashes and screens every tool of a listing page.
fn identify(msg: &Message, line: &[u8], limits: Limits) -> Vec<Listed> {
    msg.tools
        .iter()
        .map(|t| {
            t.span.map(|(a, b)| {
                Definition::from_slice(&line[a..b], limits).map(|d| {
                    let f = d.screen();
                    (d, f)
                })
            })
        })
        .collect()
}

/// Whether a line was screened before the lock, and what was found.
#[derive(Default)]
enum Screened {
    #[default]
    NotYet,
    Done(Option<Finding>),
}

impl Screened {
    /// The screening finding of `line`, screening it now if it was not yet.
    fn get(&self, line: &[u8], limits: Limits) -> Option<Finding> {
        match self {
            Screened::Done(f) => f.clone(),
            Screened::NotYet => screen_line(line, limits),
        }
    }
}

/// Judges what can be judged of a whole server line without the state lock.
pub(super) fn prejudge(shared: &Shared, msg: &Message, inline: &Inline, line: &[u8]) -> Prejudged {
    let mut p = Prejudged::default();
    if msg.method.is_some() {
        if shared.screen.is_some() {
            p.screen = Screened::Done(screen_line(line, shared.limits));
        }
        return p;
    }
    let Some(id) = &msg.id else {
        return p;
    };
    let tool = match lock(&shared.state).pending.get(id) {
        Some(Pending::Call { tool, .. }) => Some(Arc::clone(tool)),
        Some(Pending::TaskResult { tool }) => tool.clone(),
        Some(Pending::List | Pending::OwnList { .. }) => {
            if msg.has_tools {
                p.listed = Some(identify(msg, line, shared.limits));
            }
            return p;
        }
        _ => return p,
    };
    if let (Some(t), Some((a, b)), Inline::NotRun) = (&tool, msg.structured, inline) {
        if let Some(schema) = &t.output {
            p.output = Some(check_structured(schema, line, a, b, shared));
        }
    }
    if shared.screen.is_some() {
        p.screen = Screened::Done(screen_line(line, shared.limits));
    }
    p.tool = tool;
    p
}

fn check_structured(
    schema: &crate::Schema,
    line: &[u8],
    a: usize,
    b: usize,
    shared: &Shared,
) -> Result<(), Finding> {
    Validator::new(schema)
        .validate_slice(&line[a..b], shared.limits)
        .map_err(|r| Finding::rejection(&r, a as u64, "/result/structuredContent"))
}

/// The finding of a scan that inline validation stopped (the line was not kept).
fn inline_finding(inline: &Inline) -> Option<Finding> {
    match inline {
        Inline::Violation(v) => Some(Finding::violation(v, 0, "/result/structuredContent")),
        Inline::BudgetExceeded => Some(Finding::of("budget_exceeded")),
        Inline::Valid | Inline::NotRun => None,
    }
}

/// A server line that was read whole (`line` is `None` when the scan stopped early and the
/// line was not kept) and is an object.
#[allow(clippy::too_many_arguments)]
pub(super) fn on_server(
    shared: &Shared,
    st: &mut State,
    msg: &Message,
    inline: &Inline,
    line: Option<&[u8]>,
    facts: &LineFacts<'_>,
    outs: &mut Vec<Out>,
    pre: &Prejudged,
) {
    // A line whose scan stopped was decided by inline validation: it is not kept, so it can
    // only be answered for (the id was read before the structured content, and is pending).
    let Some(line) = line else {
        let f = inline_finding(inline).unwrap_or_else(|| Finding::of("invalid_message"));
        return fail_server_line(shared, st, msg.id.as_ref(), false, &f, facts, outs);
    };
    if msg.bad_id || msg.bad_method {
        let f = Finding::of("invalid_message");
        return fail_server_line(shared, st, msg.id.as_ref(), true, &f, facts, outs);
    }
    if msg.method.is_some() {
        if msg.has_result || msg.has_error {
            // Neither a request nor a response.
            let f = Finding::of("invalid_message");
            return fail_server_line(shared, st, msg.id.as_ref(), false, &f, facts, outs);
        }
        return from_server(shared, st, msg, line, facts, outs, pre);
    }
    // A response has exactly one of `result` and `error` (JSON-RPC 2.0 §5). A JSON object
    // that has neither (a structured log line, say) answers nothing unless it names a
    // pending id.
    let Some(id) = msg.id.clone().filter(|_| msg.has_result != msg.has_error) else {
        let f = Finding::of("invalid_message");
        return fail_server_line(shared, st, msg.id.as_ref(), false, &f, facts, outs);
    };
    if !st.pending.contains_key(&id) && alias_of_pending(st, &id).is_some() {
        let f = Finding::of("id_mismatch");
        return fail_server_line(shared, st, Some(&id), false, &f, facts, outs);
    }
    let Some(p) = st.pending.remove(&id) else {
        let f = Finding::of("unsolicited_response");
        audit(
            shared,
            outs,
            None,
            Some(&id),
            "to_client",
            "dropped",
            Some(&f),
            facts,
        );
        return;
    };
    match p {
        Pending::Other => {
            // `resources/read`, `prompts/get`, `tasks/get`, …: output the agent may read.
            track(shared, st, "(response)", &id, line, None);
            outs.push(Out::ClientLine);
        }
        Pending::Initialize => {
            // Its `instructions` often go straight into the model's context.
            track(shared, st, "initialize", &id, line, None);
            if let Some(n) = msg.server_name.as_deref().filter(|_| msg.has_result) {
                if st.pins.server_named(n) {
                    let f = Finding::of("pin_wrong_server");
                    audit(
                        shared,
                        outs,
                        None,
                        Some(&id),
                        "to_client",
                        "flagged",
                        Some(&f),
                        facts,
                    );
                }
            }
            outs.push(Out::ClientLine);
        }
        Pending::List => {
            track(shared, st, "tools/list", &id, line, None);
            if !(msg.has_result && !msg.bad_result && msg.has_tools) {
                outs.push(Out::ClientLine);
                return;
            }
            let removed = learn_page(shared, st, msg, line, &id, pre, facts, outs);
            if msg.next_cursor.is_none() {
                listing_complete(shared, st, &id, facts, outs);
            }
            if removed.is_empty() {
                outs.push(Out::ClientLine);
            } else {
                outs.push(Out::Client(filtered_listing(
                    &id,
                    line,
                    &removed,
                    shared.limits,
                )));
            }
        }
        Pending::OwnList { meta } => {
            if !msg.has_result || msg.bad_result || !msg.has_tools {
                return fail_listing(shared, st, &id, "tools_list_failed", facts, outs);
            }
            learn_page(shared, st, msg, line, &id, pre, facts, outs);
            st.list_pages += 1;
            match &msg.next_cursor {
                Some(_) if st.list_pages >= MAX_LIST_PAGES => {
                    fail_listing(shared, st, &id, "tools_list_too_long", facts, outs);
                }
                Some(c) => start_listing(st, outs, Some(c), meta),
                None => {
                    listing_complete(shared, st, &id, facts, outs);
                    st.tools.complete = true;
                    release_held(shared, st, outs, false);
                }
            }
        }
        Pending::Call {
            tool,
            wants_task,
            intent,
        } => {
            // The result's audit line carries the intent its call stated.
            let facts = &LineFacts {
                bytes: facts.bytes,
                size: facts.size,
                sha256: facts.sha256.clone(),
                intent,
            };
            let passed = judge_result(
                shared,
                Some(&tool),
                &id,
                msg,
                inline,
                line,
                facts,
                outs,
                pre,
                wants_task,
            );
            if let Some(relayed) = &passed {
                track(shared, st, &tool.name, &id, line, relayed.bytes());
            }
            // A task-augmented call's answer creates the task; its `tasks/result` is judged
            // against this tool.
            if passed.is_some() && wants_task && msg.has_task && msg.structured.is_none() {
                if let Some(t) = &msg.task_id {
                    if st.tasks.len() < MAX_PENDING {
                        st.tasks.insert(t.clone(), Arc::clone(&tool));
                    }
                }
            }
        }
        Pending::TaskResult { tool } => {
            let passed = judge_result(
                shared,
                tool.as_ref(),
                &id,
                msg,
                inline,
                line,
                facts,
                outs,
                pre,
                false,
            );
            if let Some(relayed) = &passed {
                let name = tool.as_ref().map_or("", |t| t.name.as_str());
                track(shared, st, name, &id, line, relayed.bytes());
            }
        }
    }
}

/// Records the identifier-like values of output that reached the client (a response's
/// `result` or `error`, a server message's `params`) as untrusted, under the tool (or
/// method) and request id that brought them; only when the policy names sinks. `relayed`:
/// the bytes the client got instead of `line` (cut or cleaned), read too, so that neither
/// form escapes. The text blocks of a result are also read joined, as a client shows them.
/// Output that cannot be read for values saturates the tracker (it fails closed).
fn track(
    shared: &Shared,
    st: &mut State,
    tool: &str,
    id: &Id,
    line: &[u8],
    relayed: Option<&[u8]>,
) {
    if !shared
        .policy
        .as_ref()
        .is_some_and(crate::action::Policy::tracks_provenance)
    {
        return;
    }
    let rid = id.to_json();
    for bytes in std::iter::once(line).chain(relayed) {
        let Ok(Value::Object(members)) = Value::parse(bytes, shared.limits) else {
            st.provenance.saturate();
            return;
        };
        for (name, v) in &members {
            if !matches!(name.as_str(), "result" | "error" | "params") {
                continue;
            }
            st.provenance.record(tool, &rid, v);
            if let Some(Value::Array(blocks)) = v.get("content") {
                if blocks.len() > 1 {
                    let joined: String = blocks
                        .iter()
                        .filter_map(|b| b.get("text").and_then(Value::as_str))
                        .collect();
                    let mut joined_at = Provenance::new();
                    joined_at.record(tool, &rid, &Value::String(joined));
                    st.provenance.absorb(joined_at, "/content");
                }
            }
        }
    }
}

/// A request or notification from the server: relayed as it is, unless screening finds
/// instruction-like text in it (`flag`: relayed and audited; `reject`: a request is
/// answered to the server with a JSON-RPC error, a notification dropped, both audited).
fn from_server(
    shared: &Shared,
    st: &mut State,
    msg: &Message,
    line: &[u8],
    facts: &LineFacts<'_>,
    outs: &mut Vec<Out>,
    pre: &Prejudged,
) {
    if msg.method.as_deref() == Some("notifications/tools/list_changed") {
        st.tools.clear();
    }
    let finding = match shared.screen {
        None => None,
        Some(_) => pre.screen.get(line, shared.limits),
    };
    let Some(f) = finding else {
        // Progress notifications carry counters and tokens, not text for the model.
        if let Some(method) = msg
            .method
            .as_deref()
            .filter(|m| *m != "notifications/progress")
        {
            track(
                shared,
                st,
                method,
                msg.id.as_ref().unwrap_or(&Id::Null),
                line,
                None,
            );
        }
        outs.push(Out::ClientLine);
        return;
    };
    let id = msg.id.as_ref();
    let verdict = match (shared.screen, id) {
        (Some(Screen::Reject | Screen::Redact), Some(id)) => {
            outs.push(Out::Server(error_response(id, -32603, &message_reason(&f))));
            "refused"
        }
        (Some(Screen::Reject | Screen::Redact), None) => "dropped",
        _ => {
            if let Some(method) = &msg.method {
                track(shared, st, method, id.unwrap_or(&Id::Null), line, None);
            }
            outs.push(Out::ClientLine);
            "flagged"
        }
    };
    audit(
        shared,
        outs,
        None,
        id,
        "to_client",
        verdict,
        Some(&f),
        facts,
    );
}

/// What of a judged result reached the client.
enum Relayed {
    /// The line, as it is.
    AsItIs,
    /// The line cut or cleaned: these bytes.
    Changed(Vec<u8>),
}

impl Relayed {
    /// The bytes that replaced the line, if any.
    fn bytes(&self) -> Option<&[u8]> {
        match self {
            Relayed::AsItIs => None,
            Relayed::Changed(b) => Some(b),
        }
    }
}

/// A response to a forwarded `tools/call` or `tasks/result` (a whole line, with exactly one
/// of `result` and `error`): passes unchanged, or is replaced. `task_call` says the call
/// asked to run as a task (its answer may be a `CreateTaskResult`). Returns `None` when it
/// was replaced, else what reached the client.
#[allow(clippy::too_many_arguments)]
fn judge_result(
    shared: &Shared,
    tool: Option<&Arc<Tool>>,
    id: &Id,
    msg: &Message,
    inline: &Inline,
    line: &[u8],
    facts: &LineFacts<'_>,
    outs: &mut Vec<Out>,
    pre: &Prejudged,
    task_call: bool,
) -> Option<Relayed> {
    let name = tool.map(|t| t.name.as_str());
    let verdict = (|| {
        if msg.bad_result {
            return Err(Finding::of("invalid_result"));
        }
        if msg.has_error {
            // A JSON-RPC error (and no result): the client reports it as a failed call.
            return Ok(());
        }
        let Some(tool) = tool else {
            return Err(Finding::of("unknown_task"));
        };
        if let Some(f) = inline_finding(inline) {
            return Err(f);
        }
        if msg.bad_structured {
            return Err(Finding::of("structured_content_not_object"));
        }
        if msg.bad_is_error || msg.bad_content {
            return Err(Finding::of("invalid_result"));
        }
        let Some(schema) = &tool.output else {
            return Ok(());
        };
        let Some((a, b)) = msg.structured else {
            // Only a complete, successful result must carry the tool's output: an `isError`
            // result, a request for more input (`resultType` other than `complete`) and a
            // task's creation do not.
            let exempt = msg.is_error == Some(true)
                || msg.result_type.as_deref().is_some_and(|t| t != "complete")
                || (task_call && msg.has_task);
            return if exempt {
                Ok(())
            } else {
                Err(Finding::of("missing_structured_content"))
            };
        };
        // Present structured content is always validated, whatever else the result says.
        match (inline, &pre.output) {
            (Inline::Valid, _) => Ok(()),
            (_, Some(r)) if pre.tool.as_ref().is_some_and(|t| Arc::ptr_eq(t, tool)) => r.clone(),
            _ => check_structured(schema, line, a, b, shared),
        }
    })();
    // The result budget: structured content is never shortened; text may be cut.
    let mut cut = None;
    let budget = name
        .and_then(|n| shared.tool_result_bytes.get(n).copied())
        .or(shared.max_result_bytes);
    let verdict = match (verdict, budget) {
        (Ok(()), Some(max)) if facts.size > max && !msg.has_error => {
            let allowed = shared.truncate_text && msg.structured.is_none();
            match allowed.then(|| super::budget::cut_text(line, max, shared.limits)) {
                Some(Some(bytes)) => {
                    cut = Some(bytes);
                    Ok(())
                }
                _ => Err(Finding {
                    class: "over_budget",
                    offset: Some(max),
                    ..Finding::default()
                }),
            }
        }
        (v, _) => v,
    };
    // Screening (opt-in) reads every name and string of a result that passed.
    let mut cleaned = false;
    let (verdict, flagged) = match (verdict, shared.screen) {
        (Ok(()), Some(mode)) => {
            let found = pre.screen.get(line, shared.limits);
            match found {
                Some(f) if mode == Screen::Reject => (Err(f), None),
                Some(f) if mode == Screen::Redact => {
                    let source = cut.as_deref().unwrap_or(line);
                    let output = tool.and_then(|t| t.output.as_ref());
                    let truncated = cut.is_some();
                    match super::clean::redact_result(
                        source,
                        output,
                        shared.limits,
                        budget,
                        truncated,
                    ) {
                        // The finding was in the text cut off: the cut result, as it is.
                        Some((_, pointers)) if pointers.is_empty() => (Ok(()), None),
                        Some((bytes, pointers)) => {
                            cut = Some(bytes);
                            cleaned = true;
                            (Ok(()), Some(super::clean::with_cleaned(f, &pointers)))
                        }
                        None => (Err(f), None),
                    }
                }
                Some(f) => (Ok(()), Some(f)),
                None => (Ok(()), None),
            }
        }
        (v, _) => (v, None),
    };
    match verdict {
        Ok(()) => {
            let how = if cleaned {
                "cleaned"
            } else if cut.is_some() {
                "truncated"
            } else if flagged.is_some() {
                "flagged"
            } else {
                "passed"
            };
            let relayed = cut.clone();
            match cut {
                Some(bytes) => outs.push(Out::Client(bytes)),
                None => outs.push(Out::ClientLine),
            }
            audit(
                shared,
                outs,
                name,
                Some(id),
                "to_client",
                how,
                flagged.as_ref(),
                facts,
            );
            Some(match relayed {
                Some(bytes) => Relayed::Changed(bytes),
                None => Relayed::AsItIs,
            })
        }
        Err(f) => {
            outs.push(Out::Client(error_result(id, &result_reason(&f))));
            audit(
                shared,
                outs,
                name,
                Some(id),
                "to_client",
                "replaced",
                Some(&f),
                facts,
            );
            None
        }
    }
}
