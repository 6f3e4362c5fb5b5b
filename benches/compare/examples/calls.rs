//! Runs one operation N times, for counting instructions with callgrind (`instructions.sh`
//! runs it with 1 and with N+1 calls and prints the difference per call): the HTTP layer's
//! modes around an in-process tool service (as in `benches/http.rs`), buffer + serde_json +
//! jsonschema, and jsongate's scan and validate alone, on the gateway tool result of about
//! LEN bytes.
//!
//!     cargo run --release --example calls -- MODE LEN N
//!
//! MODE, on the gateway document of about LEN bytes:
//! - pass, hold, holdlimits (`Hold` with `Check::Limits`, no schema), stream, buffered: the
//!   HTTP layer's modes;
//! - scan (a new scanner per call, as `jsongate::check`), scanreuse (one scanner, reset),
//!   sonic (sonic-rs's validated skip), validate;
//! - doc, searchdoc, logsdoc: print the gateway, search-results or log document of about LEN
//!   bytes (N is ignored).
//!
//! Modes with other arguments:
//! - `bench NAME/validate N` or `bench NAME/scan N`: a bench document (NAME one of envelope,
//!   search, citm, logs) validated against its schema, or scanned;
//! - `scanfile PATH N`: a file, scanned N times;
//! - `serdefile SCHEMA PATH`: the file read, parsed into a `serde_json::Value` and validated
//!   with `jsonschema` once, the verdict printed (for `whole.sh`).

use std::hint::black_box;

use bytes::Bytes;
use jsongate::Validator;

#[path = "../../docgen/mod.rs"]
mod docgen;

#[path = "../benches/http_parts/mod.rs"]
mod http_parts;
use http_parts::{gateway_schema, layers, roundtrip, Layers};

/// A bench document and its schema, by name (`envelope`, `search`, `citm`, `logs`, as in
/// `benches/validate.rs`; logs at 5 MB), with a `/validate` or `/scan` suffix.
fn bench_document(name: &str) -> (Vec<u8>, Vec<u8>) {
    let schema =
        |f: &str| std::fs::read(format!("{}/../schemas/{f}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    match name.split('/').next().unwrap_or("") {
        "envelope" => (docgen::success_envelope(), schema("envelope.schema.json")),
        "search" => (
            docgen::search_results(1_000_000),
            schema("search_results.schema.json"),
        ),
        "citm" => (
            std::fs::read(format!(
                "{}/../../tests/data/corpora/citm_catalog.json",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap(),
            schema("citm_catalog.schema.json"),
        ),
        "logs" => (docgen::logs(5_000_000), schema("logs.schema.json")),
        other => panic!("no bench document {other}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args[1].as_str();
    if mode == "bench" {
        // One of the bench documents (`bench NAME N`), validated against its schema and
        // scanned, N times each: `validate` and `scan` are told apart by the second word of
        // NAME (`envelope/validate`, `logs/scan`).
        let (doc, schema) = bench_document(&args[2]);
        let n: usize = args[3].parse().unwrap();
        let limits = jsongate::Limits::new().max_bytes(u64::MAX);
        let schema = jsongate::Schema::compile(&schema).unwrap();
        let mut v = Validator::new(&schema);
        let mut scanner = jsongate::Scanner::new(limits);
        let scan = args[2].ends_with("/scan");
        for _ in 0..n {
            if scan {
                scanner
                    .scan_slice(black_box(&doc), &mut jsongate::Ignore)
                    .unwrap();
            } else {
                v.validate_slice(black_box(&doc), limits).unwrap();
            }
        }
        println!("{}", doc.len());
        return;
    }
    if mode == "typed" {
        // The gateway document validated and deserialized in one read (`typed LEN N`):
        // `jsongate::from_slice_with` into an ignored value, to count the tape's cost.
        let len: usize = args[2].parse().unwrap();
        let n: usize = args[3].parse().unwrap();
        let doc = docgen::gateway_result(len);
        let schema = gateway_schema().0;
        let mut v = Validator::new(&schema);
        let mut tape = jsongate::Tape::new();
        let limits = jsongate::Limits::new().max_bytes(u64::MAX);
        for _ in 0..n {
            jsongate::from_slice_with::<serde_json::Value>(&mut v, &mut tape, black_box(&doc), limits)
                .unwrap();
        }
        println!("{}", doc.len());
        return;
    }
    if mode == "scanfile" {
        // A file's scan instead of a generated document: `scanfile PATH N`.
        let doc = std::fs::read(&args[2]).unwrap();
        let n: usize = args[3].parse().unwrap();
        let mut scanner = jsongate::Scanner::new(jsongate::Limits::new().max_bytes(u64::MAX));
        for _ in 0..n {
            scanner
                .scan_slice(black_box(&doc), &mut jsongate::Ignore)
                .unwrap();
        }
        println!("{}", doc.len());
        return;
    }
    if mode == "serdefile" {
        // What a parse-then-validate gateway does with a body: `serdefile SCHEMA PATH`.
        let schema: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&args[2]).unwrap()).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let doc = std::fs::read(&args[3]).unwrap();
        let valid =
            serde_json::from_slice::<serde_json::Value>(&doc).is_ok_and(|v| validator.is_valid(&v));
        println!("{}", if valid { "valid" } else { "invalid" });
        return;
    }
    let len: usize = args[2].parse().unwrap();
    let n: usize = args[3].parse().unwrap();
    if mode == "doc" || mode == "searchdoc" || mode == "logsdoc" {
        // The document itself, for looking at it or feeding it elsewhere.
        use std::io::Write as _;
        let doc = match mode {
            "doc" => docgen::gateway_result(len),
            "logsdoc" => docgen::logs(len),
            _ => docgen::search_results(len),
        };
        std::io::stdout().write_all(&doc).unwrap();
        return;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (schema, limits, _) = gateway_schema();
    let doc = Bytes::from(docgen::gateway_result(len));
    let Layers {
        mut pass,
        mut hold,
        mut hold_limits,
        mut stream,
        mut buffered,
    } = layers(&doc);
    let mut v = Validator::new(&schema);
    let mut scanner = jsongate::Scanner::new(limits);
    let mut total = 0usize;
    for _ in 0..n {
        total += match mode {
            "pass" => rt.block_on(roundtrip(&mut pass)).len(),
            "hold" => rt.block_on(roundtrip(&mut hold)).len(),
            "holdlimits" => rt.block_on(roundtrip(&mut hold_limits)).len(),
            "stream" => rt.block_on(roundtrip(&mut stream)).len(),
            "buffered" => rt.block_on(roundtrip(&mut buffered)).len(),
            "scan" => {
                jsongate::check(black_box(&doc), limits).unwrap();
                doc.len()
            }
            "sonic" => {
                // The peer's validated skip, for comparing instruction counts.
                let r = sonic_rs::from_slice::<serde::de::IgnoredAny>(black_box(&doc));
                assert!(r.is_ok());
                doc.len()
            }
            "scanreuse" => {
                scanner
                    .scan_slice(black_box(&doc), &mut jsongate::Ignore)
                    .unwrap();
                doc.len()
            }
            "validate" => {
                v.validate_slice(black_box(&doc), limits).unwrap();
                doc.len()
            }
            _ => panic!(),
        };
    }
    println!("{total} {}", doc.len());
}
