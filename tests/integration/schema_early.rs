//! Earliest rejection: the validator decides at the first event that settles the verdict,
//! and the scanner reads nothing after it.
//!
//! Each test feeds a document whose tail after the deciding token is garbage (or never
//! arrives): the verdict, keyword and offset must not depend on it.

use std::io::Read;

use jsongate::{Flow, Limits, Rejection, Scanner, Schema, Validator, Violation, UNLIMITED};

fn schema(s: &str) -> Schema {
    Schema::compile(s.as_bytes()).unwrap()
}

/// Feeds `head` then `tail` (which must never be needed); returns the violation.
fn decided_by(schema: &Schema, head: &str, tail: &str) -> (Violation, u64) {
    let mut v = Validator::new(schema);
    let mut s = Scanner::new(Limits::new());
    let flow = s.feed(head.as_bytes(), &mut v).unwrap();
    assert_eq!(flow, Flow::Stop, "undecided after {head:?}");
    // Nothing more is read, not even garbage.
    assert_eq!(s.feed(tail.as_bytes(), &mut v).unwrap(), Flow::Stop);
    let read = s.bytes_read();
    match v.verdict(&s, Ok(jsongate::Outcome::Stopped)) {
        Err(Rejection::Violation(x)) => (*x, read),
        other => panic!("{other:?}"),
    }
}

#[test]
fn unexpected_name_is_rejected_before_its_value() {
    let s = schema(
        r#"{"type":"object","properties":{"ok":{"type":"boolean"}},"additionalProperties":false}"#,
    );
    let (v, read) = decided_by(&s, r#"{"ok":true,"admin_override""#, r#":{"never":"read"#);
    assert_eq!(v.keyword(), "additionalProperties");
    assert_eq!(v.instance_pointer(), "/admin_override");
    assert_eq!(v.offset(), 11);
    assert_eq!(read, 27);
}

#[test]
fn type_mismatch_at_the_first_byte_of_the_value() {
    let s = schema(r#"{"properties":{"items":{"type":"array"}}}"#);
    let (v, read) = decided_by(&s, r#"{"items":{"#, "garbage");
    assert_eq!(v.keyword(), "type");
    assert_eq!(v.instance_pointer(), "/items");
    assert_eq!(v.offset(), 9);
    assert_eq!(read, 10);
}

#[test]
fn max_items_at_the_item_that_exceeds() {
    let s = schema(r#"{"type":"array","maxItems":2}"#);
    // A number is complete only at the byte after it.
    let (v, _) = decided_by(&s, "[1,2,3,", "4,5]");
    assert_eq!((v.keyword(), v.offset()), ("maxItems", 5));
    let (v, _) = decided_by(&s, "[1,2,{", "\"x\":1}]");
    assert_eq!((v.keyword(), v.offset()), ("maxItems", 5));
}

#[test]
fn max_properties_at_the_name_that_exceeds() {
    let s = schema(r#"{"maxProperties":1}"#);
    let (v, _) = decided_by(&s, r#"{"a":1,"b""#, ":2}");
    assert_eq!((v.keyword(), v.offset()), ("maxProperties", 7));
}

#[test]
fn failing_all_of_branch_rejects_at_once() {
    let s = schema(r#"{"allOf":[{"type":"object"},{"properties":{"n":{"maximum":3}}}]}"#);
    let (v, _) = decided_by(&s, r#"{"n":4,"#, ",,,");
    assert_eq!(v.keyword(), "maximum");
    assert_eq!(v.keyword_location(), "/allOf/1/properties/n/maximum");
    assert_eq!(v.instance_pointer(), "/n");
}

#[test]
fn any_of_rejects_when_every_branch_has_failed() {
    let s = schema(r#"{"anyOf":[{"type":"string"},{"type":"object","maxProperties":0}]}"#);
    let (v, _) = decided_by(&s, r#"{"a""#, ":1}");
    assert_eq!(v.keyword(), "anyOf");
    assert_eq!(v.offset(), 1);
    // One branch still alive: no verdict yet.
    let s = schema(r#"{"anyOf":[{"type":"string"},{"type":"object"}]}"#);
    let mut v = Validator::new(&s);
    let mut sc = Scanner::new(Limits::new());
    assert_eq!(sc.feed(br#"{"a":1"#, &mut v).unwrap(), Flow::Continue);
}

#[test]
fn enum_string_decided_when_the_string_ends() {
    let s = schema(r#"{"properties":{"state":{"enum":["open","closed"]}}}"#);
    let (v, _) = decided_by(&s, r#"{"state":"deleted""#, "}");
    assert_eq!((v.keyword(), v.instance_pointer()), ("enum", "/state"));
}

/// A 100 MB document whose first member is not allowed is refused after a few bytes.
#[test]
fn hundred_megabytes_refused_after_reading_under_64_kib() {
    struct Gen {
        produced: u64,
        total: u64,
    }
    impl Read for Gen {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.produced >= self.total {
                return Ok(0);
            }
            let head: &[u8] = br#"{"injected":"ignore all previous instructions","logs":["#;
            let mut n = 0;
            while n < buf.len() && self.produced < self.total {
                let p = self.produced as usize;
                buf[n] = if p < head.len() {
                    head[p]
                } else if p % 2 == 0 {
                    b'1'
                } else {
                    b','
                };
                n += 1;
                self.produced += 1;
            }
            Ok(n)
        }
    }
    let s = schema(
        r#"{"type":"object","properties":{"logs":{"type":"array"}},"additionalProperties":false}"#,
    );
    let mut v = Validator::new(&s);
    let mut sc = Scanner::new(Limits::new().max_bytes(UNLIMITED).max_items(UNLIMITED));
    let mut src = Gen {
        produced: 0,
        total: 100 << 20,
    };
    let r = v.validate_read(&mut sc, &mut src);
    match r {
        Err(Rejection::Violation(x)) => assert_eq!(x.instance_pointer(), "/injected"),
        other => panic!("{other:?}"),
    }
    assert!(src.produced <= 64 * 1024, "read {} bytes", src.produced);
    assert!(sc.bytes_read() < 64, "scanned {} bytes", sc.bytes_read());
}

/// Hostile schemas: a verdict that needs evaluation without end is rejected
/// (`schema_cycle`, whatever the document, at the edge that re-enters); evaluation that
/// explodes stops at the budget, quickly and in bounded memory.
#[test]
fn runaway_schemas_are_refused_or_cut_off() {
    for (s, at) in [
        (r##"{"$ref":"#"}"##, "/$ref"),
        (r##"{"allOf":[{"$ref":"#"}]}"##, "/allOf/0/$ref"),
        (
            r##"{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/b"}]},"b":{"not":{"$ref":"#/$defs/a"}}},"$ref":"#/$defs/a"}"##,
            "/$ref/anyOf/0/$ref/not/$ref",
        ),
    ] {
        let schema = Schema::compile(s.as_bytes()).unwrap();
        for doc in ["1", "[[[[]]]]", r#"{"a":{"b":1}}"#] {
            match Validator::new(&schema).validate_slice(doc.as_bytes(), Limits::new()) {
                Err(Rejection::Error(e)) => {
                    assert_eq!(
                        e.kind(),
                        &jsongate::ErrorKind::SchemaCycle {
                            keyword_location: at.into()
                        },
                        "{s} / {doc}"
                    );
                    assert_eq!(e.offset(), 0, "{s} / {doc}");
                }
                other => panic!("{s} / {doc}: {other:?}"),
            }
        }
    }
    // Ten alternatives per level, six levels deep: a million evaluations of one value.
    let mut defs: Vec<String> = (0..6)
        .map(|i| {
            let alts = vec![format!(r##"{{"$ref":"#/$defs/l{}"}}"##, i + 1); 10].join(",");
            format!(r#""l{i}":{{"anyOf":[{alts}]}}"#)
        })
        .collect();
    defs.push(r#""l6":{"type":"string"}"#.to_string());
    let defs = defs.join(",");
    let text = format!(r##"{{"$defs":{{{defs}}},"$ref":"#/$defs/l0"}}"##);
    let schema = Schema::options()
        .eval_budget(200_000)
        .compile(text.as_bytes())
        .unwrap();
    let started = std::time::Instant::now();
    match Validator::new(&schema).validate_slice(b"1", Limits::new()) {
        Err(Rejection::Error(e)) => assert_eq!(e.kind().code(), "budget_exceeded"),
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn unique_scalar_items_are_decided_alike_in_both_tiers() {
    use jsongate::Tier;
    let schema = Schema::compile(
        br#"{"type":"array","uniqueItems":true,"items":{"type":["integer","string"]}}"#,
    )
    .unwrap();
    let mut fast = Validator::new(&schema);
    let mut general = Validator::new(&schema).tier(Tier::General);
    for doc in [
        "[1,2,3]",
        "[1,2,1]",
        "[1,1.0]",
        r#"[1,"1"]"#,
        r#"["a","b","a"]"#,
        "[1,[1]]",
        "[10,1e1]",
        "[]",
    ] {
        let a = fast.validate_slice(doc.as_bytes(), Limits::new());
        assert!(fast.specialised(), "{doc}");
        let b = general.validate_slice(doc.as_bytes(), Limits::new());
        assert_eq!(a, b, "{doc}");
    }
    match fast.validate_slice(b"[1,2,1.0]", Limits::new()) {
        Err(Rejection::Violation(v)) => {
            assert_eq!((v.keyword(), v.offset()), ("uniqueItems", 5));
        }
        other => panic!("{other:?}"),
    }
}

/// Schemas whose every keyword the specialised tier runs, on instances that reach each of its
/// records' corners (member tables past the hashed size, watched names past 64, constants
/// that no scalar equals, numbers the record cannot classify alone): both tiers give the same
/// result, whole (keyword, locations, pointer, offset, line, column).
#[test]
fn hand_picked_schemas_decide_alike_in_both_tiers() {
    use jsongate::Tier;
    let many: Vec<String> = (0..70).map(|i| format!("m{i}")).collect();
    let props: Vec<String> = many
        .iter()
        .map(|n| format!(r#""{n}":{{"type":"integer"}}"#))
        .collect();
    let required: Vec<String> = many.iter().map(|n| format!(r#""{n}""#)).collect();
    let wide = format!(
        r#"{{"properties":{{{}}},"required":[{}],"additionalProperties":false}}"#,
        props.join(","),
        required.join(",")
    );
    let full: Vec<String> = many.iter().map(|n| format!(r#""{n}":1"#)).collect();
    let full = format!("{{{}}}", full.join(","));
    let mut reversed: Vec<String> = many.iter().rev().map(|n| format!(r#""{n}":2"#)).collect();
    let reversed_doc = format!("{{{}}}", reversed.join(","));
    reversed.pop();
    let missing_first = format!("{{{}}}", reversed.join(","));
    let cases: Vec<(String, Vec<String>)> = vec![
        (
            r#"{"propertyNames":{"const":[]}}"#.into(),
            vec![r#"{"c":"b"}"#.into(), "{}".into()],
        ),
        (
            r#"{"propertyNames":{"enum":[{},"a"]}}"#.into(),
            vec![r#"{"a":1}"#.into(), r#"{"b":1}"#.into()],
        ),
        (
            r#"{"items":{"type":"integer","maximum":3}}"#.into(),
            vec!["[1,1.0,2e0,3.5,4]".into(), "[1.5]".into(), "[1e1]".into(), r#"["1"]"#.into()],
        ),
        (
            r#"{"items":{"const":1}}"#.into(),
            vec!["[1,1.0,1e0]".into(), "[2]".into(), r#"["1"]"#.into(), "[[1]]".into()],
        ),
        (
            r#"{"items":{"enum":[1,"a",null,true]}}"#.into(),
            vec![r#"[1,"a",null,true,1.0]"#.into(), "[false]".into(), "[{}]".into()],
        ),
        (
            r#"{"items":{"type":"string","minLength":2,"maxLength":3,"pattern":"^[a-zé]+$"}}"#.into(),
            vec![
                r#"["ab","éé","ééé"]"#.into(),
                r#"["é"]"#.into(),
                r#"["éééé"]"#.into(),
                r#"["AB"]"#.into(),
            ],
        ),
        (
            r#"{"type":"object","properties":{"a":{"type":"string"},"b":false},"required":["a"],"dependentRequired":{"c":["a","d"]},"minProperties":1,"maxProperties":3,"additionalProperties":{"type":"number"}}"#.into(),
            vec![
                r#"{"a":"x","c":1,"d":2}"#.into(),
                r#"{"c":1,"a":"x"}"#.into(),
                r#"{"a":"x","b":1}"#.into(),
                r#"{"a":"x","z":"s"}"#.into(),
                r#"{"a":"x","y":1,"z":2,"w":3}"#.into(),
                "{}".into(),
                r#"{"d":1}"#.into(),
            ],
        ),
        (
            r#"{"prefixItems":[{"type":"string"},true,false],"items":{"type":"null"},"minItems":2,"maxItems":4}"#.into(),
            vec![
                r#"["a",1]"#.into(),
                r#"["a",1,2]"#.into(),
                r#"["a"]"#.into(),
                r#"["a",{},null,null]"#.into(),
                r#"["a",[],null,null,null]"#.into(),
                "[1,1]".into(),
            ],
        ),
        (
            r##"{"$defs":{"n":{"properties":{"next":{"$ref":"#/$defs/n"},"v":{"type":"integer"}}}},"properties":{"head":{"$ref":"#/$defs/n"}}}"##.into(),
            vec![
                r#"{"head":{"v":1,"next":{"v":2,"next":{"v":"x"}}}}"#.into(),
                r#"{"head":{"next":{"next":{"next":{}}}}}"#.into(),
            ],
        ),
        (
            wide,
            vec![full, reversed_doc, missing_first, r#"{"m0":1,"zz":1}"#.into()],
        ),
        (r#"{"type":"integer","minimum":0}"#.into(), vec!["1".into(), "-1".into(), "1.0".into(), "1.5".into()]),
        ("false".into(), vec!["1".into(), "{}".into(), "[]".into()]),
        ("true".into(), vec!["1".into(), r#"{"a":[1,{"b":2}]}"#.into()]),
    ];
    for (text, docs) in &cases {
        let schema = Schema::compile(text.as_bytes()).unwrap();
        let mut fast = Validator::new(&schema);
        let mut general = Validator::new(&schema).tier(Tier::General);
        for doc in docs {
            let a = fast.validate_slice(doc.as_bytes(), Limits::new());
            assert!(fast.specialised(), "{text} on {doc}");
            let b = general.validate_slice(doc.as_bytes(), Limits::new());
            assert_eq!(a, b, "{text} on {doc}");
        }
    }
}

/// The envelope bench schema: a root `oneOf` of two closed objects told apart by `ok`.
const ENVELOPE: &str = include_str!("../../benches/schemas/envelope.schema.json");

#[test]
fn a_root_one_of_dispatched_by_its_first_member_decides_like_the_general_tier() {
    use jsongate::Tier;
    let one_of = Schema::compile(ENVELOPE.as_bytes()).unwrap();
    let any_of =
        Schema::compile(ENVELOPE.replacen("\"oneOf\"", "\"anyOf\"", 1).as_bytes()).unwrap();
    let ok = r#""tool":"web_search","request_id":"req_0123456789","elapsed_ms":12"#;
    let docs = [
        format!(r#"{{"ok":true,{ok},"result":{{"status":"success","message":"m","count":3}}}}"#),
        format!(
            r#"{{"ok":false,{ok},"error":{{"code":"timeout","message":"m","retryable":true}}}}"#
        ),
        // Discriminator not first: the general tier takes the document.
        format!(r#"{{{ok},"ok":true,"result":{{"status":"success","message":"m","count":3}}}}"#),
        // Failures at every stage: the discriminator's value, a member, a nested value, the end.
        format!(r#"{{"ok":"yes",{ok}}}"#),
        r#"{"ok":null}"#.to_owned(),
        format!(r#"{{"ok":{{}},{ok}}}"#),
        format!(r#"{{"ok":[1],{ok}}}"#),
        format!(r#"{{"ok":true,{ok},"error":{{}}}}"#),
        format!(r#"{{"ok":true,{ok},"result":{{"status":"success","message":"m","count":3000}}}}"#),
        format!(r#"{{"ok":true,{ok}}}"#),
        r#"{"ok":false,"tool":"web_search","request_id":"req_x"}"#.to_owned(),
        format!(
            r#"{{"ok":true,{ok},"result":{{"status":"success","message":"m","count":3}},"x":1}}"#
        ),
        "{}".to_owned(),
        "[]".to_owned(),
        "1".to_owned(),
        r#"{"tool":"web_search"}"#.to_owned(),
    ];
    for schema in [&one_of, &any_of] {
        let mut fast = Validator::new(schema);
        let mut general = Validator::new(schema).tier(Tier::General);
        let mut dispatched = 0;
        for doc in &docs {
            let a = fast.validate_slice(doc.as_bytes(), Limits::new());
            dispatched += usize::from(fast.specialised());
            let b = general.validate_slice(doc.as_bytes(), Limits::new());
            assert_eq!(a, b, "{doc}");
            // Fed in two pieces at every byte: the same result.
            for at in 0..=doc.len() {
                let mut s = Scanner::new(Limits::new());
                fast.reset();
                let out = s
                    .feed(&doc.as_bytes()[..at], &mut fast)
                    .and_then(|_| s.feed(&doc.as_bytes()[at..], &mut fast))
                    .and_then(|_| s.finish(&mut fast));
                assert_eq!(fast.verdict(&s, out), b, "{doc} split at {at}");
            }
        }
        // Every document whose first member is `ok` (and the non-objects) stays specialised.
        assert!(dispatched >= 12, "{dispatched}");
    }
    match Validator::new(&one_of).validate_slice(
        format!(r#"{{"ok":true,{ok},"result":{{"status":"success","message":"m","count":3000}}}}"#)
            .as_bytes(),
        Limits::new(),
    ) {
        Err(Rejection::Violation(v)) => {
            assert_eq!(
                (v.keyword(), v.keyword_location(), v.instance_pointer()),
                ("oneOf", "/oneOf", "")
            );
        }
        other => panic!("{other:?}"),
    }
}

/// An in-place reference cycle in a region most documents never reach (as published schemas
/// have): the schema compiles, documents that stay away from it are judged normally, and a
/// document whose verdict needs it is rejected with `schema_cycle`, the keyword location of
/// the edge that re-enters and the pointer of the value, without stack growth or a budget
/// overrun, in both the one-shot and the byte-at-a-time scan. A value that fails elsewhere
/// (`type`) is invalid whatever the cycle would say.
#[test]
fn in_place_cycles_are_rejected_where_a_document_reaches_them() {
    let s = r##"{"type":"object","properties":{
        "name":{"type":"string"},
        "tree":{"items":{"$ref":"#/definitions/node"}}},
        "definitions":{
            "node":{"allOf":[{"$ref":"#/definitions/loop"},{"type":"object"}]},
            "loop":{"anyOf":[{"$ref":"#/definitions/node"},{"type":"null"}]}}}"##;
    let schema = Schema::compile(s.as_bytes()).unwrap();
    let mut v = Validator::new(&schema);
    assert!(v.validate_slice(br#"{"name":"a"}"#, Limits::new()).is_ok());
    assert!(v
        .validate_slice(br#"{"name":"a","tree":[]}"#, Limits::new())
        .is_ok());
    match v.validate_slice(br#"{"name":1}"#, Limits::new()) {
        Err(Rejection::Violation(x)) => assert_eq!(x.keyword(), "type"),
        other => panic!("{other:?}"),
    }
    // `node` is `loop` and an object: a null is not an object, whatever `loop` would say.
    match v.validate_slice(br#"{"name":"a","tree":[null]}"#, Limits::new()) {
        Err(Rejection::Violation(x)) => {
            assert_eq!(x.keyword(), "type");
            assert_eq!(x.instance_pointer(), "/tree/0");
        }
        other => panic!("{other:?}"),
    }
    let doc = br#"{"name":"a","tree":[{"deep":[1,2,3]}],"more":"x"}"#;
    let reached = v.validate_slice(doc, Limits::new());
    match &reached {
        Err(Rejection::Error(e)) => {
            assert_eq!(e.kind().code(), "schema_cycle");
            assert_eq!(
                e.kind(),
                &jsongate::ErrorKind::SchemaCycle {
                    keyword_location: "/properties/tree/items/$ref/allOf/0/$ref/anyOf/0/$ref"
                        .into()
                }
            );
            assert_eq!(e.pointer(), "/tree/0");
            assert_eq!(e.offset(), 20);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        v.schema_cycle(),
        Some("/properties/tree/items/$ref/allOf/0/$ref/anyOf/0/$ref")
    );
    assert!(!v.budget_exceeded());
    // The same verdict one byte at a time, and with several errors collected.
    let mut sc = Scanner::new(Limits::new());
    v.reset();
    for b in doc {
        if sc.feed(std::slice::from_ref(b), &mut v) != Ok(Flow::Continue) {
            break;
        }
    }
    let out = sc.finish(&mut v);
    assert_eq!(v.verdict(&sc, out), reached);
    let many = Validator::new(&schema)
        .max_errors(5)
        .validate_slice(doc, Limits::new());
    assert!(matches!(many, Err(Rejection::Error(e)) if e.kind().code() == "schema_cycle"));
}

/// Cycles judged by evaluation (the shape of the `SchemaStore` corpus's `cloudify` schema, whose test
/// documents python-jsonschema and Ajv accept): a definition that applies itself, reached only
/// through a `then` whose `if` selects one node type. Documents of other types never need it
/// (valid); a value that fails the definition's own keywords is invalid; only a verdict that
/// depends on the re-entered subschema is `schema_cycle`. `anyOf` with a passing alternative
/// and `oneOf` with two passing ones are decided without it.
#[test]
fn cycles_are_judged_by_evaluation_a_guarded_self_reference_is_an_error_only_where_needed() {
    let s = r##"{"type":"object",
        "properties":{"nodes":{"type":"object","additionalProperties":{"$ref":"#/definitions/node"}}},
        "definitions":{
            "node":{"type":"object","properties":{"type":{"type":"string"}},
                "allOf":[{"if":{"properties":{"type":{"const":"windows"}},"required":["type"]},
                          "then":{"properties":{"properties":{"$ref":"#/definitions/props"}}}}]},
            "props":{"type":"object","allOf":[{"$ref":"#/definitions/props"},
                {"properties":{"os_family":{"type":"string"}}}]}}}"##;
    let schema = Schema::compile(s.as_bytes()).unwrap();
    let verdict = |doc: &str| {
        let one = Validator::new(&schema).validate_slice(doc.as_bytes(), Limits::new());
        // The same verdict one byte at a time.
        let mut v = Validator::new(&schema);
        let mut sc = Scanner::new(Limits::new());
        for b in doc.as_bytes() {
            if sc.feed(std::slice::from_ref(b), &mut v) != Ok(Flow::Continue) {
                break;
            }
        }
        let out = sc.finish(&mut v);
        assert_eq!(v.verdict(&sc, out), one, "{doc}");
        match one {
            Ok(()) => "valid".to_string(),
            Err(Rejection::Violation(x)) => format!("{} at {}", x.keyword(), x.instance_pointer()),
            Err(Rejection::Error(e)) => format!("{} at {}", e.kind().code(), e.pointer()),
        }
    };
    let many = (0..200)
        .map(|i| format!(r#""n{i}":{{"type":"linux","properties":{{"os_family":"x"}}}}"#))
        .collect::<Vec<_>>()
        .join(",");
    for (doc, want) in [
        (
            r#"{"nodes":{"a":{"type":"linux","properties":{"os_family":"x"}}}}"#,
            "valid",
        ),
        (&*format!(r#"{{"nodes":{{{many}}}}}"#), "valid"),
        (r#"{"nodes":{"a":{"type":"windows"}}}"#, "valid"),
        (
            r#"{"nodes":{"a":{"type":"windows","properties":7}}}"#,
            "then at /nodes/a",
        ),
        (
            r#"{"nodes":{"a":{"type":"windows","properties":{"os_family":1}}}}"#,
            "then at /nodes/a",
        ),
        (
            r#"{"nodes":{"a":{"type":"windows","properties":{"os_family":"x"}}}}"#,
            "schema_cycle at /nodes/a/properties",
        ),
    ] {
        assert_eq!(verdict(doc), want, "{doc}");
    }
    // Alternatives: a passing one decides `anyOf`, two passing ones decide `oneOf`.
    for (s, doc, want) in [
        (
            r##"{"anyOf":[{"$ref":"#"},{"type":"integer"}]}"##,
            "1",
            "valid",
        ),
        (
            r##"{"anyOf":[{"$ref":"#"},{"type":"integer"}]}"##,
            "\"x\"",
            "schema_cycle at ",
        ),
        (
            r##"{"oneOf":[{"$ref":"#"},{"type":"integer"},{"minimum":0}]}"##,
            "1",
            "oneOf at ",
        ),
        (
            r##"{"oneOf":[{"$ref":"#"},{"type":"integer"},{"minimum":0}]}"##,
            "-1",
            "schema_cycle at ",
        ),
        (r##"{"not":{"$ref":"#"}}"##, "1", "schema_cycle at "),
        (r##"{"type":"string","not":{"$ref":"#"}}"##, "1", "type at "),
        // An undecided `if` matters only when a branch can fail.
        (r##"{"if":{"$ref":"#"}}"##, "1", "valid"),
        (
            r##"{"if":{"$ref":"#"},"then":true,"else":{"type":"integer"}}"##,
            "1",
            "valid",
        ),
        (
            r##"{"if":{"$ref":"#"},"then":true,"else":{"type":"string"}}"##,
            "1",
            "schema_cycle at ",
        ),
        (
            r##"{"if":{"$ref":"#"},"then":{"type":"string"},"else":{"type":"string"}}"##,
            "1",
            "then at ",
        ),
        // A dependent schema matters only when its name is present.
        (
            r##"{"dependentSchemas":{"a":{"$ref":"#"}}}"##,
            "{}",
            "valid",
        ),
        (
            r##"{"dependentSchemas":{"a":{"$ref":"#"}}}"##,
            r#"{"a":1}"#,
            "schema_cycle at ",
        ),
        // `contains`: enough decided items decide it.
        (
            r##"{"$defs":{"c":{"anyOf":[{"$ref":"#/$defs/c"},{"type":"integer"}]}},"contains":{"$ref":"#/$defs/c"}}"##,
            r#"["x",1]"#,
            "valid",
        ),
        (
            r##"{"$defs":{"c":{"anyOf":[{"$ref":"#/$defs/c"},{"type":"integer"}]}},"contains":{"$ref":"#/$defs/c"}}"##,
            r#"["x"]"#,
            "schema_cycle at /0",
        ),
        (
            r##"{"$defs":{"c":{"anyOf":[{"$ref":"#/$defs/c"},{"type":"integer"}]}},"contains":{"$ref":"#/$defs/c"},"maxContains":1}"##,
            r#"["x",1]"#,
            "schema_cycle at /0",
        ),
        // Under `unevaluated*` an undecided alternative stays undecided (never a failure that
        // `not` would turn into a pass).
        (
            r##"{"$defs":{"A":{"anyOf":[{"$ref":"#/$defs/A"},{"type":"string"}]}},"not":{"$ref":"#/$defs/A"},"unevaluatedProperties":true}"##,
            "1",
            "schema_cycle at ",
        ),
        (
            r##"{"$defs":{"A":{"allOf":[{"$ref":"#/$defs/A"}],"unevaluatedProperties":false}},"not":{"$ref":"#/$defs/A"}}"##,
            r#"{"y":1}"#,
            "schema_cycle at ",
        ),
    ] {
        let schema = Schema::compile(s.as_bytes()).unwrap();
        let got = match Validator::new(&schema).validate_slice(doc.as_bytes(), Limits::new()) {
            Ok(()) => "valid".to_string(),
            Err(Rejection::Violation(x)) => format!("{} at {}", x.keyword(), x.instance_pointer()),
            Err(Rejection::Error(e)) => format!("{} at {}", e.kind().code(), e.pointer()),
        };
        assert_eq!(got, want, "{s} / {doc}");
    }
}

/// Every re-entry names where it happened (the instance pointer and keyword location), which
/// costs their length: that work is charged to the budget, so a document that re-enters under
/// long pointers again and again stops at the budget instead of copying without bound.
#[test]
fn reentries_under_long_pointers_are_charged_to_the_budget() {
    let s = r##"{"additionalProperties":{"$ref":"#"},"items":{"$ref":"#"},"anyOf":[{"$ref":"#"},true]}"##;
    let schema = Schema::compile(s.as_bytes()).unwrap();
    let name = "n".repeat(4000);
    let depth = 60;
    let mut doc = format!(r#"{{"{name}":"#).repeat(depth);
    doc.push('[');
    doc.push_str(&vec!["0"; 20_000].join(","));
    doc.push(']');
    doc.push_str(&"}".repeat(depth));
    let mut v = Validator::new(&schema);
    let limits = Limits::new().max_name_bytes(4096);
    match v.validate_slice(doc.as_bytes(), limits) {
        Err(Rejection::Error(e)) => assert_eq!(e.kind().code(), "budget_exceeded"),
        other => panic!("{other:?}"),
    }
    assert!(v.budget_exceeded());
    // A short document under the same schema is judged (every value has a passing
    // alternative).
    assert!(v
        .validate_slice(br#"{"a":[0,{"b":1}]}"#, Limits::new())
        .is_ok());
}
