//! Differential tests against `serde_json`, driven by proptest.
//!
//! 1. Generated `serde_json::Value` trees (the shape of jiter's `json_value()` strategy:
//!    nested arrays and objects with unique names, strings with escapes, control characters
//!    and non-ASCII text, integers at the `i64`/`u64` edges, floats) are serialized (compact,
//!    pretty, and by a writer that escapes characters at random and respells numbers), scanned
//!    in chunks cut where proptest chooses, and the events must be a traversal of the tree.
//! 2. Arbitrary bytes, JSON-like byte soup, objects whose names repeat under different
//!    spellings, and valid JSON with one byte flipped, inserted or deleted, must never panic,
//!    must give the same result in any chunking, and must be accepted exactly when
//!    `serde_json` accepts them, except where the strict profile differs on purpose:
//!    - duplicate member names: `serde_json` keeps the last, the strict profile rejects them
//!      (the oracle adds a small duplicate check, [`has_duplicate_names`]);
//!    - numbers that overflow `f64`: `serde_json` rejects them ("number out of range"), the
//!      scanner hands over the exact text (such inputs are skipped);
//!    - nesting: `serde_json` stops at depth 128 (its recursion limit), so inputs that could
//!      nest that deep are skipped; the scanner runs with [`Limits::unlimited`].
//!
//!    Lone surrogates, invalid UTF-8, control characters, BOMs, leading zeros and trailing
//!    commas are rejected by both, so they need no exception.

use std::collections::HashSet;
use std::fmt::Write as _;

use jsongate::Limits;
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Number, Value};

use crate::harness::{diff, run_once, run_splits, Ev};

// ---------------------------------------------------------------------------------------------
// Generated trees.

/// Characters that stress the string path: quotes, backslashes, `/`, control characters,
/// DEL, and non-ASCII of every UTF-8 length (including the astral plane's surrogate pairs).
fn tricky_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => any::<char>(),
        2 => prop::char::range('a', 'e'),
        1 => prop::sample::select(vec![
            '"', '\\', '/', '\0', '\u{1}', '\u{8}', '\t', '\n', '\u{c}', '\r', '\u{1f}', '\u{7f}',
            '\u{80}', '\u{7ff}', '\u{800}', '\u{e9}', '\u{2028}', '\u{feff}', '\u{fffd}',
            '\u{ffff}', '\u{10000}', '\u{1f600}', '\u{10ffff}',
        ]),
    ]
}

fn json_string() -> impl Strategy<Value = String> {
    prop::collection::vec(tricky_char(), 0..24).prop_map(|cs| cs.into_iter().collect())
}

fn json_number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<i64>().prop_map(Number::from),
        any::<u64>().prop_map(Number::from),
        prop::sample::select(vec![0i64, -1, i64::MIN, i64::MAX]).prop_map(Number::from),
        Just(Number::from(u64::MAX)),
        any::<f64>().prop_filter_map("finite", Number::from_f64),
        (-1000.0..1000.0f64).prop_filter_map("finite", Number::from_f64),
    ]
}

/// Like jiter's `json_value()`: scalars at the leaves, arrays and objects up to 8 deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        json_number().prop_map(Value::Number),
        json_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(8, 256, 10, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..10).prop_map(Value::Array),
            prop::collection::btree_map(json_string(), inner, 0..10)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// What the scanner must emit for a value, in order (numbers compared by value).
#[derive(Debug)]
enum Want<'a> {
    Ev(Ev),
    Number(&'a Number),
}

fn traverse<'a>(v: &'a Value, out: &mut Vec<Want<'a>>) {
    match v {
        Value::Null => out.push(Want::Ev(Ev::Null)),
        Value::Bool(b) => out.push(Want::Ev(Ev::Bool(*b))),
        Value::Number(n) => out.push(Want::Number(n)),
        Value::String(s) => out.push(Want::Ev(Ev::String(s.clone()))),
        Value::Array(items) => {
            out.push(Want::Ev(Ev::BeginArray));
            for item in items {
                traverse(item, out);
            }
            out.push(Want::Ev(Ev::EndArray));
        }
        // Without `serde_json`'s `preserve_order`, a map iterates in key order, which is also
        // the order it is serialized in.
        Value::Object(members) => {
            out.push(Want::Ev(Ev::BeginObject));
            for (name, value) in members {
                out.push(Want::Ev(Ev::Name(name.clone())));
                traverse(value, out);
            }
            out.push(Want::Ev(Ev::EndObject));
        }
    }
}

/// Whether the scanner's number text denotes `serde_json`'s number: integers must match as
/// text (they are written exactly); floats must parse to the same `f64`.
fn same_number(text: &str, n: &Number) -> bool {
    if n.is_f64() {
        text.parse::<f64>().ok() == n.as_f64()
    } else {
        text == n.to_string()
    }
}

fn check_events(events: &[Ev], want: &[Want<'_>]) -> Result<(), String> {
    if events.len() != want.len() {
        return Err(format!("{} events, expected {}", events.len(), want.len()));
    }
    for (i, (got, want)) in events.iter().zip(want).enumerate() {
        let ok = match (got, want) {
            (got, Want::Ev(w)) => got == w,
            (Ev::Number(text), Want::Number(n)) => same_number(text, n),
            _ => false,
        };
        if !ok {
            return Err(format!("event #{i} is {got:?}, expected {want:?}"));
        }
    }
    Ok(())
}

/// A small deterministic random source for the writer (proptest supplies the seed).
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: u64) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % sides
    }
}

/// Writes `v` as JSON, choosing at random between raw characters and `\u` escapes (with
/// surrogate pairs and either hex case), `\/` for `/`, extra whitespace, and equivalent
/// spellings of floats (`1.5` as `1.50`, `1.5e0`, `1.5E+0`).
fn write_random(v: &Value, dice: &mut Dice, out: &mut String) {
    let ws = |dice: &mut Dice, out: &mut String| {
        while dice.roll(4) == 0 {
            out.push([' ', '\t', '\n', '\r'][dice.roll(4) as usize]);
        }
    };
    ws(dice, out);
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let text = n.to_string();
            out.push_str(&text);
            if n.is_f64() && !text.contains(['e', 'E']) {
                match dice.roll(4) {
                    0 if text.contains('.') => out.push('0'),
                    1 => out.push_str("e0"),
                    2 => out.push_str("E+0"),
                    _ => {}
                }
            }
        }
        Value::String(s) => write_string(s, dice, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    ws(dice, out);
                    out.push(',');
                }
                write_random(item, dice, out);
                ws(dice, out);
            }
            ws(dice, out);
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (i, (name, value)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                ws(dice, out);
                write_string(name, dice, out);
                ws(dice, out);
                out.push(':');
                write_random(value, dice, out);
                ws(dice, out);
            }
            ws(dice, out);
            out.push('}');
        }
    }
    ws(dice, out);
}

fn write_string(s: &str, dice: &mut Dice, out: &mut String) {
    let hex = |out: &mut String, unit: u16, upper: bool| {
        if upper {
            write!(out, "\\u{unit:04X}").unwrap();
        } else {
            write!(out, "\\u{unit:04x}").unwrap();
        }
    };
    out.push('"');
    for c in s.chars() {
        let upper = dice.roll(2) == 0;
        if dice.roll(3) == 0 {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                hex(out, *unit, upper);
            }
            continue;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' if dice.roll(2) == 0 => out.push_str("\\/"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c < ' ' => hex(out, c as u16, upper),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Turns proptest's indices into increasing split points in `0..=len`.
fn cuts(len: usize, cut_at: &[Index]) -> Vec<usize> {
    let mut cuts: Vec<usize> = cut_at.iter().map(|i| i.index(len + 1)).collect();
    cuts.sort_unstable();
    cuts
}

fn check_text(text: &str, want: &[Want<'_>], cut_at: &[Index]) -> Result<(), TestCaseError> {
    let splits = cuts(text.len(), cut_at);
    let run = run_splits(text.as_bytes(), Limits::unlimited(), &splits);
    prop_assert!(run.result.is_ok(), "{:?} for {text}", run.result);
    if let Err(m) = check_events(&run.evs(), want) {
        return Err(TestCaseError::fail(format!(
            "{m}\nsplits {splits:?} in {text}"
        )));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn serde_json_output_scans_to_the_same_tree(
        v in json_value(),
        cut_at in prop::collection::vec(any::<Index>(), 0..6),
    ) {
        let mut want = Vec::new();
        traverse(&v, &mut want);
        check_text(&serde_json::to_string(&v).unwrap(), &want, &cut_at)?;
        check_text(&serde_json::to_string_pretty(&v).unwrap(), &want, &cut_at)?;
    }

    #[test]
    fn randomly_escaped_output_scans_to_the_same_tree(
        v in json_value(),
        seed in 1..u64::MAX,
        cut_at in prop::collection::vec(any::<Index>(), 0..6),
    ) {
        let mut want = Vec::new();
        traverse(&v, &mut want);
        let mut text = String::new();
        write_random(&v, &mut Dice(seed), &mut text);
        // The writer's output is JSON for `serde_json` too (its float parsing may differ from
        // `str::parse` in the last bit without the `float_roundtrip` feature, so only
        // acceptance is compared).
        prop_assert!(serde_json::from_str::<Value>(&text).is_ok(), "{}", text);
        check_text(&text, &want, &cut_at)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Accept/reject agreement on arbitrary and mutated input.

/// Whether a document that `serde_json` accepted has an object with a repeated member name
/// (compared after unescaping). A tiny tokenizer is enough: the input is known to be valid.
fn has_duplicate_names(doc: &[u8]) -> bool {
    // One entry per open container: the names seen so far, or `None` for an array.
    let mut stack: Vec<Option<HashSet<String>>> = Vec::new();
    let mut expect_name = false;
    let mut i = 0;
    while i < doc.len() {
        match doc[i] {
            b'{' => {
                stack.push(Some(HashSet::new()));
                expect_name = true;
            }
            b'[' => stack.push(None),
            b'}' | b']' => {
                stack.pop();
                expect_name = false;
            }
            b',' => expect_name = matches!(stack.last(), Some(Some(_))),
            b':' => expect_name = false,
            b'"' => {
                let start = i;
                i += 1;
                while doc[i] != b'"' {
                    i += if doc[i] == b'\\' { 2 } else { 1 };
                }
                if expect_name {
                    let name: String = serde_json::from_slice(&doc[start..=i]).unwrap();
                    if let Some(Some(names)) = stack.last_mut() {
                        if !names.insert(name) {
                            return true;
                        }
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// What the strict profile should decide, per `serde_json`; `None` where the profiles differ
/// on purpose and the input is skipped (see the module docs).
fn oracle(doc: &[u8]) -> Option<bool> {
    let nesting = doc.iter().filter(|&&b| b == b'[' || b == b'{').count();
    if nesting >= 128 {
        return None;
    }
    match serde_json::from_slice::<Value>(doc) {
        Ok(_) => Some(!has_duplicate_names(doc)),
        Err(e) if e.to_string().starts_with("number out of range") => None,
        Err(_) => Some(false),
    }
}

fn check_agreement(doc: &[u8], cut_at: &[Index]) -> Result<(), TestCaseError> {
    let whole = run_once(doc, Limits::unlimited());
    let splits = cuts(doc.len(), cut_at);
    let split = run_splits(doc, Limits::unlimited(), &splits);
    if let Some(d) = diff(&whole, &split) {
        return Err(TestCaseError::fail(format!(
            "splits {splits:?}: {d}\ninput {:?}",
            String::from_utf8_lossy(doc)
        )));
    }
    if let Some(accept) = oracle(doc) {
        prop_assert_eq!(
            whole.result.is_ok(),
            accept,
            "scanner {:?}, serde_json {:?} for {:?}",
            whole.result,
            serde_json::from_slice::<Value>(doc).err(),
            String::from_utf8_lossy(doc)
        );
    }
    Ok(())
}

/// Pieces that random JSON-like input is assembled from.
#[rustfmt::skip]
const PIECES: &[&str] = &[
    "{", "}", "[", "]", ",", ":", "\"", "\\", " ", "\n", "0", "1", "-", ".", "e", "+",
    "true", "null", "false", "\"a\"", "\"\\u00e9\"", "\"\\ud83d\\ude00\"", "\\u", "\\ud800",
    "1e999", "123456789012345678901234567890", "-0.000000000000000000000000001e-5",
    "\"a\":1", "\u{e9}", "\u{1f600}", "\u{feff}",
];

/// Bytes that are mostly JSON punctuation and literals, so random input is often close to
/// valid.
fn jsonish_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        prop::sample::select(PIECES).prop_map(|s| s.as_bytes().to_vec()),
        any::<u8>().prop_map(|b| vec![b]),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|ps| ps.concat())
}

/// A valid document with one byte flipped, inserted or deleted.
fn mutated_json() -> impl Strategy<Value = Vec<u8>> {
    (
        json_value(),
        any::<bool>(),
        0..3u8,
        any::<Index>(),
        any::<u8>(),
    )
        .prop_map(|(v, pretty, op, at, byte)| {
            let mut doc = if pretty {
                serde_json::to_vec_pretty(&v).unwrap()
            } else {
                serde_json::to_vec(&v).unwrap()
            };
            let i = at.index(doc.len() + 1);
            match op {
                0 if i < doc.len() => doc[i] ^= byte | 1,
                1 => doc.insert(i, byte),
                _ if i < doc.len() => {
                    doc.remove(i);
                }
                _ => doc.push(byte),
            }
            doc
        })
}

/// Objects whose names come from a small set of spellings, several of which unescape to the
/// same text, so repeated names are common (and sometimes hidden behind escapes).
fn objects_with_similar_names() -> impl Strategy<Value = Vec<u8>> {
    let name = prop::sample::select(vec![
        r#""a""#,
        r#""\u0061""#,
        r#""A""#,
        r#""a/b""#,
        r#""a\/b""#,
        r#""\u00e9""#,
        "\"\u{e9}\"",
        "\"e\u{301}\"",
        r#""""#,
    ]);
    let member = (
        name,
        prop::sample::select(vec!["1", "[]", "{}", r#"{"a":0}"#, r#"{"a":0,"a":1}"#]),
    );
    prop::collection::vec(member, 0..6).prop_map(|members| {
        let body: Vec<String> = members.iter().map(|(n, v)| format!("{n}:{v}")).collect();
        format!("[{{{}}}]", body.join(",")).into_bytes()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn repeated_names_agree_with_serde_json_plus_duplicate_check(
        doc in objects_with_similar_names(),
        cut_at in prop::collection::vec(any::<Index>(), 0..4),
    ) {
        check_agreement(&doc, &cut_at)?;
    }

    #[test]
    fn arbitrary_bytes_agree_with_serde_json(
        doc in prop::collection::vec(any::<u8>(), 0..64),
        cut_at in prop::collection::vec(any::<Index>(), 0..4),
    ) {
        check_agreement(&doc, &cut_at)?;
    }

    #[test]
    fn jsonish_bytes_agree_with_serde_json(
        doc in jsonish_bytes(),
        cut_at in prop::collection::vec(any::<Index>(), 0..4),
    ) {
        check_agreement(&doc, &cut_at)?;
    }

    #[test]
    fn mutated_json_agrees_with_serde_json(
        doc in mutated_json(),
        cut_at in prop::collection::vec(any::<Index>(), 0..4),
    ) {
        check_agreement(&doc, &cut_at)?;
    }
}

/// The exceptions the oracle relies on, pinned so a change in either side is noticed.
#[test]
fn documented_differences_from_serde_json() {
    // Duplicate names: `serde_json` keeps the last value, the strict profile rejects.
    let dup = br#"{"a":1,"\u0061":2}"#;
    assert!(serde_json::from_slice::<Value>(dup).is_ok());
    assert!(has_duplicate_names(dup));
    assert!(run_once(dup, Limits::unlimited()).result.is_err());
    // Numbers beyond f64: `serde_json` refuses, the scanner keeps the text.
    assert!(serde_json::from_slice::<Value>(b"[1e400]").is_err());
    assert_eq!(
        run_once(b"[1e400]", Limits::unlimited()).evs()[1],
        Ev::Number("1e400".into())
    );
    // Depth: `serde_json`'s recursion limit is 128 levels; unlimited scanning goes on.
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(serde_json::from_str::<Value>(&deep(127)).is_ok());
    assert!(serde_json::from_str::<Value>(&deep(128)).is_err());
    assert!(run_once(deep(1000).as_bytes(), Limits::unlimited())
        .result
        .is_ok());
    // Agreements the oracle needs no exception for.
    for doc in [
        &br#"["\ud800"]"#[..],
        br#"["\udc00"]"#,
        b"[\"\xed\xa0\x80\"]",
        b"[\"\x01\"]",
        b"\xef\xbb\xbf[]",
        b"[01]",
        b"[1,]",
    ] {
        assert!(serde_json::from_slice::<Value>(doc).is_err(), "{doc:?}");
        assert!(
            run_once(doc, Limits::unlimited()).result.is_err(),
            "{doc:?}"
        );
    }
}
