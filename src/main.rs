//! The `jsongate` command: argument parsing, I/O and exit codes around the library.
//!
//! Exit codes: 0 accepted, 1 rejected, 2 usage, configuration or I/O error (message on
//! stderr). The verdict is exactly one JSON line on stdout.

use std::fmt::Write as _;

use jsongate::select::write_json_string;
use std::io::{self, Write};
use std::process::ExitCode;

use jsongate::{
    Draft, ErrorKind, Ignore, Limits, OutputFormat, Rejection, Scanner, Schema, Validator,
    UNLIMITED,
};

const USAGE: &str = "\
jsongate — streaming, bounded-memory JSON gate for untrusted tool output

USAGE:
    jsongate check [OPTIONS] [--schema SCHEMA [SCHEMA OPTIONS]] [FILE | -]
    jsongate gate --contract FILE --request-id ID [--context KEY=VALUE]... [--now RFC3339]
                  [--audit FILE] [--raw-copy FILE [--raw-copy-bytes N]]
                  [--attempt N [--elapsed-ms T]] [--upstream ENDPOINT [--upstream-status N]]
                  [--render FILE] [--alerts FILE] [--transport-error CODE] [FILE | -]
    jsongate contract test DIR | contract diff OLD NEW | contract schema
                  | contract envelope-schema --contract FILE
    jsongate render [FILE | -]...
    jsongate decide --policy FILE --grants A,B [--workspace DIR] [--recheck] [--audit FILE]
                  [--state SPEC [--on-state-error deny|allow] [--state-scope S]]
                  [--plan FILE] [--context KEY=VALUE]... [--approval-wait SECONDS]
                  [FILE | -]
    jsongate approve ID --state SPEC [--deny]
    jsongate screen [--contract FILE] [FILE | -]
    jsongate policy schema | decision schema | alerts schema | plan schema
    jsongate mcp-proxy [OPTIONS] [--format-assertion] [--draft D] [--eval-budget N]
                  [--policy FILE --grants A,B [--workspace DIR]] [--screen flag|reject]
                  [--audit FILE] [--pin LOCKFILE] [--on-tool-change refuse|warn]
                  [--screen-tools flag|reject] [--max-result-bytes [TOOL=]N]... [--truncate-text]
                  [--alerts FILE] [--state SPEC [--on-state-error deny|allow]]
                  [--plan FILE] [--context KEY=VALUE]... [--approval-wait SECONDS]
                  -- SERVER_COMMAND [ARGS]...
    jsongate mcp-proxy --upstream http://HOST:PORT/PATH [--listen IP:PORT]
                  [--allow-origin ORIGIN]... [--answer-timeout SECONDS] [the same OPTIONS]
    jsongate mcp-pin --out LOCKFILE [--timeout SECONDS] [OPTIONS] -- SERVER_COMMAND [ARGS]...
    jsongate pin diff OLD NEW | pin schema
    jsongate serve --config FILE [--listen IP:PORT] | serve schema
    jsongate --help | --version

COMMANDS:
    check    Scan one JSON document (FILE, or standard input when FILE is absent or '-')
             with the strict profile (RFC 8259, duplicate names rejected) and the
             limits below. Reads in 64 KiB chunks with constant memory and stops reading as
             soon as the verdict is known. Prints one JSON line:
               {\"valid\":true,\"bytes_read\":N}
               {\"valid\":false,\"bytes_read\":N,\"error\":{\"kind\":K,\"offset\":N,\"line\":L,
                \"column\":C,\"pointer\":P,\"message\":M}}

    gate     Apply a tool contract to one upstream response: limits, strict scan, the
             contract's schemas, its semantic checks against --context and --now (default:
             the system clock), then print the agent-facing envelope on stdout:
               {\"tool\":T,\"request_id\":ID,\"outcome\":\"success\",\"data\":{...}}
               {\"tool\":T,\"request_id\":ID,\"outcome\":\"failure\",
                \"error\":{\"code\":C,\"retryable\":B}}
             C is NOT_FOUND, UPSTREAM_UNAVAILABLE, RATE_LIMITED, INVALID_RESPONSE, STALE or
             MISMATCH. One audit JSON line per decision is appended to --audit FILE (never
             to stdout). --raw-copy writes at most N (default 65536) raw bytes of a rejected
             response to FILE (mode 0600). --transport-error CODE records a failed call
             without reading input. --attempt N (1-based) and --elapsed-ms T (since the
             first attempt) make 'retryable' follow the contract's retry policy for the
             remaining attempts and budget; the audit records the attempt and the retry
             decision. --context session_id=S / agent_id=A and --upstream ENDPOINT
             [--upstream-status N] go to the audit line. A contract with
             \"render\":\"untrusted_text\" prints the agent-facing text block after the
             envelope line (--render FILE writes it to FILE instead, for any contract).
             --alerts FILE (format: jsongate alerts schema; also the contract's 'alerts'
             member) raises alerts on blocks of listed kinds and runs a circuit breaker
             per tool: while open, responses fail fast with UPSTREAM_UNAVAILABLE, not
             retryable, unread. Exit 0 success, 1 failure, 2 configuration error.
    contract test DIR
             Run DIR/cases.json (each case: name, input file, request_id, context, now,
             expected envelope) against DIR/contract.json; one line per case; exit 0 if all
             pass, 1 otherwise.
    contract diff OLD NEW
             Compare two versions of a contract: one line per change
               {\"side\":\"agent|upstream\",\"change\":K,\"breaking\":B,\"subject\":S,...}
             then {\"changes\":N,\"breaking\":M,\"version\":{...},\"bumped\":B,\"verdict\":V}.
             Exit 1 when a change is breaking and 'version' was not changed, else 0.
    render   Read envelope lines (files or standard input) and print one separate text
             block per envelope: labelled untrusted data with its provenance, or one
             failure line without upstream text.
    contract schema
             Print the JSON Schema of contract files.
    serve --config FILE
             Reverse proxy for HTTP tool APIs: each route (method, path prefix) names an
             upstream base URL (http://) and a gate contract; the caller receives the
             gate's envelope, one audit line per request goes to the config's audit file
             (default: stderr), never with a header value. --listen overrides the config's
             address (default 127.0.0.1:8080; port 0 picks a free port). Prints
             'listening on IP:PORT' on stderr once ready; SIGTERM or SIGINT stop accepting
             and let in-flight requests finish. 'serve schema' prints the config's schema.
    contract envelope-schema --contract FILE
             Print the envelope schema derived from a contract.

OPTIONS (N is a non-negative integer or 'unlimited'):
    --max-bytes N          input bytes, whitespace included     [default: 16777216 (16 MiB)]
    --max-depth N          nesting depth ([] and {} are 1)       [default: 128]
    --max-name-bytes N     UTF-8 bytes of one member name        [default: 4096]
    --max-string-bytes N   UTF-8 bytes of one string value       [default: 4194304 (4 MiB)]
    --max-number-bytes N   bytes of one number's text            [default: 128]
    --max-members N        members of one object                 [default: 65536]
    --max-items N          items of one array                    [default: 1000000]
    --profile P            rfc8259 (default) or i-json: i-json also rejects noncharacters
                           (U+FDD0-U+FDEF, U+xFFFE, U+xFFFF) in strings and names, with
                           kind noncharacter (RFC 7493 section 2.1)
    -h, --help             print this help

SCHEMA OPTIONS (validation runs on the same pass; the first violation stops the read):
    --schema FILE          JSON Schema to validate against (draft 2020-12 unless its $schema
                           names 2019-09, draft-07, -06 or -04); an invalid or unresolvable
                           schema is a configuration error (exit 2)
    --format-assertion     validate 'format' instead of treating it as an annotation
    --draft D              dialect of the schema and of every resource without $schema:
                           2020-12 (default), 2019-09, 7, 6 or 4
    --output F             print the verdict in the JSON Schema output format F instead:
                           flag ({\"valid\":false}), basic (a flat list of output units,
                           one per violation collected with --errors) or detailed (nested
                           as the schema nests the failing subschemas); exit codes as above
    --resource URI=FILE    make FILE available to $ref as URI (repeatable); nothing is ever
                           fetched from the network or read from disk otherwise
    --errors N             collect up to N violations (default 1); the line then also has
                           \"errors\":[...] with each violation
    --eval-budget N        evaluation work units allowed per document, whatever its size
                           [default: 1000000 plus 16 per input byte]; past it the document
                           is rejected with kind budget_exceeded
    A schema violation has kind schema and adds \"keyword\" (the failing keyword) and
    \"schema_path\" (its location through the schema, following $ref) to the error.

    decide   Decide one tool call {\"tool\":T,\"arguments\":{...}} under a policy file:
             allowlist, argument schema, semantic rules (paths, URL hosts, lengths,
             forbidden substrings), the session's --grants (comma-separated, may be empty),
             rate limit, approval. --workspace DIR also resolves paths on the file system
             (symlinks that lead outside DIR are an escape). Prints the decision record:
               {\"tool\":T,\"argumentsValid\":B,\"toolAllowed\":B,\"grant\":[...],
                \"required\":[...],\"decision\":\"allow|deny|ask\",\"reason\":R}
             R is ok, tool_not_allowlisted, arguments_invalid, path_escape,
             host_not_allowed, field_too_long, forbidden_substring, context_mismatch,
             grant_missing, state_unavailable, rate_limited, not_approved, outside_plan
             or needs_approval. With --recheck the input is a decision record
             received from elsewhere; its facts are recomputed from the policy (required
             capabilities from the policy, grants limited to --grants) and a claim that
             does not follow from them is corrected; a recorded failure is kept (or an
             earlier check's failure replaces it), never turned into allow.
             --state SPEC keeps rate limits (and plans and approvals) in a shared store:
             'memory' (the default: this run only), a state file (FILE or file:FILE; one
             host, safe for concurrent processes, crash-safe, format 1) or
             redis://HOST:PORT[?prefix=P&timeout_ms=N&connect_timeout_ms=N&
             max_connections=N] (several hosts; Redis's clock). When the store fails the
             call is denied (state_unavailable) unless --on-state-error allow, which skips
             the limit; either way the record carries \"stateError\". --state-scope S
             counts apart from other scopes in the same store.
             --plan FILE (format: jsongate plan schema) lists the tools the task may
             call, optionally in order and with counts (kept in the store under the
             plan's task id); a call outside it is ask with reason outside_plan, never
             allow. A plan naming a tool the policy does not allowlist is an error.
             --context KEY=VALUE (repeatable; a repeated key makes a list) is the
             caller's context for the rules equals_context and in_context_list
             (context_mismatch; the record's \"failed\" names the rule and pointer).
             --approval-wait SECONDS: an ask stores a pending approval in the store,
             prints it on stderr, and waits; 'jsongate approve ID --state SPEC' grants
             it (allow) for exactly that tool and arguments digest, once; --deny, an
             answer for other arguments, or no answer in time is deny (not_approved).
             The audit line carries \"approval\":{\"id\",\"outcome\"}.
             --audit FILE appends {\"time\",\"jsongate\",\"arguments_sha256\",\"record\"}
             per decision (the SHA-256 of the compact arguments; with --recheck, of the
             received record), never the arguments themselves.
             Exit 0 allow, 1 deny, 3 ask, 2 configuration or input error.
    screen   Screen every member name and string value of one JSON document for
             instruction-like text (English and Chinese phrases; case, whitespace,
             full-width and zero-width evasions normalised). One JSON line per finding:
               {\"pointer\":P,\"in\":\"name|value\",\"pattern\":ID,\"class\":C,\"offset\":N,
                \"at\":M,\"action\":\"flag|drop|reject\"}
             (offset: byte offset of the match in the decoded string; at: byte offset of
             the string in the document), then one summary line:
               {\"findings\":N,\"verdict\":\"admitted|INVALID_RESPONSE\",\"dropped\":[P...]}
             plus \"error\":KIND when the document is not valid JSON. --contract FILE
             ({\"screen\":1,\"default\":A,\"fields\":{POINTER:A}}) chooses per field:
             flag, drop (field not admitted) or reject, and optionally which pattern
             classes count (\"classes\":[...]); the summary then carries the admitted
             \"document\" with dropped fields removed. Content is never rewritten.
             Exit 0 admitted, 1 INVALID_RESPONSE, 2 configuration error.
    approve ID --state SPEC [--deny]
             Answer a pending approval (see decide --approval-wait): prints the record
             with \"granted\"; exit 2 when no such approval is pending.
    policy schema | decision schema | alerts schema | plan schema
             Print the JSON Schema of policy files, decision records, alert files or
             plans.
    mcp-proxy
             Run an MCP server over stdio behind a validating relay: use it in a client's
             configuration in place of the server command. Every line from the server is
             scanned with the limits above (--max-bytes is per message, default 4194304)
             and duplicate names rejected; tool schemas are learnt from tools/list (the
             proxy lists tools itself when needed); a tools/call or tasks/result whose
             structuredContent fails the tool's outputSchema, is missing, or whose line
             fails the scan is replaced by an isError result with the same id and a reason
             without upstream text. A call whose arguments fail the inputSchema, or that
             the --policy denies or wants approved, is answered by the proxy and never
             forwarded. Everything else passes byte for byte. --screen also screens every
             name and string of a result that passed, and of every server request and
             notification (sampling, elicitation, logging), for instruction-like text (as
             'screen'): flag forwards it and audits the finding, reject replaces a result,
             answers a server request with an error and drops a notification.
             --max-result-bytes N refuses a tools/call result line over N bytes
             (class over_budget) when it has structured content; a text-only result is
             refused too unless --truncate-text, which cuts its text at a character
             boundary and appends a marker (audit verdict truncated). --alerts FILE
             (as for gate) alerts on blocks of listed classes (tool_poisoned, screen, ...)
             and counts replaced results and removed tools toward each tool's breaker;
             while it is open, calls to the tool are refused (breaker_open).
             --state SPEC (as for decide) shares rate limits and breakers with every
             replica that names the same store; a store failure is audited (state_error).
             Approvals: a call the policy (or --plan) answers ask waits for a person
             instead of being refused. When the client declared the elicitation
             capability, the proxy sends it an elicitation/create request (tool, reason,
             a summary and the SHA-256 of the arguments, one boolean 'approve'); only
             accept with approve true forwards the call. Otherwise, with --state SPEC and
             --approval-wait, a pending approval is stored, its id written to stderr
             ('jsongate approve ID --state SPEC [--deny]' answers it, from any host that
             shares the store). Decline, cancel, --deny, an answer for other arguments or
             no answer within --approval-wait SECONDS (default 120) is a refusal
             (not_approved); without either way to ask, ask is refused (policy_ask).
             Other messages flow while a call waits. Audit lines carry
             \"approval\":{\"id\",\"via\",\"outcome\"}.
             --draft D names the dialect of tool schemas without $schema (as for check).
             --audit appends one JSON line per tool call (and per dropped line). Signals
             are forwarded to the server; the exit status is the server's.
             Tool definitions: every listed tool is hashed in canonical form and held to
             its pin: --pin LOCKFILE (from mcp-pin), or without it the tools of the first
             complete listing (trust on first use). A tool not pinned, or whose definition
             changed, is removed from the listing the client sees, its calls are answered
             with an isError result (tool_not_pinned, tool_changed) and never forwarded,
             and the audit line names the members that changed and classifies each change
             (input_widened, output_widened, text_changed, unclassified, ...).
             --on-tool-change warn adopts a change that widens nothing (audited as
             flagged); a dangerous change is refused either way. Every string of every
             definition is screened for instruction-like phrases and hidden text
             (zero-width, bidi controls, tag characters, ANSI escapes): --screen-tools
             reject removes the tool (tool_poisoned), flag audits it; the default is
             reject when --screen is given, flag otherwise. Annotations (readOnlyHint,
             destructiveHint, ...) are hints from the server and never change a decision.
    mcp-pin  Start the server, initialise it, list every page of its tools, screen every
             definition, and write the lockfile (one entry per tool: name, SHA-256 and
             canonical definition, with the server's name) to --out for review. Prints
             one summary line. Exit 1 without writing the lockfile when screening finds
             instruction-like or hidden text in a tool (one line per finding: tool,
             pointer, pattern id); exit 2 when the server fails or exceeds --timeout
             (default 30 seconds).
    pin diff OLD NEW
             Compare two lockfiles: one JSON line per change ({\"tool\":T,\"kind\":K,
             \"dangerous\":B,\"pointer\":P,\"keyword\":W,\"from\":V,\"to\":V}), then
             {\"changes\":N,\"dangerous\":M}. Exit 0 identical, 1 changed, 2 error.
    pin schema
             Print the JSON Schema of lockfiles.

ERROR KINDS:
    too_large, too_deep, name_too_long, string_too_long, number_too_long, too_many_members,
    too_many_items, duplicate_name, invalid_utf8, lone_surrogate, noncharacter, syntax,
    schema, budget_exceeded, schema_cycle

EXIT STATUS:
    0 accepted (decide: allow), 1 rejected (decide: deny), 2 usage, configuration or I/O
    error, 3 ask (decide only)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("jsongate: {msg}");
            eprintln!("Try 'jsongate --help'.");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<ExitCode, String> {
    match args.first().map(String::as_str) {
        None => Err("missing command".into()),
        Some("-h" | "--help" | "help") => {
            print!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        Some("-V" | "--version") => {
            println!("jsongate {}", env!("CARGO_PKG_VERSION"));
            Ok(ExitCode::SUCCESS)
        }
        Some("check") => check(&args[1..]),
        Some("gate") => gate_cmd(&args[1..]),
        Some("contract") => contract_cmd(&args[1..]),
        Some("decide") => decide_cmd(&args[1..]),
        Some("approve") => approve_cmd(&args[1..]),
        Some("screen") => screen_cmd(&args[1..]),
        Some("render") => render_cmd(&args[1..]),
        Some("mcp-proxy") => mcp_proxy_cmd(&args[1..]),
        Some("mcp-pin") => mcp_pin_cmd(&args[1..]),
        Some("pin") => pin_cmd(&args[1..]),
        Some("serve") => serve_cmd(&args[1..]),
        Some("policy" | "decision" | "alerts" | "plan") => schema_print_cmd(args),
        Some(other) => Err(format!("unknown command '{other}'")),
    }
}

/// `--profile rfc8259|i-json`.
fn parse_profile(limits: Limits, value: Option<&String>) -> Result<Limits, String> {
    match value.map(String::as_str) {
        Some("rfc8259") => Ok(limits.i_json(false)),
        Some("i-json") => Ok(limits.i_json(true)),
        Some(v) => Err(format!("--profile: '{v}' is not rfc8259 or i-json")),
        None => Err("--profile needs rfc8259 or i-json".into()),
    }
}

fn parse_limit(flag: &str, value: Option<&String>) -> Result<u64, String> {
    let v = value.ok_or_else(|| format!("{flag} needs a value"))?;
    if v == "unlimited" {
        return Ok(UNLIMITED);
    }
    v.parse::<u64>()
        .map_err(|_| format!("{flag}: '{v}' is not a non-negative integer or 'unlimited'"))
}

struct SchemaArgs {
    schema: Option<String>,
    /// `--draft`: the dialect of the schema and resources without `$schema`.
    draft: Option<Draft>,
    /// `--output`: the specification's output format instead of the verdict line.
    output: Option<OutputFormat>,
    format_assertion: bool,
    resources: Vec<(String, String)>,
    errors: usize,
    /// `--eval-budget`: a fixed budget instead of the default (fixed + per byte).
    budget: Option<u64>,
}

fn check(args: &[String]) -> Result<ExitCode, String> {
    let mut limits = Limits::new();
    let mut file: Option<String> = None;
    let mut sa = SchemaArgs {
        schema: None,
        draft: None,
        output: None,
        format_assertion: false,
        resources: Vec::new(),
        errors: 1,
        budget: None,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = || inline.clone().or_else(|| it.next().cloned());
        let v = match flag {
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(ExitCode::SUCCESS);
            }
            "--max-bytes" | "--max-depth" | "--max-name-bytes" | "--max-string-bytes"
            | "--max-number-bytes" | "--max-members" | "--max-items" => {
                parse_limit(flag, value().as_ref())?
            }
            "--schema" => {
                sa.schema = Some(value().ok_or("--schema needs a file")?);
                continue;
            }
            "--profile" => {
                limits = parse_profile(limits, value().as_ref())?;
                continue;
            }
            "--format-assertion" => {
                sa.format_assertion = true;
                continue;
            }
            "--draft" => {
                sa.draft = Some(parse_draft(value().as_deref())?);
                continue;
            }
            "--output" => {
                let v = value().ok_or("--output needs flag, basic or detailed")?;
                sa.output = Some(OutputFormat::from_name(&v).ok_or_else(|| {
                    format!("--output: '{v}' is not one of flag, basic, detailed")
                })?);
                continue;
            }
            "--resource" => {
                let r = value().ok_or("--resource needs URI=FILE")?;
                let (uri, path) = r
                    .split_once('=')
                    .ok_or_else(|| format!("--resource: '{r}' is not URI=FILE"))?;
                sa.resources.push((uri.to_string(), path.to_string()));
                continue;
            }
            "--eval-budget" => {
                sa.budget = Some(parse_limit(flag, value().as_ref())?);
                continue;
            }
            "--errors" => {
                let n = value().ok_or("--errors needs a number")?;
                sa.errors = n
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("--errors: '{n}' is not a positive integer"))?;
                continue;
            }
            "-" => {
                set_file(&mut file, "-")?;
                continue;
            }
            f if f.starts_with('-') => return Err(format!("unknown option '{f}'")),
            f => {
                set_file(&mut file, f)?;
                continue;
            }
        };
        // `--max-depth` names the limit `max_depth`.
        let name = flag.trim_start_matches("--").replace('-', "_");
        limits = limits.set_by_name(&name, v).unwrap_or(limits.max_items(v));
    }
    let validator = match &sa.schema {
        Some(path) => Some(load_schema(path, &sa)?.max_errors(sa.errors)),
        None => None,
    };

    let mut scanner = Scanner::new(limits);
    let input: Box<dyn io::Read> = match file.as_deref() {
        None | Some("-") => Box::new(io::stdin().lock()),
        Some(path) => {
            Box::new(std::fs::File::open(path).map_err(|e| format!("cannot open '{path}': {e}"))?)
        }
    };
    let (result, line) = match validator {
        None => {
            let r = scanner
                .scan_read(input, &mut Ignore)
                .map(|_| ())
                .map_err(Rejection::Error);
            let line = jsongate::verdict_json(&r, scanner.bytes_read());
            (r, line)
        }
        Some(mut v) => {
            let r = v.validate_read(&mut scanner, input);
            if let Some(format) = sa.output {
                if let Err(Rejection::Error(e)) = &r {
                    if let ErrorKind::Io(kind) = e.kind() {
                        let at = scanner.bytes_read();
                        return Err(format!("read failed after {at} bytes: {kind}"));
                    }
                }
                let uri = sa.schema.as_deref().and_then(file_uri);
                let line = v.output(&r, format, uri.as_deref());
                let mut stdout = io::stdout().lock();
                let _ = writeln!(stdout, "{line}");
                let _ = stdout.flush();
                return Ok(ExitCode::from(u8::from(r.is_err())));
            }
            let line = v.verdict_json(&r, scanner.bytes_read());
            (r, line)
        }
    };
    if let Err(Rejection::Error(e)) = &result {
        if let ErrorKind::Io(kind) = e.kind() {
            let at = scanner.bytes_read();
            return Err(format!("read failed after {at} bytes: {kind}"));
        }
    }
    let code = ExitCode::from(u8::from(result.is_err()));
    let mut stdout = io::stdout().lock();
    // A closed stdout is not worth a panic; the exit code still carries the verdict.
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
    Ok(code)
}

/// The `file://` URI of a file, for the output's absolute keyword locations.
fn file_uri(path: &str) -> Option<String> {
    let abs = std::fs::canonicalize(path).ok()?;
    let mut uri = String::from("file://");
    for c in abs.to_str()?.chars() {
        match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '/' | '-' | '.' | '_' | '~' => uri.push(c),
            c => {
                let mut buf = [0; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    let _ = write!(uri, "%{b:02X}");
                }
            }
        }
    }
    Some(uri)
}

/// `--draft D`: one of the names [`Draft::from_name`] reads.
fn parse_draft(v: Option<&str>) -> Result<Draft, String> {
    let v = v.ok_or("--draft needs 2020-12, 2019-09, 7, 6 or 4")?;
    Draft::from_name(v)
        .ok_or_else(|| format!("--draft: '{v}' is not one of 2020-12, 2019-09, 7, 6, 4"))
}

fn load_schema(path: &str, sa: &SchemaArgs) -> Result<Validator, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read schema '{path}': {e}"))?;
    let mut opts = Schema::options().format_assertion(sa.format_assertion);
    if let Some(d) = sa.draft {
        opts = opts.draft(d);
    }
    if let Some(b) = sa.budget {
        opts = opts.eval_budget(b);
    }
    for (uri, file) in &sa.resources {
        let doc = std::fs::read(file).map_err(|e| format!("cannot read resource '{file}': {e}"))?;
        opts = opts.resource(uri, &doc);
    }
    let schema = opts.compile(&bytes).map_err(|e| match e.resource() {
        Some(uri) => {
            format!("invalid schema '{path}': {e}; give the document with --resource {uri}=FILE")
        }
        None => format!("invalid schema '{path}': {e}"),
    })?;
    Ok(Validator::new(&schema))
}

fn set_file(file: &mut Option<String>, f: &str) -> Result<(), String> {
    if file.is_some() {
        return Err("only one input file may be given".into());
    }
    *file = Some(f.to_string());
    Ok(())
}

/// `jsongate gate`: one response through a tool contract.
fn gate_cmd(args: &[String]) -> Result<ExitCode, String> {
    use jsongate::gate::{Context, Contract, FailureCode, Gate, Request, Timestamp};
    let mut contract: Option<String> = None;
    let mut request_id: Option<String> = None;
    let mut ctx = Context::new();
    let mut now: Option<Timestamp> = None;
    let mut audit: Option<String> = None;
    let mut raw_copy: Option<String> = None;
    let mut raw_bytes: usize = 64 * 1024;
    let mut transport: Option<FailureCode> = None;
    let mut file: Option<String> = None;
    let mut attempt: Option<u32> = None;
    let mut elapsed_ms: Option<u64> = None;
    let mut upstream: Option<String> = None;
    let mut upstream_status: Option<i64> = None;
    let mut render_out: Option<String> = None;
    let mut alerts: Option<String> = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().cloned().ok_or(format!("{flag} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(ExitCode::SUCCESS);
            }
            "--contract" => contract = Some(value(arg)?),
            "--request-id" => request_id = Some(value(arg)?),
            "--context" => {
                let kv = value(arg)?;
                let (k, v) = kv
                    .split_once('=')
                    .ok_or_else(|| format!("--context: '{kv}' is not KEY=VALUE"))?;
                ctx = ctx.value(k, v);
            }
            "--now" => {
                let t = value(arg)?;
                now = Some(
                    Timestamp::parse_rfc3339(&t)
                        .ok_or_else(|| format!("--now: '{t}' is not an RFC 3339 date-time"))?,
                );
            }
            "--audit" => audit = Some(value(arg)?),
            "--raw-copy" => raw_copy = Some(value(arg)?),
            "--raw-copy-bytes" => {
                let n = value(arg)?;
                raw_bytes = n
                    .parse()
                    .map_err(|_| format!("--raw-copy-bytes: '{n}' is not a number"))?;
            }
            "--attempt" => {
                let n = value(arg)?;
                attempt = Some(
                    n.parse()
                        .ok()
                        .filter(|&n: &u32| n >= 1)
                        .ok_or_else(|| format!("--attempt: '{n}' is not a positive integer"))?,
                );
            }
            "--elapsed-ms" => {
                let n = value(arg)?;
                elapsed_ms = Some(
                    n.parse()
                        .map_err(|_| format!("--elapsed-ms: '{n}' is not a number"))?,
                );
            }
            "--upstream" => upstream = Some(value(arg)?),
            "--upstream-status" => {
                let n = value(arg)?;
                upstream_status = Some(
                    n.parse()
                        .map_err(|_| format!("--upstream-status: '{n}' is not an integer"))?,
                );
            }
            "--render" => render_out = Some(value(arg)?),
            "--alerts" => alerts = Some(value(arg)?),
            "--transport-error" => {
                let c = value(arg)?;
                transport = Some(
                    FailureCode::parse(&c)
                        .ok_or_else(|| format!("--transport-error: unknown code '{c}'"))?,
                );
            }
            f if f.starts_with('-') && f != "-" => return Err(format!("unknown option '{f}'")),
            f => set_file(&mut file, f)?,
        }
    }
    let contract = contract.ok_or("gate needs --contract FILE")?;
    let request_id = request_id.ok_or("gate needs --request-id ID")?;
    let contract = Contract::from_file(std::path::Path::new(&contract))
        .map_err(|e| format!("contract '{contract}': {e}"))?;
    let contract_tool = contract.tool().to_owned();
    let mut gate = Gate::new(&contract).map_err(|e| e.to_string())?;
    if let Some(path) = &alerts {
        let a = jsongate::gate::Alerts::from_file(std::path::Path::new(path))
            .map_err(|e| e.to_string())?;
        gate = gate.with_alerts(std::sync::Arc::new(a));
    }
    if raw_copy.is_some() {
        gate = gate.raw_copy(raw_bytes);
    }
    let mut req = Request::new(&request_id, ctx.now(now.unwrap_or_else(Timestamp::now)));
    match (attempt, elapsed_ms) {
        (Some(n), e) => {
            req = req.attempt(n, std::time::Duration::from_millis(e.unwrap_or(0)));
        }
        (None, Some(_)) => return Err("--elapsed-ms needs --attempt N".into()),
        (None, None) => {}
    }
    match (&upstream, upstream_status) {
        (Some(u), st) => req = req.upstream(u, st),
        (None, Some(_)) => return Err("--upstream-status needs --upstream ENDPOINT".into()),
        (None, None) => {}
    }
    let mut decision = match transport {
        Some(code) => gate.transport_failure(code, &req),
        None => match file.as_deref() {
            None | Some("-") => gate.run_read(io::stdin().lock(), &req),
            Some(path) => {
                let f =
                    std::fs::File::open(path).map_err(|e| format!("cannot open '{path}': {e}"))?;
                gate.run_read(f, &req)
            }
        },
    }
    .map_err(|e| e.to_string())?;
    if let (Some(path), Some(raw), false) = (&raw_copy, &decision.raw, decision.audit.accepted) {
        write_protected(path, raw).map_err(|e| format!("cannot write '{path}': {e}"))?;
        decision.audit.raw_copy = Some(path.clone());
    }
    if let Some(path) = &audit {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot open audit file '{path}': {e}"))?;
        writeln!(f, "{}", decision.audit.to_json())
            .map_err(|e| format!("cannot write audit file '{path}': {e}"))?;
    }
    for f in &decision.alerts.failures {
        // Logged for the operator; the decision above stands whatever failed here.
        eprintln!("jsongate: alert delivery failed: {f}");
    }
    let mut stdout = io::stdout().lock();
    let _ = writeln!(stdout, "{}", decision.output);
    match (&render_out, &decision.rendered) {
        (Some(path), block) => {
            // Without a contract that asks for it, the block is rendered on request.
            let block = block.clone().unwrap_or_else(|| {
                jsongate::gate::render_envelope(&contract_tool, &request_id, &decision.envelope)
            });
            std::fs::write(path, format!("{block}\n"))
                .map_err(|e| format!("cannot write '{path}': {e}"))?;
        }
        (None, Some(block)) => {
            let _ = writeln!(stdout, "{block}");
        }
        (None, None) => {}
    }
    let _ = stdout.flush();
    Ok(if decision.audit.accepted {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Creates `path` readable by its owner only (on Unix) and writes `bytes`.
fn write_protected(path: &str, bytes: &[u8]) -> io::Result<()> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)?.write_all(bytes)
}

/// `jsongate contract ...`.
fn contract_cmd(args: &[String]) -> Result<ExitCode, String> {
    use jsongate::gate::{Contract, Gate, CONTRACT_SCHEMA};
    match args.first().map(String::as_str) {
        Some("schema") => {
            print!("{CONTRACT_SCHEMA}");
            Ok(ExitCode::SUCCESS)
        }
        Some("envelope-schema") => {
            let path = match &args[1..] {
                [flag, p] if flag == "--contract" => p,
                _ => return Err("contract envelope-schema needs --contract FILE".into()),
            };
            let c = Contract::from_file(std::path::Path::new(path))
                .map_err(|e| format!("contract '{path}': {e}"))?;
            let g = Gate::new(&c).map_err(|e| e.to_string())?;
            println!("{}", g.envelope_schema());
            Ok(ExitCode::SUCCESS)
        }
        Some("test") => match &args[1..] {
            [dir] => contract_test(std::path::Path::new(dir)),
            _ => Err("contract test needs DIR".into()),
        },
        Some("diff") => match &args[1..] {
            [old, new] => contract_diff(old, new),
            _ => Err("contract diff needs OLD NEW".into()),
        },
        _ => Err(
            "contract needs 'test DIR', 'diff OLD NEW', 'schema' or 'envelope-schema --contract FILE'"
                .into(),
        ),
    }
}

/// `jsongate contract diff OLD NEW`: one line per change, a summary, exit 1 on a breaking
/// change whose version was not bumped.
fn contract_diff(old: &str, new: &str) -> Result<ExitCode, String> {
    use jsongate::gate::{diff_contracts, Contract};
    let load = |p: &str| {
        Contract::from_file(std::path::Path::new(p)).map_err(|e| format!("contract '{p}': {e}"))
    };
    let (a, b) = (load(old)?, load(new)?);
    let changes = diff_contracts(&a, &b).map_err(|e| e.to_string())?;
    let breaking = changes.iter().filter(|c| c.breaking).count();
    let bumped = a.version() != b.version();
    let mut out = String::new();
    for c in &changes {
        out.push_str(&c.to_json());
        out.push('\n');
    }
    let fail = breaking > 0 && !bumped;
    let _ = write!(
        out,
        "{{\"changes\":{},\"breaking\":{breaking},\"version\":{{\"from\":",
        changes.len()
    );
    write_json_string(&mut out, a.version());
    out.push_str(",\"to\":");
    write_json_string(&mut out, b.version());
    let _ = writeln!(
        out,
        "}},\"bumped\":{bumped},\"verdict\":\"{}\"}}",
        if fail {
            "unbumped_breaking_change"
        } else {
            "ok"
        }
    );
    let mut stdout = io::stdout().lock();
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
    Ok(if fail {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Runs `DIR/cases.json` against `DIR/contract.json`.
fn contract_test(dir: &std::path::Path) -> Result<ExitCode, String> {
    use jsongate::gate::{Context, Contract, Gate, Request, Timestamp};
    use jsongate::select::Value;
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
        let mut line = String::from("{\"case\":");
        write_json_string(&mut line, &name);
        let audit_miss = case.get("audit").and_then(|a| audit_mismatch(a, &d.audit));
        if let (true, Some(why)) = (&got == expect, &audit_miss) {
            failed += 1;
            line.push_str(",\"pass\":false,\"audit\":");
            write_json_string(&mut line, why);
            line.push('}');
        } else if &got == expect {
            line.push_str(",\"pass\":true}");
        } else {
            failed += 1;
            let _ = write!(
                line,
                ",\"pass\":false,\"got\":{},\"expected\":{}}}",
                d.output, expect
            );
        }
        println!("{line}");
    }
    println!("{{\"cases\":{},\"failed\":{failed}}}", cases.len());
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// What a case's `audit` expectation (`{"kind": K|null, "screen": [{pointer, pattern,
/// class, action}...]}`, every member optional) says that the audit record does not.
fn audit_mismatch(
    want: &jsongate::select::Value,
    got: &jsongate::gate::AuditRecord,
) -> Option<String> {
    use jsongate::select::Value;
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

/// The audit line of a decision: the record, the time, and the SHA-256 of the arguments
/// (in compact form, so that formatting does not change it) or, for `--recheck`, of the
/// received record. The arguments themselves are never written.
fn decide_audit(record: &str, input: &[u8], recheck: bool) -> String {
    use jsongate::select::Value;
    use sha2::{Digest, Sha256};
    let digested = if recheck {
        input.to_vec()
    } else {
        Value::parse(input, Limits::new())
            .ok()
            .and_then(|v| v.get("arguments").map(Value::to_json))
            .unwrap_or_default()
            .into_bytes()
    };
    let hex: String = Sha256::digest(&digested)
        .iter()
        .fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        });
    let mut out = String::from("{\"time\":");
    write_json_string(&mut out, &jsongate::gate::Timestamp::now().to_rfc3339());
    let _ = write!(
        out,
        ",\"jsongate\":\"{}\",\"{}\":\"{hex}\",\"record\":{record}}}",
        env!("CARGO_PKG_VERSION"),
        if recheck {
            "received_record_sha256"
        } else {
            "arguments_sha256"
        }
    );
    out
}

/// Appends one line to `path` (created with mode 0600 on Unix).
fn append_line(path: &str, line: &str) -> Result<(), String> {
    let mut o = std::fs::OpenOptions::new();
    o.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let mut f = o
        .open(path)
        .map_err(|e| format!("cannot open audit file '{path}': {e}"))?;
    writeln!(f, "{line}").map_err(|e| format!("cannot write audit file '{path}': {e}"))
}

/// `--state SPEC`, `--on-state-error deny|allow`, `--state-scope S`: where rate limits,
/// breakers, plans and approvals are kept.
#[derive(Default)]
struct StateArgs {
    spec: Option<String>,
    on_error: Option<String>,
    scope: Option<String>,
}

impl StateArgs {
    fn set(&mut self, flag: &str, v: String) {
        match flag {
            "--state" => self.spec = Some(v),
            "--on-state-error" => self.on_error = Some(v),
            _ => self.scope = Some(v),
        }
    }

    /// The store (memory unless `--state`).
    fn store(&self) -> Result<std::sync::Arc<dyn jsongate::state::Store>, String> {
        jsongate::state::open(self.spec.as_deref().unwrap_or("memory"))
            .map_err(|e| format!("--state: {e}"))
    }

    fn rate(&self) -> Result<jsongate::action::RateState, String> {
        use jsongate::state::OnStateError;
        let on = match self.on_error.as_deref() {
            None => OnStateError::Deny,
            Some(v) => OnStateError::parse(v)
                .ok_or_else(|| format!("--on-state-error: '{v}' is not deny or allow"))?,
        };
        Ok(jsongate::action::RateState::with_store(self.store()?)
            .on_state_error(on)
            .scope(self.scope.as_deref().unwrap_or("")))
    }
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `--context KEY=VALUE` (repeatable; repeating a key makes a list).
fn parse_context(
    c: jsongate::action::Context,
    v: &str,
) -> Result<jsongate::action::Context, String> {
    match v.split_once('=') {
        Some((k, val)) if !k.is_empty() => Ok(c.with(k, val)),
        _ => Err(format!("--context: '{v}' is not KEY=VALUE")),
    }
}

/// Asks for an approval of `call` in the state store, tells the operator on stderr, and
/// waits up to `secs`; the decision after the answer and the audit member.
fn await_approval(
    d: &jsongate::action::Decision,
    call: &jsongate::action::Call,
    rate: &jsongate::action::RateState,
    secs: u64,
) -> (jsongate::action::Decision, String) {
    use jsongate::action::{Approval, ApprovalOutcome};
    let store = rate.store();
    let wait = std::time::Duration::from_secs(secs);
    let ttl = wait.as_millis().saturating_add(60_000) as u64;
    let outcome = match Approval::request(store.as_ref(), call, ttl, unix_ms()) {
        Ok(a) => {
            eprintln!(
                "jsongate: approval requested: {} (grant: jsongate approve {} --state SPEC; refuse: add --deny)",
                a.to_json(),
                a.id
            );
            let outcome = a
                .wait(store.as_ref(), wait, unix_ms)
                .map_err(|e| e.to_string());
            (Some(a), outcome)
        }
        Err(e) => (None, Err(e.to_string())),
    };
    let mut line = String::from("{");
    if let Some(a) = &outcome.0 {
        line.push_str("\"id\":");
        write_json_string(&mut line, &a.id);
        line.push(',');
    }
    let result = match outcome.1 {
        Ok(o) => {
            let _ = write!(line, "\"outcome\":\"{}\"", o.as_str());
            o
        }
        Err(e) => {
            // The store failed while asking: nobody can have approved.
            line.push_str("\"outcome\":\"state_error\",\"state_error\":");
            write_json_string(&mut line, &e);
            ApprovalOutcome::TimedOut
        }
    };
    line.push('}');
    (d.approved(result), line)
}

/// `jsongate approve ID --state SPEC [--deny]`: answers a pending approval.
fn approve_cmd(args: &[String]) -> Result<ExitCode, String> {
    let mut id = None;
    let mut state = StateArgs::default();
    let mut granted = true;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--state" => state.set(arg, it.next().cloned().ok_or("--state needs a value")?),
            "--deny" => granted = false,
            f if f.starts_with('-') => return Err(format!("unknown option '{f}'")),
            f if id.is_none() => id = Some(f.to_owned()),
            f => return Err(format!("unexpected argument '{f}'")),
        }
    }
    let id = id.ok_or("approve needs an approval ID")?;
    if state.spec.is_none() {
        return Err("approve needs --state SPEC (the store the waiting decision uses)".into());
    }
    let store = state.store()?;
    match jsongate::action::Approval::answer(store.as_ref(), &id, granted, 600_000, unix_ms()) {
        Ok(Some(a)) => {
            let mut line = a.to_json();
            line.pop();
            line.push_str(if granted {
                ",\"granted\":true}"
            } else {
                ",\"granted\":false}"
            });
            println!("{line}");
            Ok(ExitCode::SUCCESS)
        }
        Ok(None) => Err(format!(
            "no pending approval '{id}' (unknown, expired, or answered already)"
        )),
        Err(e) => Err(format!("--state: {e}")),
    }
}

/// `jsongate decide`: one tool call (or, with `--recheck`, one received decision record).
fn decide_cmd(args: &[String]) -> Result<ExitCode, String> {
    use jsongate::action::{validate_record, Call, Claim, Policy, Session, Verdict};
    let mut policy: Option<String> = None;
    let mut grants: Option<String> = None;
    let mut workspace: Option<String> = None;
    let mut recheck = false;
    let mut file: Option<String> = None;
    let mut audit: Option<String> = None;
    let mut state = StateArgs::default();
    let mut plan: Option<String> = None;
    let mut context = jsongate::action::Context::new();
    let mut approval_wait: Option<u64> = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().cloned().ok_or(format!("{flag} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(ExitCode::SUCCESS);
            }
            "--state" | "--on-state-error" | "--state-scope" => state.set(arg, value(arg)?),
            "--plan" => plan = Some(value(arg)?),
            "--context" => context = parse_context(context, &value(arg)?)?,
            "--approval-wait" => {
                let v = value(arg)?;
                approval_wait =
                    Some(v.parse().map_err(|_| {
                        format!("--approval-wait: '{v}' is not a number of seconds")
                    })?);
            }
            "--audit" => audit = Some(value(arg)?),
            "--policy" => policy = Some(value(arg)?),
            "--grants" => grants = Some(value(arg)?),
            "--workspace" => workspace = Some(value(arg)?),
            "--recheck" => recheck = true,
            f if f.starts_with('-') && f != "-" => return Err(format!("unknown option '{f}'")),
            f => set_file(&mut file, f)?,
        }
    }
    let policy_path = policy.ok_or("decide needs --policy FILE")?;
    let grants = grants.ok_or("decide needs --grants A,B (may be empty)")?;
    let policy = Policy::from_file(std::path::Path::new(&policy_path))
        .map_err(|e| format!("policy '{policy_path}': {e}"))?;
    let mut session =
        Session::new(grants.split(',').map(str::trim).filter(|g| !g.is_empty())).context(context);
    if let Some(w) = &workspace {
        session = session
            .workspace(std::path::Path::new(w))
            .map_err(|e| e.to_string())?;
    }
    if let Some(p) = &plan {
        let p = jsongate::action::Plan::from_file(std::path::Path::new(p), &policy)
            .map_err(|e| format!("plan '{p}': {e}"))?;
        session = session.plan(p);
    }
    let input = read_input(file.as_deref(), policy.limits().get_max_bytes())?;
    let mut approval_line = None;
    let decision = if recheck {
        let claim = Claim::parse(&input).map_err(|e| format!("decision record: {e}"))?;
        policy.recheck(&claim, &session)
    } else {
        let call = Call::parse(&input, policy.limits()).map_err(|e| e.to_string())?;
        let rate = state.rate()?;
        let d = policy.decide(&call, &session, &rate, unix_ms());
        match approval_wait {
            Some(secs) if d.verdict() == Verdict::Ask => {
                let (d, line) = await_approval(&d, &call, &rate, secs);
                approval_line = Some(line);
                d
            }
            _ => d,
        }
    };
    let line = decision.to_json();
    validate_record(line.as_bytes()).map_err(|e| format!("internal: decision record {e}"))?;
    if let Some(path) = &audit {
        let mut a = decide_audit(&line, &input, recheck);
        if let Some(ap) = &approval_line {
            a.pop();
            a.push_str(",\"approval\":");
            a.push_str(ap);
            a.push('}');
        }
        append_line(path, &a)?;
    }
    let mut stdout = io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
    Ok(match decision.verdict() {
        Verdict::Allow => ExitCode::SUCCESS,
        Verdict::Deny => ExitCode::from(1),
        Verdict::Ask => ExitCode::from(3),
    })
}

fn mcp_proxy_cmd(args: &[String]) -> Result<ExitCode, String> {
    use jsongate::mcp::child;
    if args
        .iter()
        .any(|a| a == "--upstream" || a.starts_with("--upstream="))
    {
        return mcp_http_cmd(args);
    }
    let split = args
        .iter()
        .position(|a| a == "--")
        .ok_or("mcp-proxy needs -- SERVER_COMMAND [ARGS]...")?;
    let (opts, command) = (&args[..split], &args[split + 1..]);
    if command.is_empty() {
        return Err("mcp-proxy needs a server command after --".into());
    }
    let Some(mut config) = mcp_config(opts)? else {
        print!("{USAGE}");
        return Ok(ExitCode::SUCCESS);
    };
    config.upstream = Some(command.join(" "));
    let command: Vec<std::ffi::OsString> = command.iter().map(Into::into).collect();
    let status = child::run_command(config, &command)
        .map_err(|e| format!("server '{}': {e}", command[0].to_string_lossy()))?;
    if let Some(code) = status.code() {
        return Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)));
    }
    #[cfg(unix)]
    if let Some(sig) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return Ok(ExitCode::from(u8::try_from(128 + sig).unwrap_or(1)));
    }
    Ok(ExitCode::from(1))
}

/// The relay configuration from `mcp-proxy`'s options (`None` for `--help`).
fn mcp_config(opts: &[String]) -> Result<Option<jsongate::mcp::Config>, String> {
    use jsongate::action::{Policy, Session};
    use jsongate::mcp::{Config, DEFAULT_MAX_MESSAGE_BYTES};
    let mut config = Config::default();
    let mut limits = Limits::new().max_bytes(DEFAULT_MAX_MESSAGE_BYTES);
    let (mut policy, mut grants, mut workspace, mut audit) = (None, None, None, None);
    let mut state = StateArgs::default();
    let mut plan: Option<String> = None;
    let mut context = jsongate::action::Context::new();
    let mut approval_wait: Option<u64> = None;
    let mut it = opts.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or(format!("{flag} needs a value"))
        };
        match flag {
            "-h" | "--help" => return Ok(None),
            "--max-bytes" | "--max-depth" | "--max-name-bytes" | "--max-string-bytes"
            | "--max-number-bytes" | "--max-members" | "--max-items" => {
                let v = parse_limit(flag, Some(&value()?))?;
                let name = flag.trim_start_matches("--").replace('-', "_");
                limits = limits.set_by_name(&name, v).unwrap_or(limits);
            }
            "--profile" => limits = parse_profile(limits, Some(&value()?))?,
            "--format-assertion" => config.format_assertion = true,
            "--draft" => config.draft = Some(parse_draft(Some(&value()?))?),
            "--eval-budget" => config.eval_budget = Some(parse_limit(flag, Some(&value()?))?),
            "--policy" => policy = Some(value()?),
            "--grants" => grants = Some(value()?),
            "--workspace" => workspace = Some(value()?),
            "--audit" => audit = Some(value()?),
            "--state" | "--on-state-error" | "--state-scope" => state.set(flag, value()?),
            "--plan" => plan = Some(value()?),
            "--context" => context = parse_context(context, &value()?)?,
            "--approval-wait" => {
                let v = value()?;
                approval_wait =
                    Some(v.parse().map_err(|_| {
                        format!("--approval-wait: '{v}' is not a number of seconds")
                    })?);
            }
            "--screen" => config.screen = Some(parse_screen(flag, &value()?)?),
            "--screen-tools" => config.screen_tools = Some(parse_screen(flag, &value()?)?),
            "--max-result-bytes" => {
                // `N` for every tool, `TOOL=N` for one (which takes precedence).
                let v = value()?;
                let (tool, n) = match v.rsplit_once('=') {
                    Some((t, n)) if !t.is_empty() => (Some(t.to_owned()), n),
                    _ => (None, v.as_str()),
                };
                let n: u64 = n.parse().ok().filter(|&n: &u64| n > 0).ok_or_else(|| {
                    format!(
                        "--max-result-bytes: '{v}' is not N or TOOL=N with N a positive integer"
                    )
                })?;
                match tool {
                    Some(t) => {
                        config.tool_result_bytes.insert(t, n);
                    }
                    None => config.max_result_bytes = Some(n),
                }
            }
            "--truncate-text" => config.truncate_text = true,
            "--alerts" => {
                let path = value()?;
                let a = jsongate::gate::Alerts::from_file(std::path::Path::new(&path))
                    .map_err(|e| e.to_string())?;
                config.alerts = Some(std::sync::Arc::new(a));
            }
            "--on-tool-change" => {
                config.on_tool_change = match value()?.as_str() {
                    "refuse" => jsongate::mcp::pin::OnChange::Refuse,
                    "warn" => jsongate::mcp::pin::OnChange::Warn,
                    v => return Err(format!("--on-tool-change: '{v}' is not refuse or warn")),
                };
            }
            "--pin" => {
                let path = value()?;
                let lock = jsongate::mcp::pin::Lock::from_file(std::path::Path::new(&path))
                    .map_err(|e| format!("lockfile '{path}': {e}"))?;
                config.pin = Some(lock);
            }
            f => return Err(format!("unknown option '{f}'")),
        }
    }
    config.limits = limits;
    config.rate = state.rate()?;
    if let Some(secs) = approval_wait {
        config.approval_wait = std::time::Duration::from_secs(secs);
        if state.spec.is_some() {
            // A client that cannot be asked: the operator answers a record in the store.
            config.approval_store = Some(std::sync::Arc::clone(config.rate.store()));
            config.on_approval = Some(Box::new(|a: &jsongate::action::Approval| {
                eprintln!(
                    "jsongate: approval requested: {} (grant: jsongate approve {} --state SPEC; refuse: add --deny)",
                    a.to_json(),
                    a.id
                );
            }));
        }
    }
    if state.spec.is_some() && config.pin.is_none() {
        // Pins taken on first use are shared too: every replica holds the first one's.
        config.pin_store = Some(std::sync::Arc::clone(config.rate.store()));
    }
    if state.spec.is_some() {
        // Breakers live in the shared store too, so replicas see each other's.
        if let Some(a) = config.alerts.take() {
            let a = std::sync::Arc::try_unwrap(a).map_err(|_| "alerts are shared")?;
            let breaker =
                jsongate::gate::StoreBreaker::new(std::sync::Arc::clone(config.rate.store()));
            config.alerts = Some(std::sync::Arc::new(a.with_state(Box::new(breaker))));
        }
    }
    if config.truncate_text
        && config.max_result_bytes.is_none()
        && config.tool_result_bytes.is_empty()
    {
        return Err("--truncate-text needs --max-result-bytes N or TOOL=N".into());
    }
    if let Some(path) = policy {
        let p = Policy::from_file(std::path::Path::new(&path))
            .map_err(|e| format!("policy '{path}': {e}"))?;
        let g = grants.unwrap_or_default();
        let mut session =
            Session::new(g.split(',').map(str::trim).filter(|g| !g.is_empty())).context(context);
        if let Some(w) = &workspace {
            session = session
                .workspace(std::path::Path::new(w))
                .map_err(|e| e.to_string())?;
        }
        if let Some(f) = &plan {
            let plan = jsongate::action::Plan::from_file(std::path::Path::new(f), &p)
                .map_err(|e| format!("plan '{f}': {e}"))?;
            session = session.plan(plan);
        }
        config.policy = Some(p);
        config.session = session;
    } else if grants.is_some() || workspace.is_some() || plan.is_some() {
        return Err("--grants, --workspace and --plan need --policy".into());
    }
    if let Some(path) = audit {
        let mut o = std::fs::OpenOptions::new();
        o.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
        let f = o.open(&path).map_err(|e| format!("audit '{path}': {e}"))?;
        config.audit = Some(Box::new(io::LineWriter::new(f)));
    }
    Ok(Some(config))
}

/// `mcp-proxy --listen ADDR --upstream URL [--allow-origin ORIGIN]... [OPTIONS]`: the
/// Streamable HTTP transport.
fn mcp_http_cmd(args: &[String]) -> Result<ExitCode, String> {
    use jsongate::mcp::http::{run, split_url, HttpOptions, DEFAULT_ANSWER_TIMEOUT};
    let mut listen = "127.0.0.1:8080".to_owned();
    let mut upstream = None;
    let mut origins = Vec::new();
    let mut answer_timeout = DEFAULT_ANSWER_TIMEOUT;
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or(format!("{flag} needs a value"))
        };
        match flag {
            "--listen" => listen = value()?,
            "--upstream" => upstream = Some(value()?),
            "--allow-origin" => origins.push(value()?),
            "--answer-timeout" => {
                let v = value()?;
                let secs: u64 = v
                    .parse()
                    .map_err(|_| format!("--answer-timeout: '{v}' is not a number of seconds"))?;
                answer_timeout = std::time::Duration::from_secs(secs.max(1));
            }
            "--" => return Err("mcp-proxy --upstream takes no server command".into()),
            _ => rest.push(arg.clone()),
        }
    }
    let upstream = upstream.unwrap_or_default();
    let (authority, path) = split_url(&upstream)?;
    let Some(first) = mcp_config(&rest)? else {
        print!("{USAGE}");
        return Ok(ExitCode::SUCCESS);
    };
    let limits = first.limits;
    let opts = HttpOptions {
        limits,
        upstream_authority: authority,
        path,
        allowed_origins: origins,
        // Each session gets a relay of its own, configured as the options say (they were
        // read once above, so reading them again cannot fail but for a file that changed).
        config: Box::new(move || {
            let mut c = mcp_config(&rest).ok().flatten().unwrap_or_default();
            // Audit lines name the endpoint; shared first-use pins are kept under it.
            c.upstream = Some(upstream.clone());
            c
        }),
        answer_timeout,
    };
    let addr: std::net::SocketAddr = listen
        .parse()
        .map_err(|_| format!("--listen: '{listen}' is not IP:PORT"))?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        eprintln!("listening on {local}");
        run(opts, listener, shutdown_signal())
            .await
            .map_err(|e| format!("mcp-proxy: {e}"))
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `--screen` / `--screen-tools`: `flag` or `reject`.
fn parse_screen(flag: &str, v: &str) -> Result<jsongate::mcp::Screen, String> {
    match v {
        "flag" => Ok(jsongate::mcp::Screen::Flag),
        "reject" => Ok(jsongate::mcp::Screen::Reject),
        v => Err(format!("{flag}: '{v}' is not flag or reject")),
    }
}

/// `jsongate mcp-pin --out FILE [--timeout S] [limits] -- SERVER_COMMAND...`.
fn mcp_pin_cmd(args: &[String]) -> Result<ExitCode, String> {
    use jsongate::mcp::pin::record::record;
    use jsongate::mcp::DEFAULT_MAX_MESSAGE_BYTES;
    use std::process::{Command, Stdio};
    let split = args
        .iter()
        .position(|a| a == "--")
        .ok_or("mcp-pin needs -- SERVER_COMMAND [ARGS]...")?;
    let (opts, command) = (&args[..split], &args[split + 1..]);
    if command.is_empty() {
        return Err("mcp-pin needs a server command after --".into());
    }
    let mut limits = Limits::new().max_bytes(DEFAULT_MAX_MESSAGE_BYTES);
    let (mut out, mut timeout) = (None, 30u64);
    let mut it = opts.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or(format!("{flag} needs a value"))
        };
        match flag {
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(ExitCode::SUCCESS);
            }
            "--out" => out = Some(value()?),
            "--timeout" => {
                let v = value()?;
                timeout = v
                    .parse()
                    .ok()
                    .filter(|&t| t > 0)
                    .ok_or_else(|| format!("--timeout: '{v}' is not a positive integer"))?;
            }
            "--max-bytes" | "--max-depth" | "--max-name-bytes" | "--max-string-bytes"
            | "--max-number-bytes" | "--max-members" | "--max-items" => {
                let v = parse_limit(flag, Some(&value()?))?;
                let name = flag.trim_start_matches("--").replace('-', "_");
                limits = limits.set_by_name(&name, v).unwrap_or(limits);
            }
            f => return Err(format!("unknown option '{f}'")),
        }
    }
    let out = out.ok_or("mcp-pin needs --out LOCKFILE")?;
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("server '{}': {e}", command[0]))?;
    let stdin = child.stdin.take().ok_or("server stdin")?;
    let stdout = child.stdout.take().ok_or("server stdout")?;
    // A server that does not answer in time is ended: its output closes and recording fails.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let timed_out = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    #[cfg(unix)]
    {
        let (done, timed_out) = (
            std::sync::Arc::clone(&done),
            std::sync::Arc::clone(&timed_out),
        );
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
        std::thread::spawn(move || {
            let until = std::time::Instant::now() + std::time::Duration::from_secs(timeout);
            while std::time::Instant::now() < until {
                if done.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            if !done.load(std::sync::atomic::Ordering::SeqCst) {
                timed_out.store(true, std::sync::atomic::Ordering::SeqCst);
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            }
        });
    }
    let recorded = record(stdout, stdin, limits);
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    // The server's input is closed (record owned it); it gets a grace period to exit.
    let until = std::time::Instant::now() + jsongate::mcp::child::GRACE;
    while matches!(child.try_wait(), Ok(None)) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    if matches!(child.try_wait(), Ok(None)) {
        let _ = child.kill();
    }
    let _ = child.wait();
    let rec = recorded.map_err(|e| {
        if timed_out.load(std::sync::atomic::Ordering::SeqCst) {
            format!(
                "server '{}': no complete listing within {timeout} s",
                command[0]
            )
        } else {
            format!("server '{}': {e}", command[0])
        }
    })?;
    let mut stdout = io::stdout().lock();
    if !rec.poisoned.is_empty() {
        for (tool, found) in &rec.poisoned {
            for f in found {
                let mut line = String::from("{\"tool\":");
                write_json_string(&mut line, tool);
                line.push_str(",\"pointer\":");
                write_json_string(&mut line, &f.pointer);
                let _ = write!(line, ",\"pattern\":\"{}\"}}", f.pattern);
                let _ = writeln!(stdout, "{line}");
            }
        }
        let _ = writeln!(
            stdout,
            "{{\"recorded\":false,\"tools\":{},\"poisoned\":{}}}",
            rec.lock.len(),
            rec.poisoned.len()
        );
        return Ok(ExitCode::from(1));
    }
    let tmp = format!("{out}.tmp");
    std::fs::write(&tmp, rec.lock.to_json())
        .and_then(|()| std::fs::rename(&tmp, &out))
        .map_err(|e| format!("cannot write '{out}': {e}"))?;
    let mut line = format!(
        "{{\"recorded\":true,\"tools\":{},\"server\":",
        rec.lock.len()
    );
    match rec.lock.server() {
        Some(id) => write_json_string(&mut line, &id.name),
        None => line.push_str("null"),
    }
    line.push('}');
    let _ = writeln!(stdout, "{line}");
    Ok(ExitCode::SUCCESS)
}

/// `jsongate pin diff OLD NEW` / `jsongate pin schema`.
fn pin_cmd(args: &[String]) -> Result<ExitCode, String> {
    use jsongate::mcp::pin::{diff::diff_locks, Lock, LOCK_SCHEMA};
    match args {
        [s] if s == "schema" => {
            print!("{LOCK_SCHEMA}");
            Ok(ExitCode::SUCCESS)
        }
        [d, old, new] if d == "diff" => {
            let load = |p: &String| {
                Lock::from_file(std::path::Path::new(p)).map_err(|e| format!("lockfile '{p}': {e}"))
            };
            let (a, b) = (load(old)?, load(new)?);
            let changes = diff_locks(&a, &b);
            let mut out = String::new();
            for (tool, c) in &changes {
                out.push_str("{\"tool\":");
                write_json_string(&mut out, tool);
                out.push(',');
                let mut one = String::new();
                c.write_json(&mut one, true);
                out.push_str(&one[1..]);
                out.push('\n');
            }
            let dangerous = changes.iter().filter(|(_, c)| c.kind.dangerous()).count();
            let _ = writeln!(
                out,
                "{{\"changes\":{},\"dangerous\":{dangerous}}}",
                changes.len()
            );
            let mut stdout = io::stdout().lock();
            let _ = stdout.write_all(out.as_bytes());
            let _ = stdout.flush();
            Ok(if changes.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        _ => Err("pin needs 'diff OLD NEW' or 'schema'".into()),
    }
}

/// Reads FILE or standard input, at most `max` bytes (more is an error).
fn read_input(file: Option<&str>, max: u64) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let reader: Box<dyn io::Read> = match file {
        None | Some("-") => Box::new(io::stdin().lock()),
        Some(path) => {
            Box::new(std::fs::File::open(path).map_err(|e| format!("cannot open '{path}': {e}"))?)
        }
    };
    let mut buf = Vec::new();
    reader
        .take(max.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| format!("read failed: {e}"))?;
    if buf.len() as u64 > max {
        return Err(format!("input is larger than {max} bytes"));
    }
    Ok(buf)
}

/// `jsongate screen`: findings as JSON lines, then a summary line.
fn screen_cmd(args: &[String]) -> Result<ExitCode, String> {
    use jsongate::screen::{ScreenContract, Screener};
    use jsongate::select::Value;
    let mut contract: Option<String> = None;
    let mut file: Option<String> = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(ExitCode::SUCCESS);
            }
            "--contract" => contract = Some(it.next().cloned().ok_or("--contract needs a file")?),
            f if f.starts_with('-') && f != "-" => return Err(format!("unknown option '{f}'")),
            f => set_file(&mut file, f)?,
        }
    }
    let contract_path = contract;
    let contract = match &contract_path {
        None => ScreenContract::default(),
        Some(path) => {
            let bytes =
                std::fs::read(path).map_err(|e| format!("cannot read contract '{path}': {e}"))?;
            ScreenContract::from_slice(&bytes).map_err(|e| format!("contract '{path}': {e}"))?
        }
    };
    // One byte past the limit is read, so that the scanner reports too_large itself.
    let input = read_input(
        file.as_deref(),
        Limits::new().get_max_bytes().saturating_add(1),
    )?;
    let mut screener = Screener::new();
    let scanned = Scanner::new(Limits::new()).scan_slice(&input, &mut screener);
    let screening = contract.apply(std::mem::take(&mut screener.findings));
    let rejected = screening.rejected || scanned.is_err();
    let mut out = String::new();
    for (f, action) in &screening.findings {
        f.write_json(&mut out, *action);
        out.push('\n');
    }
    let _ = write!(
        out,
        "{{\"findings\":{},\"verdict\":\"{}\",\"dropped\":[",
        screening.findings.len(),
        if rejected {
            "INVALID_RESPONSE"
        } else {
            "admitted"
        }
    );
    for (i, d) in screening.dropped.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_json_string(&mut out, d);
    }
    out.push(']');
    if let Err(e) = &scanned {
        let _ = write!(out, ",\"error\":\"{}\"", e.kind().code());
    }
    // With a contract, the admitted document itself: dropped fields removed, nothing else
    // rewritten.
    if let (Some(_), false) = (&contract_path, rejected) {
        let mut doc = Value::parse(&input, Limits::new()).map_err(|e| e.to_string())?;
        for d in &screening.dropped {
            doc.remove_pointer(d);
        }
        out.push_str(",\"document\":");
        doc.write_json(&mut out);
    }
    out.push('}');
    let mut stdout = io::stdout().lock();
    let _ = writeln!(stdout, "{out}");
    let _ = stdout.flush();
    Ok(if rejected {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `jsongate render [FILE | -]...`: envelope lines to separate per-tool text blocks.
fn render_cmd(args: &[String]) -> Result<ExitCode, String> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        print!("{USAGE}");
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(f) = args.iter().find(|a| a.starts_with('-') && *a != "-") {
        return Err(format!("unknown option '{f}'"));
    }
    let files: Vec<Option<&str>> = if args.is_empty() {
        vec![None]
    } else {
        args.iter().map(|a| Some(a.as_str())).collect()
    };
    let mut lines = Vec::new();
    for f in files {
        let bytes = read_input(f, Limits::new().get_max_bytes())?;
        lines.extend(
            bytes
                .split(|&b| b == b'\n')
                .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
                .map(<[u8]>::to_vec),
        );
    }
    let text =
        jsongate::gate::render_all(lines.iter().map(Vec::as_slice)).map_err(|e| e.to_string())?;
    let mut stdout = io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
    let _ = stdout.flush();
    Ok(ExitCode::SUCCESS)
}

/// `jsongate policy schema` / `jsongate decision schema`.
fn schema_print_cmd(args: &[String]) -> Result<ExitCode, String> {
    use jsongate::action::{DECISION_SCHEMA, POLICY_SCHEMA};
    match (
        args[0].as_str(),
        args.get(1).map(String::as_str),
        args.len(),
    ) {
        ("policy", Some("schema"), 2) => print!("{POLICY_SCHEMA}"),
        ("decision", Some("schema"), 2) => print!("{DECISION_SCHEMA}"),
        ("alerts", Some("schema"), 2) => print!("{}", jsongate::gate::ALERTS_SCHEMA),
        ("plan", Some("schema"), 2) => print!("{}", jsongate::action::PLAN_SCHEMA),
        (cmd, ..) => return Err(format!("{cmd} needs 'schema'")),
    }
    Ok(ExitCode::SUCCESS)
}

/// `jsongate serve --config FILE [--listen ADDR]` and `jsongate serve schema`.
fn serve_cmd(args: &[String]) -> Result<ExitCode, String> {
    use jsongate::http::serve::{run, ServeConfig, SERVE_SCHEMA};
    if let [one] = args {
        if one == "schema" {
            print!("{SERVE_SCHEMA}");
            return Ok(ExitCode::SUCCESS);
        }
    }
    let mut config = None;
    let mut listen = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag {
            "--config" => config = Some(value()?),
            "--listen" => listen = Some(value()?),
            other => return Err(format!("serve: unknown argument '{other}'")),
        }
    }
    let path = config.ok_or("serve: --config FILE is required")?;
    let mut cfg = ServeConfig::from_file(std::path::Path::new(&path)).map_err(|e| e.to_string())?;
    if let Some(l) = listen {
        cfg.listen = l
            .parse()
            .map_err(|_| format!("--listen: '{l}' is not IP:PORT"))?;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(cfg.listen)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", cfg.listen))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        eprintln!("listening on {addr}");
        run(cfg, listener, shutdown_signal())
            .await
            .map_err(|e| format!("serve: {e}"))
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C elsewhere).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
