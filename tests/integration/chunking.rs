//! The streaming invariant: any chunking of the same bytes gives the same events (text and
//! start offset) and the same verdict (for errors: kind, offset, line, column, pointer).
//!
//! Small handcrafted documents aim at every place a token can be cut (inside `\u` escapes,
//! between surrogate halves, inside UTF-8 sequences, numbers and literals, around SIMD block
//! widths) and are fed at every 2-way split, every 3-way split and one byte at a time. The
//! benchmark corpora are fed in seeded random chunkings (twitter also one byte at a time).

use std::fs;

use jsongate::{ErrorKind, Flow, Limits, Outcome, Scanner, Syntax};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::common::data;
use crate::harness::{
    assert_same, assert_split_invariant, random_splits, run_bytewise, run_once, run_splits, Ev,
    Expect, Run,
};

/// Valid documents whose tokens are worth cutting anywhere.
const TRICKY: &[&str] = &[
    // Escapes, including every short escape and `\u` of 1-, 2-, 3- and 4-byte results.
    r#""\u0041\u00e9\u20ac\ud83d\ude00""#,
    r#"{"\u00e9t\u00e9":"a\\b\"c\/d\b\f\n\r\t"}"#,
    r#"["\uD834\uDD1E", "x\uDBFF\uDFFFy", "\u0000"]"#,
    // Raw multi-byte UTF-8 of every length, next to escapes and quotes.
    "[\"\u{e9}\u{20ac}\u{1f600}\", \"\u{65e5}\u{672c}\u{8a9e}\", \"\u{1f600}\\n\u{1f600}\"]",
    "{\"\u{e9}\":\"\u{10ffff}\",\"\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}\":0}",
    // Numbers of every shape, in arrays and at top level (where only the end finishes them).
    "[0,-0,1,-1,12.5e-3,1E+10,0.0,-0.0e0,1e400,-12345678901234567890123]",
    "-123.456e+789",
    "0",
    "12",
    " 7 ",
    "{\"n\":1.5e3}",
    // Literals.
    "[true,false,null]",
    "true",
    " null ",
    "{\"f\":false}",
    // Names with escapes.
    r#"{"a\nb":1,"\"":2,"\\":3,"\u0000":4,"":5}"#,
    // Whitespace everywhere, including line breaks.
    " \t\r\n{ \"a\" :\n[ 1 ,\r\n2 ]\t}\n ",
    "{\"\":[],\"x\":{},\"y\":[[],{}]}",
    // Nested objects reusing the same name at every level (independent name sets).
    r#"{"a":{"a":{"a":{"a":[{"a":1},{"a":2}]}}},"b":0}"#,
];

/// Invalid documents: the error must be the same in every chunking.
const INVALID: &[&str] = &[
    r#"["\u12"]"#,
    r#"["\u12G4"]"#,
    r#"["\uD800\u0041"]"#,
    r#"["\uDC00"]"#,
    r#"["\uD800"]"#,
    r#"["\uD800\n"]"#,
    r#"{"a":1,"\u0061":2}"#,
    r#"{"x":{"a/b":1,"a\/b":2}}"#,
    "[1,]",
    "{\"a\":1,}",
    "{\"a\" 1}",
    "{\"a\":1 \"b\":2}",
    "{1:2}",
    "[01]",
    "[-01]",
    "[1.]",
    "[1.e5]",
    "[1e]",
    "[1e+]",
    "[-]",
    "-",
    "1.",
    "[.5]",
    "[+1]",
    "[1x]",
    "[1 x]",
    "[tru]",
    "[truex]",
    "[nul",
    "[NaN]",
    "[Infinity]",
    "[\"a\u{1}\"]",
    "[\"a\tb\"]",
    r#"["\x"]"#,
    "[1]x",
    "[1] [2]",
    "\"abc",
    "{\"a\":1",
    "{\"a\":{\"b\":[1,2,{\"c\":nul}]}}",
    "[1,2",
    "",
    "   ",
    "// c\n1",
    "[1 /* c */]",
    "\u{feff}[]",
    "\n\n  [\n 1,\n ]",
];

/// Invalid UTF-8 inside names and strings, reported at the start of the bad sequence whether
/// or not a chunk boundary cuts it (this once depended on the chunking).
const INVALID_UTF8: &[&[u8]] = &[
    b"[\"\xc3\"]",
    b"[\"\xe2\x82\"]",
    b"[\"\xed\xa0\x80\"]",
    b"[\"\xf0\x9f\x98\"]",
    b"[\"\xc0\xaf\"]",
    b"[\"ab\xffcd\"]",
    b"{\"\xe9\":1}",
];

#[test]
fn tricky_valid_documents_give_the_same_events_at_every_split() {
    for doc in TRICKY {
        let run = assert_split_invariant(doc.as_bytes(), Limits::new());
        assert_eq!(run.result, Ok(Outcome::Complete), "{doc}");
    }
}

#[test]
fn tricky_documents_give_the_same_events_at_every_three_way_split() {
    for doc in TRICKY.iter().chain(INVALID) {
        let bytes = doc.as_bytes();
        let whole = run_once(bytes, Limits::new());
        for a in 0..=bytes.len() {
            for b in a..=bytes.len() {
                let r = run_splits(bytes, Limits::new(), &[a, b]);
                assert_same(&whole, &r, bytes, &format!("splits at {a} and {b}"));
            }
        }
    }
}

#[test]
fn invalid_documents_give_the_same_error_at_every_split() {
    for doc in INVALID {
        let run = assert_split_invariant(doc.as_bytes(), Limits::new());
        assert!(run.result.is_err(), "{doc:?} was accepted");
    }
}

#[test]
fn invalid_utf8_errors_do_not_depend_on_chunking() {
    for doc in INVALID_UTF8 {
        let run = assert_split_invariant(doc, Limits::new());
        assert_eq!(run.err().kind(), &ErrorKind::InvalidUtf8, "{doc:?}");
        let start = doc.iter().position(|&b| b >= 0x80).unwrap() as u64;
        assert_eq!(run.err().offset(), start, "{doc:?}");
    }
}

/// The split tests compare runs with each other; these pin what the runs contain, so a
/// scanner that is consistently wrong fails too.
#[test]
fn split_tokens_decode_to_the_right_values() {
    use Ev::{BeginArray as BA, BeginObject as BO, EndArray as EA, EndObject as EO};
    let s = |t: &str| Ev::String(t.into());
    let n = |t: &str| Ev::Number(t.into());
    let name = |t: &str| Ev::Name(t.into());
    let cases: &[(&str, &[Ev])] = &[
        (
            r#""\u0041\u00e9\u20ac\ud83d\ude00""#,
            &[s("A\u{e9}\u{20ac}\u{1f600}")],
        ),
        (
            r#"{"\u00e9t\u00e9":"a\\b\"c\/d\b\f\n\r\t"}"#,
            &[
                BO,
                name("\u{e9}t\u{e9}"),
                s("a\\b\"c/d\u{8}\u{c}\n\r\t"),
                EO,
            ],
        ),
        (
            r#"["\uD834\uDD1E", "x\uDBFF\uDFFFy", "\u0000"]"#,
            &[BA, s("\u{1d11e}"), s("x\u{10ffff}y"), s("\0"), EA],
        ),
        ("-123.456e+789", &[n("-123.456e+789")]),
        (" 7 ", &[n("7")]),
        (
            "[true,false,null]",
            &[BA, Ev::Bool(true), Ev::Bool(false), Ev::Null, EA],
        ),
        (
            r#"{"a\nb":1,"\"":2,"\\":3,"\u0000":4,"":5}"#,
            &[
                BO,
                name("a\nb"),
                n("1"),
                name("\""),
                n("2"),
                name("\\"),
                n("3"),
                name("\0"),
                n("4"),
                name(""),
                n("5"),
                EO,
            ],
        ),
    ];
    for (doc, want) in cases {
        for cut in 0..=doc.len() {
            let run = run_splits(doc.as_bytes(), Limits::new(), &[cut]);
            assert_eq!(run.evs(), *want, "{doc} cut at {cut}");
        }
    }
    // Offsets are where each token starts, also when it started in an earlier chunk.
    let run = run_bytewise(br#"{"ab": [12, "c", true]}"#, Limits::new());
    let offsets: Vec<u64> = run.events.iter().map(|(_, at)| *at).collect();
    assert_eq!(offsets, [0, 1, 7, 8, 12, 17, 21, 22]);
}

#[test]
fn errors_name_the_place_in_every_chunking() {
    let cases: &[(&str, ErrorKind, u64, &str)] = &[
        (
            "{\"a\":{\"b\":[1,2,{\"c\":nul}]}}",
            ErrorKind::Syntax(Syntax::InvalidLiteral),
            23,
            "/a/b/2/c",
        ),
        (r#"{"a":1,"\u0061":2}"#, ErrorKind::DuplicateName, 14, "/a"),
        (
            r#"{"x":{"a/b":1,"a\/b":2}}"#,
            ErrorKind::DuplicateName,
            19,
            "/x/a~1b",
        ),
        (r#"["\uD800\u0041"]"#, ErrorKind::LoneSurrogate, 13, "/0"),
        ("[1,2", ErrorKind::Syntax(Syntax::UnexpectedEnd), 4, "/1"),
        (
            "\n\n  [\n 1,\n ]",
            ErrorKind::Syntax(Syntax::TrailingComma),
            11,
            "",
        ),
    ];
    for (doc, kind, offset, pointer) in cases {
        let run = assert_split_invariant(doc.as_bytes(), Limits::new());
        let e = run.err();
        assert_eq!(
            (e.kind(), e.offset(), e.pointer()),
            (kind, *offset, *pointer),
            "{doc:?}"
        );
    }
}

/// Long strings cross the SIMD block widths (16 and 32 bytes); put escapes, multi-byte
/// characters and the closing quote at and around each block boundary.
#[test]
fn strings_around_block_boundaries_give_the_same_events_at_every_split() {
    for len in [14, 15, 16, 17, 31, 32, 33, 63, 64, 65] {
        for special in ["\\n", "\\u00e9", "\u{e9}", "\u{1f600}", "\\ud83d\\ude00"] {
            let body = format!("{}{special}{}", "x".repeat(len), "y".repeat(len / 2));
            for doc in [
                format!("[\"{body}\"]"),
                format!("{{\"{body}\":1}}"),
                format!("\"{}\"", "z".repeat(len)),
            ] {
                let run = assert_split_invariant(doc.as_bytes(), Limits::new());
                assert_eq!(run.result, Ok(Outcome::Complete), "{doc}");
            }
        }
    }
}

#[test]
fn deep_nesting_gives_the_same_events_at_every_split() {
    let depth = 100;
    let arrays = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    let objects = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
    let mixed = format!(
        "{}null{}",
        "[{\"k\":".repeat(depth / 2),
        "}]".repeat(depth / 2)
    );
    for doc in [arrays, objects, mixed] {
        let run = assert_split_invariant(doc.as_bytes(), Limits::new());
        assert_eq!(run.result, Ok(Outcome::Complete));
        assert_eq!(run.events.len(), 2 * depth + 1 + doc.matches(':').count());
    }
    // Too deep: the same error, at the 129th opening bracket, in every chunking.
    let doc = "[".repeat(200);
    let run = assert_split_invariant(doc.as_bytes(), Limits::new());
    assert_eq!(run.err().kind(), &ErrorKind::TooDeep { limit: 128 });
    assert_eq!(run.err().offset(), 128);
}

/// Whether feeding `input` cut at `splits` delivers exactly `reference` (compared as the
/// events arrive, so nothing is copied) and completes.
fn corpus_run_matches(input: &[u8], reference: &Run, splits: &[usize]) -> Result<(), String> {
    let mut sink = Expect::new(&reference.events);
    let mut scanner = Scanner::new(Limits::unlimited());
    let mut prev = 0;
    for &cut in splits.iter().chain(std::iter::once(&input.len())) {
        match scanner.feed(&input[prev..cut], &mut sink) {
            Ok(Flow::Continue) => {}
            other => return Err(format!("feed returned {other:?}")),
        }
        prev = cut;
    }
    let outcome = scanner.finish(&mut sink);
    if outcome != Ok(Outcome::Complete) {
        return Err(format!("finish returned {outcome:?}"));
    }
    sink.finish()
}

/// One-shot reference, then 10 random 2-way splits and 40 random chunkings (chunk sizes up
/// to 16 bytes, 256 bytes, 4 KiB and 64 KiB), plus one byte at a time if `bytewise`.
fn corpus_is_chunking_invariant(file: &str, bytewise: bool) {
    let input = fs::read(data(&format!("corpora/{file}"))).unwrap();
    let reference = run_once(&input, Limits::unlimited());
    assert_eq!(reference.result, Ok(Outcome::Complete), "{file}");
    assert!(reference.events.len() > 10_000, "{file}");

    let mut chunkings = Vec::new();
    if bytewise {
        chunkings.push(("1-byte feeding".to_string(), (1..input.len()).collect()));
    }
    for seed in 0..10u64 {
        let cut = StdRng::seed_from_u64(seed).gen_range(1..input.len());
        chunkings.push((format!("2-way split at {cut}"), vec![cut]));
    }
    for seed in 100..140u64 {
        let max = match seed % 10 {
            0 => 16,
            1..=3 => 256,
            4..=6 => 4096,
            _ => 65536,
        };
        let splits = random_splits(input.len(), seed, max);
        chunkings.push((format!("seed {seed}, chunks up to {max} bytes"), splits));
    }
    for (how, splits) in &chunkings {
        if let Err(m) = corpus_run_matches(&input, &reference, splits) {
            panic!("{file}, {how}: {m}");
        }
    }
}

#[test]
fn twitter_is_chunking_invariant() {
    corpus_is_chunking_invariant("twitter.json", true);
}

#[test]
fn citm_catalog_is_chunking_invariant() {
    corpus_is_chunking_invariant("citm_catalog.json", false);
}

#[test]
fn canada_is_chunking_invariant() {
    corpus_is_chunking_invariant("canada.json", false);
}
