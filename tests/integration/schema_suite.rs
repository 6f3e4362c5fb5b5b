//! The official JSON Schema Test Suite, run through the streaming validator.
//!
//! Every test instance is validated one-shot and fed one byte at a time; both must give the
//! suite's verdict. Where the specialised tier runs, the general tier must give the same
//! result (verdict, keyword, locations, pointer, offset, line and column). Instances are taken as their exact text (`RawValue`), so big numbers
//! keep their digits. Remote references resolve to `remotes/` under
//! `http://localhost:1234/`, registered as resources: nothing is fetched.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use jsongate::{Draft, Flow, Limits, Rejection, Scanner, Schema, SchemaOptions, Tier, Validator};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::common::data;

#[derive(Deserialize)]
pub(crate) struct Case {
    pub(crate) description: String,
    pub(crate) schema: Box<RawValue>,
    pub(crate) tests: Vec<Test>,
}

#[derive(Deserialize)]
pub(crate) struct Test {
    pub(crate) description: String,
    pub(crate) data: Box<RawValue>,
    pub(crate) valid: bool,
}

fn remotes(dir: &Path, prefix: &str, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            remotes(&path, &format!("{prefix}{name}/"), out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push((format!("{prefix}{name}"), std::fs::read(&path).unwrap()));
        }
    }
}

/// The suite's options: `draft` named (when given), `format` asserted or not, the remote
/// documents registered.
pub(crate) fn options(draft: Option<Draft>, format_assertion: bool) -> SchemaOptions {
    let mut docs = Vec::new();
    remotes(
        &data("suites/json-schema-test-suite/remotes"),
        "http://localhost:1234/",
        &mut docs,
    );
    let mut o = Schema::options().format_assertion(format_assertion);
    if let Some(d) = draft {
        o = o.draft(d);
    }
    for (uri, bytes) in &docs {
        o = o.resource(uri, bytes);
    }
    o
}

pub(crate) fn limits() -> Limits {
    Limits::new().max_depth(512)
}

/// Feeds `data` one byte at a time.
fn bytewise(v: &mut Validator, data: &[u8]) -> Result<(), Rejection> {
    let mut s = Scanner::new(limits());
    v.reset();
    for b in data {
        match s.feed(std::slice::from_ref(b), v) {
            Ok(Flow::Continue) => {}
            Ok(Flow::Stop) => break,
            Err(e) => return v.verdict(&s, Err(e)),
        }
    }
    let out = s.finish(v);
    v.verdict(&s, out)
}

/// How a run names the dialect of the suite's schemas (which carry no `$schema`).
#[derive(Clone, Copy)]
pub(crate) enum Dialect {
    /// As the default draft of the options.
    Named(Draft),
    /// As a `$schema` member written into each root schema object, under the default
    /// options (2020-12): remote documents without `$schema` then follow the dialect of the
    /// schema that references them.
    Declared(Draft),
}

/// A case's schema as compiled under `dialect`.
pub(crate) fn schema_text(raw: &str, dialect: Dialect) -> String {
    match dialect {
        Dialect::Declared(d) if raw.starts_with('{') && !raw.contains("\"$schema\"") => {
            let uri = format!("\"$schema\":\"{}#\"", d.meta_schema_uri());
            let rest = raw[1..].trim_start();
            let sep = if rest.starts_with('}') { "" } else { "," };
            format!("{{{uri}{sep}{rest}")
        }
        _ => raw.to_string(),
    }
}

/// Runs every file of `dir`; returns the failures (`file / case / test: reason`).
fn run_dir(
    dir: &Path,
    dialect: Dialect,
    format_assertion: bool,
    bytewise_too: bool,
) -> (usize, Vec<String>) {
    let opts = match dialect {
        Dialect::Named(draft) => options(Some(draft), format_assertion),
        Dialect::Declared(_) => options(None, format_assertion),
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    let mut count = 0;
    let mut specialised = 0;
    for file in files {
        let fname = file.file_name().unwrap().to_string_lossy().to_string();
        let cases: Vec<Case> = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        for case in cases {
            let text = schema_text(case.schema.get(), dialect);
            let schema = match opts.compile(text.as_bytes()) {
                Ok(s) => s,
                Err(e) => {
                    for t in &case.tests {
                        count += 1;
                        failures.push(format!(
                            "{fname} / {} / {}: compile error: {e}",
                            case.description, t.description
                        ));
                    }
                    continue;
                }
            };
            let mut v = Validator::new(&schema);
            for t in &case.tests {
                count += 1;
                let data = t.data.get().as_bytes();
                let got = v.validate_slice(data, limits());
                let ok = match &got {
                    Ok(()) => true,
                    Err(Rejection::Violation(_)) => false,
                    Err(Rejection::Error(e)) => {
                        failures.push(format!(
                            "{fname} / {} / {}: scan error {e}",
                            case.description, t.description
                        ));
                        continue;
                    }
                };
                if v.specialised() {
                    specialised += 1;
                    let general = Validator::new(&schema)
                        .tier(Tier::General)
                        .validate_slice(data, limits());
                    if general != got {
                        failures.push(format!(
                            "{fname} / {} / {}: specialised tier gave {got:?}, general {general:?}",
                            case.description, t.description
                        ));
                    }
                }
                if ok != t.valid {
                    failures.push(format!(
                        "{fname} / {} / {}: expected {}, got {got:?}",
                        case.description, t.description, t.valid
                    ));
                    continue;
                }
                let mut multi = Validator::new(&schema).max_errors(8);
                let m = multi.validate_slice(data, limits());
                if m.is_ok() != ok || (!ok && multi.violations().is_empty()) {
                    failures.push(format!(
                        "{fname} / {} / {}: collecting several errors gave {m:?}, one-shot {got:?}",
                        case.description, t.description
                    ));
                }
                if bytewise_too {
                    let b = bytewise(&mut v, data);
                    if b.is_ok() != ok || b != got {
                        failures.push(format!(
                            "{fname} / {} / {}: byte-wise feeding gave {b:?}, one-shot {got:?}",
                            case.description, t.description
                        ));
                    }
                }
            }
        }
    }
    // The comparison above must have had something to compare.
    assert!(
        specialised * 5 >= count,
        "{}: only {specialised} of {count} tests ran in the specialised tier",
        dir.display()
    );
    (count, failures)
}

fn assert_suite(rel: &str, draft: Draft, format_assertion: bool, xfail: &[&str]) {
    assert_suite_as(rel, Dialect::Named(draft), format_assertion, xfail);
}

fn assert_suite_as(rel: &str, dialect: Dialect, format_assertion: bool, xfail: &[&str]) {
    let (count, failures) = run_dir(&data(rel), dialect, format_assertion, true);
    let how = match dialect {
        Dialect::Named(d) => format!("default draft {}", d.name()),
        Dialect::Declared(d) => format!("$schema of draft {}", d.name()),
    };
    eprintln!(
        "{rel} ({how}): {} of {count} tests pass ({} expected failures listed)",
        count - failures.len(),
        xfail.len()
    );
    let mut unexpected = Vec::new();
    let mut fixed: BTreeMap<&str, bool> = xfail.iter().map(|x| (*x, false)).collect();
    for f in &failures {
        match xfail.iter().find(|x| f.starts_with(*x)) {
            Some(x) => {
                fixed.insert(x, true);
            }
            None => unexpected.push(f.clone()),
        }
    }
    let stale: Vec<_> = fixed
        .iter()
        .filter(|(_, hit)| !**hit)
        .map(|(x, _)| *x)
        .collect();
    assert!(
        unexpected.is_empty() && stale.is_empty(),
        "{rel}: {count} tests, {} unexpected failures:\n{}\nexpected failures that now pass: {stale:?}",
        unexpected.len(),
        unexpected.join("\n")
    );
}

#[test]
fn draft2020_12_required() {
    assert_suite(
        "suites/json-schema-test-suite/tests/draft2020-12",
        Draft::Draft202012,
        false,
        &[],
    );
}

#[test]
fn draft2019_09_required() {
    assert_suite(
        "suites/json-schema-test-suite/tests/draft2019-09",
        Draft::Draft201909,
        false,
        &[],
    );
}

#[test]
fn draft7_required() {
    assert_suite(
        "suites/json-schema-test-suite/tests/draft7",
        Draft::Draft7,
        false,
        &[],
    );
}

#[test]
fn draft2020_12_optional_format_asserted() {
    assert_suite(
        "suites/json-schema-test-suite/tests/draft2020-12/optional/format",
        Draft::Draft202012,
        true,
        &[],
    );
}

#[test]
fn draft2020_12_optional() {
    assert_suite(
        "suites/json-schema-test-suite/tests/draft2020-12/optional",
        Draft::Draft202012,
        false,
        &[],
    );
}

#[test]
fn draft2019_09_optional() {
    assert_suite(
        "suites/json-schema-test-suite/tests/draft2019-09/optional",
        Draft::Draft201909,
        false,
        &[],
    );
    assert_suite(
        "suites/json-schema-test-suite/tests/draft2019-09/optional/format",
        Draft::Draft201909,
        true,
        &[],
    );
}

#[test]
fn draft7_optional() {
    // Draft-07 lets implementations assert `contentMediaType`/`contentEncoding`; jsongate
    // treats them as annotations in every draft, as 2019-09 and later require.
    assert_suite(
        "suites/json-schema-test-suite/tests/draft7/optional",
        Draft::Draft7,
        false,
        &[
            "content.json / validation of string-encoded content based on media type / an invalid JSON document",
            "content.json / validation of binary string-encoding / an invalid base64 string (% is not a valid character)",
            "content.json / validation of binary-encoded media type documents / a validly-encoded invalid JSON document",
            "content.json / validation of binary-encoded media type documents / an invalid base64 string that is valid JSON",
        ],
    );
    assert_suite(
        "suites/json-schema-test-suite/tests/draft7/optional/format",
        Draft::Draft7,
        true,
        &[],
    );
}

#[test]
fn draft6_required() {
    assert_suite(
        "suites/json-schema-test-suite/tests/draft6",
        Draft::Draft6,
        false,
        &[],
    );
}

#[test]
fn draft4_required() {
    assert_suite(
        "suites/json-schema-test-suite/tests/draft4",
        Draft::Draft4,
        false,
        &[],
    );
}

#[test]
fn draft6_optional() {
    assert_suite(
        "suites/json-schema-test-suite/tests/draft6/optional",
        Draft::Draft6,
        false,
        &[],
    );
    assert_suite(
        "suites/json-schema-test-suite/tests/draft6/optional/format",
        Draft::Draft6,
        true,
        &[],
    );
}

#[test]
fn draft4_optional() {
    assert_suite(
        "suites/json-schema-test-suite/tests/draft4/optional",
        Draft::Draft4,
        false,
        &[],
    );
    assert_suite(
        "suites/json-schema-test-suite/tests/draft4/optional/format",
        Draft::Draft4,
        true,
        &[],
    );
}

/// The drafts before 2019-09 selected by `$schema` alone, as published schemas do: every
/// required test passes with the dialect declared in the root schema instead of named in the
/// options, remote documents included.
#[test]
fn legacy_drafts_selected_by_schema_member() {
    for (dir, draft) in [
        ("draft4", Draft::Draft4),
        ("draft6", Draft::Draft6),
        ("draft7", Draft::Draft7),
    ] {
        assert_suite_as(
            &format!("suites/json-schema-test-suite/tests/{dir}"),
            Dialect::Declared(draft),
            false,
            &[],
        );
    }
}

/// Runs every test of the suite in `dir` through `jsongate check --draft NAME`, the schema
/// and each remote document given as files (`--schema`, `--resource URI=FILE`), the instance
/// on standard input; returns the number of tests and the failures.
fn run_dir_cli(dir: &Path, draft: &str) -> (usize, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let mut docs = Vec::new();
    remotes(
        &data("suites/json-schema-test-suite/remotes"),
        "http://localhost:1234/",
        &mut docs,
    );
    let mut resource_args = Vec::new();
    for (i, (uri, bytes)) in docs.iter().enumerate() {
        let f = tmp.path().join(format!("remote{i}.json"));
        std::fs::write(&f, bytes).unwrap();
        resource_args.push("--resource".to_string());
        resource_args.push(format!("{uri}={}", f.display()));
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let schema_file = tmp.path().join("schema.json");
    let (mut count, mut failures) = (0, Vec::new());
    for file in files {
        let fname = file.file_name().unwrap().to_string_lossy().to_string();
        let cases: Vec<Case> = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        for case in cases {
            std::fs::write(&schema_file, case.schema.get()).unwrap();
            for t in &case.tests {
                count += 1;
                let mut child = Command::new(env!("CARGO_BIN_EXE_jsongate"))
                    .args(["check", "--draft", draft, "--max-depth", "512", "--schema"])
                    .arg(&schema_file)
                    .args(&resource_args)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(t.data.get().as_bytes())
                    .unwrap();
                let out = child.wait_with_output().unwrap();
                let want = i32::from(!t.valid);
                if out.status.code() != Some(want) {
                    failures.push(format!(
                        "{fname} / {} / {}: exit {:?}, expected {want}: {}{}",
                        case.description,
                        t.description,
                        out.status.code(),
                        String::from_utf8_lossy(&out.stdout).trim(),
                        String::from_utf8_lossy(&out.stderr).trim()
                    ));
                }
            }
        }
    }
    (count, failures)
}

/// The required suites of every draft pass through the command line, the dialect named with
/// `--draft` (the suites' schemas carry no `$schema`; their remote documents are given with
/// `--resource`). One process per test: about 5,900 runs.
#[test]
fn suites_through_the_cli_with_draft() {
    for (dir, name) in [
        ("draft4", "4"),
        ("draft6", "6"),
        ("draft7", "7"),
        ("draft2019-09", "2019-09"),
        ("draft2020-12", "2020-12"),
    ] {
        let rel = format!("suites/json-schema-test-suite/tests/{dir}");
        let started = std::time::Instant::now();
        let (count, failures) = run_dir_cli(&data(&rel), name);
        eprintln!(
            "{rel} (jsongate check --draft {name}): {} of {count} tests pass in {:.1?}",
            count - failures.len(),
            started.elapsed()
        );
        assert!(
            failures.is_empty(),
            "{rel}: {count} tests, {} failures:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}
