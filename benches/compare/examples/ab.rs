//! Quick same-run comparison for development on a noisy machine: each implementation is
//! timed in rounds of about 5 ms, taken in turn with the others, and the fastest round
//! counts (a
//! neighbour on a shared machine only ever slows a round down). Prints nanoseconds per
//! document and the ratios the tables of docs/reference/benchmarks.md report. The criterion benches
//! (`benches/{gateway,scan,validate}.rs`) remain the published measurement.
//!
//!     cargo run --release --example ab -- [ROUNDS]
//!
//! Documents: the gateway shapes of 330 B, 4 KB and 64 KB (`docgen::gateway_result`,
//! validated against `benches/schemas/gateway.schema.json`), the envelope, and the bench
//! corpora of `tests/data/corpora` (scan only).

use std::hint::black_box;
use std::time::{Duration, Instant};

use jsongate::{Ignore, Limits, Scanner, Schema, Validator, UNLIMITED};
use serde::de::IgnoredAny;

#[path = "../../docgen/mod.rs"]
mod docgen;

const LIMITS: Limits = Limits::new().max_bytes(UNLIMITED);

/// Nanoseconds per call of each of `fs`: rounds of about 5 ms, taken in turn, `rounds`
/// times; the fastest round of each counts.
fn best(rounds: usize, fs: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let mut per_round = Vec::new();
    // The first runs of a process are slow on some machines (clock ramp-up): warm up.
    let t = Instant::now();
    while t.elapsed() < Duration::from_millis(100) {
        for f in fs.iter_mut() {
            f();
        }
    }
    for f in fs.iter_mut() {
        let t = Instant::now();
        let mut n = 0u64;
        while t.elapsed() < Duration::from_millis(5) {
            f();
            n += 1;
        }
        per_round.push(n.max(1));
    }
    let mut min = vec![f64::MAX; fs.len()];
    for _ in 0..rounds {
        for (i, f) in fs.iter_mut().enumerate() {
            let t = Instant::now();
            for _ in 0..per_round[i] {
                f();
            }
            min[i] = min[i].min(t.elapsed().as_nanos() as f64 / per_round[i] as f64);
        }
    }
    min
}

fn read(path: &str) -> Vec<u8> {
    let full = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(15, |a| a.parse().expect("ROUNDS is a number"));
    let schema_text = read("../schemas/gateway.schema.json");
    let schema = Schema::compile(&schema_text).unwrap();
    let value: serde_json::Value = serde_json::from_slice(&schema_text).unwrap();
    let peer = jsonschema::draft202012::new(&value).unwrap();
    let mut v = Validator::new(&schema);
    let mut scanner = Scanner::new(LIMITS);

    println!(
        "{:<14} {:>10} {:>10} {:>7} | {:>10} {:>10} {:>7}",
        "document", "validate", "serde+js", "ratio", "check", "sonic-rs", "ratio"
    );
    for (name, len) in [
        ("gateway 330b", 200),
        ("gateway 4kb", 4_000),
        ("gateway 64kb", 64_000),
    ] {
        let doc = docgen::gateway_result(len);
        assert!(v.validate_slice(&doc, LIMITS).is_ok());
        let times = best(
            rounds,
            &mut [
                &mut || {
                    black_box(v.validate_slice(black_box(&doc), LIMITS).is_ok());
                },
                &mut || {
                    let x: serde_json::Value = serde_json::from_slice(black_box(&doc)).unwrap();
                    black_box(peer.is_valid(&x));
                },
                &mut || {
                    black_box(scanner.scan_slice(black_box(&doc), &mut Ignore).is_ok());
                },
                &mut || {
                    black_box(sonic_rs::from_slice::<IgnoredAny>(black_box(&doc)).is_ok());
                },
            ],
        );
        println!(
            "{name:<14} {:>10.0} {:>10.0} {:>6.2}x | {:>10.0} {:>10.0} {:>6.2}x",
            times[0],
            times[1],
            times[1] / times[0],
            times[2],
            times[3],
            times[3] / times[2]
        );
    }
    let corpora = [
        ("twitter", read("../../tests/data/corpora/twitter.json")),
        (
            "citm_catalog",
            read("../../tests/data/corpora/citm_catalog.json"),
        ),
        ("canada", read("../../tests/data/corpora/canada.json")),
        ("envelope", docgen::success_envelope()),
        ("search", docgen::search_results(1 << 20)),
    ];
    for (name, doc) in corpora {
        let times = best(
            rounds,
            &mut [
                &mut || {
                    black_box(scanner.scan_slice(black_box(&doc), &mut Ignore).is_ok());
                },
                &mut || {
                    black_box(sonic_rs::from_slice::<IgnoredAny>(black_box(&doc)).is_ok());
                },
            ],
        );
        println!(
            "{name:<14} {:>10} {:>10} {:>7} | {:>10.0} {:>10.0} {:>6.2}x",
            "",
            "",
            "",
            times[0],
            times[1],
            times[1] / times[0]
        );
    }
}
