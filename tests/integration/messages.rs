//! Messages a person can act on: a violation says what the schema expected (the missing
//! property, the unexpected one, the types, values and bounds), in both tiers alike; a schema
//! that cannot be compiled is named in schema terms, never in Rust `Debug` text or internal
//! URIs, and a reference to a document nobody registered says which one to give.

use jsongate::{CompileErrorKind, Limits, Rejection, Schema, SchemaOptions, Tier, Validator};

/// The first violation of `doc`, the same in both tiers.
fn violation(schema: &str, doc: &str) -> Box<jsongate::Violation> {
    let s = Schema::compile(schema.as_bytes()).unwrap_or_else(|e| panic!("{schema}: {e}"));
    let auto = Validator::new(&s).validate_slice(doc.as_bytes(), Limits::new());
    let general = Validator::new(&s)
        .tier(Tier::General)
        .validate_slice(doc.as_bytes(), Limits::new());
    assert_eq!(auto, general, "{schema} / {doc}");
    match auto {
        Err(Rejection::Violation(v)) => v,
        other => panic!("{schema} / {doc}: {other:?}"),
    }
}

#[test]
fn violations_say_what_was_expected() {
    let cases = [
        (
            r#"{"properties":{"o":{"required":["id","name"]}}}"#,
            r#"{"o":{"id":1}}"#,
            "/o",
            r#"missing required property "name" (required at /properties/o/required)"#,
        ),
        (
            r#"{"additionalProperties":false,"properties":{"a":{}}}"#,
            r#"{"a":1,"admin~/x":2}"#,
            "/admin~0~1x",
            r#"property "admin~/x" is not allowed (additionalProperties at /additionalProperties)"#,
        ),
        (
            r#"{"unevaluatedProperties":false,"properties":{"a":{}}}"#,
            r#"{"a":1,"b":2}"#,
            "/b",
            r#"property "b" is not allowed (unevaluated) (unevaluatedProperties at /unevaluatedProperties)"#,
        ),
        (
            r#"{"unevaluatedProperties":{"type":"integer"},"properties":{"a":{}}}"#,
            r#"{"a":"x","b":"y"}"#,
            "/b",
            r#"property "b" (evaluated by no other keyword) does not satisfy the unevaluatedProperties subschema (unevaluatedProperties at /unevaluatedProperties)"#,
        ),
        (
            r#"{"items":{"type":["string","null"]}}"#,
            "[1]",
            "/0",
            "value has the wrong type: expected null or string (type at /items/type)",
        ),
        (
            r#"{"properties":{"a":{"const":"x\"y"}}}"#,
            r#"{"a":"x"}"#,
            "/a",
            r#"value is not the required constant: expected "x\"y" (const at /properties/a/const)"#,
        ),
        (
            r#"{"enum":["a","b",1.50,null]}"#,
            r#""c""#,
            "",
            r#"value is not one of the allowed values: expected one of "a", "b", 1.5, null (enum at /enum)"#,
        ),
        (
            r#"{"properties":{"n":{"minimum":0.01}}}"#,
            r#"{"n":0}"#,
            "/n",
            "number is out of range: expected at least 0.01 (minimum at /properties/n/minimum)",
        ),
        (
            r#"{"exclusiveMaximum":10}"#,
            "10",
            "",
            "number is out of range: expected less than 10 (exclusiveMaximum at /exclusiveMaximum)",
        ),
        (
            r#"{"maxItems":1}"#,
            "[1,2]",
            "",
            "array length is out of bounds: expected at most 1 item (maxItems at /maxItems)",
        ),
        (
            r#"{"minLength":2}"#,
            r#""a""#,
            "",
            "string length is out of bounds: expected at least 2 characters (minLength at /minLength)",
        ),
        (
            r#"{"pattern":"^it-"}"#,
            r#""x""#,
            "",
            r#"string does not match the pattern: expected a match of the pattern "^it-" (pattern at /pattern)"#,
        ),
        (
            r#"{"dependentRequired":{"a":["b"]}}"#,
            r#"{"a":1}"#,
            "",
            r#"property "b" is required when "a" is present (dependentRequired at /dependentRequired)"#,
        ),
        (
            r#"{"$schema":"http://json-schema.org/draft-07/schema#","dependencies":{"a":["b"]}}"#,
            r#"{"a":1}"#,
            "",
            r#"property "b" is required when "a" is present (dependencies at /dependencies)"#,
        ),
        (
            r#"{"$schema":"http://json-schema.org/draft-04/schema#","type":"integer"}"#,
            "1.0",
            "",
            "value has the wrong type: expected integer (written without fraction or exponent) (type at /type)",
        ),
    ];
    for (schema, doc, pointer, message) in cases {
        let v = violation(schema, doc);
        assert_eq!(v.instance_pointer(), pointer, "{schema} / {doc}");
        assert_eq!(v.message(), message, "{schema} / {doc}");
    }
}

/// A structural constant is written as JSON where the instance departs from it.
#[test]
fn structural_constants_are_written_out() {
    let v = violation(r#"{"const":{"a":[1,"x"]}}"#, r#"{"a":[1]}"#);
    assert_eq!(v.instance_pointer(), "/a");
    assert_eq!(v.detail(), r#"expected [1,"x"]"#);
}

/// A long enum is named by its first alternatives and counted; long constants are cut.
#[test]
fn long_expectations_are_cut() {
    let alts: Vec<String> = (0..20).map(|i| format!("\"v{i}\"")).collect();
    let v = violation(&format!(r#"{{"enum":[{}]}}"#, alts.join(",")), r#""x""#);
    assert!(
        v.detail().ends_with(r#""v7", … (20 in all)"#),
        "{}",
        v.detail()
    );
    let long = "y".repeat(200);
    let v = violation(&format!(r#"{{"const":"{long}"}}"#), r#""x""#);
    assert!(v.detail().chars().count() < 90, "{}", v.detail());
    assert!(v.detail().ends_with('…'), "{}", v.detail());
}

#[test]
fn schema_errors_are_named_in_schema_terms() {
    for (schema, wanted) in [
        (
            r#"{"properties":{"a":{"pattern":"(?<a>x)(?<a>y)"}}}"#,
            "invalid pattern '(?<a>x)(?<a>y)': invalid ECMA-262 regular expression: duplicate group name <a> at #/properties/a",
        ),
        (
            r##"{"$ref":"#/$defs/nope"}"##,
            "reference '#/$defs/nope' points nowhere at #",
        ),
        (
            r#"{"properties":{"n":{"minLength":-1}}}"#,
            "schema does not conform to the draft 2020-12 meta-schema: number is out of range: expected at least 0 (minimum at /allOf/1/$ref/properties/properties/additionalProperties/$dynamicRef/allOf/3/$ref/properties/minLength/$ref/$ref/minimum) at #/properties/n/minLength",
        ),
    ] {
        let e = Schema::compile(schema.as_bytes()).unwrap_err();
        assert_eq!(e.to_string(), wanted);
        assert!(!e.to_string().contains("jsongate:///"), "{e}");
    }
}

/// A reference to a document that is not registered has its own kind and names the URI to
/// register; a relative one reads as written, and registering it by that name resolves it.
#[test]
fn unknown_resources_name_the_document_to_give() {
    let e = Schema::compile(br#"{"$ref":"http://example.com/x.json#/a"}"#).unwrap_err();
    assert_eq!(e.kind(), CompileErrorKind::UnknownResource);
    assert_eq!(e.resource(), Some("http://example.com/x.json"));
    let e = Schema::compile(br#"{"items":{"$ref":"defs/other.json"}}"#).unwrap_err();
    assert_eq!(e.kind(), CompileErrorKind::UnknownResource);
    assert_eq!(e.resource(), Some("defs/other.json"));
    assert_eq!(e.location(), "#/items");
    let s = SchemaOptions::new()
        .resource("defs/other.json", br#"{"type":"integer"}"#)
        .compile(br#"{"items":{"$ref":"defs/other.json"}}"#)
        .unwrap();
    assert!(Validator::new(&s)
        .validate_slice(b"[\"x\"]", Limits::new())
        .is_err());
    // Invalid schemas are not unknown resources.
    let e = Schema::compile(br#"{"type":3}"#).unwrap_err();
    assert_eq!((e.kind(), e.resource()), (CompileErrorKind::Invalid, None));
}

#[test]
fn the_cli_suggests_the_resource_flag() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("s.json");
    std::fs::write(&schema, r#"{"$ref":"https://example.com/tool.json"}"#).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_jsongate"))
        .args(["check", "--schema"])
        .arg(&schema)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("give the document with --resource https://example.com/tool.json=FILE"),
        "{err}"
    );
}

#[test]
fn every_member_unevaluated_properties_refuses_is_named_when_violations_are_collected() {
    let s = Schema::compile(br#"{"unevaluatedProperties":false,"properties":{"a":{}}}"#).unwrap();
    let mut v = Validator::new(&s).max_errors(10);
    assert!(v
        .validate_slice(br#"{"b":1,"a":2,"c":3,"d":4}"#, Limits::new())
        .is_err());
    let pointers: Vec<&str> = v
        .violations()
        .iter()
        .map(jsongate::Violation::instance_pointer)
        .collect();
    assert_eq!(pointers, ["/b", "/c", "/d"]);
    // Bounded by the count asked for.
    let mut v = Validator::new(&s).max_errors(2);
    assert!(v
        .validate_slice(br#"{"b":1,"c":3,"d":4}"#, Limits::new())
        .is_err());
    assert_eq!(v.violations().len(), 2);
}
