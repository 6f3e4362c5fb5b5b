//! Decisions per second with the rate limit counted in each local state backend.
//!
//! - `state/decide/memory`, `state/decide/file`: one `Policy::decide` of a rate-limited tool
//!   (one atomic window take per decision) on one thread; the file backend locks, reads,
//!   rewrites (temporary file, fsync, rename, directory fsync) per decision.
//! - `state/decide_4_threads/{memory,file}`: 400 decisions spread over 4 threads sharing one
//!   store, timed as a whole (so the time per element is the shared throughput).
//!
//! The limit is a million calls a second on the wall clock, so it never trips and the
//! window log stays bounded. Each decision is checked to be `allow` before timing. Redis is
//! measured by the integration test `state::redis_throughput_is_measured_and_every_decision_counted_once`
//! (it needs a server). Run: `cargo bench --bench state` (or `-- --quick`).

#[macro_use]
mod harness;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use jsongate::action::{Call, Grants, Policy, RateState, Reason};
use jsongate::json::Value;
use jsongate::state::{FileStore, MemoryStore, Store};

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn state(c: &mut Criterion) {
    let policy = Arc::new(
        Policy::from_slice(
            br#"{"policy":1,"tools":{"w":{"arguments":{"type":"object"},"requires":[],
                "rate_limit":{"calls":1000000,"window_seconds":1}}}}"#,
        )
        .unwrap(),
    );
    let call = Arc::new(Call {
        tool: "w".into(),
        arguments: Value::Object(Vec::new()),
    });
    let session = Arc::new(Grants::new(Vec::<String>::new()));
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<(&str, Arc<dyn Store>)> = vec![
        ("memory", Arc::new(MemoryStore::new())),
        (
            "file",
            Arc::new(FileStore::new(&dir.path().join("state.json"))),
        ),
    ];
    let mut group = c.benchmark_group("state/decide");
    group.throughput(Throughput::Elements(1));
    for (name, store) in &stores {
        let rate = RateState::new().store(Arc::clone(store));
        assert_eq!(
            policy.decide(&call, &session, &rate, now_ms()).reason(),
            Reason::Ok
        );
        group.bench_function(*name, |b| {
            b.iter(|| black_box(policy.decide(black_box(&call), &session, &rate, now_ms())));
        });
    }
    group.finish();

    let mut group = c.benchmark_group("state/decide_4_threads");
    group.throughput(Throughput::Elements(400));
    for (name, store) in &stores {
        let rate = RateState::new().store(Arc::clone(store));
        group.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    std::thread::scope(|s| {
                        for _ in 0..4 {
                            let (policy, call, session, rate) = (&policy, &call, &session, &rate);
                            s.spawn(move || {
                                for _ in 0..100 {
                                    let d = policy.decide(call, session, rate, now_ms());
                                    assert_eq!(d.reason(), Reason::Ok);
                                }
                            });
                        }
                    });
                    total += start.elapsed();
                }
                total
            });
        });
    }
    group.finish();
}

bench_main!(state, 10, 2);
