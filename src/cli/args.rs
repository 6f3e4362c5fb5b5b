//! Arguments shared by several subcommands (limits, state, context) and their value parsers.
//!
//! Value parsers return the message after the flag name (`'abc' is not a non-negative
//! integer or 'unlimited'`); [`super::usage`] prefixes the flag, so that the message reads
//! `--max-depth: 'abc' is not ...` wherever the flag appears.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use clap::builder::{PossibleValue, TypedValueParser};
use clap::Args;

use jsongate::{Draft, Limits, UNLIMITED};

/// Why a command failed (exit 2). A usage error (flags missing or in conflict) is followed
/// by a pointer to the command's `--help`; any other failure (a file that cannot be read, a
/// configuration that does not load) is its message alone, since `--help` would not help.
#[derive(Debug)]
pub enum Failure {
    /// The command line asks for something the command cannot do.
    Usage(String),
    /// The command could not run (I/O, configuration).
    Run(String),
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Self::Run(message)
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        Self::Run(message.to_owned())
    }
}

/// A usage error with `message`.
pub fn usage<T>(message: impl Into<String>) -> Result<T, Failure> {
    Err(Failure::Usage(message.into()))
}

/// A file argument: a path, or `-` for standard input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// `-`.
    Stdin,
    /// Anything else.
    Path(PathBuf),
}

/// Standard input, read once for every configuration read from it (so that the HTTP proxy's
/// per-session configuration reads the same bytes again).
static STDIN: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();

impl Source {
    /// How the user wrote it.
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "-".into(),
            Source::Path(p) => p.display().to_string(),
        }
    }

    /// The path, `None` for standard input.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Source::Stdin => None,
            Source::Path(p) => Some(p),
        }
    }

    /// A reader of the whole input; a directory is refused by name.
    pub fn open(&self) -> Result<Box<dyn std::io::Read>, String> {
        match self {
            Source::Stdin => Ok(Box::new(std::io::stdin().lock())),
            Source::Path(p) => {
                let file = std::fs::File::open(p)
                    .map_err(|e| format!("cannot open '{}': {e}", p.display()))?;
                if file.metadata().is_ok_and(|m| m.is_dir()) {
                    return Err(format!("cannot read '{}': it is a directory", p.display()));
                }
                Ok(Box::new(file))
            }
        }
    }

    /// Standard input, whole: at most `max + 1` bytes are read, so that a loader with a
    /// limit of `max` reports the excess itself. Read once per process.
    pub fn stdin(max: u64) -> Result<Vec<u8>, String> {
        STDIN
            .get_or_init(|| {
                let mut buf = Vec::new();
                std::io::stdin()
                    .lock()
                    .take(max.saturating_add(1))
                    .read_to_end(&mut buf)
                    .map(|_| buf)
                    .map_err(|e| format!("cannot read standard input: {e}"))
            })
            .clone()
    }

    /// At most `max + 1` bytes of the file (or standard input): a reader with a limit of
    /// `max` reports the excess itself.
    pub fn bytes_at_most(&self, max: u64) -> Result<Vec<u8>, String> {
        let mut buf = Vec::new();
        self.open()?
            .take(max.saturating_add(1))
            .read_to_end(&mut buf)
            .map_err(|e| e.to_string())?;
        Ok(buf)
    }

    /// The whole file (or standard input), at most `max` bytes (more is an error).
    pub fn read_bounded(&self, max: u64) -> Result<Vec<u8>, String> {
        let mut buf = Vec::new();
        self.open()?
            .take(max.saturating_add(1))
            .read_to_end(&mut buf)
            .map_err(|e| format!("read failed: {e}"))?;
        if buf.len() as u64 > max {
            return Err(format!("input is larger than {max} bytes"));
        }
        Ok(buf)
    }

    /// Loads a configuration: `from_file(path)` for a path (its messages name the file),
    /// `from_slice(bytes, ".")` for standard input (relative references from the current
    /// directory).
    pub fn load<T, E: std::fmt::Display>(
        &self,
        from_file: impl FnOnce(&Path) -> Result<T, E>,
        from_slice: impl FnOnce(&[u8], &Path) -> Result<T, E>,
    ) -> Result<T, String> {
        match self {
            Source::Path(p) => from_file(p).map_err(|e| e.to_string()),
            Source::Stdin => {
                let bytes = Source::stdin(1 << 20)?;
                from_slice(&bytes, Path::new(".")).map_err(|e| e.to_string())
            }
        }
    }
}

/// `FILE` or `-`.
#[allow(clippy::unnecessary_wraps)] // the shape clap wants of a value parser
pub fn source(s: &str) -> Result<Source, String> {
    Ok(if s == "-" {
        Source::Stdin
    } else {
        Source::Path(PathBuf::from(s))
    })
}

/// Refuses a command line that reads standard input twice: `claims` names each reader
/// (`--schema`, `the document`) with its source.
pub fn one_stdin<'a>(
    claims: impl IntoIterator<Item = (&'a str, Option<&'a Source>)>,
) -> Result<(), Failure> {
    let readers: Vec<&str> = claims
        .into_iter()
        .filter(|(_, s)| *s == Some(&Source::Stdin))
        .map(|(what, _)| what)
        .collect();
    match readers.as_slice() {
        [] | [_] => Ok(()),
        [a, rest @ ..] => usage(format!(
            "standard input can be read once, but {a} and {} would both read it ('-', or a \
             document without FILE): give all but one as files",
            rest.join(" and ")
        )),
    }
}

/// A byte count: `N`, `N` with a binary (`KiB`, `MiB`, `GiB`) or decimal (`kB`, `MB`, `GB`)
/// unit, optionally after a space (`16 MiB`, as `--help` prints defaults), or `unlimited`.
pub fn size(v: &str) -> Result<u64, String> {
    const UNITS: [(&str, u64); 6] = [
        ("KiB", 1 << 10),
        ("MiB", 1 << 20),
        ("GiB", 1 << 30),
        ("kB", 1_000),
        ("MB", 1_000_000),
        ("GB", 1_000_000_000),
    ];
    let bad = || {
        format!(
            "'{v}' is not a size: N, N with KiB, MiB, GiB, kB, MB or GB (e.g. 16MiB), or 'unlimited'"
        )
    };
    if v == "unlimited" {
        return Ok(UNLIMITED);
    }
    let (digits, factor) = UNITS
        .iter()
        .find_map(|&(unit, f)| v.strip_suffix(unit).map(|d| (d.trim_end_matches(' '), f)))
        .unwrap_or((v, 1));
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .filter(|&n| n != UNLIMITED)
        .ok_or_else(|| format!("'{v}' is too large (write 'unlimited' for no bound)"))
}

/// `N` or `unlimited`.
pub fn limit(v: &str) -> Result<u64, String> {
    if v == "unlimited" {
        return Ok(UNLIMITED);
    }
    v.parse::<u64>()
        .map_err(|_| format!("'{v}' is not a non-negative integer or 'unlimited'"))
}

/// A positive integer.
pub fn positive<T: std::str::FromStr + PartialOrd + Default>(v: &str) -> Result<T, String> {
    v.parse::<T>()
        .ok()
        .filter(|n| *n > T::default())
        .ok_or_else(|| format!("'{v}' is not a positive integer"))
}

/// A number of seconds.
pub fn seconds(v: &str) -> Result<u64, String> {
    v.parse()
        .map_err(|_| format!("'{v}' is not a number of seconds"))
}

/// `KEY=VALUE`.
pub fn key_value(v: &str) -> Result<(String, String), String> {
    v.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("'{v}' is not KEY=VALUE"))
}

/// `--draft D`: the names [`Draft::from_name`] reads, of which the five canonical ones are
/// offered to completion.
#[derive(Clone)]
pub struct DraftParser;

impl TypedValueParser for DraftParser {
    type Value = Draft;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Draft, clap::Error> {
        let parse: fn(&str) -> Result<Draft, String> = |v| {
            Draft::from_name(v)
                .ok_or_else(|| format!("'{v}' is not one of 2020-12, 2019-09, 7, 6, 4"))
        };
        parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            ["2020-12", "2019-09", "7", "6", "4"]
                .into_iter()
                .map(PossibleValue::new),
        ))
    }
}

/// The scanner's limits (`check`, `mcp-proxy`, `mcp-pin`). Unset flags keep the base
/// limits of the subcommand.
#[derive(Args, Clone, Debug, Default)]
#[command(
    next_help_heading = "Limits (N: an integer or 'unlimited'; SIZE: N, or N with KiB, MiB, GiB, kB, MB or GB)"
)]
pub struct LimitArgs {
    /// input bytes, whitespace included     [default: 16777216 (16 MiB)]
    #[arg(long, value_name = "SIZE", value_parser = size, allow_hyphen_values = true)]
    pub max_bytes: Option<u64>,
    /// nesting depth ([] and {} are 1)       [default: 128]
    #[arg(long, value_name = "N", value_parser = limit, allow_hyphen_values = true)]
    pub max_depth: Option<u64>,
    /// UTF-8 bytes of one member name        [default: 4096]
    #[arg(long, value_name = "SIZE", value_parser = size, allow_hyphen_values = true)]
    pub max_name_bytes: Option<u64>,
    /// UTF-8 bytes of one string value       [default: 4194304 (4 MiB)]
    #[arg(long, value_name = "SIZE", value_parser = size, allow_hyphen_values = true)]
    pub max_string_bytes: Option<u64>,
    /// bytes of one number's text            [default: 128]
    #[arg(long, value_name = "SIZE", value_parser = size, allow_hyphen_values = true)]
    pub max_number_bytes: Option<u64>,
    /// members of one object                 [default: 65536]
    #[arg(long, value_name = "N", value_parser = limit, allow_hyphen_values = true)]
    pub max_members: Option<u64>,
    /// items of one array                    [default: 1000000]
    #[arg(long, value_name = "N", value_parser = limit, allow_hyphen_values = true)]
    pub max_items: Option<u64>,
    /// rfc8259 (default) or i-json (noncharacters rejected)
    #[arg(long, value_name = "P", value_parser = ["rfc8259", "i-json"], hide_possible_values = true)]
    pub profile: Option<String>,
}

impl LimitArgs {
    /// `base` with every limit given on the command line.
    pub fn apply(&self, base: Limits) -> Limits {
        let mut l = base;
        let set = [
            ("max_bytes", self.max_bytes),
            ("max_depth", self.max_depth),
            ("max_name_bytes", self.max_name_bytes),
            ("max_string_bytes", self.max_string_bytes),
            ("max_number_bytes", self.max_number_bytes),
            ("max_members", self.max_members),
            ("max_items", self.max_items),
        ];
        for (name, v) in set {
            if let Some(v) = v {
                l = l.set_by_name(name, v).unwrap_or(l);
            }
        }
        match self.profile.as_deref() {
            Some("i-json") => l.i_json(true),
            Some(_) => l.i_json(false),
            None => l,
        }
    }
}

/// A TLS listener's certificate and key (`serve`, `mcp-proxy --upstream`).
#[derive(Args, Clone, Debug, Default)]
#[command(next_help_heading = "TLS")]
pub struct ListenTlsArgs {
    /// serve TLS with this certificate chain (PEM; reloaded on SIGHUP and when it changes)
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// the private key of --tls-cert (PEM)
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

impl ListenTlsArgs {
    /// The listener's TLS, when both files are given.
    pub fn load(&self) -> Result<Option<jsongate::tls::ServerTls>, String> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(c), Some(k)) => jsongate::tls::ServerTls::load(c, k)
                .map(Some)
                .map_err(|e| format!("--tls-cert/--tls-key: {e}")),
            _ => Ok(None),
        }
    }
}

/// Where rate limits, breakers, plans and approvals are kept (`decide`, `mcp-proxy`).
#[derive(Args, Clone, Debug, Default)]
#[command(next_help_heading = "Shared state")]
pub struct StateArgs {
    #[arg(
        long = "state",
        value_name = "SPEC",
        help = "memory (default), FILE, file:FILE, redis://HOST[:PORT][?...] or rediss://... (TLS)",
        long_help = "Where rate limits, breakers, plans and approvals are kept: memory (default), \
FILE or file:FILE (one host), or Redis (several hosts):
  redis://HOST[:PORT][?prefix=P&timeout_ms=N&connect_timeout_ms=N&max_connections=N&db=N]
  rediss://HOST[:PORT][?ca_file=PEM&system_roots=false&client_cert=PEM&client_key=PEM&...] (TLS)
Authentication: user=NAME with password_env=VAR (the password is read from that environment \
variable) or password_file=PATH (read from that file, trailing newline removed). Keep the \
password out of the command line: redis://USER:PASSWORD@HOST is accepted, but any user of the \
machine can read a process's arguments."
    )]
    pub spec: Option<String>,
    /// when the store fails: deny (default) or allow
    #[arg(long = "on-state-error", value_name = "deny|allow", value_parser = ["deny", "allow"], hide_possible_values = true)]
    pub on_error: Option<String>,
    /// count apart from other scopes in the same store
    #[arg(long = "state-scope", value_name = "S")]
    pub scope: Option<String>,
}

impl StateArgs {
    /// The store (memory unless `--state`).
    pub fn store(&self) -> Result<Arc<dyn jsongate::state::Store>, String> {
        open_store(self.spec.as_deref().unwrap_or("memory"))
    }

    /// The rate state over the store.
    pub fn rate(&self) -> Result<jsongate::action::RateState, String> {
        use jsongate::state::OnStateError;
        let on = match self.on_error.as_deref() {
            Some("allow") => OnStateError::Allow,
            _ => OnStateError::Deny,
        };
        Ok(jsongate::action::RateState::new()
            .store(self.store()?)
            .on_state_error(on)
            .scope(self.scope.as_deref().unwrap_or("")))
    }
}

/// Opens the store `spec` names.
pub fn open_store(spec: &str) -> Result<Arc<dyn jsongate::state::Store>, String> {
    jsongate::state::open(spec).map_err(|e| format!("--state: {e}"))
}

/// `--context KEY=VALUE`, repeated (a repeated key makes a list), as `decide` and
/// `mcp-proxy` give it to the policy's rules.
pub fn action_context(
    pairs: &[(String, String)],
) -> Result<jsongate::action::CallerContext, String> {
    let mut c = jsongate::action::CallerContext::new();
    for (k, v) in pairs {
        if k.is_empty() {
            return Err(format!("--context: '={v}' is not KEY=VALUE"));
        }
        c = c.value(k, v);
    }
    Ok(c)
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Appends one line to `path` (created with mode 0600 on Unix; a symbolic link refused).
pub fn append_line(path: &Path, line: &str) -> Result<(), String> {
    use std::io::Write as _;
    let mut f = open_append(path)
        .map_err(|e| format!("cannot open audit file '{}': {e}", path.display()))?;
    writeln!(f, "{line}").map_err(|e| format!("cannot write audit file '{}': {e}", path.display()))
}

/// Opens `path` for appending, creating it with mode 0600 on Unix; a symbolic link at `path`
/// is refused with an error naming it.
pub fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    crate::fsx::open_append_private(path)
}

/// Writes `text` to standard output; a closed stdout is not worth a panic (the exit code
/// still carries the verdict).
pub fn print(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// [`print`] with a newline.
pub fn println(line: &str) {
    print(&format!("{line}\n"));
}
