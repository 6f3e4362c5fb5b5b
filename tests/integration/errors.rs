//! Errors and the scanner's life cycle.
//!
//! Every [`ErrorKind`] (and every [`Syntax`] rule) is produced by a document below with its
//! exact offset, line, column and pointer, in every chunking. Errors are sticky; `bytes_read`
//! says what was consumed; `reset` makes a scanner reusable; a sink's [`Flow::Stop`] ends the
//! scan right after the token that caused it; [`Number`] payloads convert as documented.

use std::io::Read;

use jsongate::{
    Error, ErrorKind, Event, Flow, Ignore, Limits, Number, NumberErrorKind, Outcome, Scanner,
    Syntax, READ_CHUNK,
};

use crate::harness::{assert_split_invariant, run_once, Ev};

/// `(input, limits, kind, offset, line, column, pointer)`.
type Case = (
    &'static [u8],
    Limits,
    ErrorKind,
    u64,
    u64,
    u64,
    &'static str,
);

fn syntax(s: Syntax) -> ErrorKind {
    ErrorKind::Syntax(s)
}

fn cases() -> Vec<Case> {
    let l = Limits::new;
    #[rustfmt::skip]
    let cases: Vec<Case> = vec![
        (br#"{"a": [1, 2]}"#, l().max_bytes(8), ErrorKind::TooLarge { limit: 8 }, 8, 1, 9, "/a/0"),
        (b"[\n [\n  [", l().max_depth(2), ErrorKind::TooDeep { limit: 2 }, 7, 3, 3, "/0/0"),
        (b"{\"ok\":1,\n\"long\":2}", l().max_name_bytes(3), ErrorKind::NameTooLong { limit: 3 }, 13, 2, 5, ""),
        ("[\"\u{e9}\", \"abcd\"]".as_bytes(), l().max_string_bytes(3), ErrorKind::StringTooLong { limit: 3 }, 11, 1, 12, "/1"),
        (b"{\"n\":\n  12345}", l().max_number_bytes(4), ErrorKind::NumberTooLong { limit: 4 }, 12, 2, 7, "/n"),
        (br#"{"a":{"x":1,"y":2}}"#, l().max_members(1), ErrorKind::TooManyMembers { limit: 1 }, 12, 1, 13, "/a"),
        (b"[[1,2,3]]", l().max_items(2), ErrorKind::TooManyItems { limit: 2 }, 6, 1, 7, "/0"),
        (b"{\n  \"id\": 1,\n  \"id\": 2\n}", l(), ErrorKind::DuplicateName, 18, 3, 6, "/id"),
        (b"[\"ok\",\n\"\xff\"]", l(), ErrorKind::InvalidUtf8, 8, 2, 2, "/1"),
        (br#"{"k":"\ud800x"}"#, l(), ErrorKind::LoneSurrogate, 12, 1, 13, "/k"),
        ("{\"k\":\n\"ok\u{FFFF}\"}".as_bytes(), l().i_json(true), ErrorKind::Noncharacter, 9, 2, 4, "/k"),
        (b"{\"a\":\n }", l(), syntax(Syntax::ExpectedValue), 7, 2, 2, "/a"),
        (b"", l(), syntax(Syntax::ExpectedValue), 0, 1, 1, ""),
        (b"{1}", l(), syntax(Syntax::ExpectedNameOrEnd), 1, 1, 2, ""),
        (br#"{"a":1,2}"#, l(), syntax(Syntax::ExpectedName), 7, 1, 8, ""),
        (br#"{"a" 1}"#, l(), syntax(Syntax::ExpectedColon), 5, 1, 6, "/a"),
        (br#"{"a":1 "b":2}"#, l(), syntax(Syntax::ExpectedCommaOrObjectEnd), 7, 1, 8, "/a"),
        (b"[1 2]", l(), syntax(Syntax::ExpectedCommaOrArrayEnd), 3, 1, 4, "/0"),
        (b"[1,]", l(), syntax(Syntax::TrailingComma), 3, 1, 4, ""),
        (br#"{"a":1,}"#, l(), syntax(Syntax::TrailingComma), 7, 1, 8, ""),
        (b"[1] x", l(), syntax(Syntax::TrailingCharacters), 4, 1, 5, ""),
        (b"{\"a\":[1,\n", l(), syntax(Syntax::UnexpectedEnd), 9, 2, 1, "/a"),
        (b"[1.]", l(), syntax(Syntax::InvalidNumber), 3, 1, 4, "/0"),
        (b"-", l(), syntax(Syntax::InvalidNumber), 1, 1, 2, ""),
        (b"[01]", l(), syntax(Syntax::LeadingZero), 2, 1, 3, "/0"),
        (b"[nul]", l(), syntax(Syntax::InvalidLiteral), 4, 1, 5, "/0"),
        (br#"["\x"]"#, l(), syntax(Syntax::InvalidEscape), 3, 1, 4, "/0"),
        (b"[\"a\tb\"]", l(), syntax(Syntax::ControlCharacter), 3, 1, 4, "/0"),
        (b"\xef\xbb\xbf{}", l(), syntax(Syntax::ByteOrderMark), 0, 1, 1, ""),
        (b"[1 // c\n]", l(), syntax(Syntax::Comment), 3, 1, 4, "/0"),
        // Lines end at \n only (a \r is an ordinary byte); columns count bytes, not characters.
        (b"[\r\n1,\r\n2,\r\nx]", l(), syntax(Syntax::ExpectedValue), 11, 4, 1, "/2"),
        ("{\"\u{e9}\": tru}".as_bytes(), l(), syntax(Syntax::InvalidLiteral), 10, 1, 11, "/\u{e9}"),
    ];
    cases
}

fn where_(e: &Error) -> (ErrorKind, u64, u64, u64, &str) {
    (
        e.kind().clone(),
        e.offset(),
        e.line(),
        e.column(),
        e.pointer(),
    )
}

#[test]
fn every_kind_has_an_exact_position_in_every_chunking() {
    for (input, limits, kind, offset, line, column, pointer) in cases() {
        let run = assert_split_invariant(input, limits);
        assert_eq!(
            where_(run.err()),
            (kind, offset, line, column, pointer),
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn the_cases_cover_every_kind_and_every_syntax_rule() {
    let produced: Vec<ErrorKind> = cases().into_iter().map(|c| c.2).collect();
    let codes: Vec<&str> = produced.iter().map(ErrorKind::code).collect();
    for code in [
        "too_large",
        "too_deep",
        "name_too_long",
        "string_too_long",
        "number_too_long",
        "too_many_members",
        "too_many_items",
        "duplicate_name",
        "invalid_utf8",
        "lone_surrogate",
        "noncharacter",
        "syntax",
    ] {
        assert!(codes.contains(&code), "no case for {code}");
    }
    // `io` is covered by `read_errors_are_reported_with_the_bytes_read_so_far`.
    for rule in [
        Syntax::ExpectedValue,
        Syntax::ExpectedNameOrEnd,
        Syntax::ExpectedName,
        Syntax::ExpectedColon,
        Syntax::ExpectedCommaOrObjectEnd,
        Syntax::ExpectedCommaOrArrayEnd,
        Syntax::TrailingComma,
        Syntax::TrailingCharacters,
        Syntax::UnexpectedEnd,
        Syntax::InvalidNumber,
        Syntax::LeadingZero,
        Syntax::InvalidLiteral,
        Syntax::InvalidEscape,
        Syntax::ControlCharacter,
        Syntax::ByteOrderMark,
        Syntax::Comment,
    ] {
        assert!(produced.contains(&syntax(rule)), "no case for {rule:?}");
    }
}

/// Hands out `data`, then fails with `fail`.
struct FailingReader {
    data: &'static [u8],
    fail: std::io::ErrorKind,
}

impl Read for FailingReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.data.is_empty() {
            return Err(self.fail.into());
        }
        let n = buf.len().min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn read_errors_are_reported_with_the_bytes_read_so_far() {
    let reader = FailingReader {
        data: b"{\"a\":\n [1, ",
        fail: std::io::ErrorKind::ConnectionReset,
    };
    let mut s = Scanner::new(Limits::new());
    let e = s.scan_read(reader, &mut Ignore).unwrap_err();
    let kind = ErrorKind::Io(std::io::ErrorKind::ConnectionReset);
    assert_eq!(where_(&e), (kind, 11, 2, 6, "/a"));
    assert_eq!(e.kind().code(), "io");
    assert_eq!(s.bytes_read(), 11);
    // Sticky like every other error.
    assert_eq!(s.feed(b"2]}", &mut Ignore), Err(e.clone()));
    assert_eq!(s.finish(&mut Ignore), Err(e));
}

#[test]
fn whitespace_only_input_expects_a_value() {
    for (input, offset, line, column) in [
        (&b"   "[..], 3, 1, 4),
        (b"\n", 1, 2, 1),
        (b" \t\r\n ", 5, 2, 2),
    ] {
        let run = assert_split_invariant(input, Limits::new());
        let want = (syntax(Syntax::ExpectedValue), offset, line, column, "");
        assert_eq!(where_(run.err()), want, "{input:?}");
    }
}

#[test]
fn errors_are_sticky() {
    let mut s = Scanner::new(Limits::new());
    let e = s.feed(b"[1 2", &mut Ignore).unwrap_err();
    let mut events = 0;
    let mut count = |_: Event<'_>, _: u64| {
        events += 1;
        Flow::Continue
    };
    // Valid input after the error changes nothing and produces no events.
    assert_eq!(s.feed(b"]", &mut count), Err(e.clone()));
    assert_eq!(s.feed(b"", &mut count), Err(e.clone()));
    assert_eq!(s.finish(&mut count), Err(e.clone()));
    assert_eq!(s.finish(&mut count), Err(e.clone()));
    assert_eq!(events, 0);
    assert_eq!(s.bytes_read(), 4);

    // An error found by `finish` is sticky too.
    let mut s = Scanner::new(Limits::new());
    assert_eq!(s.feed(b"[1,", &mut Ignore), Ok(Flow::Continue));
    let e = s.finish(&mut Ignore).unwrap_err();
    assert_eq!(e.kind(), &syntax(Syntax::UnexpectedEnd));
    assert_eq!(s.feed(b"2]", &mut Ignore), Err(e.clone()));
    assert_eq!(s.finish(&mut Ignore), Err(e));
}

#[test]
fn bytes_read_after_an_error_ends_at_the_deciding_byte() {
    let mut s = Scanner::new(Limits::new());
    // Decided at the `2` (offset 3); the rest of the chunk is not consumed.
    let e = s.feed(b"[1 2] and more", &mut Ignore).unwrap_err();
    assert_eq!((e.offset(), s.bytes_read()), (3, 4));
    // A duplicate is decided at its closing quote.
    let e = s.scan_slice(br#"{"a":1,"a":2}"#, &mut Ignore).unwrap_err();
    assert_eq!((e.offset(), s.bytes_read()), (9, 10));
    // The end of input decides an incomplete document: everything was read.
    let e = s.scan_slice(b"[1, 2", &mut Ignore).unwrap_err();
    assert_eq!((e.offset(), s.bytes_read()), (5, 5));
    // Over max_bytes, the byte past the limit is not consumed: never more than the limit.
    let mut s = Scanner::new(Limits::new().max_bytes(4));
    let e = s.feed(b"[1, 2]", &mut Ignore).unwrap_err();
    assert_eq!((e.offset(), s.bytes_read()), (4, 4));
    // Errors in a later chunk count the earlier chunks.
    let mut s = Scanner::new(Limits::new());
    assert_eq!(s.feed(b"[1,", &mut Ignore), Ok(Flow::Continue));
    assert_eq!(s.bytes_read(), 3);
    let e = s.feed(b" 2,]  ", &mut Ignore).unwrap_err();
    assert_eq!((e.offset(), s.bytes_read()), (6, 7));
}

#[test]
fn reset_makes_a_scanner_reusable() {
    let mut s = Scanner::new(Limits::new().max_depth(4));
    // After an error.
    let e = s.scan_slice(b"[[[[[1]]]]]", &mut Ignore).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::TooDeep { limit: 4 });
    s.reset();
    assert_eq!(s.bytes_read(), 0);
    assert_eq!(s.feed(b"[[[[1]]]]", &mut Ignore), Ok(Flow::Continue));
    assert_eq!(s.finish(&mut Ignore), Ok(Outcome::Complete));
    // In the middle of a document (inside a string, two levels deep, on line 2): the next
    // document starts afresh, with offsets, lines, depth and names from zero.
    s.reset();
    assert_eq!(s.feed(b"{\"a\":[\n\"par", &mut Ignore), Ok(Flow::Continue));
    assert_eq!(s.depth(), 2);
    s.reset();
    assert_eq!(s.depth(), 0);
    let mut events = Vec::new();
    let mut sink = |e: Event<'_>, at: u64| {
        events.push((Ev::from(e), at));
        Flow::Continue
    };
    assert_eq!(
        s.feed(br#"{"a":1,"b":x}"#, &mut sink).unwrap_err().offset(),
        11
    );
    assert_eq!(
        events,
        [
            (Ev::BeginObject, 0),
            (Ev::Name("a".into()), 1),
            (Ev::Number("1".into()), 5),
            (Ev::Name("b".into()), 7)
        ]
    );
    let e = s.finish(&mut Ignore).unwrap_err();
    assert_eq!((e.line(), e.column(), e.pointer()), (1, 12, "/b"));
    // After a stop.
    s.reset();
    let mut stop = |_: Event<'_>, _: u64| Flow::Stop;
    assert_eq!(s.feed(b"[1]", &mut stop), Ok(Flow::Stop));
    s.reset();
    assert_eq!(s.feed(b"[1]", &mut Ignore), Ok(Flow::Continue));
    assert_eq!(s.finish(&mut Ignore), Ok(Outcome::Complete));
    // And after a complete document, without calling reset (scan_slice resets).
    assert_eq!(s.scan_slice(b"{}", &mut Ignore), Ok(Outcome::Complete));
    assert_eq!(s.scan_slice(b"{}", &mut Ignore), Ok(Outcome::Complete));
}

/// A sink that stops at the `n`th event (0-based) and records what it saw.
struct StopAt {
    n: usize,
    seen: Vec<(Ev, u64)>,
}

impl jsongate::Sink for StopAt {
    fn event(&mut self, e: Event<'_>, at: u64) -> Flow {
        self.seen.push((Ev::from(e), at));
        if self.seen.len() > self.n {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }
}

#[test]
fn stop_ends_the_scan_after_the_token_that_caused_it() {
    let doc = br#" {"id" : [12, "a\"b", true, {}], "x": null}"#;
    let all = run_once(doc, Limits::new());
    assert_eq!(all.result, Ok(Outcome::Complete));
    // Where each token ends (the offset after its last byte).
    let ends = [2, 6, 10, 12, 20, 26, 29, 30, 31, 36, 42, 43];
    assert_eq!(all.events.len(), ends.len());
    for (n, &end) in ends.iter().enumerate() {
        for split in [None, Some(end as usize - 1), Some(3)] {
            let mut sink = StopAt {
                n,
                seen: Vec::new(),
            };
            let mut s = Scanner::new(Limits::new());
            let flow = match split {
                None => s.feed(doc, &mut sink),
                Some(cut) => s
                    .feed(&doc[..cut], &mut sink)
                    .and_then(|_| s.feed(&doc[cut..], &mut sink)),
            };
            assert_eq!(flow, Ok(Flow::Stop), "stop at event {n}, split {split:?}");
            assert_eq!(s.bytes_read(), end, "stop at event {n}, split {split:?}");
            assert_eq!(sink.seen, all.events[..=n], "stop at event {n}");
            // Later input is ignored, even invalid input, and produces no events.
            assert_eq!(s.feed(b"\xff garbage", &mut sink), Ok(Flow::Stop));
            assert_eq!(s.finish(&mut sink), Ok(Outcome::Stopped));
            assert_eq!(s.bytes_read(), end);
            assert_eq!(sink.seen.len(), n + 1);
        }
    }
}

#[test]
fn stop_on_a_number_that_only_the_end_completes() {
    let mut s = Scanner::new(Limits::new());
    let mut sink = StopAt {
        n: 0,
        seen: Vec::new(),
    };
    assert_eq!(s.feed(b" 12", &mut sink), Ok(Flow::Continue));
    assert_eq!(s.feed(b"34", &mut sink), Ok(Flow::Continue));
    assert!(sink.seen.is_empty());
    assert_eq!(s.finish(&mut sink), Ok(Outcome::Stopped));
    assert_eq!(sink.seen, [(Ev::Number("1234".into()), 1)]);
    assert_eq!(s.bytes_read(), 5);
    assert_eq!(
        s.scan_slice(
            b"5",
            &mut StopAt {
                n: 0,
                seen: Vec::new()
            }
        ),
        Ok(Outcome::Stopped)
    );
}

/// A reader over `len` bytes of a long array that counts how much was handed out.
struct Counting {
    handed: usize,
    len: usize,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.len - self.handed);
        for (i, b) in buf[..n].iter_mut().enumerate() {
            *b = match self.handed + i {
                0 => b'[',
                k if k % 2 == 1 => b'1',
                _ => b',',
            };
        }
        self.handed += n;
        Ok(n)
    }
}

#[test]
fn scan_read_reads_nothing_past_the_verdict() {
    let len = 10 * READ_CHUNK;
    // A stop at the first event: one read.
    let mut reader = Counting { handed: 0, len };
    let mut s = Scanner::new(Limits::new());
    let outcome = s.scan_read(
        &mut reader,
        &mut StopAt {
            n: 0,
            seen: Vec::new(),
        },
    );
    assert_eq!(outcome, Ok(Outcome::Stopped));
    assert_eq!(reader.handed, READ_CHUNK);
    assert_eq!(s.bytes_read(), 1);
    // An error in the first chunk (too many items): one read.
    let mut reader = Counting { handed: 0, len };
    let mut s = Scanner::new(Limits::new().max_items(10));
    let e = s.scan_read(&mut reader, &mut Ignore).unwrap_err();
    assert_eq!(
        (e.kind(), e.offset()),
        (&ErrorKind::TooManyItems { limit: 10 }, 21)
    );
    assert_eq!(reader.handed, READ_CHUNK);
    // Over max_bytes in the third chunk: three reads.
    let mut reader = Counting { handed: 0, len };
    let limit = 2 * READ_CHUNK as u64 + 5;
    let mut s = Scanner::new(Limits::new().max_bytes(limit));
    let e = s.scan_read(&mut reader, &mut Ignore).unwrap_err();
    assert_eq!(
        (e.kind(), e.offset()),
        (&ErrorKind::TooLarge { limit }, limit)
    );
    assert_eq!(reader.handed, 3 * READ_CHUNK);
}

/// A number's text and what `as_i64`, `as_u64`, `as_f64` and `is_integer` say about it.
type Conversions<T> = (
    T,
    Result<i64, NumberErrorKind>,
    Result<u64, NumberErrorKind>,
    Result<f64, NumberErrorKind>,
    bool,
);

#[test]
fn number_events_convert_as_documented() {
    use NumberErrorKind::{NotAnInteger as Frac, OutOfRange as Range};
    let doc = b"[-0, 0, 18446744073709551615, 18446744073709551616, -9223372036854775808, \
                -9223372036854775809, 1.5, 1e2, 1E-400, -1e400, 0.1]";
    let mut numbers: Vec<Conversions<String>> = Vec::new();
    let mut sink = |e: Event<'_>, _: u64| {
        if let Event::Number(n) = e {
            assert_eq!(n.to_string(), n.as_str());
            assert_eq!(format!("{n:?}"), format!("Number({})", n.as_str()));
            numbers.push((
                n.as_str().to_owned(),
                n.as_i64().map_err(|e| e.kind()),
                n.as_u64().map_err(|e| e.kind()),
                n.as_f64().map_err(|e| e.kind()),
                n.is_integer(),
            ));
        }
        Flow::Continue
    };
    assert_eq!(
        Scanner::new(Limits::new()).scan_slice(doc, &mut sink),
        Ok(Outcome::Complete)
    );
    #[rustfmt::skip]
    let want: Vec<Conversions<&str>> = vec![
        ("-0", Ok(0), Ok(0), Ok(-0.0), true),
        ("0", Ok(0), Ok(0), Ok(0.0), true),
        ("18446744073709551615", Err(Range), Ok(u64::MAX), Ok(1.844_674_407_370_955_2e19), true),
        ("18446744073709551616", Err(Range), Err(Range), Ok(1.844_674_407_370_955_2e19), true),
        ("-9223372036854775808", Ok(i64::MIN), Err(Range), Ok(-9.223_372_036_854_776e18), true),
        ("-9223372036854775809", Err(Range), Err(Range), Ok(-9.223_372_036_854_776e18), true),
        ("1.5", Err(Frac), Err(Frac), Ok(1.5), false),
        ("1e2", Err(Frac), Err(Frac), Ok(100.0), false),
        ("1E-400", Err(Frac), Err(Frac), Ok(0.0), false),
        ("-1e400", Err(Frac), Err(Frac), Err(Range), false),
        ("0.1", Err(Frac), Err(Frac), Ok(0.1), false),
    ];
    let got: Vec<_> = numbers
        .iter()
        .map(|(t, i, u, f, int)| (t.as_str(), *i, *u, *f, *int))
        .collect();
    assert_eq!(got, want);
    // -0.0 and 0.0 compare equal; the sign is kept.
    assert!(numbers[0].3.unwrap().is_sign_negative());
    // Number::parse applies the same grammar as the scanner.
    assert_eq!(
        Number::parse("-12.5e+3").map(|n| n.as_str()),
        Some("-12.5e+3")
    );
    for bad in ["", "-", "01", "1.", ".5", "+1", "1e", "0x1", " 1", "1 "] {
        assert!(Number::parse(bad).is_none(), "{bad:?}");
    }
}

#[test]
fn error_display_and_codes() {
    let e = jsongate::check(b"{\"a\":\n [1, x]}", Limits::new()).unwrap_err();
    assert_eq!(e.kind().code(), "syntax");
    assert_eq!(
        e.to_string(),
        "expected a JSON value at byte 11 (line 2, column 6) in /a/1"
    );
    let e = jsongate::check(b"[[[", Limits::new().max_depth(2)).unwrap_err();
    assert_eq!(e.kind().code(), "too_deep");
    assert_eq!(e.kind().to_string(), "nesting exceeds depth 2");
}

/// RFC 7493 §2.1: under the I-JSON profile a noncharacter is refused wherever it appears
/// (raw or escaped, in a value or a name, borrowed or decoded, whole or cut by a chunk), at
/// the first byte of the character (raw) or the last digit of its escape, in every chunking;
/// the default profile (RFC 8259) accepts every one of these documents.
#[test]
fn i_json_profile_rejects_noncharacters_raw_and_escaped() {
    let ij = Limits::new().i_json(true);
    let cases: &[(&str, u64, &str)] = &[
        ("[\"\u{FDD0}\"]", 2, "/0"),
        ("[\"ab\u{FDEF}\"]", 4, "/0"),
        ("[\"\u{FFFE}\"]", 2, "/0"),
        ("[\"x\u{10FFFF}\"]", 3, "/0"),
        ("[\"\u{1FFFE}\"]", 2, "/0"),
        // Decoded strings: an escape before the raw noncharacter.
        ("[\"\\n\u{FFFF}\"]", 4, "/0"),
        // Escaped noncharacters, BMP and a surrogate pair (U+1FFFF).
        (r#"["\uFDD0"]"#, 7, "/0"),
        (r#"["a\uffff"]"#, 8, "/0"),
        (r#"["\uD83F\uDFFF"]"#, 13, "/0"),
        // Names, raw and escaped.
        ("{\"\u{FFFF}\":1}", 2, ""),
        (r#"{"a":1,"\uFFFE":2}"#, 13, ""),
    ];
    for &(doc, offset, pointer) in cases {
        let input = doc.as_bytes();
        assert!(
            jsongate::check(input, Limits::new()).is_ok(),
            "RFC 8259 accepts {doc:?}"
        );
        let run = assert_split_invariant(input, ij);
        let e = run.err();
        assert_eq!(
            (e.kind(), e.offset(), e.pointer()),
            (&ErrorKind::Noncharacter, offset, pointer),
            "{doc:?}"
        );
    }
    // A noncharacter before an invalid byte is the first error.
    let run = assert_split_invariant(b"[\"\xef\xbf\xbf\xff\"]", ij);
    assert_eq!(
        (run.err().kind(), run.err().offset()),
        (&ErrorKind::Noncharacter, 2)
    );
    // Neighbours of the noncharacters pass.
    for doc in [
        "[\"\u{FDCF}\u{FDF0}\u{FFFD}\u{10FFFD}\"]",
        r#"["\uFFFD\uFDCF"]"#,
    ] {
        assert_split_invariant(doc.as_bytes(), ij);
        assert!(jsongate::check(doc.as_bytes(), ij).is_ok(), "{doc:?}");
    }
}
