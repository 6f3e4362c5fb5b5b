//! Overhead of the gate (`jsongate::gate`) against the scan alone and schema validation alone,
//! on the same bytes with the same limits.
//!
//! One criterion group per document, three benchmarks each, so ids read
//! `gate/envelope/check`, `gate/envelope/validate`, `gate/envelope/gate`, ... Throughput is
//! the upstream document's size in bytes.
//!
//! Documents and contracts:
//! - `envelope`: the review-status fixture (`fixtures/gate/review-status`): its contract
//!   (`max_bytes` 4096, `max_depth` 4, a closed upstream schema from `review.schema.json`,
//!   a `NOT_FOUND` error shape, two exposed fields, one `equals` check against the request)
//!   and its accepted upstream response `responses/approved.json` (54 bytes). The gate's
//!   output is the small success envelope.
//! - `search_1mb`: the ~1 MB search-results document (`docgen::search_results`) under a
//!   contract written here: the upstream schema `benches/schemas/search_results.schema.json`,
//!   default limits, three exposed fields (`/query`, `/total`, `/results/0/url`) and one
//!   `equals` check binding `query` to the request.
//!
//! Implementations:
//! - `check`: `Scanner::scan_slice` with the contract's limits and an `Ignore` sink (what
//!   `jsongate check` does without a schema): strict JSON, UTF-8, duplicate names, limits.
//! - `validate`: `Validator::validate_slice` with the contract's upstream schema and limits.
//! - `gate`: `Session::run_slice` on one session reused across iterations (steady state;
//!   `Gate::run_slice` would build a fresh session, i.e. fresh validators and selectors,
//!   per call): scan, every upstream and error shape side by side, field selection, the
//!   semantic checks, the envelope built and checked against the envelope schema, SHA-256
//!   of the raw bytes and the audit record. The `Delivery` is dropped inside the timing.
//!
//! Before timing, `check` and `validate` must accept the document and the gate must return
//! the expected success envelope; otherwise the bench panics.
//!
//! Run all: `cargo bench --bench gate`; briefly: `cargo bench --bench gate -- --quick`;
//! one document: `cargo bench --bench gate -- gate/envelope`.

#[macro_use]
mod harness;

use std::hint::black_box;
use std::path::Path;

use criterion::{BenchmarkGroup, Criterion, Throughput};
use jsongate::gate::{Context, Contract, Gate, Request, Timestamp};
use jsongate::{Ignore, Limits, Outcome, Scanner, Schema, Validator};

mod docgen;

fn read(path: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// One benchmarked case: the document, the contract's gate and request, and the same limits
/// and upstream schema for the baselines.
struct Case {
    name: &'static str,
    doc: Vec<u8>,
    gate: Gate,
    request: Request,
    limits: Limits,
    schema: Schema,
    expected: String,
}

/// The review-status fixture with its accepted response.
fn review_status() -> Case {
    let dir = "fixtures/gate/review-status";
    let contract = Contract::from_file(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("{dir}/contract.json")),
    )
    .unwrap();
    Case {
        name: "envelope",
        doc: read(&format!("{dir}/responses/approved.json")),
        gate: Gate::new(&contract).unwrap(),
        request: Request::new(
            "req-1",
            Context::new()
                .value("change_id", "c-42")
                .now(Timestamp::parse_rfc3339("2024-06-01T12:00:00Z").unwrap()),
        ),
        // The contract's "limits": {"max_bytes": 4096, "max_depth": 4}.
        limits: Limits::new().max_bytes(4096).max_depth(4),
        schema: Schema::compile(&read(&format!("{dir}/review.schema.json"))).unwrap(),
        expected: r#"{"tool":"review_status","request_id":"req-1","outcome":"success","data":{"change_id":"c-42","approved":true}}"#.into(),
    }
}

/// A search tool whose contract exposes three fields of the ~1 MB results page.
const SEARCH_CONTRACT: &str = r#"{
  "contract": 1,
  "tool": "web_search",
  "version": "1",
  "limits": {"max_bytes": 16777216},
  "upstream": [{"version": "v1", "schema_file": "search_results.schema.json"}],
  "fields": {
    "query": {"pointer": "/query"},
    "total": {"pointer": "/total"},
    "top_url": {"pointer": "/results/0/url"}
  },
  "checks": [{"check": "equals", "field": "query", "context": "query"}]
}"#;

fn search_1mb() -> Case {
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/schemas");
    let contract = Contract::from_slice(SEARCH_CONTRACT.as_bytes(), &schemas).unwrap();
    let doc = docgen::search_results(1_000_000);
    let (total, top_url) = {
        let v: serde_json::Value = serde_json::from_slice(&doc).unwrap();
        let url = v["results"][0]["url"].as_str().unwrap().to_owned();
        (v["total"].as_u64().unwrap(), url)
    };
    Case {
        name: "search_1mb",
        gate: Gate::new(&contract).unwrap(),
        request: Request::new(
            "req-1",
            Context::new()
                .value(
                    "query",
                    "bounded memory json \"streaming\" parser café 東京",
                )
                .now(Timestamp::parse_rfc3339("2024-06-01T12:00:00Z").unwrap()),
        ),
        // The contract's "limits": {"max_bytes": 16777216}, i.e. every default.
        limits: Limits::new().max_bytes(16_777_216),
        schema: Schema::compile(&read("benches/schemas/search_results.schema.json")).unwrap(),
        expected: format!(
            r#"{{"tool":"web_search","request_id":"req-1","outcome":"success","data":{{"query":"bounded memory json \"streaming\" parser café 東京","total":{total},"top_url":"{top_url}"}}}}"#
        ),
        doc,
    }
}

/// The baselines must accept the document and the gate must succeed, or the comparison is
/// meaningless.
fn sanity_check(case: &Case) {
    let mut scanner = Scanner::new(case.limits);
    assert_eq!(
        scanner
            .scan_slice(&case.doc, &mut Ignore)
            .map_err(|e| e.to_string()),
        Ok(Outcome::Complete),
        "check rejects {}",
        case.name
    );
    let mut validator = Validator::new(&case.schema);
    if let Err(e) = validator.validate_slice(&case.doc, case.limits) {
        panic!("validate rejects {}: {e:?}", case.name);
    }
    let d = case
        .gate
        .session()
        .run_slice(&case.doc, &case.request)
        .unwrap();
    assert_eq!(d.output, case.expected, "gate output for {}", case.name);
    assert!(d.audit.accepted);
}

fn bench_case(group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>, case: &Case) {
    let doc = case.doc.as_slice();

    let mut scanner = Scanner::new(case.limits);
    group.bench_function("check", |b| {
        b.iter(|| {
            let r = scanner.scan_slice(black_box(doc), &mut Ignore);
            black_box(r.is_ok())
        });
    });

    let mut validator = Validator::new(&case.schema);
    group.bench_function("validate", |b| {
        b.iter(|| {
            let r = validator.validate_slice(black_box(doc), case.limits);
            black_box(r.is_ok())
        });
    });

    let mut session = case.gate.session();
    group.bench_function("gate", |b| {
        b.iter(|| {
            let d = session.run_slice(black_box(doc), &case.request).unwrap();
            black_box(d)
        });
    });
}

fn gate(c: &mut Criterion) {
    for case in [review_status(), search_1mb()] {
        sanity_check(&case);
        let mut group = c.benchmark_group(format!("gate/{}", case.name));
        group.throughput(Throughput::Bytes(case.doc.len() as u64));
        bench_case(&mut group, &case);
        group.finish();
    }
}

// Six benchmarks of about 5 s each: the whole run takes well under a minute.
bench_main!(gate, 50, 4);
