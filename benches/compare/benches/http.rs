//! The cost of the HTTP layer per request: one in-process call through a `tower` service
//! whose inner service answers a JSON body in 16 KiB frames, the client side collecting the
//! body, on a current-thread tokio runtime. Documents: `docgen::gateway_result` of about
//! 200 B and 64 KB against `benches/schemas/gateway.schema.json`.
//!
//! - `pass_through`: the inner service alone behind `JsonGateLayer::new()` (no rule: frames
//!   are re-wrapped, nothing is checked), the floor any layer pays;
//! - `jsongate_hold` / `jsongate_stream`: the layer with the schema (`Mode::Hold`: body
//!   withheld until the verdict; `Mode::Stream`: frames forwarded as they pass);
//! - `jsongate_hold_limits`: `Mode::Hold` with `Check::Limits` (scanner and limits, no
//!   schema);
//! - `buffer_serde_jsonschema`: what gateways do today, as a layer: collect the body, parse
//!   it into a `serde_json::Value`, validate with `jsonschema` (compiled once);
//! - `scan_only` / `validate_only`: jsongate's scanner and validator on the same bytes held
//!   in memory, without HTTP (the baseline of the "less than 2× the scanner" target).
//!
//! Each variant is checked to return the document before timing. Run (from
//! `benches/compare`): `cargo bench --bench http` (or `-- --quick`).

#[macro_use]
#[path = "../../harness/mod.rs"]
mod harness;

use std::hint::black_box;

use bytes::Bytes;
use criterion::{Criterion, Throughput};
use jsongate::Validator;

#[path = "../../docgen/mod.rs"]
mod docgen;

#[path = "http_parts/mod.rs"]
mod http_parts;
use http_parts::{gateway_schema, layers, roundtrip, Layers};

fn http(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (schema, limits, _) = gateway_schema();
    for (name, len) in [("200b", 120), ("64kb", 64_000)] {
        let doc = Bytes::from(docgen::gateway_result(len));
        let Layers {
            mut pass,
            mut hold,
            mut hold_limits,
            mut stream,
            mut buffered,
        } = layers(&doc);
        rt.block_on(async {
            assert_eq!(roundtrip(&mut pass).await, doc);
            assert_eq!(roundtrip(&mut hold).await, doc);
            assert_eq!(roundtrip(&mut hold_limits).await, doc);
            assert_eq!(roundtrip(&mut stream).await, doc);
            assert_eq!(roundtrip(&mut buffered).await, doc);
        });
        let mut g = c.benchmark_group(format!("http/{name}"));
        g.throughput(Throughput::Bytes(doc.len() as u64));
        g.bench_function("pass_through", |b| {
            b.iter(|| rt.block_on(roundtrip(&mut pass)));
        });
        g.bench_function("jsongate_hold", |b| {
            b.iter(|| rt.block_on(roundtrip(&mut hold)));
        });
        g.bench_function("jsongate_hold_limits", |b| {
            b.iter(|| rt.block_on(roundtrip(&mut hold_limits)));
        });
        g.bench_function("jsongate_stream", |b| {
            b.iter(|| rt.block_on(roundtrip(&mut stream)));
        });
        g.bench_function("buffer_serde_jsonschema", |b| {
            b.iter(|| rt.block_on(roundtrip(&mut buffered)));
        });
        g.bench_function("scan_only", |b| {
            b.iter(|| jsongate::check(black_box(&doc), limits).unwrap());
        });
        let mut v = Validator::new(&schema);
        g.bench_function("validate_only", |b| {
            b.iter(|| v.validate_slice(black_box(&doc), limits).unwrap());
        });
        g.finish();
    }
}

bench_main!(http, 30, 3);
