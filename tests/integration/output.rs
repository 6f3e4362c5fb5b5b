//! The specification's output formats (`Validator::output`, `jsongate check --output`):
//! every invalid test of the 2020-12 and draft-07 suites, written as `flag`, `basic` and
//! `detailed` with up to ten violations collected, is accepted by the output schema the
//! specification publishes (`draft2020-12/output/schema.json`), checked both by jsongate with
//! `format` asserted and by the `jsonschema` crate; valid tests give `{"valid":true}`.

use std::path::PathBuf;

use jsongate::{Draft, Limits, OutputFormat, Schema, SchemaOptions, Validator};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::common::data;

#[derive(Deserialize)]
struct Case {
    schema: Box<RawValue>,
    tests: Vec<Test>,
}

#[derive(Deserialize)]
struct Test {
    data: Box<RawValue>,
    valid: bool,
}

/// The output schema, and with `unit` its output unit alone: the schema's root is an
/// `anyOf` whose `flag` branch admits any object with `valid`, so `basic` and `detailed`
/// outputs are held to the output unit (`#/$defs/outputUnit`) it defines.
fn output_schema(unit: bool) -> (Schema, jsonschema::Validator) {
    let text = std::fs::read(data(
        "suites/json-schema-metaschemas/draft2020-12/output/schema.json",
    ))
    .unwrap();
    let mut value: serde_json::Value = serde_json::from_slice(&text).unwrap();
    if unit {
        let m = value.as_object_mut().unwrap();
        m.remove("anyOf");
        m.insert("$ref".into(), serde_json::json!("#/$defs/outputUnit"));
    }
    let text = serde_json::to_vec(&value).unwrap();
    let ours = SchemaOptions::new()
        .format_assertion(true)
        .compile(&text)
        .unwrap();
    let theirs = jsonschema::options()
        .should_validate_formats(true)
        .build(&value)
        .unwrap();
    (ours, theirs)
}

#[test]
fn outputs_satisfy_the_output_schema() {
    let (flag_ours, flag_theirs) = output_schema(false);
    let (unit_ours, unit_theirs) = output_schema(true);
    let mut flag_checker = Validator::new(&flag_ours);
    let mut unit_checker = Validator::new(&unit_ours);
    let mut outputs_checked = [0usize; 3];
    let mut nested = 0;
    for (dir, draft) in [
        ("draft2020-12", Draft::Draft202012),
        ("draft7", Draft::Draft7),
    ] {
        let opts = SchemaOptions::new().draft(draft);
        let mut files: Vec<PathBuf> =
            std::fs::read_dir(data(&format!("suites/json-schema-test-suite/tests/{dir}")))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect();
        files.sort();
        for file in files {
            let cases: Vec<Case> = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
            for case in cases {
                // Cases with remote references need the remotes; the output is the subject.
                let Ok(schema) = opts.compile(case.schema.get().as_bytes()) else {
                    continue;
                };
                let mut v = Validator::new(&schema).max_errors(10);
                for t in &case.tests {
                    let r = v.validate_slice(t.data.get().as_bytes(), Limits::new().max_depth(512));
                    for (i, format) in [
                        OutputFormat::Flag,
                        OutputFormat::Basic,
                        OutputFormat::Detailed,
                    ]
                    .into_iter()
                    .enumerate()
                    {
                        let out = v.output(&r, format, Some("file:///schemas/case.json"));
                        if t.valid {
                            assert_eq!(out, r#"{"valid":true}"#);
                            continue;
                        }
                        let parsed: serde_json::Value =
                            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
                        assert_eq!(parsed["valid"], false, "{out}");
                        let (checker, theirs) = if format == OutputFormat::Flag {
                            (&mut flag_checker, &flag_theirs)
                        } else {
                            (&mut unit_checker, &unit_theirs)
                        };
                        assert!(
                            checker
                                .validate_slice(out.as_bytes(), Limits::new())
                                .is_ok(),
                            "jsongate refuses {format:?} output {out}: {:?}",
                            checker.violation()
                        );
                        assert!(
                            theirs.is_valid(&parsed),
                            "jsonschema refuses {format:?} output {out}"
                        );
                        outputs_checked[i] += 1;
                        if format == OutputFormat::Detailed
                            && parsed["errors"]
                                .as_array()
                                .is_some_and(|e| e.iter().any(|u| u.get("errors").is_some()))
                        {
                            nested += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(
        outputs_checked.iter().all(|&n| n > 500),
        "{outputs_checked:?}"
    );
    // The hierarchy is not always flat.
    assert!(nested > 10, "{nested} nested detailed outputs");
    // And an output unit that breaks the schema is refused (the check can fail): an invalid
    // unit without `error`/`errors`, and one through a `$ref` without its absolute location.
    for bad in [
        r#"{"valid":false,"keywordLocation":"","instanceLocation":""}"#,
        r#"{"valid":false,"keywordLocation":"/$ref/type","instanceLocation":"","error":"x"}"#,
    ] {
        assert!(unit_checker
            .validate_slice(bad.as_bytes(), Limits::new())
            .is_err());
        assert!(!unit_theirs.is_valid(&serde_json::from_str(bad).unwrap()));
    }
}

/// `jsongate check --output`: the formats on the command line, exit codes as without it.
#[test]
fn the_cli_writes_the_output_formats() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("s.json");
    std::fs::write(
        &schema,
        r##"{"$defs":{"id":{"type":"integer"}},"required":["id"],
            "properties":{"id":{"$ref":"#/$defs/id"},"list":{"items":{"minimum":0}}}}"##,
    )
    .unwrap();
    let run = |format: &str, doc: &str| {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_jsongate"))
            .args(["check", "--errors", "5", "--output", format, "--schema"])
            .arg(&schema)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // A usage error exits before reading.
        let _ = std::io::Write::write_all(&mut child.stdin.take().unwrap(), doc.as_bytes());
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stdout).unwrap(),
        )
    };
    assert_eq!(run("flag", r#"{"id":1}"#), (0, "{\"valid\":true}\n".into()));
    assert_eq!(
        run("flag", r#"{"id":"x"}"#),
        (1, "{\"valid\":false}\n".into())
    );
    let (code, out) = run("detailed", r#"{"id":"x","list":[1,-1]}"#);
    assert_eq!(code, 1);
    let uri = format!(
        "file://{}",
        std::fs::canonicalize(&schema).unwrap().display()
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"valid":false,"keywordLocation":"","instanceLocation":"","errors":[
            {"valid":false,"keywordLocation":"/properties/id/$ref/type",
             "absoluteKeywordLocation":format!("{uri}#/$defs/id/type"),"instanceLocation":"/id",
             "error":"value has the wrong type: expected integer (type at /properties/id/$ref/type)"},
            {"valid":false,"keywordLocation":"/properties/list","instanceLocation":"/list","errors":[
                {"valid":false,"keywordLocation":"/properties/list/items/minimum",
                 "absoluteKeywordLocation":format!("{uri}#/properties/list/items/minimum"),
                 "instanceLocation":"/list/1",
                 "error":"number is out of range: expected at least 0 (minimum at /properties/list/items/minimum)"}]}]})
    );
    let (code, out) = run("basic", r#"{"id":1,"#);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "{\"valid\":false,\"keywordLocation\":\"\",\"instanceLocation\":\"\",\"error\":\"unexpected end of input (syntax)\"}\n"
    );
    let (code, _) = run("verbose", "1");
    assert_eq!(code, 2);
}
