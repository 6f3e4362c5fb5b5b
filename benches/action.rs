//! The action boundary: decision latency for a typical tool call, and screening throughput.
//!
//! - `action/decide/send_email`: `Policy::decide` on `fixtures/action/calls/send_email.json`
//!   under `fixtures/action/policy.json` with the needed grant (an `allow`: argument schema,
//!   two rules, grants, rate state). The rate state is reset outside the timing every
//!   iteration batch so the limit never trips. Target: microseconds.
//! - `action/decide/traversal`: a `deny path_escape` (schema, then the path rule).
//! - `action/screen/search_1mb`: `action::screen` over the ~1 MB search-results document
//!   (`docgen::search_results`): one scan, every name and string normalised and read by both
//!   stages (phrases and rules, then the learned scorer on the sentences its trigger lexicon
//!   selects — most of this document's snippets, which say "agent", "token" and "response").
//!   Throughput in bytes, so criterion reports MB/s. Target: at least 50 MiB/s.
//! - `action/provenance/record_search_1mb`: `Provenance::record` over the same document,
//!   parsed once outside the timing (what the MCP proxy does per relayed result when its
//!   policy names sinks: every string and number read for identifier-like values, each
//!   digested). Throughput in bytes.
//! - `action/provenance/decide_traced_full`: `Policy::decide_traced` of a `send_money` call
//!   whose sink value is not tracked, against a tracker holding 4,000 values (the cost a sink
//!   adds to a decision; an `allow`).
//!
//! Before timing, the decisions and the screening result are checked; otherwise the bench
//! panics. Run: `cargo bench --bench action` (or `-- --quick`).

#[macro_use]
mod harness;

use std::hint::black_box;
use std::path::Path;

use criterion::{BatchSize, Criterion, Throughput};
use jsongate::action::{Call, Grants, Policy, Provenance, RateState, Reason};
use jsongate::json::Value;
use jsongate::screen::screen;
use jsongate::Limits;

mod docgen;

fn read(rel: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn action(c: &mut Criterion) {
    let policy = Policy::from_slice(&read("fixtures/action/policy.json")).unwrap();
    let session = Grants::new(["send_email", "fs_read"]);
    let mut group = c.benchmark_group("action/decide");
    for (name, want) in [
        ("send_email", Reason::Ok),
        ("traversal", Reason::PathEscape),
    ] {
        let call = Call::parse(
            &read(&format!("fixtures/action/calls/{name}.json")),
            policy.limits(),
        )
        .unwrap();
        let got = policy.decide(&call, &session, &RateState::new(), 0);
        assert_eq!(got.reason(), want);
        group.bench_function(name, |b| {
            b.iter_batched_ref(
                RateState::new,
                |rate| black_box(policy.decide(black_box(&call), &session, rate, 0)),
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();

    let doc = docgen::search_results(1_000_000);
    let findings = screen(&doc, Limits::new()).unwrap();
    assert!(findings.is_empty(), "{findings:?}");
    let mut group = c.benchmark_group("action/screen");
    group.throughput(Throughput::Bytes(doc.len() as u64));
    group.bench_function("search_1mb", |b| {
        b.iter(|| black_box(screen(black_box(&doc), Limits::new()).unwrap()));
    });
    group.finish();

    let tree = Value::parse(&doc, Limits::new()).unwrap();
    let mut probe = Provenance::new();
    probe.record("search", "1", &tree);
    assert!(!probe.is_empty() && !probe.saturated(), "{}", probe.len());
    let mut group = c.benchmark_group("action/provenance");
    group.throughput(Throughput::Bytes(doc.len() as u64));
    group.bench_function("record_search_1mb", |b| {
        b.iter_batched_ref(
            Provenance::new,
            |p| p.record("search", "1", black_box(&tree)),
            BatchSize::LargeInput,
        );
    });
    group.finish();

    let pay = Policy::from_slice(&read("fixtures/action/provenance/policy.json")).unwrap();
    let mut full = Provenance::new();
    for i in 0..40 {
        let text: Vec<String> = (0..100)
            .map(|j| format!("user{}@corp.example", i * 100 + j))
            .collect();
        full.record("read_inbox", &i.to_string(), &Value::String(text.join(" ")));
    }
    assert_eq!((full.len(), full.saturated()), (4000, false));
    let call = Call::parse(
        &read("fixtures/action/provenance/send_money.json"),
        pay.limits(),
    )
    .unwrap();
    let payer = Grants::new(["pay"]);
    assert_eq!(
        pay.decide_traced(&call, &payer, &RateState::new(), 0, &full)
            .reason(),
        Reason::Ok
    );
    let mut group = c.benchmark_group("action/provenance");
    group.bench_function("decide_traced_full", |b| {
        b.iter_batched_ref(
            RateState::new,
            |rate| black_box(pay.decide_traced(black_box(&call), &payer, rate, 0, &full)),
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

bench_main!(action, 50, 3);
