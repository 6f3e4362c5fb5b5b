//! Hostile schemas: compile budgets and the evaluation budget.
//!
//! In the MCP proxy the server writes the schema as well as the document, so a schema is as
//! untrusted as the data. Each test below pins one way a schema used to stall the engine:
//! compiling in super-linear time, or evaluating work the budget did not count. The time
//! guards are generous (each case now takes milliseconds); they fail only if the super-linear
//! or uncounted path comes back.

use std::time::{Duration, Instant};

use jsongate::{
    CompileBudget, CompileErrorKind, ErrorKind, Limits, Rejection, Schema, SchemaOptions,
    Validator, UNLIMITED,
};

use crate::memory::docgen;

fn budget_error(schema: &Schema, doc: &[u8], limits: Limits) -> jsongate::Error {
    match Validator::new(schema).validate_slice(doc, limits) {
        Err(Rejection::Error(e)) if matches!(e.kind(), ErrorKind::BudgetExceeded { .. }) => e,
        other => panic!("expected budget_exceeded, got {other:?}"),
    }
}

/// Runs `f`, failing if it takes longer than `limit`.
fn within<T>(limit: Duration, what: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    let took = t.elapsed();
    assert!(took < limit, "{what} took {took:?} (limit {limit:?})");
    out
}

fn ref_chain(n: usize) -> Vec<u8> {
    let links: Vec<String> = (0..n)
        .map(|i| format!(r##""d{i}":{{"$ref":"#/$defs/d{}"}}"##, i + 1))
        .collect();
    let defs = links.join(",");
    format!(r##"{{"$ref":"#/$defs/d0","$defs":{{{defs},"d{n}":{{"type":"integer"}}}}}}"##)
        .into_bytes()
}

/// `n` resources, each declaring `$dynamicAnchor: x` and using `$dynamicRef: #x`.
fn dynamic_anchors(n: usize) -> Vec<u8> {
    let resources: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r##""r{i}":{{"$id":"http://example.com/r{i}","$dynamicAnchor":"x","properties":{{"a":{{"$dynamicRef":"#x"}}}}}}"##
            )
        })
        .collect();
    let defs = resources.join(",");
    format!(r##"{{"$dynamicAnchor":"x","properties":{{"a":{{"$dynamicRef":"#x"}}}},"$defs":{{{defs}}}}}"##)
        .into_bytes()
}

/// A 4,000-link `$ref` chain took 26 s to compile (cubic: every hop of every edge copied the
/// joined keyword path), and 30,000 links reached 1.3 GB.
#[test]
fn ref_chain_compiles_in_linear_time() {
    let opts = SchemaOptions::new().max_ref_depth(UNLIMITED);
    let schema = within(Duration::from_secs(5), "30,000-link chain", || {
        opts.compile(&ref_chain(30_000)).unwrap()
    });
    let mut v = Validator::new(&schema);
    assert!(v.validate_slice(b"7", Limits::new()).is_ok());
    assert!(v.validate_slice(b"\"7\"", Limits::new()).is_err());
}

/// The default `max_ref_depth` refuses such chains outright, with a typed error.
#[test]
fn ref_chain_past_the_depth_budget_is_refused() {
    let e = Schema::compile(&ref_chain(4_000)).unwrap_err();
    assert_eq!(
        e.kind(),
        CompileErrorKind::Budget {
            budget: CompileBudget::RefDepth,
            limit: jsongate::DEFAULT_MAX_REF_DEPTH
        }
    );
    assert!(e.to_string().contains("more than 1000"), "{e}");
}

/// 9,000 resources with a `$dynamicAnchor` each took 7 s (every step of the work list
/// re-scanned every anchor, and the cycle check tried every anchor for every dynamic
/// reference); 16,000 took 27 s.
#[test]
fn many_dynamic_anchors_compile_in_linear_time() {
    let opts = SchemaOptions::new().max_anchors(UNLIMITED);
    let schema = within(Duration::from_secs(5), "16,000 dynamic anchors", || {
        opts.compile(&dynamic_anchors(16_000)).unwrap()
    });
    let mut v = Validator::new(&schema);
    assert!(v
        .validate_slice(br#"{"a":{"a":{}}}"#, Limits::new())
        .is_ok());
    // The default bounds them.
    let e = Schema::compile(&dynamic_anchors(16_000)).unwrap_err();
    assert_eq!(
        e.kind(),
        CompileErrorKind::Budget {
            budget: CompileBudget::Anchors,
            limit: jsongate::DEFAULT_MAX_ANCHORS
        }
    );
}

/// Every compile budget is a typed error naming it and its limit.
#[test]
fn every_compile_budget_is_a_typed_error() {
    let wide = br#"{"properties":{"a":{},"b":{},"c":{},"d":{}}}"#;
    let cases: Vec<(SchemaOptions, &[u8], CompileBudget, u64)> =
        vec![
        (SchemaOptions::new().max_nodes(3), wide, CompileBudget::Nodes, 3),
        (SchemaOptions::new().max_schema_bytes(10), wide, CompileBudget::Bytes, 10),
        (
            SchemaOptions::new().max_ref_depth(2),
            br##"{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"type":"string"}}}"##,
            CompileBudget::RefDepth,
            2,
        ),
        (
            SchemaOptions::new().max_anchors(1),
            br#"{"$defs":{"a":{"$anchor":"a"},"b":{"$anchor":"b"}}}"#,
            CompileBudget::Anchors,
            1,
        ),
        (SchemaOptions::new().max_compile_steps(5), wide, CompileBudget::Steps, 5),
    ];
    for (opts, schema, budget, limit) in cases {
        let e = opts.compile(schema).unwrap_err();
        assert_eq!(e.kind(), CompileErrorKind::Budget { budget, limit }, "{e}");
        assert!(e.to_string().contains(&limit.to_string()), "{e}");
    }
    // A registered resource counts against the byte budget too.
    let e = SchemaOptions::new()
        .max_schema_bytes(40)
        .resource(
            "http://example.com/r",
            br#"{"type":"string","minLength":1}"#,
        )
        .compile(br#"{"$ref":"http://example.com/r"}"#)
        .unwrap_err();
    assert_eq!(
        e.kind().clone(),
        CompileErrorKind::Budget {
            budget: CompileBudget::Bytes,
            limit: 40
        }
    );
    // At the limit it compiles.
    SchemaOptions::new().max_nodes(5).compile(wide).unwrap();
}

/// `--eval-budget 1000` with two `allOf` branches over `items` accepted 5,000 items: the items'
/// subschemas were checked in place and never counted.
#[test]
fn eval_budget_counts_subschemas_checked_in_place() {
    let schema = Schema::options()
        .eval_budget(1_000)
        .compile(br#"{"allOf":[{"items":{"type":"integer"}},{"items":{"minimum":0}}]}"#)
        .unwrap();
    let doc = format!("[{}0]", "0,".repeat(4_999));
    let e = budget_error(&schema, doc.as_bytes(), Limits::new());
    assert_eq!(e.kind(), &ErrorKind::BudgetExceeded { limit: 1_000 });
    // Stopped long before the end: about a quarter of the 1,000 units per item pair.
    assert!(e.offset() < 2_000, "{e}");
}

/// 1,000 `allOf` branches over `items` on 1 M items were accepted after 34 s with the default
/// budget; now the default budget stops it within the first few KiB.
#[test]
fn wide_all_of_over_items_is_stopped_by_the_default_budget() {
    let branches: Vec<String> = (0..1_000)
        .map(|i| format!(r#"{{"items":{{"type":"integer","minimum":{}}}}}"#, i % 5))
        .collect();
    let schema =
        Schema::compile(format!(r#"{{"allOf":[{}]}}"#, branches.join(",")).as_bytes()).unwrap();
    let doc = format!("[{}1000]", "1000,".repeat(999_999));
    let limits = Limits::new().max_bytes(UNLIMITED);
    let e = within(Duration::from_secs(5), "1 M items", || {
        budget_error(&schema, doc.as_bytes(), limits)
    });
    assert!(e.offset() < 64 * 1024, "{e}");
}

/// 1,000 `anyOf` branches with `patternProperties` under `unevaluatedProperties` on 20,000
/// members ran 2–6 s; member visits and pattern tests are charged now.
#[test]
fn any_of_pattern_properties_visits_are_charged() {
    let branches: Vec<String> = (0..1_000)
        .map(|i| format!(r#"{{"patternProperties":{{"^k{i}":{{"type":"integer"}}}}}}"#))
        .collect();
    let schema = Schema::compile(
        format!(
            r#"{{"anyOf":[{}],"unevaluatedProperties":false}}"#,
            branches.join(",")
        )
        .as_bytes(),
    )
    .unwrap();
    let members: Vec<String> = (0..20_000).map(|i| format!(r#""k{i}x":{i}"#)).collect();
    let doc = format!("{{{}}}", members.join(","));
    let e = within(Duration::from_secs(5), "20,000 members", || {
        budget_error(&schema, doc.as_bytes(), Limits::new())
    });
    assert!(e.offset() < 64 * 1024, "{e}");
}

/// A scalar `enum` of 99,000 strings against 200,000 items took 63 s (a linear scan per item,
/// uncounted). A large `enum` is a table now, charged as one lookup: the whole document fits
/// in about one unit per byte, and its verdicts are exact.
#[test]
fn large_scalar_enum_is_looked_up_not_scanned() {
    let alts: Vec<String> = (0..99_000).map(|i| format!(r#""v{i}""#)).collect();
    let schema = Schema::options()
        .eval_budget(100)
        .eval_budget_per_byte(1)
        .compile(format!(r#"{{"items":{{"enum":[{}]}}}}"#, alts.join(",")).as_bytes())
        .unwrap();
    let items: Vec<String> = (0..200_000)
        .map(|i| format!(r#""v{}""#, (i * 7919) % 99_000))
        .collect();
    let doc = format!("[{}]", items.join(","));
    let limits = Limits::new().max_bytes(UNLIMITED);
    let mut v = Validator::new(&schema);
    within(Duration::from_secs(5), "200,000 enum lookups", || {
        assert_eq!(v.validate_slice(doc.as_bytes(), limits), Ok(()));
    });
    match v.validate_slice(br#"["v1","v98999","v99000"]"#, limits) {
        Err(Rejection::Violation(x)) => {
            assert_eq!((x.keyword(), x.instance_pointer()), ("enum", "/2"));
        }
        other => panic!("{other:?}"),
    }
    // Numbers compare as exact values, whatever their spelling; other types never match.
    let nums: Vec<String> = (0..20).map(|i| i.to_string()).collect();
    let schema =
        Schema::compile(format!(r#"{{"enum":[{},null,true]}}"#, nums.join(",")).as_bytes())
            .unwrap();
    let mut v = Validator::new(&schema);
    for ok in ["7", "7.0", "0.7e1", "-0", "null", "true"] {
        assert!(
            v.validate_slice(ok.as_bytes(), Limits::new()).is_ok(),
            "{ok}"
        );
    }
    for bad in ["7.5", "20", "\"7\"", "false", "[7]"] {
        assert!(
            v.validate_slice(bad.as_bytes(), Limits::new()).is_err(),
            "{bad}"
        );
    }
}

/// The defaults leave room: every bench document validates within 100 units plus one per
/// input byte, a sixteenth of the default per-byte allowance and a ten-thousandth of the
/// fixed part.
#[test]
fn default_budget_leaves_room_for_the_bench_documents() {
    let schema = |name: &str| {
        let path = format!("{}/benches/schemas/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    let citm = std::fs::read(crate::common::data("corpora/citm_catalog.json"))
        .expect("tests/data/corpora/citm_catalog.json is missing");
    let cases = [
        (
            "envelope",
            schema("envelope.schema.json"),
            docgen::success_envelope(),
        ),
        (
            "search",
            schema("search_results.schema.json"),
            docgen::search_results(1_000_000),
        ),
        ("citm", schema("citm_catalog.schema.json"), citm),
        ("logs", schema("logs.schema.json"), docgen::logs(2_000_000)),
    ];
    for (name, s, doc) in cases {
        let tight = Schema::options()
            .eval_budget(100)
            .eval_budget_per_byte(1)
            .compile(&s)
            .unwrap();
        let r = Validator::new(&tight).validate_slice(&doc, Limits::new().max_bytes(UNLIMITED));
        assert_eq!(r, Ok(()), "{name} needs more than one unit per byte");
    }
}
