//! Approvals in the relay: a call the policy answers `ask` waits for a person instead of
//! being refused, when there is a way to ask one.
//!
//! - The client declared the `elicitation` capability (form mode) in `initialize`: the proxy
//!   sends it an `elicitation/create` request naming the tool, the reason, the arguments as
//!   [`show_arguments`] shows them (the policy's sink arguments first, every argument named,
//!   each value cut on its own) and their SHA-256, with a `requestedSchema` of one boolean `approve`.
//!   Only `action: "accept"` with `approve: true` forwards the call; `decline`, `cancel`,
//!   an error, anything else, or no answer in time refuses it (`not_approved`).
//! - Otherwise, with [`Config::approval_store`](super::Config::approval_store): a pending
//!   [`Approval`] record in the store (the one `jsongate decide --approval-wait` uses),
//!   announced through [`Config::on_approval`](super::Config::on_approval), answered by
//!   `jsongate approve ID`; the answer counts only for the exact tool and argument digest.
//! - Otherwise the call is refused as before (`policy_ask`).
//!
//! Waiting never holds the relay: the call is parked in the state ([`Awaiting`]), its id
//! stays in use, other messages flow, and the answer (a client response, read by the client
//! loop) or the approvals thread ([`run`]: store answers and deadlines) settles it. Every
//! settlement goes through [`Decision::approved`], so only an `ask` can become `allow`;
//! each step is audited with `"approval":{"id","via","outcome"}`.
//!
//! This module does not decide policy and does not read the call's arguments beyond what
//! the decision already parsed.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::message::Finding;
use super::reply::{audit, call_reason, error_response, error_result};
use super::session::{Pending, State};
use super::tools::Tool;
use super::{flush, lock, Id, LineFacts, Out, Shared};
use crate::action::{
    arguments_digest, show_arguments, Approval, ApprovalOutcome, Call, Decision, Intent,
    ShowLimits, Verdict,
};
use crate::json::{ObjectWriter, Value};

/// Default time a call waits for a person: two minutes.
///
/// # Example
/// ```
/// use jsongate::mcp::{Config, DEFAULT_APPROVAL_WAIT};
/// assert_eq!(Config::default().get_approval_wait(), DEFAULT_APPROVAL_WAIT);
/// assert_eq!(DEFAULT_APPROVAL_WAIT.as_secs(), 120);
/// ```
pub const DEFAULT_APPROVAL_WAIT: Duration = Duration::from_secs(120);

/// Most calls waiting for a person at once; past it an `ask` is refused.
///
/// # Example
/// ```
/// assert_eq!(jsongate::mcp::MAX_AWAITING, 64);
/// ```
pub const MAX_AWAITING: usize = 64;

/// How the person was asked.
pub(super) enum Asked {
    /// An `elicitation/create` request to the client, with this id.
    Client(Id),
    /// A pending record in the approval store.
    Store(Approval),
}

/// A call waiting for a person's answer.
pub(super) struct Awaiting {
    /// The call's id (in use while it waits).
    pub(super) call: Id,
    tool: Arc<Tool>,
    wants_task: bool,
    line: Vec<u8>,
    /// The intent the call stated (its audit lines carry it).
    intent: Option<Intent>,
    decision: Decision,
    asked: Asked,
    deadline: Instant,
}

impl Awaiting {
    fn approval_id(&self) -> String {
        match &self.asked {
            Asked::Client(id) => match id {
                Id::Str(s) => s.clone(),
                other => other.to_json(),
            },
            Asked::Store(a) => a.id.clone(),
        }
    }

    fn via(&self) -> &'static str {
        match self.asked {
            Asked::Client(_) => "elicitation",
            Asked::Store(_) => "state",
        }
    }

    /// `"approval":{"id","via","outcome"}` for the audit line.
    fn audit_member(&self, outcome: &str) -> String {
        let mut s = String::new();
        ObjectWriter::members(&mut s)
            .object("approval")
            .str("id", &self.approval_id())
            .str("via", self.via())
            .str("outcome", outcome);
        s
    }
}

/// What became of an `ask`.
pub(super) enum Ask {
    /// A person was asked; the call waits.
    Waiting,
    /// No way to ask anyone: refuse as `policy_ask`.
    NoWay,
    /// Asking failed: the call was refused (answered and audited).
    Refused,
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The `elicitation/create` request for `call`: the tool, the reason, the arguments (the
/// tool's `sinks` first, every argument named, each value cut on its own) and their digest.
fn elicitation(id: &Id, call: &Call, d: &Decision, sinks: &[&str]) -> Vec<u8> {
    let why = match d
        .facts()
        .untrusted
        .as_ref()
        .filter(|_| d.reason() == crate::action::Reason::UntrustedOrigin)
    {
        Some(u) => format!(" Why: {}.", u.describe()),
        None => String::new(),
    };
    let text = format!(
        "jsongate: approve one call of the tool '{}' ({})?{why} Arguments (SHA-256 {}):\n{}\
         An approval counts for this tool with exactly these arguments, once.",
        call.tool,
        d.reason().as_str(),
        arguments_digest(call),
        show_arguments(&call.arguments, sinks, ShowLimits::PROMPT),
    );
    let mut s = String::new();
    let mut o = ObjectWriter::new(&mut s);
    o.str("jsonrpc", "2.0")
        .raw("id", &id.to_json())
        .str("method", "elicitation/create");
    let mut params = o.object("params");
    params.str("message", &text);
    let mut schema = params.object("requestedSchema");
    schema.str("type", "object");
    schema
        .object("properties")
        .object("approve")
        .str("type", "boolean")
        .str("title", "Approve this call")
        .str(
            "description",
            "Allow this one call with these exact arguments",
        );
    schema.array("required").str("approve");
    schema.finish();
    params.finish();
    o.finish();
    s.into_bytes()
}

/// Whether an `initialize` line declares form elicitation (`capabilities.elicitation` an
/// object that is empty or names `form`).
pub(super) fn declares_elicitation(line: &[u8], shared: &Shared) -> bool {
    let Ok(v) = Value::parse(line, shared.limits) else {
        return false;
    };
    match v.pointer("/params/capabilities/elicitation") {
        Some(Value::Object(m)) => m.is_empty() || m.iter().any(|(k, _)| k == "form"),
        _ => false,
    }
}

/// An `ask` for the call `id` (its line `line`, its tool `tool`, the decision `d`): asks a
/// person when there is a way to.
#[allow(clippy::too_many_arguments)]
pub(super) fn ask(
    shared: &Shared,
    st: &mut State,
    id: &Id,
    tool: &Arc<Tool>,
    wants_task: bool,
    line: &[u8],
    call: &Call,
    d: &Decision,
    facts: &LineFacts<'_>,
    outs: &mut Vec<Out>,
) -> Ask {
    if d.verdict() != Verdict::Ask || st.client_closed {
        return Ask::NoWay;
    }
    let elicit = st.client_elicits;
    if !elicit && shared.approval_store.is_none() {
        return Ask::NoWay;
    }
    if st.awaiting.len() >= MAX_AWAITING {
        let f = Finding::of("too_many_pending");
        let what = "too many calls are waiting for approval";
        refuse(shared, outs, &call.tool, id, &f, what, facts);
        return Ask::Refused;
    }
    let asked = if elicit {
        let rid = loop {
            st.next_id += 1;
            let rid = Id::Str(format!("{REQUEST_PREFIX}{}", st.next_id));
            if !st
                .awaiting
                .iter()
                .any(|a| matches!(&a.asked, Asked::Client(r) if *r == rid))
            {
                break rid;
            }
        };
        let sinks = shared
            .policy
            .as_ref()
            .and_then(|p| p.tool(&call.tool))
            .map(crate::action::sinks)
            .unwrap_or_default();
        outs.push(Out::Client(elicitation(&rid, call, d, &sinks)));
        Asked::Client(rid)
    } else {
        let Some(store) = &shared.approval_store else {
            return Ask::NoWay;
        };
        let ttl = u64::try_from(shared.approval_wait.as_millis())
            .unwrap_or(u64::MAX)
            .saturating_add(60_000);
        match Approval::request(store.as_ref(), call, ttl, unix_ms()) {
            Ok(a) => {
                if let Some(tell) = &shared.on_approval {
                    tell(&a);
                }
                Asked::Store(a)
            }
            Err(e) => {
                // Nobody can approve what was never recorded.
                let mut extra = String::new();
                ObjectWriter::members(&mut extra)
                    .object("approval")
                    .str("via", "state")
                    .str("outcome", "state_error")
                    .str("state_error", e.message());
                let f = policy_finding("policy_deny", "not_approved", extra);
                let what =
                    "the policy denies it: not_approved (the approval could not be recorded)";
                refuse(shared, outs, &call.tool, id, &f, what, facts);
                return Ask::Refused;
            }
        }
    };
    let a = Awaiting {
        call: id.clone(),
        tool: Arc::clone(tool),
        wants_task,
        line: line.to_vec(),
        intent: facts.intent.clone(),
        decision: d.clone(),
        asked,
        deadline: Instant::now() + shared.approval_wait,
    };
    let mut extra = a.audit_member("pending");
    if let Some(origin) = origin_member(d) {
        extra.push(',');
        extra.push_str(&origin);
    }
    let f = policy_finding("policy_ask", d.reason().as_str(), extra);
    audit(
        shared,
        outs,
        Some(&call.tool),
        Some(id),
        "to_server",
        "asked",
        Some(&f),
        facts,
    );
    st.awaiting.push(a);
    // The approvals thread learns of the new deadline (and of a record to poll).
    let _ = lock(&shared.approvals_wake).send(());
    Ask::Waiting
}

/// The audit line's `"origin"` member of a decision that asks for a value's origin.
pub(super) fn origin_member(d: &Decision) -> Option<String> {
    if d.reason() != crate::action::Reason::UntrustedOrigin {
        return None;
    }
    let u = d.facts().untrusted.as_ref()?;
    let mut s = String::new();
    u.write(&mut ObjectWriter::members(&mut s).object("origin"));
    Some(s)
}

/// The prefix of the ids of the proxy's elicitation requests.
const REQUEST_PREFIX: &str = "jsongate-approval-";

/// Whether `id` is one the proxy gives its elicitation requests.
pub(super) fn is_own_request(id: &Id) -> bool {
    matches!(id, Id::Str(s) if s.starts_with(REQUEST_PREFIX))
}

/// The waiting call whose elicitation request `id` answers, if any.
pub(super) fn answers(st: &State, id: &Id) -> Option<usize> {
    st.awaiting
        .iter()
        .position(|a| matches!(&a.asked, Asked::Client(r) if r == id))
}

/// The client answered the elicitation of `st.awaiting[i]` with `line`.
pub(super) fn answered(
    shared: &Shared,
    st: &mut State,
    i: usize,
    line: &[u8],
    outs: &mut Vec<Out>,
) {
    let a = st.awaiting.swap_remove(i);
    let v = Value::parse(line, shared.limits).ok();
    let action = v
        .as_ref()
        .and_then(|v| v.pointer("/result/action"))
        .and_then(Value::as_str);
    let approve = v
        .as_ref()
        .and_then(|v| v.pointer("/result/content/approve"))
        .and_then(Value::as_bool);
    let (outcome, how) = match (action, approve) {
        (Some("accept"), Some(true)) => (ApprovalOutcome::Granted, "granted"),
        (Some("accept"), _) => (ApprovalOutcome::Refused, "not_approved"),
        (Some("decline"), _) => (ApprovalOutcome::Refused, "declined"),
        (Some("cancel"), _) => (ApprovalOutcome::Refused, "cancelled"),
        _ => (ApprovalOutcome::Refused, "invalid_answer"),
    };
    settle(shared, st, a, outcome, how, outs);
}

/// Ends the wait of `a` with `outcome` (`how` names it in the audit line and the reason):
/// the call is forwarded only when the decision becomes `allow`.
fn settle(
    shared: &Shared,
    st: &mut State,
    a: Awaiting,
    outcome: ApprovalOutcome,
    how: &str,
    outs: &mut Vec<Out>,
) {
    let d = a.decision.approved(outcome);
    let facts = LineFacts {
        bytes: &a.line,
        size: a.line.len() as u64,
        sha256: None,
        intent: a.intent.clone(),
    };
    let tool = a.tool.name.clone();
    let extra = a.audit_member(how);
    if d.verdict() == Verdict::Allow {
        let f = policy_finding("policy_ask", a.decision.reason().as_str(), extra);
        audit(
            shared,
            outs,
            Some(&tool),
            Some(&a.call),
            "to_server",
            "approved",
            Some(&f),
            &facts,
        );
        outs.push(Out::Server(a.line.clone()));
        st.pending.insert(
            a.call,
            Pending::Call {
                tool: a.tool,
                wants_task: a.wants_task,
                intent: a.intent,
            },
        );
        return;
    }
    let f = policy_finding("policy_deny", d.reason().as_str(), extra);
    let what = format!(
        "the policy denies it: {} (approval {how})",
        d.reason().as_str()
    );
    refuse(shared, outs, &tool, &a.call, &f, &what, &facts);
}

/// A finding of the policy (`class` `policy_ask` or `policy_deny`) for `reason`, with the
/// audit line's `"approval"` member `extra`.
fn policy_finding(class: &'static str, reason: &str, extra: String) -> Finding {
    Finding {
        class,
        keyword: Some(reason.to_owned()),
        extra: Some(extra.into()),
        ..Finding::default()
    }
}

/// Answers the call `id` to `tool` with an error result that gives `what` for `f`, and
/// audits the call as refused.
fn refuse(
    shared: &Shared,
    outs: &mut Vec<Out>,
    tool: &str,
    id: &Id,
    f: &Finding,
    what: &str,
    facts: &LineFacts<'_>,
) {
    outs.push(Out::Client(error_result(id, &call_reason(f, what))));
    audit(
        shared,
        outs,
        Some(tool),
        Some(id),
        "to_server",
        "refused",
        Some(f),
        facts,
    );
}

/// Withdraws the store record of `a`, if it has one (nobody is left to act on it).
fn withdraw(shared: &Shared, a: &Awaiting) {
    if let (Asked::Store(ap), Some(store)) = (&a.asked, &shared.approval_store) {
        let _ = ap.withdraw(store.as_ref(), unix_ms());
    }
}

/// The client closed its side: every waiting call is refused (its answer could reach no
/// one) and its store record withdrawn.
pub(super) fn abandon(shared: &Shared, st: &mut State, outs: &mut Vec<Out>) {
    for a in std::mem::take(&mut st.awaiting) {
        withdraw(shared, &a);
        settle(
            shared,
            st,
            a,
            ApprovalOutcome::TimedOut,
            "client_closed",
            outs,
        );
    }
}

/// The server closed its output: every waiting call is answered with an error.
pub(super) fn server_gone(shared: &Shared, st: &mut State, outs: &mut Vec<Out>) {
    for a in std::mem::take(&mut st.awaiting) {
        withdraw(shared, &a);
        outs.push(Out::Client(error_response(
            &a.call,
            -32603,
            "jsongate: the server closed its output before answering",
        )));
    }
}

/// The approvals thread: polls the store for answers to pending records and ends every
/// wait at its deadline. Woken by `wake` when a call starts waiting; ends when `wake`
/// closes.
pub(super) fn run(shared: &Shared, wake: &Receiver<()>) {
    loop {
        let (next, polls) = {
            let st = lock(&shared.state);
            let next = st.awaiting.iter().map(|a| a.deadline).min();
            let polls: Vec<(Id, Approval)> = st
                .awaiting
                .iter()
                .filter_map(|a| match &a.asked {
                    Asked::Store(ap) => Some((a.call.clone(), ap.clone())),
                    Asked::Client(_) => None,
                })
                .collect();
            (next, polls)
        };
        let sleep = next.map(|d| {
            let left = d.saturating_duration_since(Instant::now());
            if polls.is_empty() {
                left
            } else {
                left.min(crate::action::APPROVAL_POLL)
            }
        });
        let woken = match sleep {
            None => wake.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(t) => wake.recv_timeout(t),
        };
        if woken == Err(RecvTimeoutError::Disconnected) {
            return;
        }
        // Store answers are read outside the state lock.
        let mut answers = Vec::new();
        if let Some(store) = &shared.approval_store {
            for (call, ap) in polls {
                match ap.poll(store.as_ref(), unix_ms()) {
                    Ok(Some(o)) => answers.push((call, o, o.as_str())),
                    Ok(None) => {}
                    Err(_) => answers.push((call, ApprovalOutcome::TimedOut, "state_error")),
                }
            }
        }
        let mut outs = Vec::new();
        {
            let mut st = lock(&shared.state);
            for (call, o, how) in answers {
                if let Some(i) = st.awaiting.iter().position(|a| a.call == call) {
                    let a = st.awaiting.swap_remove(i);
                    settle(shared, &mut st, a, o, how, &mut outs);
                }
            }
            let now = Instant::now();
            while let Some(i) = st.awaiting.iter().position(|a| a.deadline <= now) {
                let a = st.awaiting.swap_remove(i);
                let (o, how) = match (&a.asked, &shared.approval_store) {
                    (Asked::Store(ap), Some(store)) => match ap.withdraw(store.as_ref(), unix_ms())
                    {
                        Ok(ApprovalOutcome::TimedOut) => (ApprovalOutcome::TimedOut, "timed_out"),
                        Ok(o) => (o, o.as_str()),
                        Err(_) => (ApprovalOutcome::TimedOut, "state_error"),
                    },
                    _ => (ApprovalOutcome::TimedOut, "timed_out"),
                };
                settle(shared, &mut st, a, o, how, &mut outs);
            }
        }
        if !outs.is_empty() {
            flush(shared, outs, &[], true);
        }
    }
}
