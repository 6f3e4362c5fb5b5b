//! The cost of tool-definition integrity per listing: a 100-tool `tools/list` page (each
//! tool with a title, a description, an `inputSchema` of four constrained properties, an
//! `outputSchema` and annotations, about 1 KB), every tool read with the strict scanner,
//! canonicalised and hashed (`canonical_sha256`), and the same plus screening of every
//! string of every definition (`canonical_sha256_screen`, what the relay does for each
//! listing page before it takes its state lock).
//!
//! Before timing, each tool is checked to hash the same when listed with its members in
//! another order; otherwise the bench panics. Run: `cargo bench --bench pin` (or
//! `-- --quick`).

#[macro_use]
mod harness;

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use jsongate::mcp::pin::Definition;
use jsongate::Limits;

fn tool(i: usize) -> String {
    format!(
        r#"{{"name":"tool_{i}","title":"Tool number {i}","description":"Looks up records of kind {i} in the inventory and returns the matching rows, newest first. Use it when the user asks about stock levels.","inputSchema":{{"type":"object","additionalProperties":false,"required":["query"],"properties":{{"query":{{"type":"string","maxLength":256,"description":"What to look for."}},"limit":{{"type":"integer","minimum":1,"maximum":100,"default":10}},"order":{{"enum":["newest","oldest","relevance"]}},"since":{{"type":"string","format":"date-time"}}}}}},"outputSchema":{{"type":"object","required":["rows"],"properties":{{"rows":{{"type":"array","maxItems":100,"items":{{"type":"object","properties":{{"id":{{"type":"string"}},"count":{{"type":"integer"}}}}}}}},"total":{{"type":"integer"}}}}}},"annotations":{{"readOnlyHint":true,"openWorldHint":false}}}}"#
    )
}

fn pin(c: &mut Criterion) {
    let tools: Vec<String> = (0..100).map(tool).collect();
    let bytes: usize = tools.iter().map(String::len).sum();
    // The same definition, members reordered, hashes the same.
    let reordered = tools[7].replacen(
        r#"{"name":"tool_7","#,
        r#"{"annotations":{"openWorldHint":false,"readOnlyHint":true},"name":"tool_7","#,
        1,
    );
    let reordered = reordered.replacen(
        r#","annotations":{"readOnlyHint":true,"openWorldHint":false}"#,
        "",
        1,
    );
    let a = Definition::from_slice(tools[7].as_bytes(), Limits::new()).unwrap();
    let b = Definition::from_slice(reordered.as_bytes(), Limits::new()).unwrap();
    assert_eq!(a.sha256(), b.sha256());
    assert!(a.screen().is_empty());
    let mut group = c.benchmark_group("pin/listing_100");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("canonical_sha256", |b| {
        b.iter(|| {
            for t in &tools {
                black_box(Definition::from_slice(t.as_bytes(), Limits::new()).unwrap());
            }
        });
    });
    group.bench_function("canonical_sha256_screen", |b| {
        b.iter(|| {
            for t in &tools {
                let d = Definition::from_slice(t.as_bytes(), Limits::new()).unwrap();
                black_box(d.screen());
            }
        });
    });
    group.finish();
}

bench_main!(pin, 30, 3);
