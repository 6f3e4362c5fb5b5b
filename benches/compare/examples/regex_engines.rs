//! Could a well-kept crate replace jsongate's own ECMA-262 matching (its translation to the
//! `regex` crate plus a bounded backtracker)? This compares three engines on the same
//! patterns:
//!
//! - **jsongate**: a `{"pattern": …}` schema, compiled and validated by jsongate;
//! - **regress** (an ECMA-262 engine, Unicode mode): `Regex::with_flags(p, "u")`;
//! - **fancy-regex** (Rust syntax with backtracking extensions and a backtrack limit):
//!   `RegexBuilder::new(p).backtrack_limit(1_000_000)`.
//!
//! Conformance: every `pattern` test on a string in the official suite's `pattern.json`,
//! `optional/ecmascript-regex.json` and `optional/non-bmp-regex.json` (draft 2020-12): the
//! engine must compile the pattern and give the suite's verdict. ReDoS: classic catastrophic
//! patterns on growing inputs, timing compile + one match in a child process killed after 2 s.
//!
//!     cargo run --release --example regex_engines      (from benches/compare)

use std::time::{Duration, Instant};

use jsongate::{Limits, Schema, Validator};
use serde_json::Value;

const SUITE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/data/suites/json-schema-test-suite/tests/draft2020-12/"
);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Verdict {
    Match(bool),
    /// The engine refused the pattern.
    NoCompile,
    /// The engine gave up on the search (a step or backtrack limit).
    GaveUp,
}

fn jsongate(pattern: &str, text: &str) -> Verdict {
    let schema = serde_json::json!({ "pattern": pattern }).to_string();
    let Ok(schema) = Schema::compile(schema.as_bytes()) else {
        return Verdict::NoCompile;
    };
    let doc = serde_json::to_vec(text).unwrap();
    match Validator::new(&schema).validate_slice(&doc, Limits::new()) {
        Ok(()) => Verdict::Match(true),
        Err(e) if format!("{e:?}").contains("udget") => Verdict::GaveUp,
        Err(_) => Verdict::Match(false),
    }
}

fn regress(pattern: &str, text: &str) -> Verdict {
    match regress::Regex::with_flags(pattern, "u") {
        Ok(re) => Verdict::Match(re.find(text).is_some()),
        Err(_) => Verdict::NoCompile,
    }
}

fn fancy(pattern: &str, text: &str) -> Verdict {
    match fancy_regex::RegexBuilder::new(pattern)
        .backtrack_limit(1_000_000)
        .build()
    {
        Ok(re) => match re.is_match(text) {
            Ok(m) => Verdict::Match(m),
            Err(_) => Verdict::GaveUp,
        },
        Err(_) => Verdict::NoCompile,
    }
}

type Engine = (&'static str, fn(&str, &str) -> Verdict);
const ENGINES: [Engine; 3] = [
    ("jsongate", jsongate),
    ("regress", regress),
    ("fancy-regex", fancy),
];

fn conformance() {
    let mut cases = Vec::new();
    for file in [
        "pattern.json",
        "optional/ecmascript-regex.json",
        "optional/non-bmp-regex.json",
    ] {
        let path = format!("{SUITE}{file}");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("{path}: {e} (the suite is vendored under tests/data/suites in the repository)")
        });
        let groups: Value = serde_json::from_str(&text).unwrap();
        for g in groups.as_array().unwrap() {
            let Some(p) = g["schema"].get("pattern").and_then(Value::as_str) else {
                continue;
            };
            for t in g["tests"].as_array().unwrap() {
                if let Some(s) = t["data"].as_str() {
                    cases.push((p.to_owned(), s.to_owned(), t["valid"].as_bool().unwrap()));
                }
            }
        }
    }
    println!("conformance: {} pattern tests on strings", cases.len());
    for (name, engine) in ENGINES {
        let mut wrong = Vec::new();
        for (p, s, valid) in &cases {
            let v = engine(p, s);
            if v != Verdict::Match(*valid) {
                wrong.push(format!("{p:?} on {s:?}: {v:?}, want {valid}"));
            }
        }
        println!(
            "  {name:12} {} / {} right",
            cases.len() - wrong.len(),
            cases.len()
        );
        for w in wrong.iter().take(6) {
            println!("      {w}");
        }
    }
}

/// A pattern and its input of size `n`.
type Case = (&'static str, fn(usize) -> String);

/// Catastrophic patterns and their inputs.
const REDOS: [Case; 5] = [
    ("^(a+)+$", |n| "a".repeat(n) + "!"),
    ("^(a|a)*$", |n| "a".repeat(n) + "!"),
    ("^(a|aa)+$", |n| "a".repeat(n) + "!"),
    ("(x+x+)+y", |n| "x".repeat(n)),
    (r"^(\w+)\s\1(?=!)", |n| {
        "ab".repeat(n) + " " + &"ab".repeat(n)
    }),
];

/// One ReDoS match in this process: `one ENGINE CASE N` prints the time or the verdict.
fn one(engine: &str, case: usize, n: usize) {
    let (_, f) = ENGINES.iter().find(|(name, _)| *name == engine).unwrap();
    let (p, input) = REDOS[case];
    let text = input(n);
    // Once on an empty input first, so one-time set-up (jsongate's meta-schemas) is not
    // counted; what is timed is compiling the pattern and one search.
    f(p, "");
    let t = Instant::now();
    let v = f(p, &text);
    let took = t.elapsed();
    match v {
        Verdict::Match(_) => println!("{took:.1?}"),
        other => println!("{other:?} after {took:.1?}"),
    }
}

/// Each match runs in a child process, killed after 2 s (a catastrophic search cannot be
/// interrupted in-process); an engine is dropped from a case after its first timeout.
fn redos() {
    let me = std::env::current_exe().unwrap();
    println!("ReDoS: time of one match (or the verdict when an engine gives up), each in its own process");
    for (case, (p, _)) in REDOS.iter().enumerate() {
        println!("  {p}");
        for (name, _) in ENGINES {
            let mut line = format!("    {name:12}");
            for n in [16, 20, 24, 28, 1000, 100_000] {
                let mut child = std::process::Command::new(&me)
                    .args(["one", name, &case.to_string(), &n.to_string()])
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .unwrap();
                let start = Instant::now();
                let done = loop {
                    if child.try_wait().unwrap().is_some() {
                        break true;
                    }
                    if start.elapsed() > Duration::from_secs(2) {
                        let _ = child.kill();
                        let _ = child.wait();
                        break false;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                };
                if !done {
                    line.push_str(&format!(" n={n}: > 2 s (killed)"));
                    break;
                }
                let mut out = String::new();
                std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
                line.push_str(&format!(" n={n}: {:>10}", out.trim()));
            }
            println!("{line}");
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("one") {
        return one(&args[2], args[3].parse().unwrap(), args[4].parse().unwrap());
    }
    conformance();
    redos();
}
