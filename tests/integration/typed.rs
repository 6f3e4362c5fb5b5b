//! `from_slice`/`from_reader`: typed results from the validating pass. Oracles:
//! `serde_json::from_slice::<T>` on the values (same `T`, same result or both an error) and
//! `Validator::validate_slice` on the verdicts (same rejection, same kind, offset, pointer).

use std::borrow::Cow;
use std::collections::BTreeMap;

use jsongate::{
    from_reader, from_slice, from_slice_with, Limits, Rejection, Schema, Tape, TypedError,
    Validator,
};
use proptest::prelude::*;
use serde::Deserialize;
use serde_json::Value;

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-z\"\\\\\u{e9}\u{4e2d}\u{1f600}\n]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,3}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Plain,
    Tagged(String),
    Pair(u8, bool),
    Point { x: i32, y: i32 },
}

#[derive(Debug, PartialEq, Deserialize)]
struct Record {
    id: u32,
    name: String,
    #[serde(default)]
    tags: Vec<String>,
    score: Option<f64>,
    kind: Option<Kind>,
    extra: Option<BTreeMap<String, Value>>,
}

fn accept_all() -> Validator {
    Validator::new(&Schema::compile(b"true").unwrap())
}

fn same<T>(doc: &[u8])
where
    T: for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug,
{
    let mut v = accept_all();
    let ours = from_slice::<T>(&mut v, doc, Limits::new().max_bytes(jsongate::UNLIMITED));
    let theirs = serde_json::from_slice::<T>(doc);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{}", String::from_utf8_lossy(doc)),
        (Err(TypedError::Mismatch(_)), Err(_)) => {}
        _ => panic!(
            "{}: jsongate {ours:?}, serde_json {theirs:?}",
            String::from_utf8_lossy(doc)
        ),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn any_value_reads_as_serde_json_reads_it(v in arb_json(), pretty in any::<bool>()) {
        let doc = if pretty { serde_json::to_vec_pretty(&v) } else { serde_json::to_vec(&v) }.unwrap();
        same::<Value>(&doc);
    }

    #[test]
    fn a_record_or_a_mismatch_as_with_serde_json(
        id in prop_oneof![Just(Value::from(7)), Just(Value::from(-1)), Just(Value::from(1.5)), Just(Value::from("7"))],
        name in prop_oneof![Just(Value::from("n")), Just(Value::from("e\u{e9}\\\"")), Just(Value::Null)],
        tags in arb_json(),
        score in prop_oneof![Just(Value::Null), Just(Value::from(2.5)), Just(Value::from(3)), Just(Value::from("x"))],
        kind in prop_oneof![
            Just(Value::Null),
            Just(serde_json::json!("plain")),
            Just(serde_json::json!({"tagged": "t"})),
            Just(serde_json::json!({"pair": [3, true]})),
            Just(serde_json::json!({"pair": [300, true]})),
            Just(serde_json::json!({"point": {"x": 1, "y": -2}})),
            Just(serde_json::json!({"point": {"x": 1}})),
            Just(serde_json::json!("unknown")),
            Just(serde_json::json!({"plain": null, "tagged": "t"})),
        ],
        extra in arb_json(),
        drop_tags in any::<bool>(),
    ) {
        let mut m = serde_json::Map::new();
        m.insert("id".into(), id);
        m.insert("name".into(), name);
        if !drop_tags {
            m.insert("tags".into(), tags);
        }
        m.insert("score".into(), score);
        m.insert("kind".into(), kind);
        m.insert("extra".into(), extra);
        let doc = serde_json::to_vec(&Value::Object(m)).unwrap();
        same::<Record>(&doc);
    }

    #[test]
    fn the_verdict_is_the_validators(v in arb_json(), limit in 1u64..6) {
        let schema = Schema::compile(br#"{"type":["object","array"],"maxProperties":3,
            "items":{"type":["number","string","null"]},
            "additionalProperties":{"not":{"type":"boolean"}}}"#).unwrap();
        let doc = serde_json::to_vec(&v).unwrap();
        let limits = Limits::new().max_depth(limit);
        let mut alone = Validator::new(&schema);
        let want = alone.validate_slice(&doc, limits);
        let mut typed = Validator::new(&schema);
        let got = from_slice::<Value>(&mut typed, &doc, limits);
        match (want, got) {
            (Ok(()), Ok(value)) => prop_assert_eq!(value, v),
            (Err(Rejection::Error(a)), Err(TypedError::Rejected(Rejection::Error(b)))) => {
                prop_assert_eq!((a.kind(), a.offset(), a.pointer()), (b.kind(), b.offset(), b.pointer()));
            }
            (Err(Rejection::Violation(a)), Err(TypedError::Rejected(Rejection::Violation(b)))) => {
                prop_assert_eq!(
                    (a.keyword_location(), a.instance_pointer(), a.offset()),
                    (b.keyword_location(), b.instance_pointer(), b.offset())
                );
            }
            (want, got) => prop_assert!(false, "validator {want:?}, typed {got:?}"),
        }
    }
}

#[test]
fn numbers_as_serde_json_visits_them() {
    for doc in [
        "0",
        "-0",
        "-0.0",
        "1e2",
        "1E-2",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "123456789012345678901234567890",
        "1e400",
        "5e-324",
        "0.1",
    ] {
        same::<Value>(doc.as_bytes());
        same::<f64>(doc.as_bytes());
        same::<u64>(doc.as_bytes());
        same::<i64>(doc.as_bytes());
        same::<u8>(doc.as_bytes());
    }
}

#[test]
fn strings_are_borrowed_where_the_input_has_no_escape() {
    #[derive(Deserialize)]
    struct Borrowed<'a> {
        id: &'a str,
        #[serde(borrow)]
        note: Cow<'a, str>,
    }
    let doc = br#"{"id":"c-42","note":"tab\there"}"#;
    let mut v = accept_all();
    let b: Borrowed = from_slice(&mut v, doc, Limits::new()).unwrap();
    assert_eq!(b.id, "c-42");
    assert!(
        std::ptr::eq(b.id.as_ptr(), doc[7..].as_ptr()),
        "id points into the input"
    );
    assert!(matches!(b.note, Cow::Owned(ref s) if s == "tab\there"));
    // An escaped string cannot become a `&str`: an error, as with serde_json.
    let escaped = br#"{"id":"c\u002d42","note":""}"#;
    assert!(matches!(
        from_slice::<Borrowed>(&mut v, escaped, Limits::new()),
        Err(TypedError::Mismatch(_))
    ));
    assert!(serde_json::from_slice::<Borrowed>(escaped).is_err());
}

#[test]
fn a_mismatch_names_the_offset_of_the_value() {
    let mut v = accept_all();
    let doc = br#"{"id":7,"name":"n","score":"high","kind":null,"extra":null}"#;
    let Err(TypedError::Mismatch(m)) = from_slice::<Record>(&mut v, doc, Limits::new()) else {
        panic!("a string is not an f64");
    };
    assert_eq!(m.offset(), 27, "{m}");
    assert!(m.message().contains("invalid type: string \"high\""), "{m}");
}

#[test]
fn a_rejection_builds_nothing_and_reads_no_further() {
    let schema = Schema::compile(
        br#"{"type":"object","additionalProperties":false,"properties":{"id":{}}}"#,
    )
    .unwrap();
    let mut v = Validator::new(&schema);
    // The tail is not even JSON: the verdict came at `admin_override`.
    let doc = br#"{"id":1,"admin_override":tru]]]"#;
    let Err(TypedError::Rejected(Rejection::Violation(x))) =
        from_slice::<Value>(&mut v, doc, Limits::new())
    else {
        panic!("rejected at the name");
    };
    assert_eq!(x.instance_pointer(), "/admin_override");
    // Duplicate names never reach serde (which would keep the last).
    let dup = br#"{"id":1,"id":2}"#;
    let Err(TypedError::Rejected(Rejection::Error(e))) =
        from_slice::<Value>(&mut v, dup, Limits::new())
    else {
        panic!("duplicate name");
    };
    assert_eq!(e.kind().code(), "duplicate_name");
}

#[test]
fn a_kept_tape_and_a_reader_give_the_same_values() {
    struct Broken;
    impl std::io::Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("gone"))
        }
    }
    let mut v = accept_all();
    let mut tape = Tape::new();
    for doc in [
        &br#"[1,"a\nb",{"k":[true,null]}]"#[..],
        b"{}",
        br#""plain""#,
    ] {
        let a: Value = from_slice_with(&mut v, &mut tape, doc, Limits::new()).unwrap();
        let b: Value = from_reader(&mut v, doc, Limits::new()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, serde_json::from_slice::<Value>(doc).unwrap());
    }
    // A reader that fails is a rejection of kind `io`, as with `validate_read`.
    let Err(TypedError::Rejected(Rejection::Error(e))) =
        from_reader::<Value, _>(&mut v, Broken, Limits::new())
    else {
        panic!("io");
    };
    assert_eq!(e.kind().code(), "io");
}

#[test]
fn a_tuple_that_stops_early_keeps_the_walk_on_track() {
    #[derive(Debug, Deserialize, PartialEq)]
    struct Two {
        pair: (u8, u8),
        after: bool,
    }
    let doc = br#"{"pair":[1,2],"after":true}"#;
    let mut v = accept_all();
    assert_eq!(
        from_slice::<Two>(&mut v, doc, Limits::new()).unwrap(),
        Two {
            pair: (1, 2),
            after: true
        }
    );
    same::<Two>(br#"{"pair":[1,2,3],"after":true}"#);
    same::<Two>(br#"{"pair":[1],"after":true}"#);
}
