//! Sinks that do not read string text (`Sink::wants_text` false, as `Ignore`): escaped string
//! values are then checked without being decoded. Whatever the input, such a sink must see
//! the same verdict (kind, offset, line, column, pointer), the same bytes read and the same
//! events, apart from the text of string values, as a sink that reads everything.

use std::fs;

use jsongate::{Error, Event, Flow, Limits, Outcome, Scanner, Sink};
use proptest::prelude::*;

use crate::common::shared;

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
    let dir = shared("suites/json-test-suite/test_parsing");
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
