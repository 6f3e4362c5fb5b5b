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
//! - typed (the data as a Rust type, `Response` below, with strings borrowed from the input):
//!   `typed/jsongate_from_slice` (validated and deserialized from one read of the bytes,
//!   `jsongate::from_slice_with` with a kept tape) against
//!   `typed/serde_json_value+jsonschema+from_slice` (what a gateway does without jsongate: a
//!   `Value` for `jsonschema`, then `serde_json::from_slice::<Response>`) and
//!   `typed/serde_json_from_slice` (deserializing alone, nothing validated: the floor).
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
use serde::Deserialize;

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

// The gateway document as a Rust type (`docgen::gateway_result`'s shape).
#[derive(Deserialize, PartialEq, Debug)]
struct Item<'a> {
    id: &'a str,
    kind: &'a str,
    title: &'a str,
    url: &'a str,
    updated: &'a str,
    score: f64,
    owner: &'a str,
    size: u64,
}

#[derive(Deserialize, PartialEq, Debug)]
struct Structured<'a> {
    #[serde(borrow)]
    items: Vec<Item<'a>>,
    total: u64,
    cursor: Option<&'a str>,
}

#[derive(Deserialize, PartialEq, Debug)]
struct Content<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    text: &'a str,
}

#[derive(Deserialize, PartialEq, Debug)]
struct CallResult<'a> {
    #[serde(borrow)]
    content: Vec<Content<'a>>,
    #[serde(rename = "structuredContent", borrow)]
    structured: Structured<'a>,
    #[serde(rename = "isError")]
    is_error: bool,
}

#[derive(Deserialize, PartialEq, Debug)]
struct Response<'a> {
    jsonrpc: &'a str,
    id: u64,
    #[serde(borrow)]
    result: CallResult<'a>,
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

        let schema = jsongate::Schema::compile(&case.schema).unwrap();
        let mut validator = jsongate::Validator::new(&schema);
        let mut tape = jsongate::Tape::new();
        let ours: Response =
            jsongate::from_slice_with(&mut validator, &mut tape, doc, LIMITS).unwrap();
        assert_eq!(ours, serde_json::from_slice::<Response>(doc).unwrap());
        assert!(jsongate::from_slice::<Response>(&mut validator, &case.mutated, LIMITS).is_err());
        group.bench_function("typed/jsongate_from_slice", |b| {
            b.iter(|| {
                jsongate::from_slice_with::<Response>(
                    &mut validator,
                    &mut tape,
                    black_box(doc),
                    LIMITS,
                )
                .unwrap()
                .result
                .structured
                .total
            });
        });
        let value: serde_json::Value = serde_json::from_slice(&case.schema).unwrap();
        let jsonschema = jsonschema::draft202012::new(&value).unwrap();
        group.bench_function("typed/serde_json_value+jsonschema+from_slice", |b| {
            b.iter(|| {
                let value: serde_json::Value = serde_json::from_slice(black_box(doc)).unwrap();
                assert!(jsonschema.is_valid(&value));
                serde_json::from_slice::<Response>(black_box(doc))
                    .unwrap()
                    .result
                    .structured
                    .total
            });
        });
        group.bench_function("typed/serde_json_from_slice", |b| {
            b.iter(|| {
                serde_json::from_slice::<Response>(black_box(doc))
                    .unwrap()
                    .result
                    .structured
                    .total
            });
        });
        group.finish();
    }
}

// Small documents: many iterations per sample; the whole run takes about two minutes.
bench_main!(gateway, 30, 3);
