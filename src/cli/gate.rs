//! `jsongate gate`, `contract`, `render` and `screen`: tool contracts applied to upstream
//! responses, their tests and diffs, agent-facing text blocks, and screening.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};

use jsongate::gate::{Contract, FailureCode, Timestamp};
use jsongate::json::ObjectWriter;
use jsongate::{Limits, Scanner};

use super::args::{self, Source};

const GATE_AFTER: &str = "\
Applies a tool contract to one upstream response: limits, strict scan, the contract's
schemas, its semantic checks against --context and --now (default: the system clock), then
prints the agent-facing envelope on stdout:
  {\"tool\":T,\"request_id\":ID,\"outcome\":\"success\",\"data\":{...}}
  {\"tool\":T,\"request_id\":ID,\"outcome\":\"failure\",\"error\":{\"code\":C,\"retryable\":B}}
C is NOT_FOUND, UPSTREAM_UNAVAILABLE, RATE_LIMITED, INVALID_RESPONSE, STALE, MISMATCH or
UNAUTHORIZED (the upstream refused the authorisation: with --upstream-status 401 or 403 the
response is not read, and the retry decision is reauthorize).
One audit JSON line per decision is appended to --audit FILE (never to stdout). A contract
with \"render\":\"untrusted_text\" prints the agent-facing text block after the envelope
line (--render FILE writes it to FILE instead, for any contract). --alerts FILE (format:
jsongate alerts schema; also the contract's 'alerts' member) raises alerts on blocks of
listed kinds and runs a circuit breaker per tool: while open, responses fail fast with
UPSTREAM_UNAVAILABLE, not retryable, unread. --provenance FILE appends one record per
identifier-like value the envelope's data hands the agent (e-mail addresses, URL hosts,
IBANs, account/card and phone numbers, paths, short strings), as digests with the tool,
request id and pointer; 'jsongate decide --provenance FILE' asks (untrusted_origin) for a
call whose sink argument carries one.

EXIT STATUS:
    0 success, 1 failure, 2 usage or configuration error (message on stderr)";

/// Apply a tool contract to one upstream response; print the agent-facing envelope
#[derive(Args, Debug)]
#[command(after_help = GATE_AFTER)]
pub struct GateArgs {
    /// the upstream response (standard input when absent or '-')
    #[arg(value_name = "FILE", value_parser = args::source)]
    file: Option<Source>,
    /// the tool contract (format: jsongate contract schema)
    #[arg(long, value_name = "FILE", value_parser = args::source, required = true)]
    contract: Option<Source>,
    /// the request's id, copied into the envelope and the audit line
    #[arg(long, value_name = "ID", required = true)]
    request_id: Option<String>,
    /// a value for the contract's checks (repeatable)
    #[arg(long, value_name = "KEY=VALUE", value_parser = args::key_value)]
    context: Vec<(String, String)>,
    /// the time the checks use [default: the system clock]
    #[arg(long, value_name = "RFC3339", value_parser = timestamp)]
    now: Option<Timestamp>,
    /// append one audit JSON line per decision to FILE
    #[arg(long, value_name = "FILE")]
    audit: Option<PathBuf>,
    /// keep the raw bytes of a rejected response in FILE (mode 0600)
    #[arg(long, value_name = "FILE")]
    raw_copy: Option<PathBuf>,
    /// bytes kept by --raw-copy
    #[arg(long, value_name = "N", default_value_t = 64 * 1024, value_parser = bytes)]
    raw_copy_bytes: usize,
    /// the attempt (1-based): 'retryable' follows the retry policy
    #[arg(long, value_name = "N", value_parser = args::positive::<u32>)]
    attempt: Option<u32>,
    /// milliseconds since the first attempt (with --attempt)
    #[arg(long, value_name = "T", value_parser = number::<u64>)]
    elapsed_ms: Option<u64>,
    /// the upstream endpoint, for the audit line
    #[arg(long, value_name = "ENDPOINT")]
    upstream: Option<String>,
    /// the upstream's HTTP status, for the audit line (with --upstream)
    #[arg(long, value_name = "N", value_parser = integer, allow_hyphen_values = true)]
    upstream_status: Option<i64>,
    /// write the agent-facing text block to FILE instead of stdout
    #[arg(long, value_name = "FILE")]
    render: Option<PathBuf>,
    /// alert rules and breaker (format: jsongate alerts schema)
    #[arg(long, value_name = "FILE", value_parser = args::source)]
    alerts: Option<Source>,
    /// record a failed call with this code, reading no input
    #[arg(long, value_name = "CODE", value_parser = failure_code)]
    transport_error: Option<FailureCode>,
    /// append provenance records of the values handed to the agent to FILE (mode 0600)
    #[arg(long, value_name = "FILE")]
    provenance: Option<PathBuf>,
}

fn timestamp(v: &str) -> Result<Timestamp, String> {
    Timestamp::parse_rfc3339(v).ok_or_else(|| format!("'{v}' is not an RFC 3339 date-time"))
}

fn bytes(v: &str) -> Result<usize, String> {
    v.parse().map_err(|_| format!("'{v}' is not a number"))
}

fn number<T: std::str::FromStr>(v: &str) -> Result<T, String> {
    v.parse().map_err(|_| format!("'{v}' is not a number"))
}

fn integer(v: &str) -> Result<i64, String> {
    v.parse().map_err(|_| format!("'{v}' is not an integer"))
}

fn failure_code(v: &str) -> Result<FailureCode, String> {
    FailureCode::parse(v).ok_or_else(|| format!("unknown code '{v}'"))
}

/// A contract from FILE or standard input.
fn load_contract(src: &Source) -> Result<Contract, String> {
    src.load(Contract::from_file, Contract::from_slice)
        .map_err(|e| format!("contract '{}': {e}", src.name()))
}

/// `jsongate gate`: one response through a tool contract.
pub fn gate(a: &GateArgs) -> Result<ExitCode, args::Failure> {
    use jsongate::gate::{Context, Gate, Request};
    let (Some(contract_src), Some(request_id)) = (&a.contract, &a.request_id) else {
        return args::usage("gate needs --contract FILE and --request-id ID");
    };
    let document = a.file.clone().unwrap_or(Source::Stdin);
    let reads_input = a.transport_error.is_none();
    args::one_stdin([
        ("--contract", Some(contract_src)),
        ("--alerts", a.alerts.as_ref()),
        ("the response", reads_input.then_some(&document)),
    ])?;
    let contract = load_contract(contract_src)?;
    let contract_tool = contract.tool().to_owned();
    let mut gate = Gate::new(&contract).map_err(|e| e.to_string())?;
    if let Some(src) = &a.alerts {
        let alerts = src.load(
            jsongate::gate::Alerts::from_file,
            jsongate::gate::Alerts::from_slice,
        )?;
        gate = gate.alerts(std::sync::Arc::new(alerts));
    }
    if a.raw_copy.is_some() {
        gate = gate.raw_copy(a.raw_copy_bytes);
    }
    let mut ctx = Context::new();
    for (k, v) in &a.context {
        ctx = ctx.value(k, v);
    }
    let mut req = Request::new(request_id, ctx.now(a.now.unwrap_or_else(Timestamp::now)));
    match (a.attempt, a.elapsed_ms) {
        (Some(n), e) => {
            req = req.attempt(n, std::time::Duration::from_millis(e.unwrap_or(0)));
        }
        (None, Some(_)) => return args::usage("--elapsed-ms needs --attempt N"),
        (None, None) => {}
    }
    match (&a.upstream, a.upstream_status) {
        (Some(u), st) => req = req.upstream(u, st),
        (None, Some(_)) => return args::usage("--upstream-status needs --upstream ENDPOINT"),
        (None, None) => {}
    }
    let mut decision = match a.transport_error {
        Some(code) => gate.transport_failure(code, &req),
        // The upstream refused the authorisation: its body is not gated.
        None if matches!(a.upstream_status, Some(401 | 403)) => gate
            .check_request(&req)
            .map(|()| gate.refused(FailureCode::Unauthorized, "upstream_unauthorized", &req)),
        None => gate.run_read(document.open()?, &req),
    }
    .map_err(|e| e.to_string())?;
    if let (Some(path), Some(raw), false) = (&a.raw_copy, &decision.raw, decision.audit.accepted) {
        crate::fsx::write_private(path, raw)
            .map_err(|e| format!("cannot write '{}': {e}", path.display()))?;
        decision.audit.raw_copy = Some(path.display().to_string());
    }
    if let Some(path) = &a.audit {
        args::append_line(path, &decision.audit.to_json())?;
    }
    if let (Some(path), jsongate::gate::Envelope::Success { data }) =
        (&a.provenance, &decision.envelope)
    {
        let records =
            jsongate::action::provenance_records(&contract_tool, request_id, "/data", data);
        append_records(path, &records)?;
    }
    for f in &decision.alerts.failures {
        // Logged for the operator; the decision above stands whatever failed here.
        eprintln!("jsongate: alert delivery failed: {f}");
    }
    let mut out = format!("{}\n", decision.output);
    match (&a.render, &decision.rendered) {
        (Some(path), block) => {
            // Without a contract that asks for it, the block is rendered on request.
            let block = block.clone().unwrap_or_else(|| {
                jsongate::gate::render_envelope(&contract_tool, request_id, &decision.envelope)
            });
            crate::fsx::write_private(path, format!("{block}\n").as_bytes())
                .map_err(|e| format!("cannot write '{}': {e}", path.display()))?;
        }
        (None, Some(block)) => {
            out.push_str(block);
            out.push('\n');
        }
        (None, None) => {}
    }
    args::print(&out);
    Ok(if decision.audit.accepted {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Appends provenance record lines (each ends with a newline) to `path`.
fn append_records(path: &Path, records: &str) -> Result<(), String> {
    use std::io::Write as _;
    if records.is_empty() {
        return Ok(());
    }
    let what =
        |e: std::io::Error| format!("cannot write provenance file '{}': {e}", path.display());
    args::open_append(path)
        .map_err(what)?
        .write_all(records.as_bytes())
        .map_err(what)
}

/// Test, compare and describe tool contracts
#[derive(Args, Debug)]
pub struct ContractArgs {
    #[command(subcommand)]
    what: ContractCmd,
}

#[derive(Subcommand, Debug)]
enum ContractCmd {
    /// Run DIR/cases.json against DIR/contract.json; one line per case
    #[command(after_help = "\
Each case: name, input file, request_id, context, now, expected envelope (and optionally
the audit's error kind and screening findings). Prints {\"case\":NAME,\"pass\":B,...} per
case, then {\"cases\":N,\"failed\":M}.

EXIT STATUS:
    0 every case passes, 1 one fails, 2 usage or configuration error")]
    Test {
        /// the directory holding contract.json and cases.json
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// Compare two versions of a contract: one line per change, then a summary
    #[command(after_help = "\
Prints one line per change
  {\"side\":\"agent|upstream\",\"change\":K,\"breaking\":B,\"subject\":S,...}
then {\"changes\":N,\"breaking\":M,\"agent\":A,\"version\":{...},\"bumped\":B,\"verdict\":V}.
Exposed fields are compared through local $refs, keyword by keyword: schema_widened (more
reaches the agent), schema_narrowed (the upstream's old values are refused),
schema_unclassified (a change not understood: breaking), besides type_changed,
enum_widened and enum_narrowed. Any agent-side change, a field added included, needs a new
'version' (verdict unbumped_agent_change).

EXIT STATUS:
    0 no breaking or agent-side change, or 'version' was changed; 1 such a change and
    'version' was not changed; 2 usage or configuration error")]
    Diff {
        /// the old contract ('-': standard input)
        #[arg(value_name = "OLD", value_parser = args::source)]
        old: Source,
        /// the new contract ('-': standard input)
        #[arg(value_name = "NEW", value_parser = args::source)]
        new: Source,
    },
    /// Warn about what a contract lets reach the agent unbounded or unscreened
    #[command(after_help = "\
Reads every exposed field's subschema in every upstream shape (through properties, items,
additionalProperties, allOf and local $refs, members and items included) and prints one line
per warning
  {\"field\":F,\"upstream\":V,\"location\":P,\"warning\":W,\"message\":M}
then {\"warnings\":N}. W is unconstrained (no type, enum or const), open_object (member names
free: no additionalProperties false), unbounded_text (a string without maxLength, enum, const,
a bounded format or anchored pattern), unbounded_array (no maxItems), unresolved (a $ref to
another document) or unscreened (text can reach the agent and the contract has no screen).

EXIT STATUS:
    0 no warning, 1 warnings, 2 usage or configuration error")]
    Lint {
        /// the contract ('-': standard input)
        #[arg(value_name = "FILE", value_parser = args::source)]
        contract: Source,
    },
    /// Print the JSON Schema of contract files
    Schema,
    /// Print the envelope schema derived from a contract
    EnvelopeSchema {
        /// the contract ('-': standard input)
        #[arg(long, value_name = "FILE", value_parser = args::source)]
        contract: Source,
    },
}

/// `jsongate contract ...`.
pub fn contract(a: &ContractArgs) -> Result<ExitCode, args::Failure> {
    use jsongate::gate::{Gate, CONTRACT_SCHEMA};
    match &a.what {
        ContractCmd::Schema => {
            args::print(CONTRACT_SCHEMA);
            Ok(ExitCode::SUCCESS)
        }
        ContractCmd::EnvelopeSchema { contract } => {
            let c = load_contract(contract)?;
            let g = Gate::new(&c).map_err(|e| e.to_string())?;
            args::println(g.envelope_schema());
            Ok(ExitCode::SUCCESS)
        }
        ContractCmd::Test { dir } => contract_test(dir),
        ContractCmd::Lint { contract } => {
            let c = load_contract(contract)?;
            Gate::new(&c).map_err(|e| e.to_string())?;
            let warnings = jsongate::gate::lint_contract(&c);
            let mut out = String::new();
            for w in &warnings {
                out.push_str(&w.to_json());
                out.push('\n');
            }
            ObjectWriter::new(&mut out).u64("warnings", warnings.len() as u64);
            out.push('\n');
            args::print(&out);
            Ok(if warnings.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        ContractCmd::Diff { old, new } => {
            args::one_stdin([("OLD", Some(old)), ("NEW", Some(new))])?;
            contract_diff(old, new)
        }
    }
}

/// `jsongate contract diff OLD NEW`: one line per change, a summary, exit 1 on a breaking
/// change whose version was not bumped.
fn contract_diff(old: &Source, new: &Source) -> Result<ExitCode, args::Failure> {
    use jsongate::gate::diff_contracts;
    let (a, b) = (load_contract(old)?, load_contract(new)?);
    let changes = diff_contracts(&a, &b).map_err(|e| e.to_string())?;
    let breaking = changes.iter().filter(|c| c.breaking).count();
    // Any change to what the agent reads needs a new version, additions included.
    let agent = changes
        .iter()
        .filter(|c| c.side == jsongate::gate::Side::Agent)
        .count();
    let bumped = a.version() != b.version();
    let mut out = String::new();
    for c in &changes {
        out.push_str(&c.to_json());
        out.push('\n');
    }
    let fail = (breaking > 0 || agent > 0) && !bumped;
    let mut o = ObjectWriter::new(&mut out);
    o.u64("changes", changes.len() as u64)
        .u64("breaking", breaking as u64)
        .u64("agent", agent as u64);
    o.object("version")
        .str("from", a.version())
        .str("to", b.version());
    o.bool("bumped", bumped).str(
        "verdict",
        match (fail, breaking > 0) {
            (false, _) => "ok",
            (true, true) => "unbumped_breaking_change",
            (true, false) => "unbumped_agent_change",
        },
    );
    o.finish();
    out.push('\n');
    args::print(&out);
    Ok(if fail {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Runs `DIR/cases.json` against `DIR/contract.json`.
fn contract_test(dir: &Path) -> Result<ExitCode, args::Failure> {
    use jsongate::gate::{Context, Gate, Request};
    use jsongate::json::Value;
    let contract = Contract::from_file(&dir.join("contract.json")).map_err(|e| e.to_string())?;
    let gate = Gate::new(&contract).map_err(|e| e.to_string())?;
    let cases_path = dir.join("cases.json");
    let bytes = std::fs::read(&cases_path)
        .map_err(|e| format!("cannot read '{}': {e}", cases_path.display()))?;
    let cases = Value::parse(&bytes, Limits::new())
        .map_err(|e| format!("'{}': {e}", cases_path.display()))?;
    let cases = cases.as_array().ok_or("cases.json must be an array")?;
    let mut failed = 0;
    let mut session = gate.session();
    for (i, case) in cases.iter().enumerate() {
        let s = |k: &str| case.get(k).and_then(Value::as_str);
        let name = s("name").map_or_else(|| format!("case {i}"), str::to_owned);
        let input = s("input").ok_or_else(|| format!("{name}: missing 'input'"))?;
        let raw = std::fs::read(dir.join(input))
            .map_err(|e| format!("{name}: cannot read '{input}': {e}"))?;
        let mut ctx = Context::new();
        for (k, v) in case
            .get("context")
            .and_then(Value::as_object)
            .unwrap_or(&[])
        {
            ctx = ctx.value(
                k,
                v.as_str()
                    .ok_or_else(|| format!("{name}: context values are strings"))?,
            );
        }
        if let Some(t) = s("now") {
            ctx = ctx.now(Timestamp::parse_rfc3339(t).ok_or_else(|| format!("{name}: bad 'now'"))?);
        }
        let req = Request::new(s("request_id").unwrap_or("contract-test"), ctx);
        let expect = case
            .get("expect")
            .ok_or_else(|| format!("{name}: missing 'expect'"))?;
        let d = session
            .run_slice(&raw, &req)
            .map_err(|e| format!("{name}: {e}"))?;
        let got = Value::parse(d.output.as_bytes(), Limits::new()).map_err(|e| e.to_string())?;
        let mut line = String::new();
        let mut o = ObjectWriter::new(&mut line);
        o.str("case", &name);
        let audit_miss = case.get("audit").and_then(|a| audit_mismatch(a, &d.audit));
        if let (true, Some(why)) = (&got == expect, &audit_miss) {
            failed += 1;
            o.bool("pass", false).str("audit", why);
        } else if &got == expect {
            o.bool("pass", true);
        } else {
            failed += 1;
            o.bool("pass", false)
                .raw("got", &d.output)
                .value("expected", expect);
        }
        o.finish();
        args::println(&line);
    }
    let mut line = String::new();
    ObjectWriter::new(&mut line)
        .u64("cases", cases.len() as u64)
        .u64("failed", failed);
    args::println(&line);
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// What a case's `audit` expectation (`{"kind": K|null, "screen": [{pointer, pattern,
/// class, action}...]}`, every member optional) says that the audit record does not.
fn audit_mismatch(
    want: &jsongate::json::Value,
    got: &jsongate::gate::AuditRecord,
) -> Option<String> {
    use jsongate::json::Value;
    if let Some(k) = want.get("kind") {
        let have = got.error.as_ref().map(|e| e.kind.as_str());
        if k.as_str() != have {
            return Some(format!("error kind {have:?}, expected {k}"));
        }
    }
    if let Some(list) = want.get("screen").and_then(Value::as_array) {
        if list.len() != got.screen.len() {
            return Some(format!(
                "{} screening findings, expected {}",
                got.screen.len(),
                list.len()
            ));
        }
        for (i, (w, (f, a))) in list.iter().zip(&got.screen).enumerate() {
            let have = [
                ("pointer", f.pointer.as_str()),
                ("pattern", f.pattern),
                ("class", f.class.as_str()),
                ("action", a.as_str()),
            ];
            for (k, v) in have {
                if let Some(x) = w.get(k).and_then(Value::as_str) {
                    if x != v {
                        return Some(format!("finding {i}: {k} is '{v}', expected '{x}'"));
                    }
                }
            }
        }
    }
    None
}

/// Print envelope lines as separate, labelled text blocks for the agent
#[derive(Args, Debug)]
#[command(after_help = "\
Reads envelope lines (from gate; files, or standard input when none is given or '-') and
prints one separate text block per envelope: labelled untrusted data with its provenance,
or one failure line without upstream text.

EXIT STATUS:
    0 rendered, 2 usage, input or I/O error")]
pub struct RenderArgs {
    /// files of envelope lines (standard input when none is given, or '-')
    #[arg(value_name = "FILE", value_parser = args::source)]
    files: Vec<Source>,
}

/// `jsongate render [FILE | -]...`: envelope lines to separate per-tool text blocks.
pub fn render(a: &RenderArgs) -> Result<ExitCode, args::Failure> {
    let files = if a.files.is_empty() {
        vec![Source::Stdin]
    } else {
        a.files.clone()
    };
    args::one_stdin(files.iter().map(|f| ("FILE", Some(f))))?;
    let mut lines = Vec::new();
    for f in &files {
        let bytes = f.read_bounded(Limits::new().get_max_bytes())?;
        lines.extend(
            bytes
                .split(|&b| b == b'\n')
                .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
                .map(<[u8]>::to_vec),
        );
    }
    let text =
        jsongate::gate::render_all(lines.iter().map(Vec::as_slice)).map_err(|e| e.to_string())?;
    args::println(&text);
    Ok(ExitCode::SUCCESS)
}

const SCREEN_AFTER: &str = "\
Screens every member name and string value of one JSON document for instruction-like text
(English and Chinese phrases; case, whitespace, full-width and zero-width evasions
normalised). One JSON line per finding:
  {\"pointer\":P,\"in\":\"name|value\",\"pattern\":ID,\"class\":C,\"offset\":N,\"at\":M,
   \"action\":\"flag|redact|drop|reject\"}
(offset: byte offset of the match in the decoded string; at: byte offset of the string in
the document), then one summary line:
  {\"findings\":N,\"verdict\":\"admitted|INVALID_RESPONSE\",\"dropped\":[P...]}
plus \"error\":KIND when the document is not valid JSON. --contract FILE
({\"screen\":1,\"default\":A,\"fields\":{POINTER:A}}) chooses per field: flag, redact
(matched spans replaced by [redacted], < and > by full-width forms; a string that stays
high-risk is dropped), drop (field not admitted) or reject, and optionally which pattern
classes count (\"classes\":[...]); the summary then carries \"cleaned\":[P...] when redact
cleaned strings, and the admitted \"document\". Nothing else is rewritten. --provenance
FILE appends a provenance record per identifier-like value of the admitted document (as
'gate --provenance' does; origin --tool and --request-id).

EXIT STATUS:
    0 admitted, 1 INVALID_RESPONSE, 2 usage or configuration error";

/// Screen a document's names and strings for instruction-like text
#[derive(Args, Debug)]
#[command(after_help = SCREEN_AFTER)]
pub struct ScreenArgs {
    /// the document (standard input when absent or '-')
    #[arg(value_name = "FILE", value_parser = args::source)]
    file: Option<Source>,
    /// what to do per field: {"screen":1,"default":A,"fields":{POINTER:A}}
    #[arg(long, value_name = "FILE", value_parser = args::source)]
    contract: Option<Source>,
    /// append provenance records of the admitted document's values to FILE (mode 0600)
    #[arg(long, value_name = "FILE")]
    provenance: Option<PathBuf>,
    /// the tool the document came from, for --provenance records
    #[arg(long, value_name = "NAME", requires = "provenance")]
    tool: Option<String>,
    /// the request the document answered, for --provenance records
    #[arg(long, value_name = "ID", requires = "provenance")]
    request_id: Option<String>,
}

/// `jsongate screen`: findings as JSON lines, then a summary line.
pub fn screen(a: &ScreenArgs) -> Result<ExitCode, args::Failure> {
    use jsongate::json::Value;
    use jsongate::screen::{ScreenContract, Screener};
    let document = a.file.clone().unwrap_or(Source::Stdin);
    args::one_stdin([
        ("--contract", a.contract.as_ref()),
        ("the document", Some(&document)),
    ])?;
    let contract = match &a.contract {
        None => ScreenContract::default(),
        Some(src) => {
            let name = src.name();
            let bytes = match src {
                Source::Stdin => Source::stdin(1 << 20)?,
                Source::Path(p) => {
                    std::fs::read(p).map_err(|e| format!("cannot read contract '{name}': {e}"))?
                }
            };
            ScreenContract::from_slice(&bytes).map_err(|e| format!("contract '{name}': {e}"))?
        }
    };
    // One byte past the limit is read, so that the scanner reports too_large itself.
    let input = document.read_bounded(Limits::new().get_max_bytes().saturating_add(1))?;
    let mut screener = Screener::new();
    let scanned = Scanner::new(Limits::new()).scan_slice(&input, &mut screener);
    let mut screening = contract.apply(std::mem::take(&mut screener.findings));
    let mut rejected = screening.rejected || scanned.is_err();
    // With a contract, the admitted document: strings cleaned under `redact` (or their fields
    // dropped when they stay high-risk), dropped fields removed, nothing else rewritten. A
    // dropped root (a document that is one string, or a rule for "") cannot be admitted.
    let mut admitted = None;
    if let (Some(_), false) = (&a.contract, rejected) {
        let mut doc = Value::parse(&input, Limits::new()).map_err(|e| e.to_string())?;
        let cleaned = jsongate::screen::clean(&mut doc, &mut screening, &contract);
        if jsongate::screen::remove_dropped(&mut doc, &screening.dropped) {
            admitted = Some((doc, cleaned));
        } else {
            rejected = true;
        }
    }
    let mut out = String::new();
    for (f, action) in &screening.findings {
        f.write_json(&mut out, *action);
        out.push('\n');
    }
    let mut o = ObjectWriter::new(&mut out);
    o.u64("findings", screening.findings.len() as u64).str(
        "verdict",
        if rejected {
            "INVALID_RESPONSE"
        } else {
            "admitted"
        },
    );
    let mut dropped = o.array("dropped");
    for d in &screening.dropped {
        dropped.str(d);
    }
    dropped.finish();
    if let Some((_, cleaned)) = admitted.as_ref().filter(|(_, c)| !c.is_empty()) {
        let mut list = o.array("cleaned");
        for p in cleaned {
            list.str(p);
        }
        list.finish();
    }
    if let Err(e) = &scanned {
        o.str("error", e.kind().code());
    }
    if let Some((doc, _)) = &admitted {
        o.value("document", doc);
    }
    o.finish();
    if let (Some(path), false) = (&a.provenance, rejected) {
        let doc = match &admitted {
            Some((doc, _)) => doc.clone(),
            None => Value::parse(&input, Limits::new()).map_err(|e| e.to_string())?,
        };
        let records = jsongate::action::provenance_records(
            a.tool.as_deref().unwrap_or(""),
            a.request_id.as_deref().unwrap_or(""),
            "",
            &doc,
        );
        append_records(path, &records)?;
    }
    args::println(&out);
    Ok(if rejected {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
