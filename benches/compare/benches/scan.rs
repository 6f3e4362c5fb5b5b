//! Throughput of jsongate's strict scan against other Rust JSON validators/parsers.
//!
//! One criterion group per document (`scan/<doc>`), one benchmark per implementation, so
//! ids read `scan/twitter/jsongate`, `scan/twitter/serde_json_value`, ... Throughput is the
//! document's size in bytes.
//!
//! Documents: the bench corpora (`twitter`, `citm_catalog`, `canada`, vendored in
//! `tests/data/corpora` of the repository) and generated tool-result shapes
//! (`envelope_150b`, `search_1mb`, `logs_50mb`; see `benches/docgen/mod.rs`).
//!
//! What each implementation checks differs; read the numbers with that in mind:
//! - `jsongate`: full strict profile (RFC 8259 + I-JSON), UTF-8 validated, duplicate names
//!   rejected after unescaping, all limits of `Limits::new()` on except `max_bytes`
//!   (lifted so the 50 MB document fits). One `Scanner` reused via `scan_slice`, `Ignore`
//!   sink.
//! - `serde_json_value`: builds and drops a `serde_json::Value` (UTF-8 validated).
//! - `serde_json_ignored`: `serde_json::from_slice::<IgnoredAny>`, a validating skip that
//!   does not check UTF-8 inside skipped strings.
//! - `simd_json_tape`: `simd_json::to_tape_with_buffers` (full parse to a tape, UTF-8
//!   validated), reusing one `Buffers`. simd-json mutates (unescapes into) its input, so
//!   every iteration gets a fresh copy, made outside the timed part (`iter_batched_ref`).
//! - `sonic_rs_ignored`: `sonic_rs::from_slice::<IgnoredAny>`, which validates UTF-8 of
//!   the whole input up front and skips the value with grammar checks.
//! - `jiter_skip`: `Jiter::next_skip` + `finish`; does NOT validate UTF-8 in strings.
//!
//! None of the others reject duplicate names or enforce jsongate's limits.
//!
//! Run all: `cargo bench --bench scan`; briefly: `cargo bench --bench scan -- --quick`;
//! one document: `cargo bench --bench scan -- scan/twitter`.

#[macro_use]
#[path = "../../harness/mod.rs"]
mod harness;

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkGroup, Criterion, SamplingMode, Throughput};
use jsongate::{Ignore, Limits, Outcome, Scanner, UNLIMITED};
use serde::de::IgnoredAny;

#[path = "../../docgen/mod.rs"]
mod docgen;

/// The limits jsongate is benchmarked with: every default on, except the byte limit.
const LIMITS: Limits = Limits::new().max_bytes(UNLIMITED);

fn corpus(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/data/corpora/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read corpus {path}: {e}"))
}

fn documents() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("twitter", corpus("twitter")),
        ("citm_catalog", corpus("citm_catalog")),
        ("canada", corpus("canada")),
        ("envelope_150b", docgen::success_envelope()),
        ("search_1mb", docgen::search_results(1_000_000)),
        ("logs_50mb", docgen::logs(50_000_000)),
    ]
}

/// Every implementation must accept every document, or the comparison is meaningless.
fn sanity_check(name: &str, doc: &[u8]) {
    let mut scanner = Scanner::new(LIMITS);
    assert_eq!(
        scanner
            .scan_slice(doc, &mut Ignore)
            .map_err(|e| e.to_string()),
        Ok(Outcome::Complete),
        "jsongate rejects {name}"
    );
    serde_json::from_slice::<serde_json::Value>(doc)
        .unwrap_or_else(|e| panic!("serde_json rejects {name}: {e}"));
    let mut copy = doc.to_vec();
    simd_json::to_tape(&mut copy).unwrap_or_else(|e| panic!("simd-json rejects {name}: {e}"));
    sonic_rs::from_slice::<IgnoredAny>(doc)
        .unwrap_or_else(|e| panic!("sonic-rs rejects {name}: {e}"));
    let mut jiter = jiter::Jiter::new(doc);
    jiter
        .next_skip()
        .and_then(|()| jiter.finish())
        .unwrap_or_else(|e| panic!("jiter rejects {name}: {e}"));
}

fn bench_document(group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>, doc: &[u8]) {
    let batch = if doc.len() < 64 * 1024 {
        BatchSize::SmallInput
    } else {
        BatchSize::LargeInput
    };

    let mut scanner = Scanner::new(LIMITS);
    group.bench_function("jsongate", |b| {
        b.iter(|| {
            let r = scanner.scan_slice(black_box(doc), &mut Ignore);
            black_box(r.is_ok())
        });
    });

    group.bench_function("serde_json_value", |b| {
        b.iter(|| {
            let v: serde_json::Value = serde_json::from_slice(black_box(doc)).unwrap();
            black_box(v)
        });
    });

    group.bench_function("serde_json_ignored", |b| {
        b.iter(|| serde_json::from_slice::<IgnoredAny>(black_box(doc)).unwrap());
    });

    // simd-json unescapes strings in place, i.e. it mutates its input: each iteration gets
    // its own copy, made by the (untimed) setup. The tape is dropped inside the timed part.
    let mut buffers = simd_json::Buffers::new(doc.len());
    group.bench_function("simd_json_tape", |b| {
        b.iter_batched_ref(
            || doc.to_vec(),
            |input| {
                let tape = simd_json::to_tape_with_buffers(input, &mut buffers).unwrap();
                black_box(&tape);
            },
            batch,
        );
    });

    group.bench_function("sonic_rs_ignored", |b| {
        b.iter(|| sonic_rs::from_slice::<IgnoredAny>(black_box(doc)).unwrap());
    });

    group.bench_function("jiter_skip", |b| {
        b.iter(|| {
            let mut jiter = jiter::Jiter::new(black_box(doc));
            jiter.next_skip().unwrap();
            jiter.finish().unwrap();
        });
    });
}

fn scan(c: &mut Criterion) {
    for (name, doc) in documents() {
        sanity_check(name, &doc);
        let mut group = c.benchmark_group(format!("scan/{name}"));
        group.throughput(Throughput::Bytes(doc.len() as u64));
        if doc.len() > 10_000_000 {
            // One iteration takes tens to hundreds of milliseconds: flat sampling with the
            // minimum sample count keeps the run short.
            group
                .sampling_mode(SamplingMode::Flat)
                .sample_size(10)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(8));
        }
        bench_document(&mut group, &doc);
        group.finish();
    }
}

// Sized for a shared 2-core machine: the whole run takes a few minutes.
bench_main!(scan, 30, 3);
