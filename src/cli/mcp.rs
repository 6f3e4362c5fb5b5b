//! `jsongate mcp-proxy` (over stdio or Streamable HTTP), `mcp-pin` and `pin`: the validating
//! MCP relay, recording a server's tools into a lockfile, and comparing lockfiles.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Subcommand};

use jsongate::json::ObjectWriter;
use jsongate::mcp::pin::{Lock, OnChange};
use jsongate::mcp::{Config, Screen, DEFAULT_MAX_MESSAGE_BYTES};
use jsongate::{Draft, Limits};

use super::args::{self, DraftParser, LimitArgs, Source, StateArgs};

const PROXY_AFTER: &str = "\
Runs an MCP server over stdio behind a validating relay: use it in a client's configuration
in place of the server command (or, with --upstream, relays MCP over Streamable HTTP to an
upstream endpoint). Every line from the server is scanned with the limits above (--max-bytes
is per message, default 4194304) and duplicate names rejected; tool schemas are learnt from
tools/list; a tools/call or tasks/result whose structuredContent fails the tool's
outputSchema, is missing, or whose line fails the scan is replaced by an isError result
with the same id and a reason without upstream text. A call whose arguments fail the
inputSchema, or that the --policy denies or wants approved, is answered by the proxy and
never forwarded. Everything else passes byte for byte.

--screen also screens every name and string of a result that passed, and of every server
request and notification, for instruction-like text: flag forwards it and audits the
finding, reject replaces a result, answers a server request with an error and drops a
notification; redact replaces the instruction-like spans of a result's strings with
[redacted] and forwards it (audit verdict cleaned), and otherwise acts as reject. --max-result-bytes N refuses a tools/call result line over N bytes (class
over_budget); a text-only result is refused too unless --truncate-text. --alerts FILE (as
for gate) alerts on blocks of listed classes and runs a breaker per tool. --state SPEC (as
for decide) shares rate limits, breakers, first-use pins and approvals with every replica
that names the same store.

Approvals: a call the policy (or --plan) answers ask waits for a person. When the client
declared elicitation, the proxy asks it (elicitation/create); otherwise, with --state SPEC
and --approval-wait, a pending approval is stored and its id written to stderr ('jsongate
approve ID --state SPEC [--deny]' answers it). No answer within --approval-wait SECONDS
(default 120) is a refusal (not_approved).

Tool definitions: every listed tool is hashed in canonical form and held to its pin: --pin
LOCKFILE (from mcp-pin), or the tools of the first complete listing (trust on first use). A
tool not pinned, or whose definition changed, is removed from the listing and its calls are
refused (tool_not_pinned, tool_changed). --on-tool-change warn adopts a change that widens
nothing. Every definition is screened for instruction-like phrases and hidden text:
--screen-tools reject removes the tool (tool_poisoned), flag audits it; the default is
reject when --screen is given, flag otherwise.

Signals are forwarded to the server. Over stdio, standard input carries the MCP messages, so
no FILE may be '-' there.

EXIT STATUS:
    the server's exit status (128 + N after signal N); 2 usage or configuration error";

/// Run an MCP server behind a validating relay (stdio, or Streamable HTTP with --upstream)
#[derive(Args, Clone, Debug)]
#[command(
    after_help = PROXY_AFTER,
    override_usage = "jsongate mcp-proxy [OPTIONS] -- SERVER_COMMAND [ARGS]...\n       \
                      jsongate mcp-proxy --upstream https://HOST[:PORT]/PATH [--listen IP:PORT] [OPTIONS]",
    mut_arg("max_bytes", |a| a.help("bytes of one message                  [default: 4194304 (4 MiB)]"))
)]
pub struct ProxyArgs {
    /// the server command and its arguments, after --
    #[arg(last = true, value_name = "SERVER_COMMAND")]
    command: Vec<OsString>,
    /// validate 'format' in tool schemas (not an annotation)
    #[arg(long)]
    format_assertion: bool,
    /// dialect without $schema: 2020-12 (default), 2019-09, 7, 6, 4
    #[arg(long, value_name = "D", value_parser = DraftParser, hide_possible_values = true)]
    draft: Option<Draft>,
    /// evaluation work units allowed per message
    #[arg(long, value_name = "N", value_parser = args::limit, allow_hyphen_values = true)]
    eval_budget: Option<u64>,
    /// append one JSON line per tool call to FILE (mode 0600)
    #[arg(long, value_name = "FILE")]
    audit: Option<PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
    /// decide every call under this policy (jsongate policy schema)
    #[arg(long, value_name = "FILE", value_parser = args::source, help_heading = "Policy")]
    policy: Option<Source>,
    /// the session's capabilities, comma-separated (with --policy)
    #[arg(long, value_name = "A,B", help_heading = "Policy")]
    grants: Option<String>,
    /// resolve paths under DIR (with --policy)
    #[arg(long, value_name = "DIR", help_heading = "Policy")]
    workspace: Option<PathBuf>,
    /// the tools the task may call (jsongate plan schema)
    #[arg(long, value_name = "FILE", value_parser = args::source, help_heading = "Policy")]
    plan: Option<Source>,
    /// the caller's context for the policy's rules (repeatable)
    #[arg(long, value_name = "KEY=VALUE", value_parser = args::key_value, help_heading = "Policy")]
    context: Vec<(String, String)>,
    /// how long a call waits for an approval [default: 120]
    #[arg(long, value_name = "SECONDS", value_parser = args::seconds, help_heading = "Policy")]
    approval_wait: Option<u64>,
    /// screen results, requests, notifications: flag, redact or reject
    #[arg(long, value_name = "flag|redact|reject", value_parser = ["flag", "redact", "reject"], hide_possible_values = true, help_heading = "Screening and budgets")]
    screen: Option<String>,
    /// screen tool definitions: flag or reject
    #[arg(long, value_name = "flag|reject", value_parser = ["flag", "reject"], hide_possible_values = true, help_heading = "Screening and budgets")]
    screen_tools: Option<String>,
    /// refuse a result over N bytes (TOOL=N: one tool; repeatable)
    #[arg(long, value_name = "[TOOL=]N", value_parser = result_bytes, help_heading = "Screening and budgets")]
    max_result_bytes: Vec<(Option<String>, u64)>,
    /// cut an over-budget text-only result instead of refusing it
    #[arg(long, help_heading = "Screening and budgets")]
    truncate_text: bool,
    /// alert rules and breakers (format: jsongate alerts schema)
    #[arg(long, value_name = "FILE", value_parser = args::source, help_heading = "Screening and budgets")]
    alerts: Option<Source>,
    /// hold the tools to this lockfile (from mcp-pin)
    #[arg(long, value_name = "LOCKFILE", value_parser = args::source, help_heading = "Tool pins")]
    pin: Option<Source>,
    /// a changed tool: refuse (default) or warn
    #[arg(long, value_name = "refuse|warn", value_parser = ["refuse", "warn"], hide_possible_values = true, help_heading = "Tool pins")]
    on_tool_change: Option<String>,
    #[command(flatten)]
    state: StateArgs,
    /// relay Streamable HTTP to this endpoint (no server command)
    #[arg(long, value_name = "URL", help_heading = "Streamable HTTP")]
    upstream: Option<String>,
    /// the address to listen on
    #[arg(
        long,
        value_name = "IP:PORT",
        default_value = "127.0.0.1:8080",
        help_heading = "Streamable HTTP"
    )]
    listen: String,
    /// an Origin the proxy accepts (repeatable; with --upstream)
    #[arg(long, value_name = "ORIGIN", help_heading = "Streamable HTTP")]
    allow_origin: Vec<String>,
    /// a Host the proxy answers, NAME or NAME:PORT (repeatable; with --upstream; default: loopback
    /// names only on a loopback --listen, any host elsewhere)
    #[arg(long, value_name = "HOST", help_heading = "Streamable HTTP")]
    allow_host: Vec<String>,
    /// most relays at once: sessions, pending initializations, one-request relays (with
    /// --upstream; default 256)
    #[arg(long, value_name = "N", help_heading = "Streamable HTTP")]
    max_sessions: Option<usize>,
    /// most client connections at once (with --upstream; default 256)
    #[arg(long, value_name = "N", help_heading = "Streamable HTTP")]
    max_connections: Option<usize>,
    /// how long a client may take to send a request body, else 408 (with --upstream; default 30)
    #[arg(long, value_name = "SECONDS", value_parser = args::seconds, help_heading = "Streamable HTTP")]
    request_timeout: Option<u64>,
    /// how long to wait for the upstream's answer (with --upstream)
    #[arg(long, value_name = "SECONDS", value_parser = args::seconds, help_heading = "Streamable HTTP")]
    answer_timeout: Option<u64>,
    #[command(flatten)]
    tls: args::ListenTlsArgs,
    /// also trust these CA certificates (PEM) for an https:// upstream
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    upstream_ca_file: Option<PathBuf>,
    /// trust only --upstream-ca-file, not the system's roots
    #[arg(long, requires = "upstream_ca_file", help_heading = "TLS")]
    upstream_no_system_roots: bool,
    /// present this client certificate (PEM) to the upstream (mTLS)
    #[arg(
        long,
        value_name = "FILE",
        requires = "upstream_client_key",
        help_heading = "TLS"
    )]
    upstream_client_cert: Option<PathBuf>,
    /// the private key of --upstream-client-cert (PEM)
    #[arg(
        long,
        value_name = "FILE",
        requires = "upstream_client_cert",
        help_heading = "TLS"
    )]
    upstream_client_key: Option<PathBuf>,
    /// allow plain http:// to an upstream that is not loopback
    #[arg(long, help_heading = "TLS")]
    allow_plaintext_upstream: bool,
    /// authenticate to the upstream with an OAuth client credentials grant (FILE: see docs/guide/http.md,
    /// "TLS and credentials")
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    upstream_oauth: Option<PathBuf>,
    /// authenticate callers with bearer JWTs and/or API keys (FILE: the auth object, see
    /// docs/guide/http.md, "Caller authentication")
    #[arg(long, value_name = "FILE", value_parser = args::source, help_heading = "TLS")]
    auth: Option<Source>,
    /// send this header upstream, its value from `env:VARIABLE` or `file:PATH` (repeatable; the
    /// client's Authorization is never forwarded)
    #[arg(long, value_name = "NAME=env:VAR|file:PATH", value_parser = args::key_value, help_heading = "TLS")]
    upstream_header: Vec<(String, String)>,
}

/// `--max-result-bytes N` for every tool, `TOOL=N` for one (which takes precedence).
fn result_bytes(v: &str) -> Result<(Option<String>, u64), String> {
    let (tool, n) = match v.rsplit_once('=') {
        Some((t, n)) if !t.is_empty() => (Some(t.to_owned()), n),
        _ => (None, v),
    };
    let n: u64 = n
        .parse()
        .ok()
        .filter(|&n: &u64| n > 0)
        .ok_or_else(|| format!("'{v}' is not N or TOOL=N with N a positive integer"))?;
    Ok((tool, n))
}

fn screen_mode(v: &str) -> Screen {
    match v {
        "reject" => Screen::Reject,
        "redact" => Screen::Redact,
        _ => Screen::Flag,
    }
}

/// `jsongate mcp-proxy`.
pub fn proxy(a: &ProxyArgs) -> Result<ExitCode, args::Failure> {
    use jsongate::mcp::child;
    if a.upstream.is_some() {
        return http(a);
    }
    if a.command.is_empty() {
        return args::usage(
            "mcp-proxy needs -- SERVER_COMMAND [ARGS]... (or --upstream URL for Streamable HTTP)",
        );
    }
    let files = [
        ("--policy", &a.policy),
        ("--plan", &a.plan),
        ("--alerts", &a.alerts),
        ("--pin", &a.pin),
    ];
    if let Some((flag, _)) = files.iter().find(|(_, s)| *s == &Some(Source::Stdin)) {
        return args::usage(format!(
            "{flag} -: standard input carries the MCP messages; give a file"
        ));
    }
    let config = config(a)?.upstream(
        a.command
            .iter()
            .map(|c| c.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" "),
    );
    let status = child::run_command(config, &a.command)
        .map_err(|e| format!("server '{}': {e}", a.command[0].to_string_lossy()))?;
    if let Some(code) = status.code() {
        return Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)));
    }
    #[cfg(unix)]
    if let Some(sig) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return Ok(ExitCode::from(u8::try_from(128 + sig).unwrap_or(1)));
    }
    Ok(ExitCode::from(1))
}

/// The relay configuration from `mcp-proxy`'s options (over stdio: the one relay).
fn config(a: &ProxyArgs) -> Result<Config, args::Failure> {
    Ok(relay_configs(a, false)?.0())
}

/// What a relay's configuration is made of, read from the options' files once: each call of
/// the returned function builds one relay's [`Config`] from it and cannot fail. Over HTTP each
/// client session (and each request of a client without one) is a relay of its own; all of
/// them share the policy, plan, lockfile and alert rules read at start (a file changed or
/// removed later changes nothing), one state store (rate limits, first-use pins, breakers and
/// approvals across every client; `--state memory`, the default, is one store per process),
/// and one audit file written a whole line at a time.
/// Also returns the front's own handle on the audit file (for requests refused before a
/// relay sees them).
fn relay_configs(
    a: &ProxyArgs,
    http: bool,
) -> Result<
    (
        impl Fn() -> Config + Send + Sync + 'static,
        Option<WholeLines>,
    ),
    args::Failure,
> {
    args::one_stdin([
        ("--policy", a.policy.as_ref()),
        ("--plan", a.plan.as_ref()),
        ("--alerts", a.alerts.as_ref()),
        ("--pin", a.pin.as_ref()),
    ])?;
    let limits = a
        .limits
        .apply(Limits::new().max_bytes(DEFAULT_MAX_MESSAGE_BYTES));
    let mut tool_result_bytes = std::collections::HashMap::new();
    let mut max_result_bytes = None;
    for (tool, n) in &a.max_result_bytes {
        match tool {
            Some(t) => {
                tool_result_bytes.insert(t.clone(), *n);
            }
            None => max_result_bytes = Some(*n),
        }
    }
    if a.truncate_text && max_result_bytes.is_none() && tool_result_bytes.is_empty() {
        return args::usage("--truncate-text needs --max-result-bytes N or TOOL=N");
    }
    let on_tool_change = match a.on_tool_change.as_deref() {
        Some("warn") => Some(OnChange::Warn),
        Some(_) => Some(OnChange::Refuse),
        None => None,
    };
    let lock = match &a.pin {
        Some(src) => Some(
            src.load(Lock::from_file, |b, _| Lock::from_slice(b))
                .map_err(|e| format!("lockfile '{}': {e}", src.name()))?,
        ),
        None => None,
    };
    let rate = a.state.rate()?;
    let store = Arc::clone(rate.get_store());
    // A store named with --state is shared with other processes; over HTTP the process's own
    // store is shared by its relays. Pins taken on first use and breakers live in it then, so
    // a listing pinned by one client holds for the next, and a breaker tripped by one client's
    // results stays open for the others.
    let shared = a.state.spec.is_some();
    let across = shared || http;
    let alerts = match &a.alerts {
        Some(src) => {
            let al = src.load(
                jsongate::gate::Alerts::from_file,
                jsongate::gate::Alerts::from_slice,
            )?;
            Some(Arc::new(if across {
                let breaker = jsongate::gate::StoreBreaker::new(Arc::clone(&store));
                al.breaker_state(Box::new(breaker))
            } else {
                al
            }))
        }
        None => None,
    };
    let policy = match &a.policy {
        Some(src) => {
            let p = super::decide::load_policy(src)?;
            let session = super::decide::session(
                a.grants.as_deref().unwrap_or_default(),
                &a.context,
                a.workspace.as_deref(),
                a.plan.as_ref(),
                &p,
            )?;
            Some((p, session))
        }
        None if a.grants.is_some() || a.workspace.is_some() || a.plan.is_some() => {
            return Err("--grants, --workspace and --plan need --policy".into());
        }
        None => None,
    };
    let audit = match &a.audit {
        Some(path) => Some(Arc::new(std::sync::Mutex::new(
            args::open_append(path).map_err(|e| format!("audit '{}': {e}", path.display()))?,
        ))),
        None => None,
    };
    let (format_assertion, truncate_text) = (a.format_assertion, a.truncate_text);
    let (draft, eval_budget, approval_wait) = (a.draft, a.eval_budget, a.approval_wait);
    let screen = a.screen.as_deref().map(screen_mode);
    let screen_tools = a.screen_tools.as_deref().map(screen_mode);
    let front_audit = audit.as_ref().map(|file| WholeLines {
        line: Vec::new(),
        file: Arc::clone(file),
    });
    let make = move || {
        let mut config = Config::default()
            .limits(limits)
            .format_assertion(format_assertion)
            .truncate_text(truncate_text)
            .tool_result_bytes(tool_result_bytes.clone())
            .rate(rate.clone());
        if let Some(d) = draft {
            config = config.draft(d);
        }
        if let Some(n) = eval_budget {
            config = config.eval_budget(n);
        }
        if let Some(s) = screen {
            config = config.screen(s);
        }
        if let Some(s) = screen_tools {
            config = config.screen_tools(s);
        }
        if let Some(c) = on_tool_change {
            config = config.on_tool_change(c);
        }
        if let Some(lock) = &lock {
            config = config.pin(lock.clone());
        } else if across {
            config = config.pin_store(Arc::clone(&store));
        }
        if let Some(secs) = approval_wait {
            config = config.approval_wait(std::time::Duration::from_secs(secs));
            if shared {
                // A client that cannot be asked: the operator answers a record in the store.
                config = config
                    .approval_store(Arc::clone(&store))
                    .on_approval(Box::new(|ap: &jsongate::action::Approval| {
                        eprintln!(
                            "jsongate: approval requested: {} (grant: jsongate approve {} --state SPEC; refuse: add --deny; see the arguments: --show)",
                            ap.to_json(),
                            ap.id
                        );
                    }));
            }
        }
        if let Some(al) = &alerts {
            config = config.alerts(Arc::clone(al));
        }
        if let Some(n) = max_result_bytes {
            config = config.max_result_bytes(n);
        }
        if let Some((p, session)) = &policy {
            config = config.policy(p.clone()).session(session.clone());
        }
        if let Some(file) = &audit {
            config = config.audit(Box::new(WholeLines {
                line: Vec::new(),
                file: Arc::clone(file),
            }));
        }
        config
    };
    Ok((make, front_audit))
}

/// One relay's handle on the audit file shared by all relays: what the relay writes is kept
/// until a line is complete, then written with the file held, so that lines of relays writing
/// at once never interleave.
struct WholeLines {
    line: Vec<u8>,
    file: Arc<std::sync::Mutex<std::fs::File>>,
}

impl std::io::Write for WholeLines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.line.extend_from_slice(buf);
        if let Some(end) = self.line.iter().rposition(|&b| b == b'\n') {
            let mut file = self
                .file
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            file.write_all(&self.line[..=end])?;
            self.line.drain(..=end);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `mcp-proxy --upstream URL [--listen ADDR] [--allow-origin ORIGIN]... [OPTIONS]`: the
/// Streamable HTTP transport.
fn http(a: &ProxyArgs) -> Result<ExitCode, args::Failure> {
    use jsongate::mcp::http::{run, HttpOptions, DEFAULT_ANSWER_TIMEOUT};
    if !a.command.is_empty() {
        return Err("mcp-proxy --upstream takes no server command".into());
    }
    let upstream = a.upstream.clone().unwrap_or_default();
    let up = jsongate::http::parse_upstream(&upstream)?;
    up.check_plaintext(a.allow_plaintext_upstream)
        .map_err(|e| format!("--upstream: {e} (--allow-plaintext-upstream)"))?;
    let mut headers = jsongate::http::UpstreamHeaders::new();
    for (name, spec) in &a.upstream_header {
        headers = headers
            .add(name, spec, std::path::Path::new("."))
            .map_err(|e| format!("--upstream-header: {e}"))?;
    }
    let upstream_tls = if up.tls {
        let mut o = jsongate::tls::ClientTlsOptions::new();
        if let Some(ca) = &a.upstream_ca_file {
            o = o.ca_file(ca).system_roots(!a.upstream_no_system_roots);
        }
        if let (Some(c), Some(k)) = (&a.upstream_client_cert, &a.upstream_client_key) {
            o = o.client_cert(c, k);
        }
        Some(o.build().map_err(|e| format!("--upstream: TLS: {e}"))?)
    } else {
        None
    };
    let listen_tls = a.tls.load()?;
    let upstream_oauth = match &a.upstream_oauth {
        Some(p) => {
            let bytes =
                std::fs::read(p).map_err(|e| format!("--upstream-oauth '{}': {e}", p.display()))?;
            let v =
                jsongate::json::Value::parse(&bytes, jsongate::Limits::new().max_bytes(1 << 16))
                    .map_err(|e| format!("--upstream-oauth '{}': not JSON: {e}", p.display()))?;
            let dir = p.parent().unwrap_or(std::path::Path::new("."));
            Some(
                jsongate::http::ClientCredentials::from_value(&v, dir)
                    .map_err(|e| format!("--upstream-oauth '{}': {e}", p.display()))?,
            )
        }
        None => None,
    };
    let jsongate::http::Upstream {
        authority, path, ..
    } = up;
    let (relay_config, front_audit) = relay_configs(a, true)?;
    let auth = match &a.auth {
        Some(src) => Some(jsongate::auth::Authenticator::new(src.load(
            |p| {
                let bytes = std::fs::read(p).map_err(|e| {
                    jsongate::json::ConfigError::read(format_args!("'{}'", p.display()), &e)
                })?;
                jsongate::auth::AuthConfig::from_slice(
                    &bytes,
                    p.parent().unwrap_or(std::path::Path::new(".")),
                )
            },
            jsongate::auth::AuthConfig::from_slice,
        )?)),
        None => None,
    };
    let first = relay_config();
    let answer_timeout = a.answer_timeout.map_or(DEFAULT_ANSWER_TIMEOUT, |s| {
        std::time::Duration::from_secs(s.max(1))
    });
    let addr: std::net::SocketAddr = a
        .listen
        .parse()
        .map_err(|_| format!("--listen: '{}' is not IP:PORT", a.listen))?;
    let origins = a.allow_origin.clone();
    let hosts = a.allow_host.clone();
    let mut server = jsongate::http::serve::ServerLimits::default();
    if let Some(n) = a.max_connections {
        server = server.max_connections(n.max(1));
    }
    if let Some(s) = a.request_timeout {
        server = server.request_timeout(std::time::Duration::from_secs(s.max(1)));
    }
    let max_sessions = a.max_sessions.unwrap_or(jsongate::mcp::http::MAX_SESSIONS);
    // Each session gets a relay of its own, built from what was read once above.
    let opts = HttpOptions::new(authority, path, move || {
        // Audit lines name the endpoint; shared first-use pins are kept under it.
        relay_config().upstream(upstream.clone())
    })
    .limits(first.get_limits())
    .allowed_origins(origins)
    .allowed_hosts(hosts)
    .max_sessions(max_sessions)
    .server_limits(server)
    .answer_timeout(answer_timeout)
    .upstream_headers(headers);
    let mut opts = opts;
    if let Some(t) = upstream_tls {
        opts = opts.upstream_tls(t);
    }
    if let Some(t) = listen_tls {
        opts = opts.tls(t);
    }
    if let Some(a) = auth {
        opts = opts.auth(a);
    }
    if let Some(g) = upstream_oauth {
        opts = opts.upstream_oauth(g);
    }
    if let Some(w) = front_audit {
        opts = opts.audit(Box::new(w));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        let stop = super::serve::shutdown_signal();
        eprintln!("listening on {local}");
        run(opts, listener, stop)
            .await
            .map_err(|e| format!("mcp-proxy: {e}"))
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Record a server's tools into a lockfile for review
#[derive(Args, Debug)]
#[command(
    after_help = "\
Starts the server, initialises it, lists every page of its tools, screens every definition,
and writes the lockfile (one entry per tool: name, SHA-256 and canonical definition, with
the server's name) to --out for review. Prints one summary line.

EXIT STATUS:
    0 recorded; 1 screening found instruction-like or hidden text in a tool (one line per
    finding: tool, pointer, pattern id; no lockfile written); 2 the server failed or
    exceeded --timeout, or a usage error",
    override_usage = "jsongate mcp-pin --out LOCKFILE [--timeout SECONDS] [OPTIONS] -- SERVER_COMMAND [ARGS]...",
    mut_arg("max_bytes", |a| a.help("bytes of one message                  [default: 4194304 (4 MiB)]"))
)]
pub struct McpPinArgs {
    /// the server command and its arguments, after --
    #[arg(last = true, value_name = "SERVER_COMMAND")]
    command: Vec<OsString>,
    /// the lockfile to write
    #[arg(long, value_name = "LOCKFILE", required = true)]
    out: Option<PathBuf>,
    /// seconds the server has for a complete listing
    #[arg(long, value_name = "SECONDS", value_parser = args::positive::<u64>, default_value_t = 30)]
    timeout: u64,
    #[command(flatten)]
    limits: LimitArgs,
}

/// `jsongate mcp-pin --out FILE [--timeout S] [limits] -- SERVER_COMMAND...`.
pub fn mcp_pin(a: &McpPinArgs) -> Result<ExitCode, args::Failure> {
    use jsongate::mcp::pin::record::record;
    use std::process::{Command, Stdio};
    if a.command.is_empty() {
        return args::usage("mcp-pin needs -- SERVER_COMMAND [ARGS]...");
    }
    let Some(out) = &a.out else {
        return args::usage("mcp-pin needs --out LOCKFILE");
    };
    let (command, timeout) = (&a.command, a.timeout);
    let server = command[0].to_string_lossy().into_owned();
    let limits = a
        .limits
        .apply(Limits::new().max_bytes(DEFAULT_MAX_MESSAGE_BYTES));
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("server '{server}': {e}"))?;
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
            format!("server '{server}': no complete listing within {timeout} s")
        } else {
            format!("server '{server}': {e}")
        }
    })?;
    let mut text = String::new();
    if !rec.poisoned.is_empty() {
        for (tool, found) in &rec.poisoned {
            for f in found {
                ObjectWriter::new(&mut text)
                    .str("tool", tool)
                    .str("pointer", &f.pointer)
                    .str("pattern", f.pattern);
                text.push('\n');
            }
        }
        ObjectWriter::new(&mut text)
            .bool("recorded", false)
            .u64("tools", rec.lock.len() as u64)
            .u64("poisoned", rec.poisoned.len() as u64);
        text.push('\n');
        args::print(&text);
        return Ok(ExitCode::from(1));
    }
    crate::fsx::write_atomic_private(out, rec.lock.to_json().as_bytes())
        .map_err(|e| format!("cannot write '{}': {e}", out.display()))?;
    ObjectWriter::new(&mut text)
        .bool("recorded", true)
        .u64("tools", rec.lock.len() as u64)
        .opt_str("server", rec.lock.server().map(|id| id.name.as_str()));
    args::println(&text);
    Ok(ExitCode::SUCCESS)
}

/// Compare lockfiles, or print their JSON Schema
#[derive(Args, Debug)]
pub struct PinArgs {
    #[command(subcommand)]
    what: PinCmd,
}

#[derive(Subcommand, Debug)]
enum PinCmd {
    /// Compare two lockfiles: one JSON line per change, then a summary
    #[command(after_help = "\
Prints one JSON line per change
  {\"tool\":T,\"kind\":K,\"dangerous\":B,\"pointer\":P,\"keyword\":W,\"from\":V,\"to\":V}
then {\"changes\":N,\"dangerous\":M}.

EXIT STATUS:
    0 identical, 1 changed, 2 usage or configuration error")]
    Diff {
        /// the old lockfile ('-': standard input)
        #[arg(value_name = "OLD", value_parser = args::source)]
        old: Source,
        /// the new lockfile ('-': standard input)
        #[arg(value_name = "NEW", value_parser = args::source)]
        new: Source,
    },
    /// Print the JSON Schema of lockfiles
    Schema,
}

/// `jsongate pin diff OLD NEW` / `jsongate pin schema`.
pub fn pin(a: &PinArgs) -> Result<ExitCode, args::Failure> {
    use jsongate::mcp::pin::{diff::diff_locks, LOCK_SCHEMA};
    let (old, new) = match &a.what {
        PinCmd::Schema => {
            args::print(LOCK_SCHEMA);
            return Ok(ExitCode::SUCCESS);
        }
        PinCmd::Diff { old, new } => (old, new),
    };
    args::one_stdin([("OLD", Some(old)), ("NEW", Some(new))])?;
    let load = |s: &Source| {
        s.load(Lock::from_file, |b, _| Lock::from_slice(b))
            .map_err(|e| format!("lockfile '{}': {e}", s.name()))
    };
    let (a, b) = (load(old)?, load(new)?);
    let changes = diff_locks(&a, &b);
    let mut out = String::new();
    for (tool, c) in &changes {
        let mut one = String::new();
        c.write_json(&mut one, true);
        // The change's own members follow the tool's name, in one object.
        let members = one.strip_prefix('{').and_then(|m| m.strip_suffix('}'));
        ObjectWriter::new(&mut out)
            .str("tool", tool)
            .raw_members(members.unwrap_or_default());
        out.push('\n');
    }
    let dangerous = changes.iter().filter(|(_, c)| c.kind.dangerous()).count();
    // Two lockfiles of different servers compare tools that merely share names.
    let servers = match (a.server(), b.server()) {
        (Some(x), Some(y)) if x.name != y.name => Some((x.name.as_str(), y.name.as_str())),
        _ => None,
    };
    let mut summary = ObjectWriter::new(&mut out);
    summary
        .u64("changes", changes.len() as u64)
        .u64("dangerous", dangerous as u64);
    if let Some((x, y)) = servers {
        summary.object("server_changed").str("old", x).str("new", y);
        eprintln!(
            "jsongate: the lockfiles were recorded from different servers ({} and {})",
            jsongate::json::quote(x),
            jsongate::json::quote(y)
        );
    }
    summary.finish();
    out.push('\n');
    args::print(&out);
    Ok(if changes.is_empty() && servers.is_none() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
