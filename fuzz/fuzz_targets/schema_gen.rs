//! Generated hostile schemas (`gen::document`) against generated instances: compiling and
//! validating must each stay within time bounds that follow from the compile and evaluation
//! budgets, whatever the shape; a compile failure must be a typed error, never a panic.
#![no_main]
use std::time::{Duration, Instant};

use jsongate::{Limits, Schema, Validator};
use libfuzzer_sys::fuzz_target;

#[path = "gen/mod.rs"]
mod gen;

/// Generous next to what the budgets allow (milliseconds), even under the sanitizer.
const BOUND: Duration = Duration::from_secs(2);

fuzz_target!(|data: &[u8]| {
    let mut b = gen::Bytes(data);
    let schema = gen::document(&mut b);
    let mut doc = String::new();
    gen::instance(&mut b, 4, &mut doc);
    let t = Instant::now();
    let compiled = Schema::options()
        .max_schema_bytes(256 * 1024)
        .max_compile_steps(500_000)
        .eval_budget(200_000)
        .compile(schema.as_bytes());
    let took = t.elapsed();
    assert!(
        took < BOUND,
        "compile took {took:?} ({} bytes)",
        schema.len()
    );
    let Ok(compiled) = compiled else { return };
    let t = Instant::now();
    let _ = Validator::new(&compiled).validate_slice(doc.as_bytes(), Limits::new());
    let took = t.elapsed();
    assert!(
        took < BOUND,
        "validate took {took:?} ({} + {} bytes)",
        schema.len(),
        doc.len()
    );
});
