//! Dialects: drafts 4 and 6 beside 7, 2019-09 and 2020-12, chosen by `$schema` or by the
//! options' default, and followed by every subschema of a resource wherever it sits.

use jsongate::{Draft, Limits, Schema, SchemaOptions, Validator};

fn valid(schema: &Schema, doc: &str) -> bool {
    Validator::new(schema)
        .validate_slice(doc.as_bytes(), Limits::new())
        .is_ok()
}

fn compile(schema: &str) -> Schema {
    Schema::compile(schema.as_bytes()).unwrap_or_else(|e| panic!("{schema}: {e}"))
}

const D4: &str = "http://json-schema.org/draft-04/schema#";
const D6: &str = "http://json-schema.org/draft-06/schema#";
const D7: &str = "http://json-schema.org/draft-07/schema#";

#[test]
fn draft4_boolean_exclusive_bounds() {
    let s = compile(&format!(
        r#"{{"$schema":"{D4}","maximum":3,"exclusiveMaximum":true,"minimum":1,"exclusiveMinimum":false}}"#
    ));
    assert!(valid(&s, "2.9") && valid(&s, "1"));
    assert!(!valid(&s, "3") && !valid(&s, "0.5"));
    // Draft-06 bounds are numbers.
    let s = compile(&format!(r#"{{"$schema":"{D6}","exclusiveMaximum":3}}"#));
    assert!(valid(&s, "2") && !valid(&s, "3"));
}

/// Each draft's meta-schema is embedded and checked: draft-04's exclusive bounds are
/// booleans and its `required` may not be empty, draft-06's bounds are numbers.
#[test]
fn legacy_schemas_are_checked_against_their_meta_schemas() {
    for bad in [
        format!(r#"{{"$schema":"{D4}","exclusiveMinimum":5}}"#),
        format!(r#"{{"$schema":"{D4}","required":[]}}"#),
        format!(r#"{{"$schema":"{D6}","minimum":1,"exclusiveMinimum":true}}"#),
        format!(r#"{{"$schema":"{D6}","type":"integr"}}"#),
    ] {
        let e = Schema::compile(bad.as_bytes()).unwrap_err();
        assert!(
            e.message().contains("meta-schema"),
            "{bad}: {}",
            e.message()
        );
    }
    // The same schemas under a named default dialect, without `$schema`.
    let d4 = SchemaOptions::new().draft(Draft::Draft4);
    assert!(d4.compile(br#"{"exclusiveMinimum":5}"#).is_err());
    assert!(d4
        .compile(br#"{"minimum":5,"exclusiveMinimum":true}"#)
        .is_ok());
}

/// Draft-04 names resources with `id`, and `#name` ids are plain-name anchors.
#[test]
fn draft4_id_is_base_uri_and_anchor() {
    let s = compile(&format!(
        r##"{{"$schema":"{D4}","id":"http://example.com/root.json",
            "properties":{{"a":{{"$ref":"#int"}},"b":{{"$ref":"item.json"}}}},
            "definitions":{{
                "i":{{"id":"#int","type":"integer"}},
                "item":{{"id":"item.json","type":"string"}}
            }}}}"##
    ));
    assert!(valid(&s, r#"{"a":1,"b":"x"}"#));
    assert!(!valid(&s, r#"{"a":"1"}"#));
    assert!(!valid(&s, r#"{"b":1}"#));
    // `$id` is not draft-04's keyword: it names nothing there.
    let e = Schema::compile(
        format!(r##"{{"$schema":"{D4}","definitions":{{"i":{{"$id":"#int"}}}},"$ref":"#int"}}"##)
            .as_bytes(),
    )
    .unwrap_err();
    assert!(e.message().contains("#int"), "{}", e.message());
}

/// Keywords of later drafts are unknown (and ignored) in the drafts before them.
#[test]
fn later_keywords_are_not_read_in_earlier_drafts() {
    let c4 = compile(&format!(
        r#"{{"$schema":"{D4}","const":1,"contains":{{"type":"string"}},"propertyNames":{{"maxLength":1}}}}"#
    ));
    assert!(valid(&c4, "2") && valid(&c4, "[1]") && valid(&c4, r#"{"long":1}"#));
    let c6 = compile(&format!(r#"{{"$schema":"{D6}","const":1}}"#));
    assert!(valid(&c6, "1") && !valid(&c6, "2"));
    let if6 = compile(&format!(
        r#"{{"$schema":"{D6}","if":{{"type":"string"}},"then":{{"maxLength":1}}}}"#
    ));
    assert!(valid(&if6, r#""long""#));
    let if7 = compile(&format!(
        r#"{{"$schema":"{D7}","if":{{"type":"string"}},"then":{{"maxLength":1}}}}"#
    ));
    assert!(!valid(&if7, r#""long""#));
}

/// Draft-04 integers are written without a fraction or exponent; from draft-06 on, `1.0` is
/// an integer too.
#[test]
fn draft4_integers_are_literal() {
    let s4 = compile(&format!(r#"{{"$schema":"{D4}","type":"integer"}}"#));
    assert!(valid(&s4, "1") && valid(&s4, "-0"));
    assert!(!valid(&s4, "1.0") && !valid(&s4, "1e2"));
    let s6 = compile(&format!(r#"{{"$schema":"{D6}","type":"integer"}}"#));
    assert!(valid(&s6, "1.0") && valid(&s6, "1e2"));
    let both = compile(&format!(
        r#"{{"$schema":"{D4}","type":["integer","number"]}}"#
    ));
    assert!(valid(&both, "1.5"));
}

/// Format names of later drafts are unknown formats in earlier ones.
#[test]
fn format_names_follow_the_draft() {
    let opts = SchemaOptions::new().format_assertion(true);
    let uuid7 = opts
        .compile(format!(r#"{{"$schema":"{D7}","format":"uuid"}}"#).as_bytes())
        .unwrap();
    assert!(valid(&uuid7, r#""not a uuid""#));
    let uuid = opts.compile(br#"{"format":"uuid"}"#).unwrap();
    assert!(!valid(&uuid, r#""not a uuid""#));
    let ref4 = opts
        .compile(format!(r#"{{"$schema":"{D4}","format":"json-pointer"}}"#).as_bytes())
        .unwrap();
    assert!(valid(&ref4, r#""no pointer""#));
    let ref6 = opts
        .compile(format!(r#"{{"$schema":"{D6}","format":"json-pointer"}}"#).as_bytes())
        .unwrap();
    assert!(!valid(&ref6, r#""no pointer""#));
}

/// A subschema reached by `$ref` under a member that is no keyword (`x-defs`) is read in its
/// resource's dialect, and so is every subschema under it: here draft-07's array `items` and
/// `additionalItems`, two levels below the target. It used to be read in the options' default
/// dialect (2020-12), where an array `items` is not a schema.
#[test]
fn subschemas_under_unknown_members_follow_their_resource() {
    let s = compile(&format!(
        r##"{{"$schema":"{D7}","$ref":"#/x-defs/a",
            "x-defs":{{"a":{{"properties":{{"p":{{
                "items":[{{"type":"integer"}}],"additionalItems":false}}}}}}}}}}"##
    ));
    assert!(valid(&s, r#"{"p":[1]}"#));
    assert!(!valid(&s, r#"{"p":[1,2]}"#));
    assert!(!valid(&s, r#"{"p":["s"]}"#));
    // An identifier inside such a region is honoured, relative to the resource's base.
    let s = compile(&format!(
        r##"{{"$schema":"{D7}","$id":"http://example.com/root.json","$ref":"#/x-defs/a",
            "x-defs":{{"a":{{"properties":{{
                "p":{{"$ref":"#num"}},
                "q":{{"$id":"#num","type":"number"}}}}}}}}}}"##
    ));
    assert!(valid(&s, r#"{"p":1}"#));
    assert!(!valid(&s, r#"{"p":"1"}"#));
}

/// A registered document without `$schema` is read in the dialect of the schema that
/// references it: here draft-07, where `"$id":"#foo"` is an anchor (in 2020-12 it would be
/// an error).
#[test]
fn resources_inherit_the_referencing_dialect() {
    let remote = br##"{"definitions":{"r":{"$ref":"#foo"},"A":{"$id":"#foo","type":"integer"}}}"##;
    let root = format!(r#"{{"$schema":"{D7}","$ref":"http://example.com/r.json#/definitions/r"}}"#);
    let s = SchemaOptions::new()
        .resource("http://example.com/r.json", remote)
        .compile(root.as_bytes())
        .unwrap();
    assert!(valid(&s, "1") && !valid(&s, r#""x""#));
    // The same resource reached from a 2020-12 schema is read as 2020-12.
    let e = SchemaOptions::new()
        .resource("http://example.com/r.json", remote)
        .compile(br#"{"$ref":"http://example.com/r.json#/definitions/r"}"#)
        .unwrap_err();
    assert!(e.message().contains("fragment"), "{}", e.message());
}

/// A dialect named in the options applies to registered resources without `$schema` too,
/// even when the schema that references them declares another one.
#[test]
fn a_named_draft_applies_to_resources() {
    let remote = br##"{"definitions":{"r":{"$ref":"#foo"},"A":{"$id":"#foo","type":"integer"}}}"##;
    let root = br#"{"$schema":"https://json-schema.org/draft/2020-12/schema",
        "$ref":"http://example.com/r.json#/definitions/r"}"#;
    let s = SchemaOptions::new()
        .draft(Draft::Draft7)
        .resource("http://example.com/r.json", remote)
        .compile(root)
        .unwrap();
    assert!(valid(&s, "1") && !valid(&s, r#""x""#));
}

/// Contracts and policies name the dialect of their schemas with `draft`.
#[test]
fn contracts_and_policies_name_the_draft() {
    use jsongate::action::{Call, Grants, Policy, RateState, Reason};
    use jsongate::gate::{Context, Contract, Gate, Request};
    let d4 = r#"{"properties":{"n":{"maximum":3,"exclusiveMaximum":true}}}"#;
    let contract = |draft: &str| {
        format!(
            r#"{{"contract":1,"tool":"t","version":"1",{draft}
            "upstream":[{{"version":"v","schema":{d4}}}],"fields":{{"n":{{"pointer":"/n"}}}}}}"#
        )
    };
    let dir = std::path::Path::new(".");
    let c = Contract::from_slice(contract(r#""draft":"4","#).as_bytes(), dir).unwrap();
    let g = Gate::new(&c).unwrap();
    let outcome = |doc: &str| {
        let d = g
            .run_slice(doc.as_bytes(), &Request::new("r", Context::new()))
            .unwrap();
        let out: serde_json::Value = serde_json::from_str(&d.output).unwrap();
        out["outcome"].as_str().unwrap().to_string()
    };
    assert_eq!(outcome(r#"{"n":2}"#), "success");
    assert_eq!(outcome(r#"{"n":3}"#), "failure");
    // Read as 2020-12 the boolean bound is refused.
    let c = Contract::from_slice(contract("").as_bytes(), dir).unwrap();
    let e = Gate::new(&c).unwrap_err().to_string();
    assert!(e.contains("exclusiveMaximum"), "{e}");
    // An unknown draft name is refused by the contract's own schema.
    assert!(Contract::from_slice(contract(r#""draft":"5","#).as_bytes(), dir).is_err());

    let policy = |draft: &str| {
        format!(r#"{{"policy":1,{draft}"tools":{{"t":{{"arguments":{d4},"requires":[]}}}}}}"#)
    };
    let p = Policy::from_slice(policy(r#""draft":"4","#).as_bytes()).unwrap();
    let s = Grants::new::<[&str; 0], &str>([]);
    let decide = |args: &str| {
        let arguments = jsongate::json::Value::parse(args.as_bytes(), Limits::new()).unwrap();
        let call = Call {
            tool: "t".into(),
            arguments,
        };
        p.decide(&call, &s, &RateState::new(), 0).reason()
    };
    assert_eq!(decide(r#"{"n":2}"#), Reason::Ok);
    assert_eq!(decide(r#"{"n":3}"#), Reason::ArgumentsInvalid);
    let e = Policy::from_slice(policy("").as_bytes())
        .unwrap_err()
        .to_string();
    assert!(e.contains("exclusiveMaximum"), "{e}");
}
