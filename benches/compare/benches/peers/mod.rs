//! What the comparison benches share: the peers (`serde_json` + `jsonschema`, `serde_json` +
//! `boon`) compiled beside jsongate, the check that every implementation agrees on each
//! document before anything is timed, and the validate benchmarks themselves.
#![allow(dead_code)]

use std::hint::black_box;

use criterion::BenchmarkGroup;
use jsongate::{Limits, Rejection, Schema, Validator, UNLIMITED};
use serde_json::Value;

/// The limits jsongate validates with: every default on, except the byte limit.
pub const LIMITS: Limits = Limits::new().max_bytes(UNLIMITED);

pub fn schema_file(name: &str) -> Vec<u8> {
    let path = format!("{}/../schemas/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read schema {path}: {e}"))
}

pub fn corpus(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/data/corpora/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read corpus {path}: {e}"))
}

/// `doc` with the first (or last) occurrence of `from` replaced by `to`.
pub fn replace(doc: &[u8], from: &str, to: &str, last: bool) -> Vec<u8> {
    let text = std::str::from_utf8(doc).unwrap();
    let at = if last {
        text.rfind(from)
    } else {
        text.find(from)
    };
    let at = at.unwrap_or_else(|| panic!("{from:?} not found"));
    let mut out = String::with_capacity(text.len() + to.len());
    out.push_str(&text[..at]);
    out.push_str(to);
    out.push_str(&text[at + from.len()..]);
    out.into_bytes()
}

/// A benchmarked document with its schema.
pub struct Case {
    pub name: &'static str,
    pub schema: Vec<u8>,
    pub doc: Vec<u8>,
    /// The document with one change that the schema must reject.
    pub mutated: Vec<u8>,
    /// Documents that differ from `doc` only in a `format`, which every implementation
    /// must still accept (format is an annotation everywhere).
    pub format_only: Vec<Vec<u8>>,
}

/// The three implementations, compiled once.
pub struct Validators {
    pub jsongate: Validator,
    pub jsonschema: jsonschema::Validator,
    pub boon: (boon::Schemas, boon::SchemaIndex),
}

impl Validators {
    pub fn new(name: &str, schema: &[u8]) -> Self {
        let ours = Schema::compile(schema)
            .unwrap_or_else(|e| panic!("jsongate rejects the {name} schema: {e}"));
        let value: Value = serde_json::from_slice(schema).unwrap();
        let jsonschema = jsonschema::draft202012::new(&value)
            .unwrap_or_else(|e| panic!("jsonschema rejects the {name} schema: {e}"));
        let mut schemas = boon::Schemas::new();
        let mut boon_compiler = boon::Compiler::new();
        boon_compiler.set_default_draft(boon::Draft::V2020_12);
        let loc = "file:///benches/schemas/schema.json";
        boon_compiler.add_resource(loc, value).unwrap();
        let index = boon_compiler
            .compile(loc, &mut schemas)
            .unwrap_or_else(|e| panic!("boon rejects the {name} schema: {e}"));
        Validators {
            jsongate: Validator::new(&ours),
            jsonschema,
            boon: (schemas, index),
        }
    }

    /// The verdicts of jsongate, `serde_json` + `jsonschema` and `serde_json` + `boon`.
    pub fn verdicts(&mut self, doc: &[u8]) -> [bool; 3] {
        let ours = match self.jsongate.validate_slice(doc, LIMITS) {
            Ok(()) => true,
            Err(Rejection::Violation(_)) => false,
            Err(Rejection::Error(e)) => panic!("jsongate: not a schema verdict: {e}"),
        };
        let value: Value = serde_json::from_slice(doc).unwrap();
        [
            ours,
            self.jsonschema.is_valid(&value),
            self.boon.0.validate(&value, self.boon.1).is_ok(),
        ]
    }
}

/// Every implementation must accept the document and its format-only variants and reject
/// the mutated one, or the comparison is meaningless.
pub fn sanity_check(case: &Case, v: &mut Validators) {
    let names = ["jsongate", "serde_json+jsonschema", "serde_json+boon"];
    for (doc, what, expected) in [
        (&case.doc, "the document", true),
        (&case.mutated, "the mutated document", false),
    ]
    .into_iter()
    .chain(
        case.format_only
            .iter()
            .map(|d| (d, "a format-only variant", true)),
    ) {
        for (name, got) in names.iter().zip(v.verdicts(doc)) {
            assert_eq!(
                got,
                expected,
                "{name} {} {what} of {}",
                if got { "accepts" } else { "rejects" },
                case.name
            );
        }
    }
}

/// Benchmarks jsongate's validation of `case` against the peers', each id prefixed with
/// `prefix` (`""` in `validate/<doc>` groups, `"validate/"` in `gateway/<size>`).
pub fn bench_case(
    group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    case: &Case,
    prefix: &str,
) {
    let mut v = Validators::new(case.name, &case.schema);
    sanity_check(case, &mut v);
    let doc = &case.doc[..];

    let mut validator = v.jsongate;
    group.bench_function(format!("{prefix}jsongate"), |b| {
        b.iter(|| validator.validate_slice(black_box(doc), LIMITS).is_ok());
    });

    let jsonschema = &v.jsonschema;
    group.bench_function(format!("{prefix}serde_json+jsonschema"), |b| {
        b.iter(|| {
            let value: Value = serde_json::from_slice(black_box(doc)).unwrap();
            jsonschema.is_valid(&value)
        });
    });

    let (schemas, index) = &v.boon;
    group.bench_function(format!("{prefix}serde_json+boon"), |b| {
        b.iter(|| {
            let value: Value = serde_json::from_slice(black_box(doc)).unwrap();
            schemas.validate(&value, *index).is_ok()
        });
    });

    let value: Value = serde_json::from_slice(doc).unwrap();
    group.bench_function(format!("{prefix}jsonschema_prebuilt_value"), |b| {
        b.iter(|| jsonschema.is_valid(black_box(&value)));
    });
}
