//! The gate: fixture scenarios through the CLI and the library (exact agent output and audit
//! record), contract examples via `jsongate contract test`, and a property test that the
//! agent output holds only what the contract selected.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use jsongate::gate::{approx_tokens, Context, Contract, Gate, Request, Timestamp};
use proptest::prelude::*;
use sha2::{Digest, Sha256};

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/gate")
        .join(name)
}

fn gate(name: &str) -> Gate {
    Gate::new(&Contract::from_file(&dir(name).join("contract.json")).unwrap()).unwrap()
}

fn now() -> Timestamp {
    Timestamp::parse_rfc3339("2024-06-01T12:00:00Z").unwrap()
}

fn sha(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    Sha256::digest(bytes)
        .iter()
        .fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// Runs one response through the library; returns the output and the audit line with its
/// timing replaced by 0.
fn run_lib(tool: &str, file: &str, rid: &str, ctx: &[(&str, &str)]) -> (String, String) {
    let mut c = Context::new().now(now());
    for (k, v) in ctx {
        c = c.value(k, v);
    }
    let raw = std::fs::read(dir(tool).join("responses").join(file)).unwrap();
    let mut d = gate(tool).run_slice(&raw, &Request::new(rid, c)).unwrap();
    assert_eq!(d.audit.sha256, sha(&raw));
    d.audit.duration_us = 0;
    (d.output, d.audit.to_json())
}

fn run_cli(tool: &str, file: &str, rid: &str, ctx: &[(&str, &str)]) -> (String, String, i32) {
    let tmp = tempfile::tempdir().unwrap();
    let audit = tmp.path().join("audit.jsonl");
    let mut cmd = Command::cargo_bin("jsongate").unwrap();
    cmd.arg("gate")
        .arg("--contract")
        .arg(dir(tool).join("contract.json"))
        .args([
            "--request-id",
            rid,
            "--now",
            "2024-06-01T12:00:00Z",
            "--audit",
        ])
        .arg(&audit);
    for (k, v) in ctx {
        cmd.arg("--context").arg(format!("{k}={v}"));
    }
    let out = cmd
        .arg(dir(tool).join("responses").join(file))
        .output()
        .unwrap();
    let line = std::fs::read_to_string(&audit).unwrap();
    assert_eq!(line.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    let dur = v["duration_us"].as_u64().unwrap();
    let line = line
        .trim_end()
        .replace(&format!("\"duration_us\":{dur}"), "\"duration_us\":0");
    let stdout = String::from_utf8(out.stdout).unwrap();
    (stdout, line, out.status.code().unwrap())
}

/// Asserts the same output and audit record through the library and the CLI.
fn scenario(tool: &str, file: &str, ctx: &[(&str, &str)], output: &str, audit: &str) {
    let (o, a) = run_lib(tool, file, "req-1", ctx);
    assert_eq!(o, output);
    let raw = std::fs::read(dir(tool).join("responses").join(file)).unwrap();
    let audit = audit
        .replace("SHA", &sha(&raw))
        .replace("BYTES", &raw.len().to_string())
        .replace("OUT", &output.len().to_string())
        .replace("TOK", &approx_tokens(output).to_string());
    assert_eq!(a, audit);
    let (o, a, code) = run_cli(tool, file, "req-1", ctx);
    assert_eq!(o, format!("{output}\n"));
    assert_eq!(a, audit);
    let success = output.contains("\"success\"");
    assert_eq!(code, i32::from(!success));
}

const HEAD: &str = r#"{"time":"2024-06-01T12:00:00Z","jsongate":"0.1.0","tool":"review_status","contract_version":"2024-06-01","request_id":"req-1","#;
const TAIL: &str =
    r#""bytes":BYTES,"sha256":"SHA","output_bytes":OUT,"output_tokens":TOK,"duration_us":0}"#;
const INVALID: &str = r#"{"tool":"review_status","request_id":"req-1","outcome":"failure","error":{"code":"INVALID_RESPONSE","retryable":false}}"#;
const CHANGE: &[(&str, &str)] = &[("change_id", "c-42")];

#[test]
fn review_approved() {
    scenario(
        "review-status",
        "approved.json",
        CHANGE,
        r#"{"tool":"review_status","request_id":"req-1","outcome":"success","data":{"change_id":"c-42","approved":true}}"#,
        &format!(r#"{HEAD}"verdict":"accepted","code":null,"upstream_version":"v1",{TAIL}"#),
    );
}

#[test]
fn review_injected_message_is_refused_at_the_name() {
    scenario(
        "review-status",
        "injected.json",
        CHANGE,
        INVALID,
        &format!(
            r#"{HEAD}"verdict":"rejected","code":"INVALID_RESPONSE","upstream_version":null,"error":{{"kind":"schema","keyword":"additionalProperties","schema_path":"/additionalProperties","pointer":"/message","offset":54}},{TAIL}"#
        ),
    );
}

#[test]
fn review_duplicate_approved() {
    scenario(
        "review-status",
        "duplicate-approved.json",
        CHANGE,
        INVALID,
        &format!(
            r#"{HEAD}"verdict":"rejected","code":"INVALID_RESPONSE","upstream_version":null,"error":{{"kind":"duplicate_name","pointer":"/approved","offset":46}},{TAIL}"#
        ),
    );
}

#[test]
fn review_success_with_error_object() {
    scenario(
        "review-status",
        "success-with-error.json",
        CHANGE,
        INVALID,
        &format!(
            r#"{HEAD}"verdict":"rejected","code":"INVALID_RESPONSE","upstream_version":null,"error":{{"kind":"schema","keyword":"additionalProperties","schema_path":"/additionalProperties","pointer":"/error","offset":53}},{TAIL}"#
        ),
    );
}

#[test]
fn review_upstream_request_id_never_replaces_the_callers() {
    let (o, _) = run_lib("review-status", "request-id-injected.json", "req-1", CHANGE);
    assert_eq!(o, INVALID);
    assert!(!o.contains("req-attacker"));
}

#[test]
fn review_html_error_page() {
    scenario(
        "review-status",
        "html-error-page.json",
        CHANGE,
        INVALID,
        &format!(
            r#"{HEAD}"verdict":"rejected","code":"INVALID_RESPONSE","upstream_version":null,"error":{{"kind":"syntax","pointer":"","offset":0}},{TAIL}"#
        ),
    );
}

#[test]
fn job_run_stale_and_mismatch() {
    let ctx = &[("project_id", "p-9")];
    let (o, a) = run_lib("job-run", "stale.json", "req-2", ctx);
    assert_eq!(
        o,
        r#"{"tool":"job_run_status","request_id":"req-2","outcome":"failure","error":{"code":"STALE","retryable":true}}"#
    );
    assert!(
        a.contains(
            r#""error":{"kind":"check","check":"fresh","field":"observed_at","reason":"too_old"}"#
        ),
        "{a}"
    );
    let (o, a) = run_lib("job-run", "malformed-run-id.json", "req-2", ctx);
    assert!(o.contains(r#""code":"MISMATCH""#));
    assert!(
        a.contains(r#""check":"belongs_to","field":"run_id","reason":"not_owned""#),
        "{a}"
    );
    let (o, _) = run_lib("job-run", "right-project.json", "req-2", ctx);
    assert!(!o.contains("observed_at") && !o.contains("log_url"), "{o}");
}

#[test]
fn command_banner_line() {
    let (o, a) = run_lib("host-uptime", "banner.txt", "req-4", &[("host", "web-1")]);
    assert!(o.contains(r#""code":"INVALID_RESPONSE""#));
    assert!(
        a.contains(r#""error":{"kind":"line_format","offset":0,"line":1,"reason":"no_separator"}"#),
        "{a}"
    );
}

#[test]
fn contract_examples_pass_through_the_cli() {
    for name in [
        "review-status",
        "job-run",
        "deploy-health",
        "host-uptime",
        "ticket-summary",
    ] {
        let out = Command::cargo_bin("jsongate")
            .unwrap()
            .args(["contract", "test"])
            .arg(dir(name))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{name}: {text}");
        assert!(text.contains("\"failed\":0}"), "{text}");
    }
}

#[test]
fn contract_lint_warns_about_free_form_maps_unbounded_text_and_unscreened_fields() {
    let lint = |path: &std::path::Path| {
        let out = Command::cargo_bin("jsongate")
            .unwrap()
            .args(["contract", "lint"])
            .arg(path)
            .output()
            .unwrap();
        let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (lines, out.status.code())
    };
    // The screened, closed, bounded fixture: nothing to say.
    let (lines, code) = lint(&dir("ticket-summary").join("contract.json"));
    assert_eq!(
        (lines, code),
        (vec![serde_json::json!({"warnings":0})], Some(0))
    );
    // The same contract with meta opened up behind a $ref and no screen section.
    let text = std::fs::read_to_string(dir("ticket-summary").join("contract.json")).unwrap();
    let mut c: serde_json::Value = serde_json::from_str(&text).unwrap();
    let schema = &mut c["upstream"][0]["schema"];
    schema["$defs"] =
        serde_json::json!({"Meta":{"type":"object","properties":{"note":{"type":"string"}}}});
    schema["properties"]["meta"] = serde_json::json!({"$ref":"#/$defs/Meta"});
    c.as_object_mut().unwrap().remove("screen");
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("contract.json");
    std::fs::write(&path, c.to_string()).unwrap();
    let (lines, code) = lint(&path);
    assert_eq!(code, Some(1));
    let got: Vec<(String, String)> = lines
        .iter()
        .filter_map(|l| {
            Some((
                l["location"].as_str()?.to_owned(),
                l["warning"].as_str()?.to_owned(),
            ))
        })
        .collect();
    for want in [
        ("/meta", "open_object"),
        ("/meta/note", "unbounded_text"),
        ("/meta", "unscreened"),
        ("/title", "unscreened"),
    ] {
        assert!(
            got.contains(&(want.0.to_owned(), want.1.to_owned())),
            "{want:?} not in {got:?}"
        );
    }
    assert_eq!(lines.last().unwrap()["warnings"], got.len());
}

#[test]
fn missing_context_is_a_configuration_error() {
    let out = Command::cargo_bin("jsongate")
        .unwrap()
        .arg("gate")
        .arg("--contract")
        .arg(dir("review-status").join("contract.json"))
        .args(["--request-id", "r"])
        .arg(dir("review-status").join("responses/approved.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

#[test]
fn envelope_schema_and_contract_schema_are_printed() {
    let out = Command::cargo_bin("jsongate")
        .unwrap()
        .args(["contract", "envelope-schema", "--contract"])
        .arg(dir("job-run").join("contract.json"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let data = &v["oneOf"][0]["properties"]["data"];
    assert_eq!(
        data["required"],
        serde_json::json!(["project_id", "run_id", "state"])
    );
    assert_eq!(
        v["oneOf"][0]["properties"]["tool"]["const"],
        "job_run_status"
    );
    let out = Command::cargo_bin("jsongate")
        .unwrap()
        .args(["contract", "schema"])
        .output()
        .unwrap();
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["$id"], "urn:jsongate:contract:1");
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i32>().prop_map(serde_json::Value::from),
        "[a-c]{0,3}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            prop::collection::btree_map("[a-c]{1,2}", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// The agent output is exactly the envelope around the selected values: no other field,
    /// no other string, whatever the upstream sends.
    #[test]
    fn agent_output_holds_only_selected_values(
        doc in json_value(),
        ptrs in prop::collection::btree_set("(/[a-c0-2]{1,2}){1,3}", 1..4),
    ) {
        // Drop pointers that lie inside another one (the contract format forbids them).
        let ptrs: Vec<String> = ptrs.iter().filter(|p| !ptrs.iter().any(|q| q != *p
            && p.starts_with(&format!("{q}/")))).cloned().collect();
        let fields: serde_json::Map<String, serde_json::Value> = ptrs.iter().enumerate()
            .map(|(i, p)| (format!("f{i}"), serde_json::json!({"pointer": p, "required": false})))
            .collect();
        let contract = serde_json::json!({"contract":1,"tool":"t","version":"1",
            "upstream":[{"version":"v","schema":true}],"fields":fields});
        let c = Contract::from_slice(contract.to_string().as_bytes(), Path::new(".")).unwrap();
        let g = Gate::new(&c).unwrap();
        let raw = doc.to_string();
        let d = g.run_slice(raw.as_bytes(), &Request::new("rid", Context::new())).unwrap();
        let out: serde_json::Value = serde_json::from_str(&d.output).unwrap();
        let mut want = serde_json::Map::new();
        for (i, p) in ptrs.iter().enumerate() {
            if let Some(v) = doc.pointer(p) {
                want.insert(format!("f{i}"), v.clone());
            }
        }
        let expected = serde_json::json!({"tool":"t","request_id":"rid","outcome":"success",
            "data": serde_json::Value::Object(want)});
        prop_assert_eq!(out, expected);
    }
}

/// The gate's peak heap does not grow with the upstream response: a search-results page of
/// 1 MB and of 10 MB, under a contract exposing three fields, peak within a few KiB of each
/// other (measured with the per-thread counting allocator of `memory.rs`).
#[test]
fn gate_peak_heap_does_not_grow_with_response_size() {
    use crate::memory::{current, docgen, peak, reset_peak};
    const MIB: isize = 1 << 20;
    // As in `memory.rs`: a few token-sized buffers, far below any document size here.
    const SLACK: isize = 16 << 10;

    let contract = r#"{"contract":1,"tool":"web_search","version":"1",
        "limits":{"max_bytes":16777216},
        "upstream":[{"version":"v1","schema_file":"search_results.schema.json"}],
        "fields":{"query":{"pointer":"/query"},"total":{"pointer":"/total"},
                  "top_url":{"pointer":"/results/0/url"}}}"#;
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/schemas");
    let g = Gate::new(&Contract::from_slice(contract.as_bytes(), &schemas).unwrap()).unwrap();
    let req = Request::new("req-1", Context::new().now(now()));
    // Built before any measurement; only the gate's own allocations are counted below.
    let docs: Vec<(usize, Vec<u8>)> = [1, 10]
        .into_iter()
        .map(|mb| (mb, docgen::search_results(mb * 1_000_000)))
        .collect();
    let check = |d: &jsongate::gate::Delivery, doc: &[u8]| {
        assert!(d.audit.accepted, "{}", d.output);
        assert_eq!(d.audit.bytes, doc.len() as u64);
        assert!(
            d.output.contains(r#""top_url":"https://example.com/"#),
            "{}",
            d.output
        );
    };

    // A fresh session per response: peak live bytes from `session()` to the decision.
    let mut fresh = Vec::new();
    for (mb, doc) in &docs {
        let base = current();
        reset_peak();
        let mut s = g.session();
        let d = s.run_slice(doc, &req).unwrap();
        let p = peak() - base;
        check(&d, doc);
        eprintln!(
            "memory: gate, fresh session, {mb} MB response ({} bytes): peak heap {p} bytes",
            doc.len()
        );
        fresh.push(p);
    }

    // One session reused: its whole footprint (retained buffers included) at each peak.
    let base = current();
    let mut s = g.session();
    let mut reused = Vec::new();
    for (mb, doc) in &docs {
        reset_peak();
        let d = s.run_slice(doc, &req).unwrap();
        let p = peak() - base;
        check(&d, doc);
        drop(d);
        eprintln!("memory: gate, reused session, {mb} MB response: peak heap {p} bytes");
        reused.push(p);
    }

    for p in fresh.iter().chain(&reused) {
        assert!(*p < MIB, "peak heap {p} bytes is not below 1 MiB");
    }
    assert!(
        fresh[1] <= fresh[0] + SLACK,
        "fresh-session peaks grow with size: {fresh:?}"
    );
    assert!(
        reused[1] <= reused[0] + SLACK,
        "reused-session peaks grow with size: {reused:?}"
    );
}
