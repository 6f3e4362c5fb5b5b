//! `jsongate decide` and `approve`: one tool call under a policy, and the answer to an
//! approval it waits for.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use jsongate::action::{Approval, Plan, Policy};
use jsongate::json::ObjectWriter;
use jsongate::Limits;

use super::args::{self, Source, StateArgs};

const DECIDE_AFTER: &str = "\
Decides one tool call {\"tool\":T,\"arguments\":{...}} under a policy file: allowlist,
argument schema, semantic rules (paths, URL hosts, lengths, forbidden substrings), the
session's --grants (comma-separated, may be empty), rate limit, approval. Prints the
decision record:
  {\"tool\":T,\"argumentsValid\":B,\"toolAllowed\":B,\"grant\":[...],\"required\":[...],
   \"decision\":\"allow|deny|ask\",\"reason\":R}
R is ok, tool_not_allowlisted, arguments_invalid, path_escape, host_not_allowed,
field_too_long, forbidden_substring, context_mismatch, grant_missing, state_unavailable,
rate_limited, not_approved, untrusted_origin, outside_plan or needs_approval.
With --recheck the input is a decision record received from elsewhere; its facts are
recomputed from the policy and a claim that does not follow from them is corrected; a
recorded failure is kept, never turned into allow.
--state SPEC keeps rate limits (and plans and approvals) in a shared store; when it fails
the call is denied (state_unavailable) unless --on-state-error allow; either way the record
carries \"stateError\". --plan FILE (format: jsongate plan schema) lists the tools the task
may call; a call outside it is ask with reason outside_plan. --approval-wait SECONDS: an
ask stores a pending approval, prints it on stderr and waits; 'jsongate approve ID --state
SPEC' grants it (allow) for exactly that tool and arguments digest, once. --audit FILE
appends {\"time\",\"jsongate\",\"arguments_sha256\",\"record\"} per decision, never the
arguments themselves. --alerts FILE (format: jsongate alerts schema) raises an alert for a
call not allowed whose reason (rate_limited, forbidden_substring, outside_plan, ...) or class
(policy_deny, policy_ask) its \"on\" lists, with the arguments' SHA-256. --intent TEXT (with
--audit) records the model's stated intent for the call in the audit line as \"intent\" (at
most 512 bytes, cut at a character boundary with \"intent_truncated\":true); it never changes
the decision. --provenance FILE (records written by 'gate --provenance' or 'screen
--provenance'): a call whose sink argument (the policy's \"sinks\") carries a value recorded
there asks, reason untrusted_origin, the record's \"origin\" naming the tool, request id
and pointer it came from; values in the policy's provenance.trusted list or in --context
pass.

EXIT STATUS:
    0 allow, 1 deny, 3 ask, 2 usage, configuration or input error";

/// Decide one tool call under a policy: allow, deny or ask
#[derive(Args, Debug)]
#[command(after_help = DECIDE_AFTER)]
pub struct DecideArgs {
    /// the call (standard input when absent or '-')
    #[arg(value_name = "FILE", value_parser = args::source)]
    file: Option<Source>,
    /// the policy (format: jsongate policy schema)
    #[arg(long, value_name = "FILE", value_parser = args::source, required = true)]
    policy: Option<Source>,
    /// the session's capabilities, comma-separated (may be empty)
    #[arg(long, value_name = "A,B", required = true)]
    grants: Option<String>,
    /// resolve paths on the file system under DIR
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// the input is a decision record to recompute, not a call
    #[arg(long)]
    recheck: bool,
    /// append one audit JSON line per decision to FILE (mode 0600)
    #[arg(long, value_name = "FILE")]
    audit: Option<PathBuf>,
    /// the tools the task may call (format: jsongate plan schema)
    #[arg(long, value_name = "FILE", value_parser = args::source)]
    plan: Option<Source>,
    /// the caller's context for the policy's rules (repeatable)
    #[arg(long, value_name = "KEY=VALUE", value_parser = args::key_value)]
    context: Vec<(String, String)>,
    /// on ask, wait up to SECONDS for 'jsongate approve'
    #[arg(long, value_name = "SECONDS", value_parser = args::seconds)]
    approval_wait: Option<u64>,
    /// the model's stated intent for the call, recorded in the --audit line only
    #[arg(long, value_name = "TEXT", requires = "audit")]
    intent: Option<String>,
    /// values that reached the agent in untrusted output (provenance records)
    #[arg(long, value_name = "FILE", value_parser = args::source)]
    provenance: Option<Source>,
    /// alert on calls not allowed (format: jsongate alerts schema)
    #[arg(long, value_name = "FILE", value_parser = args::source)]
    alerts: Option<Source>,
    #[command(flatten)]
    state: StateArgs,
}

/// A policy from FILE or standard input.
pub fn load_policy(src: &Source) -> Result<Policy, String> {
    src.load(Policy::from_file, |b, _| Policy::from_slice(b))
        .map_err(|e| format!("policy '{}': {e}", src.name()))
}

/// Provenance records from FILE or standard input (at most 64 MiB).
fn load_provenance(src: &Source) -> Result<jsongate::action::Provenance, String> {
    let bytes = src
        .read_bounded(64 << 20)
        .map_err(|e| format!("provenance '{}': {e}", src.name()))?;
    jsongate::action::Provenance::from_records(&bytes)
        .map_err(|e| format!("provenance '{}': {e}", src.name()))
}

/// A plan from FILE or standard input, checked against `policy`.
pub fn load_plan(src: &Source, policy: &Policy) -> Result<Plan, String> {
    src.load(
        |p| Plan::from_file(p, policy),
        |b, _| Plan::from_slice(b, policy),
    )
    .map_err(|e| format!("plan '{}': {e}", src.name()))
}

/// The caller's session as `decide` and `mcp-proxy` take it: `--grants A,B` (empty names
/// skipped), `--context`, `--workspace` and `--plan` (checked against `policy`).
pub fn session(
    grants: &str,
    context: &[(String, String)],
    workspace: Option<&std::path::Path>,
    plan: Option<&Source>,
    policy: &Policy,
) -> Result<jsongate::action::Grants, String> {
    let context = args::action_context(context)?;
    let mut session =
        jsongate::action::Grants::new(grants.split(',').map(str::trim).filter(|g| !g.is_empty()))
            .context(context);
    if let Some(w) = workspace {
        session = session.workspace(w).map_err(|e| e.to_string())?;
    }
    if let Some(p) = plan {
        session = session.plan(load_plan(p, policy)?);
    }
    Ok(session)
}

/// `jsongate decide`: one tool call (or, with `--recheck`, one received decision record).
pub fn decide(a: &DecideArgs) -> Result<ExitCode, args::Failure> {
    use jsongate::action::{validate_record, Call, Claim, Verdict};
    let (Some(policy_src), Some(grants)) = (&a.policy, &a.grants) else {
        return args::usage("decide needs --policy FILE and --grants A,B (may be empty)");
    };
    if a.approval_wait.is_some() && a.state.spec.as_deref().is_none_or(|s| s == "memory") {
        return args::usage(
            "--approval-wait needs --state SPEC, a file or Redis store that 'jsongate approve' \
             can answer in (memory is this process's own, so no approval could arrive)",
        );
    }
    let document = a.file.clone().unwrap_or(Source::Stdin);
    args::one_stdin([
        ("--policy", Some(policy_src)),
        ("--plan", a.plan.as_ref()),
        ("--alerts", a.alerts.as_ref()),
        ("--provenance", a.provenance.as_ref()),
        ("the call", Some(&document)),
    ])?;
    let policy = load_policy(policy_src)?;
    let alerts = match &a.alerts {
        Some(src) => Some(
            src.load(
                jsongate::gate::Alerts::from_file,
                jsongate::gate::Alerts::from_slice,
            )
            .map_err(|e| format!("alerts '{}': {e}", src.name()))?,
        ),
        None => None,
    };
    let session = session(
        grants,
        &a.context,
        a.workspace.as_deref(),
        a.plan.as_ref(),
        &policy,
    )?;
    let input = document.read_bounded(policy.limits().get_max_bytes())?;
    let mut approval_line = None;
    let decision = if a.recheck {
        let claim = Claim::parse(&input).map_err(|e| format!("decision record: {e}"))?;
        policy.recheck(&claim, &session)
    } else {
        let call = Call::parse(&input, policy.limits()).map_err(|e| e.to_string())?;
        let rate = a.state.rate()?;
        let provenance = match &a.provenance {
            Some(src) => load_provenance(src)?,
            None => jsongate::action::Provenance::new(),
        };
        let d = policy.decide_traced(&call, &session, &rate, args::unix_ms(), &provenance);
        match a.approval_wait {
            Some(secs) if d.verdict() == Verdict::Ask => {
                let sinks = policy
                    .tool(&call.tool)
                    .map(jsongate::action::sinks)
                    .unwrap_or_default();
                let mut shown = jsongate::action::show_arguments(
                    &call.arguments,
                    &sinks,
                    jsongate::action::ShowLimits::PROMPT,
                );
                if let Some(u) = d
                    .facts()
                    .untrusted
                    .as_ref()
                    .filter(|_| d.reason() == jsongate::action::Reason::UntrustedOrigin)
                {
                    shown = format!("why: {}\n{shown}", u.describe());
                }
                let (d, line) = await_approval(&d, &call, &rate, secs, &shown);
                approval_line = Some(line);
                d
            }
            _ => d,
        }
    };
    let line = decision.to_json();
    validate_record(line.as_bytes()).map_err(|e| format!("internal: decision record {e}"))?;
    let digest = Digest::of(&input, a.recheck);
    if let Some(al) = &alerts {
        alert(al, &decision, &digest);
    }
    if let Some(path) = &a.audit {
        let intent = a.intent.as_deref().map(jsongate::action::Intent::new);
        let mut audit = decide_audit(&line, &digest, intent.as_ref());
        if let Some(ap) = &approval_line {
            if let Some(mut o) = ObjectWriter::reopen(&mut audit) {
                o.raw("approval", ap);
            }
        }
        args::append_line(path, &audit)?;
    }
    args::println(&line);
    Ok(match decision.verdict() {
        Verdict::Allow => ExitCode::SUCCESS,
        Verdict::Deny => ExitCode::from(1),
        Verdict::Ask => ExitCode::from(3),
    })
}

/// What identifies the decided input without holding it: the SHA-256 of the arguments (in
/// compact form, so that formatting does not change it) or, for `--recheck`, of the received
/// record. The arguments themselves are never written.
struct Digest {
    name: &'static str,
    hex: String,
}

impl Digest {
    fn of(input: &[u8], recheck: bool) -> Digest {
        use jsongate::json::Value;
        use sha2::Digest as _;
        let digested = if recheck {
            input.to_vec()
        } else {
            Value::parse(input, Limits::new())
                .ok()
                .and_then(|v| v.get("arguments").map(Value::to_json))
                .unwrap_or_default()
                .into_bytes()
        };
        let hex = sha2::Sha256::digest(&digested)
            .iter()
            .fold(String::new(), |mut s, b| {
                let _ = write!(s, "{b:02x}");
                s
            });
        Digest {
            name: if recheck {
                "received_record_sha256"
            } else {
                "arguments_sha256"
            },
            hex,
        }
    }
}

/// The audit line of a decision: the record, the time, the input's digest and the stated
/// intent, if any.
fn decide_audit(
    record: &str,
    digest: &Digest,
    intent: Option<&jsongate::action::Intent>,
) -> String {
    let mut out = String::new();
    let mut o = ObjectWriter::new(&mut out);
    o.str("time", &jsongate::gate::Timestamp::now().to_rfc3339())
        .str("jsongate", env!("CARGO_PKG_VERSION"))
        .str(digest.name, &digest.hex);
    if let Some(i) = intent {
        i.write(&mut o);
    }
    o.raw("record", record);
    o.finish();
    out
}

/// Raises the alert a decision that is not `allow` raises under `alerts` (its reason or
/// class listed in `on`), with the input's digest; delivery failures go to stderr and change
/// nothing (the exit status is the decision's).
fn alert(alerts: &jsongate::gate::Alerts, d: &jsongate::action::Decision, digest: &Digest) {
    use jsongate::action::Verdict;
    let class = match d.verdict() {
        Verdict::Allow => return,
        Verdict::Deny => "policy_deny",
        Verdict::Ask => "policy_ask",
    };
    let Some(kind) = alerts.call_kind(class, d.reason().as_str()) else {
        return;
    };
    let tool = &d.facts().tool;
    let block = jsongate::gate::Block {
        key: tool,
        kind,
        tool,
        request_id: "",
        code: None,
        sha256: &digest.hex,
        time: jsongate::gate::Timestamp::now().to_rfc3339(),
    };
    let raised = alerts.on_block(&block, args::unix_ms(), false);
    for e in alerts.deliver_all(&raised.alerts) {
        eprintln!("jsongate: alert delivery failed: {e}");
    }
}

/// Appends one line to `path` (created with mode 0600 on Unix).
/// Asks for an approval of `call` in the state store, tells the operator on stderr (the
/// record, then `shown`: the arguments, sinks first), and waits up to `secs`; the decision
/// after the answer and the audit member.
fn await_approval(
    d: &jsongate::action::Decision,
    call: &jsongate::action::Call,
    rate: &jsongate::action::RateState,
    secs: u64,
    shown: &str,
) -> (jsongate::action::Decision, String) {
    use jsongate::action::{Approval, ApprovalOutcome};
    let store = rate.get_store();
    let wait = std::time::Duration::from_secs(secs);
    let ttl = wait.as_millis().saturating_add(60_000) as u64;
    let outcome = match Approval::request(store.as_ref(), call, ttl, args::unix_ms()) {
        Ok(a) => {
            // A closed stderr loses the notice, not the decision.
            let notice = format!(
                "jsongate: approval requested: {} (grant: jsongate approve {} --state SPEC; \
                 refuse: add --deny; see the arguments: --show)\n{shown}",
                a.to_json(),
                a.id
            );
            let _ = std::io::Write::write_all(&mut std::io::stderr(), notice.as_bytes());
            let outcome = a
                .wait(store.as_ref(), wait, args::unix_ms)
                .map_err(|e| e.to_string());
            (Some(a), outcome)
        }
        Err(e) => (None, Err(e.to_string())),
    };
    let mut line = String::new();
    let mut o = ObjectWriter::new(&mut line);
    if let Some(a) = &outcome.0 {
        o.str("id", &a.id);
    }
    let result = match outcome.1 {
        Ok(r) => {
            o.str("outcome", r.as_str());
            r
        }
        Err(e) => {
            // The store failed while asking: nobody can have approved.
            o.str("outcome", "state_error").str("state_error", &e);
            ApprovalOutcome::TimedOut
        }
    };
    o.finish();
    (d.approved(result), line)
}

/// Answer a pending approval (see decide --approval-wait)
#[derive(Args, Debug)]
#[command(after_help = "\
Prints the approval record with \"granted\":true|false. The store is the one the waiting
decide or mcp-proxy uses (--state SPEC), from any host that shares it.

--show prints the pending approval's record and then its arguments, one per line (each value
as compact JSON, cut past 4,000 characters, invisible and control characters escaped as
\\uXXXX), without answering it; arguments over 32 KiB are not kept.

EXIT STATUS:
    0 answered (or shown), 2 no such approval is pending (unknown, expired, or answered
    already), usage or store error")]
pub struct ApproveArgs {
    /// the approval's id (printed on stderr by the waiting command)
    #[arg(value_name = "ID")]
    id: String,
    /// the store the waiting decision uses
    #[arg(long, value_name = "SPEC", required = true)]
    state: Option<String>,
    /// refuse the call instead of granting it
    #[arg(long)]
    deny: bool,
    /// print the pending call (its record, then its arguments) without answering it
    #[arg(long, conflicts_with = "deny")]
    show: bool,
}

/// `jsongate approve ID --state SPEC [--deny]`: answers a pending approval.
pub fn approve(a: &ApproveArgs) -> Result<ExitCode, args::Failure> {
    let Some(spec) = &a.state else {
        return args::usage("approve needs --state SPEC (the store the waiting decision uses)");
    };
    let store = args::open_store(spec)?;
    if a.show {
        return show(store.as_ref(), &a.id);
    }
    let granted = !a.deny;
    match Approval::answer(store.as_ref(), &a.id, granted, 600_000, args::unix_ms()) {
        Ok(Some(ap)) => {
            let mut line = ap.to_json();
            if let Some(mut o) = ObjectWriter::reopen(&mut line) {
                o.bool("granted", granted);
            }
            args::println(&line);
            Ok(ExitCode::SUCCESS)
        }
        Ok(None) => Err(format!(
            "no pending approval '{}' (unknown, expired, or answered already)",
            a.id
        )
        .into()),
        Err(e) => Err(format!("--state: {e}").into()),
    }
}

/// `approve ID --show`: the pending approval's record and arguments, unanswered.
fn show(store: &dyn jsongate::state::Store, id: &str) -> Result<ExitCode, args::Failure> {
    use jsongate::action::{show_arguments, ShowLimits, MAX_KEPT_ARGUMENTS};
    match Approval::pending(store, id, args::unix_ms()) {
        Ok(Some((a, arguments))) => {
            args::println(&a.to_json());
            match arguments {
                Some(v) => args::print(&show_arguments(&v, &[], ShowLimits::FULL)),
                None => args::println(&format!(
                    "(the arguments were not kept: over {MAX_KEPT_ARGUMENTS} bytes; only their \
                     SHA-256 identifies them)"
                )),
            }
            Ok(ExitCode::SUCCESS)
        }
        Ok(None) => Err(format!(
            "no pending approval '{id}' (unknown, expired, or answered already)"
        )
        .into()),
        Err(e) => Err(format!("--state: {e}").into()),
    }
}
