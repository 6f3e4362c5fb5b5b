//! `jsongate check`: one document (or, with `--lines`, one per line) through the scanner and
//! an optional schema; one verdict line each, written by the library.

use std::fmt::Write as _;
use std::process::ExitCode;

use clap::Args;

use jsongate::{
    Draft, ErrorKind, Ignore, JsonLines, Limits, OutputFormat, Rejection, Scanner, Schema,
    Validator,
};

use super::args::{self, DraftParser, LimitArgs, Source};

const AFTER: &str = "\
Scans one JSON document (FILE, or standard input when FILE is absent or '-') with the strict
profile (RFC 8259, duplicate names rejected) and the limits above. Reads in 64 KiB chunks
with constant memory and stops reading as soon as the verdict is known. Prints one JSON line:
  {\"valid\":true,\"bytes_read\":N}
  {\"valid\":false,\"bytes_read\":N,\"error\":{\"kind\":K,\"offset\":N,\"line\":L,
   \"column\":C,\"pointer\":P,\"message\":M}}
A schema violation has kind schema and adds \"keyword\" (the failing keyword) and
\"schema_path\" (its location through the schema, following $ref) to the error; with
--errors N (N > 1) the line also has \"errors\":[...] with each violation.

--lines reads newline-delimited JSON (NDJSON): every line is its own document with its own
limits (offsets are within the line), and gets one line {\"line\":N,\"valid\":...} as above,
where N is the line's number in the input. Empty lines (no bytes, or only \\r) are skipped
without a verdict but counted; a last line without a newline counts. A line longer than
--max-bytes is rejected at the limit (too_large) and the rest of it is skipped, so memory
stays bounded. The exit code is the worst verdict: 0 when every line is accepted (or there
is none), 1 when one is rejected.

ERROR KINDS:
    too_large, too_deep, name_too_long, string_too_long, number_too_long, too_many_members,
    too_many_items, duplicate_name, invalid_utf8, lone_surrogate, noncharacter, syntax,
    schema, budget_exceeded, schema_cycle

EXIT STATUS:
    0 accepted, 1 rejected, 2 usage, configuration or I/O error (message on stderr)

Examples:
    jsongate check --schema tool.schema.json result.json
    curl -s URL | jsongate check --max-depth=32 -
    jsongate check --schema - result.json < tool.schema.json
    jsongate check --lines --max-bytes=65536 events.ndjson";

/// Scan (and validate) one JSON document; print one verdict line
#[derive(Args, Debug)]
#[command(after_help = AFTER)]
pub struct CheckArgs {
    /// the document (standard input when absent or '-')
    #[arg(value_name = "FILE", value_parser = args::source)]
    file: Option<Source>,
    /// every line is one document (NDJSON): one verdict line per line
    #[arg(long, conflicts_with = "output")]
    lines: bool,
    #[command(flatten)]
    limits: LimitArgs,
    #[command(flatten)]
    schema: SchemaArgs,
}

/// `--schema` and the options that go with it.
#[derive(Args, Debug)]
#[command(next_help_heading = "Schema (validation runs on the same pass)")]
struct SchemaArgs {
    /// JSON Schema to validate against ('-': standard input)
    #[arg(long, value_name = "FILE", value_parser = args::source)]
    schema: Option<Source>,
    /// validate 'format' instead of treating it as an annotation
    #[arg(long)]
    format_assertion: bool,
    /// dialect without $schema: 2020-12 (default), 2019-09, 7, 6 or 4
    #[arg(long, value_name = "D", value_parser = DraftParser, hide_possible_values = true)]
    draft: Option<Draft>,
    /// print output format F instead: flag, basic or detailed
    #[arg(long, value_name = "F", value_parser = ["flag", "basic", "detailed"], hide_possible_values = true)]
    output: Option<String>,
    /// make FILE available to $ref as URI (repeatable; nothing is fetched)
    #[arg(long, value_name = "URI=FILE", value_parser = resource)]
    resource: Vec<(String, Source)>,
    /// collect up to N violations (default 1), listed in "errors":[...]
    #[arg(long, value_name = "N", value_parser = args::positive::<usize>, default_value_t = 1, hide_default_value = true)]
    errors: usize,
    /// evaluation units per document [default: 1000000 + 16 per byte]
    #[arg(long, value_name = "N", value_parser = args::limit, allow_hyphen_values = true)]
    eval_budget: Option<u64>,
}

/// `--resource URI=FILE`.
fn resource(v: &str) -> Result<(String, Source), String> {
    let (uri, path) = v
        .split_once('=')
        .ok_or_else(|| format!("'{v}' is not URI=FILE"))?;
    Ok((uri.to_owned(), args::source(path)?))
}

pub fn run(a: &CheckArgs) -> Result<ExitCode, String> {
    let sa = &a.schema;
    let document = a.file.clone().unwrap_or(Source::Stdin);
    args::one_stdin(
        [
            ("--schema", sa.schema.as_ref()),
            ("the document", Some(&document)),
        ]
        .into_iter()
        .chain(sa.resource.iter().map(|(_, s)| ("--resource", Some(s)))),
    )?;
    let limits = a.limits.apply(Limits::new());
    let validator = match &sa.schema {
        Some(src) => Some(load_schema(src, sa)?.max_errors(sa.errors)),
        None => None,
    };
    let input = document.open()?;
    if a.lines {
        return lines(input, limits, validator);
    }
    let mut scanner = Scanner::new(limits);
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
            read_failure(&r, scanner.bytes_read())?;
            let line = match sa.output.as_deref().and_then(OutputFormat::from_name) {
                Some(format) => {
                    let uri = sa.schema.as_ref().and_then(Source::path).and_then(file_uri);
                    v.output(&r, format, uri.as_deref())
                }
                None => v.verdict_json(&r, scanner.bytes_read()),
            };
            (r, line)
        }
    };
    read_failure(&result, scanner.bytes_read())?;
    args::println(&line);
    Ok(ExitCode::from(u8::from(result.is_err())))
}

/// A read error is an I/O error (exit 2), not a verdict.
fn read_failure(r: &Result<(), Rejection>, at: u64) -> Result<(), String> {
    match r {
        Err(Rejection::Error(e)) => match e.kind() {
            ErrorKind::Io(kind) => Err(format!("read failed after {at} bytes: {kind}")),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// `check --lines`: one verdict per line, the worst exit code.
fn lines(
    input: Box<dyn std::io::Read>,
    limits: Limits,
    validator: Option<Validator>,
) -> Result<ExitCode, String> {
    let mut it = JsonLines::new(input, limits);
    if let Some(v) = validator {
        it = it.validator(v);
    }
    let mut rejected = false;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for verdict in it {
        let verdict = verdict.map_err(|e| format!("read failed: {e}"))?;
        rejected |= !verdict.is_valid();
        // A closed stdout ends the output, not the verdict.
        let _ = std::io::Write::write_all(&mut out, verdict.to_json().as_bytes())
            .and_then(|()| std::io::Write::write_all(&mut out, b"\n"));
    }
    let _ = std::io::Write::flush(&mut out);
    Ok(ExitCode::from(u8::from(rejected)))
}

/// The `file://` URI of a file, for the output's absolute keyword locations.
fn file_uri(path: &std::path::Path) -> Option<String> {
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

fn load_schema(src: &Source, sa: &SchemaArgs) -> Result<Validator, String> {
    let name = src.name();
    let bytes = match src {
        Source::Stdin => Source::stdin(jsongate::DEFAULT_MAX_SCHEMA_BYTES)?,
        Source::Path(p) => {
            std::fs::read(p).map_err(|e| format!("cannot read schema '{name}': {e}"))?
        }
    };
    let mut opts = Schema::options().format_assertion(sa.format_assertion);
    if let Some(d) = sa.draft {
        opts = opts.draft(d);
    }
    if let Some(b) = sa.eval_budget {
        opts = opts.eval_budget(b);
    }
    for (uri, file) in &sa.resource {
        let doc = match file {
            Source::Stdin => Source::stdin(jsongate::DEFAULT_MAX_SCHEMA_BYTES)?,
            Source::Path(p) => std::fs::read(p)
                .map_err(|e| format!("cannot read resource '{}': {e}", p.display()))?,
        };
        opts = opts.resource(uri, &doc);
    }
    let schema = opts.compile(&bytes).map_err(|e| match e.resource() {
        Some(uri) => {
            format!("invalid schema '{name}': {e}; give the document with --resource {uri}=FILE")
        }
        None => format!("invalid schema '{name}': {e}"),
    })?;
    Ok(Validator::new(&schema))
}
