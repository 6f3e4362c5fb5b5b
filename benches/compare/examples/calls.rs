//! Runs one operation N times, for counting instructions with callgrind (`instructions.sh`
//! runs it with 1 and with N+1 calls and prints the difference per call): the HTTP layer's
//! modes around an in-process tool service (as in `benches/http.rs`), buffer + serde_json +
//! jsonschema, and jsongate's scan and validate alone, on the gateway tool result of about
//! LEN bytes.
//!
//!     cargo run --release --example calls -- MODE LEN N
//!
//! MODE: pass, hold, holdlimits (Hold with `Check::Limits`, no schema), stream, buffered,
//! scanfile (`scanfile PATH N`: a file, scanned N times), doc (prints the document), searchdoc (prints a search-results document of about LEN bytes), scan (a new scanner per call, as `jsongate::check`), scanreuse (one scanner, reset), sonic (sonic-rs's validated skip), validate.

use std::hint::black_box;

use bytes::Bytes;
use jsongate::Validator;

#[path = "../../docgen/mod.rs"]
mod docgen;

#[path = "../benches/http_parts/mod.rs"]
mod http_parts;
use http_parts::{gateway_schema, layers, roundtrip, Layers};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args[1].as_str();
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
    let len: usize = args[2].parse().unwrap();
    let n: usize = args[3].parse().unwrap();
    if mode == "doc" || mode == "searchdoc" {
        // The document itself, for looking at it or feeding it elsewhere.
        use std::io::Write as _;
        let doc = if mode == "doc" {
            docgen::gateway_result(len)
        } else {
            docgen::search_results(len)
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
                scanner.scan_slice(black_box(&doc), &mut jsongate::Ignore).unwrap();
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
