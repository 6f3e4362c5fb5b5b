//! `jsongate check`: one document (or, with `--lines`, one per line) through the scanner and
//! an optional schema; one verdict line each, written by the library.

use std::fmt::Write as _;
use std::process::ExitCode;

use clap::Args;

use jsongate::json::ObjectWriter;
use jsongate::{
    Draft, ErrorKind, Ignore, JsonLines, Limits, OutputFormat, Rejection, Scanner, Schema,
    Validator, Violation,
};

use super::args::{self, DraftParser, LimitArgs, Source};

const AFTER: &str = "\
Scans each JSON document (every FILE, or standard input when there is none or for '-') with
the strict profile (RFC 8259, duplicate names rejected) and the limits above. Reads in 64 KiB
chunks with constant memory and stops reading as soon as the verdict is known. Prints one
JSON line per document:
  {\"valid\":true,\"bytes_read\":N}
  {\"valid\":false,\"bytes_read\":N,\"error\":{\"kind\":K,\"offset\":N,\"line\":L,
   \"column\":C,\"pointer\":P,\"message\":M}}
A schema violation has kind schema and adds \"keyword\" (the failing keyword) and
\"schema_path\" (its location through the schema, following $ref) to the error; with
--errors N (N > 1) the line also has \"errors\":[...] with each violation.

Several FILEs, or a quoted pattern ('logs/*.json', expanded in alphabetical order when no
file has that name), add \"file\":NAME to each line; a FILE that cannot be read is reported
on stderr and the others are still checked. --format text prints one readable line per
verdict instead (NAME: valid, or NAME: invalid: MESSAGE at byte N ... in POINTER); --quiet
prints nothing.

--lines reads newline-delimited JSON (NDJSON): every line is its own document with its own
limits (offsets are within the line), and gets one line {\"line\":N,\"valid\":...} as above,
where N is the line's number in the input. Empty lines (no bytes, or only \\r) are skipped
without a verdict but counted; a last line without a newline counts. A line longer than
--max-bytes is rejected at the limit (too_large) and the rest of it is skipped, so memory
stays bounded.

ERROR KINDS:
    too_large, too_deep, name_too_long, string_too_long, number_too_long, too_many_members,
    too_many_items, duplicate_name, invalid_utf8, lone_surrogate, noncharacter, syntax,
    schema, budget_exceeded, schema_cycle

EXIT STATUS:
    the worst of: 0 accepted (every document and line, or none), 1 one rejected, 2 usage,
    configuration or I/O error (message on stderr)

Examples:
    jsongate check --schema tool.schema.json result.json
    curl -s URL | jsongate check --max-depth=32 -
    jsongate check --schema - result.json < tool.schema.json
    jsongate check --lines --max-bytes=64KiB events.ndjson
    jsongate check --schema tool.schema.json --format text 'results/*.json'
    jsongate check --quiet result.json && echo accepted";

/// Scan (and validate) JSON documents; print one verdict line each
#[derive(Args, Debug)]
#[command(after_help = AFTER)]
pub struct CheckArgs {
    /// the documents (standard input when none or '-'); a quoted pattern such as
    /// 'logs/*.json' is expanded
    #[arg(value_name = "FILE", value_parser = args::source)]
    files: Vec<Source>,
    /// every line is one document (NDJSON): one verdict line per line
    #[arg(long, conflicts_with = "output")]
    lines: bool,
    /// json (default: one JSON line per document) or text (one readable line)
    #[arg(long, value_name = "F", value_parser = ["json", "text"], hide_possible_values = true)]
    format: Option<String>,
    /// print nothing: the exit code alone is the verdict
    #[arg(long, short = 'q')]
    quiet: bool,
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
    #[arg(long, value_name = "F", value_parser = ["flag", "basic", "detailed"], hide_possible_values = true, requires = "schema", conflicts_with = "format")]
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

pub fn run(a: &CheckArgs) -> Result<ExitCode, args::Failure> {
    let sa = &a.schema;
    let (documents, named) = documents(&a.files)?;
    args::one_stdin(
        [("--schema", sa.schema.as_ref())]
            .into_iter()
            .chain(documents.iter().map(|d| ("the document", Some(d))))
            .chain(sa.resource.iter().map(|(_, s)| ("--resource", Some(s)))),
    )?;
    let limits = a.limits.apply(Limits::new());
    let schema = match &sa.schema {
        Some(src) => Some(load_schema(src, sa)?),
        None => None,
    };
    let validator = || {
        schema
            .as_ref()
            .map(|s| Validator::new(s).max_errors(sa.errors))
    };
    let mut reused = validator();
    let print = Print {
        text: a.format.as_deref() == Some("text"),
        quiet: a.quiet,
        named,
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    // The worst outcome: 0 all accepted, 1 one rejected, 2 one could not be read.
    let mut worst = 0u8;
    for doc in &documents {
        let outcome = match doc.open() {
            Ok(input) if a.lines => lines(input, doc, limits, validator(), &print, &mut out),
            Ok(input) => one(input, doc, limits, reused.as_mut(), sa, &print, &mut out),
            Err(e) => Err(e),
        };
        match outcome {
            Ok(rejected) => worst = worst.max(u8::from(rejected)),
            Err(e) if documents.len() == 1 => return Err(e.into()),
            Err(e) => {
                let _ = std::io::Write::flush(&mut out);
                eprintln!("jsongate: {e}");
                worst = 2;
            }
        }
    }
    let _ = std::io::Write::flush(&mut out);
    Ok(ExitCode::from(worst))
}

/// The documents to check, and whether their verdicts must name them (several FILEs, or a
/// pattern): FILEs as given, a pattern (`*`, `?`, `[` in a FILE that does not exist as
/// such) expanded to its files in alphabetical order, standard input when there is none.
fn documents(files: &[Source]) -> Result<(Vec<Source>, bool), args::Failure> {
    if files.is_empty() {
        return Ok((vec![Source::Stdin], false));
    }
    let mut named = files.len() > 1;
    let mut out = Vec::with_capacity(files.len());
    for file in files {
        let pattern = file
            .path()
            .filter(|p| !p.exists())
            .and_then(|p| p.to_str())
            .filter(|p| p.contains(['*', '?', '[']));
        let Some(pattern) = pattern else {
            out.push(file.clone());
            continue;
        };
        named = true;
        let paths = glob::glob(pattern)
            .or_else(|e| args::usage(format!("'{pattern}' is not a valid pattern: {e}")))?;
        let before = out.len();
        for entry in paths {
            let path = entry
                .map_err(|e| format!("cannot read '{}': {}", e.path().display(), e.error()))?;
            if !path.is_dir() {
                out.push(Source::Path(path));
            }
        }
        if out.len() == before {
            return Err(format!("no file matches '{pattern}'").into());
        }
    }
    Ok((out, named))
}

/// How verdicts are printed: one JSON line each (the default) or one readable line
/// (`--format text`), naming the document when there are several; nothing with `--quiet`.
struct Print {
    text: bool,
    quiet: bool,
    named: bool,
}

impl Print {
    /// Writes one verdict: `json` builds its JSON line (to which the document's name is
    /// added when there are several); `text` renders it readable from the document's name.
    /// Only the form printed is built.
    fn verdict(
        &self,
        out: &mut impl std::io::Write,
        doc: &Source,
        json: impl FnOnce() -> String,
        text: impl FnOnce(&str) -> String,
    ) {
        if self.quiet {
            return;
        }
        let line = if self.text {
            text(&match doc {
                Source::Stdin => "<stdin>".to_owned(),
                Source::Path(p) => p.display().to_string(),
            })
        } else {
            let mut line = json();
            if self.named {
                if let Some(mut o) = ObjectWriter::reopen(&mut line) {
                    o.str("file", &doc.name());
                }
            }
            line
        };
        // A closed stdout ends the output, not the verdict.
        let _ = out
            .write_all(line.as_bytes())
            .and_then(|()| out.write_all(b"\n"));
    }
}

/// The readable form of a verdict: `NAME: valid`, or `NAME: invalid: …` and one line
/// more per further violation collected (`--errors N`).
fn verdict_text(name: &str, r: &Result<(), Rejection>, violations: &[Violation]) -> String {
    let Err(r) = r else {
        return format!("{name}: valid");
    };
    let mut line = format!("{name}: invalid: {r}");
    for v in violations.iter().skip(1) {
        let _ = write!(line, "\n{name}: also: {v}");
    }
    line
}

/// One whole document; whether it was rejected.
fn one(
    input: Box<dyn std::io::Read>,
    doc: &Source,
    limits: Limits,
    validator: Option<&mut Validator>,
    sa: &SchemaArgs,
    print: &Print,
    out: &mut impl std::io::Write,
) -> Result<bool, String> {
    let mut scanner = Scanner::new(limits);
    let result = match validator {
        None => {
            let r = scanner
                .scan_read(input, &mut Ignore)
                .map(|_| ())
                .map_err(Rejection::Error);
            read_failure(&r, doc, scanner.bytes_read())?;
            print.verdict(
                out,
                doc,
                || jsongate::verdict_json(&r, scanner.bytes_read()),
                |name| verdict_text(name, &r, &[]),
            );
            r
        }
        Some(v) => {
            let r = v.validate_read(&mut scanner, input);
            read_failure(&r, doc, scanner.bytes_read())?;
            let v = &*v;
            print.verdict(
                out,
                doc,
                || match sa.output.as_deref().and_then(OutputFormat::from_name) {
                    Some(format) => {
                        let uri = sa.schema.as_ref().and_then(Source::path).and_then(file_uri);
                        v.output(&r, format, uri.as_deref())
                    }
                    None => v.verdict_json(&r, scanner.bytes_read()),
                },
                |name| verdict_text(name, &r, v.violations()),
            );
            r
        }
    };
    Ok(result.is_err())
}

/// A read error is an I/O error (exit 2), not a verdict.
fn read_failure(r: &Result<(), Rejection>, doc: &Source, at: u64) -> Result<(), String> {
    match r {
        Err(Rejection::Error(e)) => match e.kind() {
            ErrorKind::Io(kind) => Err(format!(
                "cannot read '{}': {kind} (after {at} bytes)",
                doc.name()
            )),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// `check --lines`: one verdict per line; whether one was rejected.
fn lines(
    input: Box<dyn std::io::Read>,
    doc: &Source,
    limits: Limits,
    validator: Option<Validator>,
    print: &Print,
    out: &mut impl std::io::Write,
) -> Result<bool, String> {
    let mut it = JsonLines::new(input, limits);
    if let Some(v) = validator {
        it = it.validator(v);
    }
    let mut rejected = false;
    for verdict in it {
        let verdict = verdict.map_err(|e| format!("cannot read '{}': {e}", doc.name()))?;
        rejected |= !verdict.is_valid();
        print.verdict(
            out,
            doc,
            || verdict.to_json(),
            |name| verdict_text(&format!("{name}:{}", verdict.line()), verdict.result(), &[]),
        );
    }
    Ok(rejected)
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

fn load_schema(src: &Source, sa: &SchemaArgs) -> Result<Schema, String> {
    let name = src.name();
    // At most one byte past the compile bound (a file that never ends costs no more).
    let bytes = match src {
        Source::Stdin => Source::stdin(jsongate::DEFAULT_MAX_SCHEMA_BYTES)?,
        Source::Path(_) => src
            .bytes_at_most(jsongate::DEFAULT_MAX_SCHEMA_BYTES)
            .map_err(|e| format!("cannot read schema '{name}': {e}"))?,
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
            Source::Path(p) => file
                .bytes_at_most(jsongate::DEFAULT_MAX_SCHEMA_BYTES)
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
    Ok(schema)
}
