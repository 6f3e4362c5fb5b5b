//! What the validator says about every case of the official JSON Schema Test Suite, held
//! byte for byte in `tests/golden/`: the tier that ran, the verdict, and for a violation its
//! keyword, locations, pointer, offset, line, column and message, then every further violation
//! a collecting validator reports. A change to any message,
//! location or offset shows here as a diff; a deliberate one is recorded with
//! `JSONGATE_BLESS=1 cargo test --release --test main golden`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use jsongate::{Draft, Rejection, Validator};

use crate::common::data;
use crate::schema_suite::{limits, options, schema_text, Case, Dialect};

/// The suite's directories, each with the dialect and format assertion it runs under.
const RUNS: &[(&str, Draft, bool)] = &[
    ("draft2020-12", Draft::Draft202012, false),
    ("draft2020-12/optional", Draft::Draft202012, false),
    ("draft2020-12/optional/format", Draft::Draft202012, true),
    ("draft2019-09", Draft::Draft201909, false),
    ("draft2019-09/optional", Draft::Draft201909, false),
    ("draft2019-09/optional/format", Draft::Draft201909, true),
    ("draft7", Draft::Draft7, false),
    ("draft7/optional", Draft::Draft7, false),
    ("draft7/optional/format", Draft::Draft7, true),
    ("draft6", Draft::Draft6, false),
    ("draft6/optional", Draft::Draft6, false),
    ("draft6/optional/format", Draft::Draft6, true),
    ("draft4", Draft::Draft4, false),
    ("draft4/optional", Draft::Draft4, false),
    ("draft4/optional/format", Draft::Draft4, true),
];

fn describe(out: &mut String, schema: &jsongate::Schema, data: &[u8]) {
    let mut v = Validator::new(schema);
    let got = v.validate_slice(data, limits());
    out.push_str(if v.specialised() { "S " } else { "G " });
    match &got {
        Ok(()) => out.push_str("ok\n"),
        Err(Rejection::Error(e)) => {
            let _ = writeln!(out, "error {e} [{}] at {}", e.kind().code(), e.pointer());
        }
        Err(Rejection::Violation(x)) => {
            // The absolute location, when it is not the root document's plus the location.
            let abs = x.absolute_keyword_location();
            let abs = match abs.strip_prefix("jsongate:///schema.json#") {
                Some(rest) if rest == x.keyword_location() => "",
                _ => abs.as_str(),
            };
            let _ = writeln!(
                out,
                "{} {} {abs} {} @{}:{}:{} {}",
                x.keyword(),
                x.keyword_location(),
                x.instance_pointer(),
                x.offset(),
                x.line(),
                x.column(),
                x.message()
            );
            // Every further violation a collecting validator reports.
            let mut many = Validator::new(schema).max_errors(8);
            let _ = many.validate_slice(data, limits());
            for y in many.violations().iter().skip(1) {
                let _ = writeln!(
                    out,
                    "  + {} {} {} @{} {}",
                    y.keyword(),
                    y.keyword_location(),
                    y.instance_pointer(),
                    y.offset(),
                    y.message()
                );
            }
        }
    }
}

fn record(rel: &str, draft: Draft, format_assertion: bool) -> String {
    let dir = data(&format!("suites/json-schema-test-suite/tests/{rel}"));
    let opts = options(Some(draft), format_assertion);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut out = String::new();
    for file in files {
        let fname = file.file_name().unwrap().to_string_lossy().to_string();
        let cases: Vec<Case> = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        for case in cases {
            let text = schema_text(case.schema.get(), Dialect::Named(draft));
            let compiled = opts.compile(text.as_bytes());
            for t in &case.tests {
                let _ = write!(out, "{fname} / {} / {}: ", case.description, t.description);
                match &compiled {
                    Ok(s) => describe(&mut out, s, t.data.get().as_bytes()),
                    Err(e) => {
                        let _ = writeln!(out, "compile error [{:?}] {e}", e.kind());
                    }
                }
            }
        }
    }
    out
}

fn golden_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/suite")
        .join(format!("{}.txt", rel.replace('/', "-")))
}

#[test]
fn suite_messages_are_unchanged() {
    let bless = std::env::var_os("JSONGATE_BLESS").is_some();
    let mut changed = Vec::new();
    for &(rel, draft, fa) in RUNS {
        let got = record(rel, draft, fa);
        let path = golden_path(rel);
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("{}: {e} (record it with JSONGATE_BLESS=1)", path.display())
        });
        if got != want {
            let first = got
                .lines()
                .zip(want.lines())
                .find(|(g, w)| g != w)
                .map_or_else(
                    || "  (one is a prefix of the other)".into(),
                    |(g, w)| format!("  now:  {g}\n  was:  {w}"),
                );
            changed.push(format!("{rel}:\n{first}"));
        }
    }
    assert!(
        changed.is_empty(),
        "messages changed (JSONGATE_BLESS=1 records a deliberate change):\n{}",
        changed.join("\n")
    );
}
