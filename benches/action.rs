//! The action boundary: decision latency for a typical tool call, and screening throughput.
//!
//! - `action/decide/send_email`: `Policy::decide` on `fixtures/action/calls/send_email.json`
//!   under `fixtures/action/policy.json` with the needed grant (an `allow`: argument schema,
//!   two rules, grants, rate state). The rate state is reset outside the timing every
//!   iteration batch so the limit never trips. Target: microseconds.
//! - `action/decide/traversal`: a `deny path_escape` (schema, then the path rule).
//! - `action/screen/search_1mb`: `action::screen` over the ~1 MB search-results document
//!   (`docgen::search_results`): one scan, every name and string normalised and matched.
//!   Throughput in bytes, so criterion reports MB/s.
//!
//! Before timing, the decisions and the screening result are checked; otherwise the bench
//! panics. Run: `cargo bench --bench action` (or `-- --quick`).

#[macro_use]
mod harness;

use std::hint::black_box;
use std::path::Path;

use criterion::{BatchSize, Criterion, Throughput};
use jsongate::action::{Call, Grants, Policy, RateState, Reason};
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
}

bench_main!(action, 50, 3);
