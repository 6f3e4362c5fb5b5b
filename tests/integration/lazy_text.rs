//! Sinks that do not read string text (`Sink::wants_text` false, as `Ignore`): escaped string
//! values are then checked without being decoded. Whatever the input, such a sink must see
//! the same verdict (kind, offset, line, column, pointer), the same bytes read and the same
//! events, apart from the text of string values, as a sink that reads everything.

use std::fs;

use jsongate::{
    Error, Event, Flow, Limits, Outcome, Position, Rejection, Scanner, Schema, Sink, Validator,
};
use proptest::prelude::*;

use crate::common::data;

/// Records events; wants text or not.
struct Rec {
    events: Vec<String>,
    text: bool,
}

impl Sink for Rec {
    fn event(&mut self, ev: Event<'_>, at: u64) -> Flow {
        self.events.push(format!("{ev:?}@{at}"));
        Flow::Continue
    }
    fn wants_text(&self) -> bool {
        self.text
    }
}

type Seen = (Result<Outcome, Error>, u64, Vec<String>);

fn scan(doc: &[u8], limits: Limits, text: bool) -> (Seen, Vec<String>) {
    let mut s = Scanner::new(limits);
    let mut rec = Rec {
        events: Vec::new(),
        text,
    };
    let verdict = s.scan_slice(doc, &mut rec);
    let blanked = rec
        .events
        .iter()
        .map(|e| match e.strip_prefix("String(") {
            Some(rest) => format!("String(\"\"){}", &rest[rest.rfind(')').unwrap() + 1..]),
            None => e.clone(),
        })
        .collect();
    ((verdict, s.bytes_read(), blanked), rec.events)
}

/// Tight limits, so that the string limit is crossed inside and around escapes.
fn profiles() -> Vec<Limits> {
    let mut all = vec![Limits::new(), Limits::new().i_json(true)];
    for n in [0, 1, 2, 3, 4, 5, 7, 8, 12, 16] {
        all.push(Limits::new().max_string_bytes(n));
        all.push(Limits::new().max_string_bytes(n).i_json(true));
    }
    all
}

fn assert_same(doc: &[u8]) {
    for limits in profiles() {
        let (full, _) = scan(doc, limits, true);
        let (blind, _) = scan(doc, limits, false);
        assert_eq!(
            full,
            blind,
            "{:?} under {limits:?}",
            String::from_utf8_lossy(doc)
        );
    }
}

#[test]
fn escaped_strings_are_delivered_empty_and_plain_ones_whole() {
    let doc = br#"{"a\tb":["x\ny", "plain", "caf\u00e9"]}"#;
    let (_, events) = scan(doc, Limits::new(), false);
    assert_eq!(
        events,
        [
            "BeginObject@0",
            "Name(\"a\\tb\")@1",
            "BeginArray@8",
            "String(\"\")@9",
            "String(\"plain\")@17",
            "String(\"\")@26",
            "EndArray@37",
            "EndObject@38"
        ]
    );
    assert_same(doc);
}

#[test]
fn errors_inside_skipped_strings_are_the_decoders() {
    for doc in [
        r#"["ab\x"]"#,
        r#"["ab\u12G4"]"#,
        r#"["ab\uD800\u0041"]"#,
        r#"["ab\uDC00"]"#,
        r#"["ab\uD800"]"#,
        r#"["ab\n\uD800x"]"#,
        r#"["ab\n"#,
        r#"["ab\n\u00"#,
        "[\"ab\\n\u{1}\"]",
        "[\"ab\\n\\uFFFF\"]",
        "[\"ab\\n\u{FDD0}\"]",
        "[\"ab\\n\u{e9}\\t\u{10FFFF}\"]",
        r#"["\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\""]"#,
    ] {
        assert_same(doc.as_bytes());
    }
    for bad in [
        &b"[\"ab\\n\xC3\"]"[..],
        b"[\"ab\\n\xED\xA0\x80\"]",
        b"[\"ab\\n\xF0\x9F\x98\"]",
        b"[\"ab\\n\xFF\"]",
        b"[\"ab\\t\xE2\x82",
    ] {
        assert_same(bad);
    }
}

#[test]
fn the_parsing_suite_gives_the_same_verdicts() {
    let dir = data("suites/json-test-suite/test_parsing");
    let mut n = 0;
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let doc = fs::read(&path).unwrap();
        assert_same(&doc);
        n += 1;
    }
    assert!(n > 300, "only {n} suite files");
}

/// Pieces of string bodies: plain text, every escape, multi-byte text, and broken forms.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,6}",
        Just(r"\n".to_owned()),
        Just(r#"\""#.to_owned()),
        Just(r"\\".to_owned()),
        Just(r"\/".to_owned()),
        Just(r"\u00e9".to_owned()),
        Just(r"\u20AC".to_owned()),
        Just(r"\ud83d\ude00".to_owned()),
        Just(r"\uFFFF".to_owned()),
        Just(r"\uD800".to_owned()),
        Just(r"\uDC00".to_owned()),
        Just(r"\u12".to_owned()),
        Just(r"\q".to_owned()),
        Just("\u{e9}\u{6771}\u{1F600}".to_owned()),
        Just("\u{FDD0}".to_owned()),
        Just("\t".to_owned()),
    ]
}

proptest! {
    #[test]
    fn random_escaped_strings_give_the_same_verdicts(
        pieces in proptest::collection::vec(piece(), 1..12),
        cut in 0usize..64,
        name in any::<bool>(),
    ) {
        let body: String = pieces.concat();
        let doc = if name {
            format!(r#"{{"{body}":"{body}"}}"#)
        } else {
            format!(r#"["{body}", "{body}"]"#)
        };
        assert_same(doc.as_bytes());
        // Cut anywhere: strings the chunk ends inside.
        let bytes = doc.as_bytes();
        assert_same(&bytes[..cut.min(bytes.len())]);
    }
}

/// A validator made to read every string's text (the oracle of one that reads only where a
/// subschema constrains the value).
struct Reading<'v>(&'v mut Validator);

impl Sink for Reading<'_> {
    fn event(&mut self, ev: Event<'_>, at: u64) -> Flow {
        self.0.event(ev, at)
    }
    fn event_at(&mut self, ev: Event<'_>, at: Position) -> Flow {
        self.0.event_at(ev, at)
    }
    fn wants_text(&self) -> bool {
        true
    }
}

fn validate(schema: &Schema, doc: &[u8], limits: Limits, read_all: bool) -> Result<(), Rejection> {
    let mut s = Scanner::new(limits);
    let mut v = Validator::new(schema);
    let out = if read_all {
        s.scan_slice(doc, &mut Reading(&mut v))
    } else {
        s.scan_slice(doc, &mut v)
    };
    v.verdict(&s, out)
}

/// Schemas that leave some values unconstrained (where the validator does not read text) and
/// constrain others by their text.
const SCHEMAS: &[&str] = &[
    "true",
    "{}",
    r#"{"properties":{"a":{"type":"string","maxLength":3}}}"#,
    r#"{"type":"array","prefixItems":[{"pattern":"^x"}]}"#,
    r#"{"additionalProperties":{"const":"\u00e9"}}"#,
    r#"{"items":{"type":"object","properties":{"k":{"enum":["\n","é"]}}}}"#,
    r#"{"anyOf":[{"items":{"maxLength":1}},{"properties":{"a":true}}]}"#,
];

fn assert_same_verdicts(doc: &[u8]) {
    for src in SCHEMAS {
        let schema = Schema::compile(src.as_bytes()).unwrap();
        for limits in [
            Limits::new(),
            Limits::new().max_string_bytes(4).i_json(true),
        ] {
            assert_eq!(
                validate(&schema, doc, limits, false),
                validate(&schema, doc, limits, true),
                "{src} on {:?}",
                String::from_utf8_lossy(doc)
            );
        }
    }
}

#[test]
fn the_validator_reads_text_only_where_a_subschema_may() {
    let dir = data("suites/json-test-suite/test_parsing");
    for entry in fs::read_dir(dir).unwrap() {
        assert_same_verdicts(&fs::read(entry.unwrap().path()).unwrap());
    }
    for doc in [
        r#"{"a":"\u00e9\n","b":{"c":["\u20AC\"","\ud83d\ude00"]}}"#,
        r#"["x\n",{"deep":["\u00e9\t","\q"]}]"#,
        r#"{"b":["\uD800"],"a":"\u0041"}"#,
        r#"[{"k":"\n"},{"k":"\u00e9"},{"k":"\u00e8","z":"\uDC00"}]"#,
    ] {
        assert_same_verdicts(doc.as_bytes());
    }
}

proptest! {
    #[test]
    fn random_escaped_strings_give_the_validator_the_same_verdicts(
        pieces in proptest::collection::vec(piece(), 1..8),
        shape in 0usize..4,
    ) {
        let body: String = pieces.concat();
        let doc = match shape {
            0 => format!(r#"{{"a":"{body}","b":["{body}"]}}"#),
            1 => format!(r#"["{body}",{{"k":"{body}"}},"{body}"]"#),
            2 => format!(r#"{{"z":{{"deep":["{body}"]}},"a":"{body}"}}"#),
            _ => format!(r#"[{{"k":"{body}","x":"{body}"}}]"#),
        };
        assert_same_verdicts(doc.as_bytes());
    }
}
