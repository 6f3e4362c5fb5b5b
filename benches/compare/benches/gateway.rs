//! Gateway-size documents: what a gateway validates on every tool call. One group per size
//! (`gateway/330b`, `gateway/4kb`, `gateway/64kb`), all the same shape
//! (`docgen::gateway_result`: an MCP `tools/call` response whose `structuredContent` holds
//! closed objects with patterned ids, enums, date-times, URLs and numeric ranges) against
//! `benches/schemas/gateway.schema.json`.
//!
//! Two questions per document, each answered against the peers on the same bytes:
//! - validate: `jsongate` (strict scan + schema in one pass, no tree) against
//!   `serde_json+jsonschema` and `serde_json+boon` (parse into a `Value`, then validate; the
//!   validators compiled once outside the timing), as in `benches/validate.rs`;
//! - check (well-formedness only): `check/jsongate` (strict RFC 8259, UTF-8 validated,
//!   duplicate names rejected, every limit on) against `check/sonic_rs_skip` (validated skip
//!   into `IgnoredAny`), `check/simd_json_tape` (full tape, input copied outside the timing)
//!   and `check/serde_json_value`.
//!
//! Peers are built as the crates' defaults build them, without `-C target-cpu=native`
//! (sonic-rs then uses its portable SIMD path); jsongate picks its SIMD at run time.
//!
//! Run: `cargo bench --bench gateway` (from `benches/compare`); one size:
//! `cargo bench --bench gateway -- gateway/4kb`.

#[macro_use]
#[path = "../../harness/mod.rs"]
mod harness;

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput};
use jsongate::{Ignore, Scanner};
use serde::de::IgnoredAny;

mod peers;
use peers::{bench_case, replace, schema_file, Case, LIMITS};

#[path = "../../docgen/mod.rs"]
mod docgen;

fn cases() -> Vec<Case> {
    [("330b", 200), ("4kb", 4_000), ("64kb", 64_000)]
        .into_iter()
        .map(|(name, len)| {
            let doc = docgen::gateway_result(len);
            Case {
                name,
                schema: schema_file("gateway.schema.json"),
                // The last item's id breaks its pattern.
                mutated: replace(&doc, r#""id":"it-"#, r#""id":"IT-"#, true),
                // Not a date-time, but `format` only annotates everywhere.
                format_only: vec![replace(&doc, "T", "t", false)],
                doc,
            }
        })
        .collect()
}

fn gateway(c: &mut Criterion) {
    for case in cases() {
        let mut group = c.benchmark_group(format!("gateway/{}", case.name));
        group.throughput(Throughput::Bytes(case.doc.len() as u64));
        bench_case(&mut group, &case, "validate/");
        let doc = &case.doc[..];
        let mut scanner = Scanner::new(LIMITS);
        assert!(scanner.scan_slice(doc, &mut Ignore).is_ok());
        group.bench_function("check/jsongate", |b| {
            b.iter(|| scanner.scan_slice(black_box(doc), &mut Ignore).is_ok());
        });
        group.bench_function("check/sonic_rs_skip", |b| {
            b.iter(|| sonic_rs::from_slice::<IgnoredAny>(black_box(doc)).unwrap());
        });
        let mut buffers = simd_json::Buffers::new(doc.len());
        group.bench_function("check/simd_json_tape", |b| {
            b.iter_batched_ref(
                || doc.to_vec(),
                |input| {
                    let tape = simd_json::to_tape_with_buffers(input, &mut buffers).unwrap();
                    black_box(&tape);
                },
                BatchSize::SmallInput,
            );
        });
        group.bench_function("check/serde_json_value", |b| {
            b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(doc)).unwrap());
        });
        group.finish();
    }
}

// Small documents: many iterations per sample; the whole run takes about two minutes.
bench_main!(gateway, 30, 3);
