//! Throughput of jsongate's validate-while-scanning against parse-then-validate with other
//! Rust JSON Schema validators, on the same schemas and documents.
//!
//! One criterion group per document (`validate/<doc>`), one benchmark per implementation, so
//! ids read `validate/search_1mb/jsongate`, `validate/search_1mb/serde_json+jsonschema`, ...
//! Throughput is the document's size in bytes.
//!
//! Documents and schemas (`benches/schemas/*.json`, draft 2020-12):
//! - `envelope_150b`: the ~150-byte tool-result success envelope (`docgen::success_envelope`)
//!   against `envelope.schema.json`, a strict `oneOf` of a success and a failure variant
//!   with closed objects, a `const` tool name and `$ref`s to `$defs`.
//! - `search_1mb`: the ~1 MB search-results document (`docgen::search_results`) against
//!   `search_results.schema.json`: closed result objects with required fields, `maxLength`,
//!   `pattern`, `enum`, numeric bounds, and `format: uri`.
//! - `citm_catalog`: `tests/data/corpora/citm_catalog.json` (1.7 MB) against
//!   `citm_catalog.schema.json`: closed objects for events and performances, `$ref`s to
//!   `$defs`, integer ids with `minimum`, `propertyNames` patterns on id-keyed maps, a
//!   `pattern` on `venueCode`, `uniqueItems` id lists.
//! - `logs_50mb`: the ~50 MB log document (`docgen::logs`) against `logs.schema.json`: an
//!   array of closed log records (`enum` levels, `pattern`s on host, trace id and path,
//!   `prefixItems` tags, `format: date-time`).
//!
//! `format` is an annotation in all three implementations (their default for draft 2020-12);
//! the setup checks that a document with a malformed URI is accepted by all of them, so no
//! implementation validates formats that another skips.
//!
//! Implementations:
//! - `jsongate`: one `Validator`, reused, `validate_slice` with every scanner limit of
//!   `Limits::new()` on except `max_bytes` (lifted so the 50 MB document fits): strict
//!   JSON, UTF-8, duplicate names and the schema, in one pass, no tree.
//! - `serde_json+jsonschema`: `serde_json::from_slice::<Value>` then
//!   `jsonschema::Validator::is_valid`, validator built once outside the timing; the `Value`
//!   is dropped inside the timing (as a caller would).
//! - `serde_json+boon`: `serde_json::from_slice::<Value>` then `boon::Schemas::validate`,
//!   compiled once outside the timing.
//! - `jsonschema_prebuilt_value`: `jsonschema::Validator::is_valid` alone, on a `Value`
//!   parsed outside the timing: not an end-to-end number, shown to split the pair above
//!   into parsing and validation.
//!
//! Before timing, every implementation must accept the document and reject a mutated copy
//! (see [`Case::mutated`]); otherwise the comparison is meaningless and the bench panics.
//!
//! Run all: `cargo bench --bench validate`; briefly: `cargo bench --bench validate -- --quick`;
//! one document: `cargo bench --bench validate -- validate/citm_catalog`.

#[macro_use]
#[path = "../../harness/mod.rs"]
mod harness;

use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput};

mod peers;
use peers::{bench_case, corpus, replace, schema_file, Case};

#[path = "../../docgen/mod.rs"]
mod docgen;

fn cases() -> Vec<Case> {
    let envelope = docgen::success_envelope();
    let search = docgen::search_results(1_000_000);
    let citm = corpus("citm_catalog");
    let logs = docgen::logs(50_000_000);
    vec![
        Case {
            name: "envelope_150b",
            schema: schema_file("envelope.schema.json"),
            // An injected field in the closed result object.
            mutated: replace(
                &envelope,
                r#""count":3}"#,
                r#""count":3,"admin_override":true}"#,
                false,
            ),
            doc: envelope,
            format_only: Vec::new(),
        },
        Case {
            name: "search_1mb",
            schema: schema_file("search_results.schema.json"),
            // The last result's URL fails the `pattern`.
            mutated: replace(&search, r#""url":"https://"#, r#""url":"ftp://"#, true),
            // A space is not allowed in a URI, but `format` only annotates.
            format_only: vec![replace(
                &search,
                r#""url":"https://example.com/"#,
                r#""url":"https://example.com/not a uri/"#,
                false,
            )],
            doc: search,
        },
        Case {
            name: "citm_catalog",
            schema: schema_file("citm_catalog.schema.json"),
            // The last performance's venue code fails the `pattern`.
            mutated: replace(
                &citm,
                r#""venueCode": "PLEYEL_PLEYEL""#,
                r#""venueCode": "pleyel""#,
                true,
            ),
            doc: citm,
            format_only: Vec::new(),
        },
        Case {
            name: "logs_50mb",
            schema: schema_file("logs.schema.json"),
            // The last record's host fails the `pattern`.
            mutated: replace(&logs, r#""host":"node-"#, r#""host":"NODE-"#, true),
            // Not a date-time, but `format` only annotates (the pattern still holds).
            format_only: vec![replace(&logs, "T00:00:00.", "T99:99:99.", false)],
            doc: logs,
        },
    ]
}

fn validate(c: &mut Criterion) {
    for case in cases() {
        let mut group = c.benchmark_group(format!("validate/{}", case.name));
        group.throughput(Throughput::Bytes(case.doc.len() as u64));
        if case.doc.len() > 10_000_000 {
            // One iteration takes tens to hundreds of milliseconds: flat sampling with the
            // minimum sample count keeps the run short.
            group
                .sampling_mode(SamplingMode::Flat)
                .sample_size(10)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(8));
        }
        bench_case(&mut group, &case, "");
        group.finish();
    }
}

// Sized for a shared 2-core machine: the whole run takes a few minutes.
bench_main!(validate, 30, 3);
